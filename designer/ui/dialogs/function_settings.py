"""Local Function Settings (G-5): the attributes a local function declares.

A function attribute either has a type and a default value (``FunctionProto.attribute_proto``;
call sites may override it) or is *required*: of no declared type, so every call site must
supply a value (``FunctionProto.attribute``). The body reads them through ``ref_attr_name``.
Every change is one undoable edit on the session; the dialog only shows and asks, the core
edits validate (a removal is refused while the body references the attribute, and the
refusal's reason is shown here as is)."""

from __future__ import annotations

import contextlib

import onnx
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from designer.core.document import ChangeKind, DocumentEvent
from designer.core.edits.functions import AddFunctionAttribute, RemoveFunctionAttribute
from designer.core.names import identifier_problem
from designer.ui.params.attr_text import AttributeTextError, attribute_text, parse_attribute
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ErrorLabel

A = onnx.AttributeProto
FunctionId = tuple[str, str, str]

#: The type choice of an attribute without a declared type (each call site supplies it).
UNDEFINED = "undefined type: each call site supplies a value"
REQUIRED_TEXT = "required at call sites"
#: Types an attribute with a default can have, as offered in the type box.
TYPED = (A.FLOAT, A.INT, A.STRING, A.FLOATS, A.INTS, A.STRINGS, A.TENSOR)
DEFAULT_HINTS = {
    A.FLOAT: "e.g. 0.5",
    A.INT: "e.g. 3",
    A.STRING: "e.g. 'NOTSET'",
    A.FLOATS: "e.g. [1.0, 2.5]",
    A.INTS: "e.g. [1, 2]",
    A.STRINGS: "e.g. ['a', 'b']",
    A.TENSOR: "e.g. [[1.0, 2.0]] (FLOAT)",
}


def function_attributes(fn: onnx.FunctionProto) -> list[tuple[str, str, str]]:
    """(name, type text, default text) of every attribute ``fn`` declares, required ones
    first (in declaration order)."""
    rows = [(name, REQUIRED_TEXT, "—") for name in fn.attribute]
    for attr in fn.attribute_proto:
        rows.append((attr.name, A.AttributeType.Name(attr.type), attribute_text(attr)))
    return rows


class FunctionSettingsDialog(QDialog):
    """The attribute table of one local function, with an add form and a remove button.

    It follows the document: an undo elsewhere (History window, Ctrl+Z) refreshes the table;
    when the function itself disappears the dialog says so and disables editing.
    """

    def __init__(self, session: DocumentSession, fid: FunctionId, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.fid = fid
        domain, name, overload = fid
        title = f"{domain}:{name}" + (f" ({overload})" if overload else "")
        self.setWindowTitle(f"Local Function Settings — {title}")

        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Attribute", "Type", "Default"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.remove_button = QPushButton("−  Remove")
        self.remove_button.setToolTip(
            "Remove the selected attribute (refused while the body references it)"
        )
        self.remove_button.clicked.connect(self.remove_selected)

        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("a C identifier, unique in this function")
        self.type_box = QComboBox()
        for attr_type in TYPED:
            self.type_box.addItem(A.AttributeType.Name(attr_type), attr_type)
        self.type_box.addItem(UNDEFINED, None)
        self.type_box.currentIndexChanged.connect(self._type_changed)
        self.default_edit = QLineEdit()
        self.add_button = QPushButton("+  Add")
        self.add_button.setToolTip("Add the attribute described on the left")
        self.add_button.clicked.connect(self.add_attribute)
        self.name_edit.returnPressed.connect(self.add_attribute)
        self.default_edit.returnPressed.connect(self.add_attribute)

        self.error = ErrorLabel()
        self.info = QLabel(
            "Attributes with a type need a default value (P-2 syntax); call sites may "
            "override it. An attribute of undefined type has no default: every call site "
            "must supply a value. Body nodes read them through attribute references."
        )
        self.info.setWordWrap(True)

        add_box = QGroupBox("New attribute")
        grid = QGridLayout(add_box)
        grid.addWidget(QLabel("Name:"), 0, 0)
        grid.addWidget(self.name_edit, 0, 1)
        grid.addWidget(QLabel("Type:"), 1, 0)
        grid.addWidget(self.type_box, 1, 1)
        grid.addWidget(QLabel("Default:"), 2, 0)
        grid.addWidget(self.default_edit, 2, 1)
        grid.addWidget(self.add_button, 2, 2)
        grid.setColumnStretch(1, 1)
        table_buttons = QHBoxLayout()
        table_buttons.addStretch(1)
        table_buttons.addWidget(self.remove_button)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.info)
        layout.addWidget(self.table, 1)
        layout.addLayout(table_buttons)
        layout.addWidget(add_box)
        layout.addWidget(self.error)
        layout.addWidget(close)
        self.resize(620, 400)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.refresh)
        session.changed.connect(self._doc_changed)
        self.finished.connect(self._detach)
        self._type_changed()
        self.refresh()

    # --- following the document ------------------------------------------------------------
    def _doc_changed(self, event: DocumentEvent) -> None:
        if event.kind not in (ChangeKind.POSITIONS, ChangeKind.SAVED):
            self._timer.start()

    def _detach(self) -> None:
        with contextlib.suppress(RuntimeError, TypeError):
            self.session.changed.disconnect(self._doc_changed)

    def function(self) -> onnx.FunctionProto | None:
        try:
            return self.session.doc.function(*self.fid)
        except KeyError:
            return None

    def refresh(self) -> None:
        self._timer.stop()
        fn = self.function()
        selected = self.selected_name()
        rows = function_attributes(fn) if fn is not None else []
        self.table.setRowCount(len(rows))
        for row, (name, type_text, default) in enumerate(rows):
            for column, text in enumerate((name, type_text, default)):
                item = QTableWidgetItem(text)
                if type_text == REQUIRED_TEXT and column:
                    item.setForeground(Qt.GlobalColor.darkGray)
                self.table.setItem(row, column, item)
            if name == selected:
                self.table.selectRow(row)
        alive = fn is not None
        for widget in (self.name_edit, self.type_box, self.default_edit, self.add_button):
            widget.setEnabled(alive)
        if not alive:
            self.show_error("This local function no longer exists in the document.")
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.remove_button.setEnabled(self.function() is not None and bool(self.selected_name()))

    def _type_changed(self) -> None:
        attr_type = self.type_box.currentData()
        typed = attr_type is not None
        self.default_edit.setEnabled(typed)
        self.default_edit.setPlaceholderText(
            f"default, {DEFAULT_HINTS[attr_type]}" if typed else "no default (required)"
        )
        if not typed:
            self.default_edit.clear()

    # --- changes ---------------------------------------------------------------------------
    def selected_name(self) -> str:
        rows = self.table.selectionModel().selectedRows(0)
        return rows[0].data() if rows else ""

    def select_name(self, name: str) -> None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.text() == name:
                self.table.selectRow(row)
                return

    def show_error(self, text: str) -> None:
        self.error.setText(text)

    def default_attribute(self, name: str) -> onnx.AttributeProto | None:
        """The default typed in, as an attribute of the chosen type (None for an attribute of
        undefined type); raises AttributeTextError naming what is wrong with the text."""
        attr_type = self.type_box.currentData()
        if attr_type is None:
            return None
        text = self.default_edit.text().strip()
        if not text:
            raise AttributeTextError(
                f"a {A.AttributeType.Name(attr_type)} attribute needs a default value"
                f" ({DEFAULT_HINTS[attr_type]}); choose 'undefined type' to make call sites"
                " supply it"
            )
        return parse_attribute(name, attr_type, text)

    def add_attribute(self) -> bool:
        """Add the attribute of the form as one undoable edit; True when it was added."""

        name = self.name_edit.text().strip()
        fn = self.function()
        if fn is None:
            return False
        problem = identifier_problem(name)
        if problem is not None:
            self.show_error(f"invalid attribute name: {problem}")
            return False
        if name in fn.attribute or any(a.name == name for a in fn.attribute_proto):
            self.show_error(f"the function already has an attribute '{name}'")
            return False
        try:
            default = self.default_attribute(name)
        except AttributeTextError as exc:
            self.show_error(f"default value: {exc}")
            self.default_edit.setFocus()
            return False
        message = self.session.try_push(AddFunctionAttribute(self.fid, name, default))
        if message is not None:
            self.show_error(message)
            return False
        self.show_error("")
        self.name_edit.clear()
        self.default_edit.clear()
        self.refresh()
        self.select_name(name)
        return True

    def remove_selected(self) -> bool:
        """Remove the selected attribute; a refusal (still referenced) shows its reason."""

        name = self.selected_name()
        if not name or self.function() is None:
            return False
        message = self.session.try_push(RemoveFunctionAttribute(self.fid, name))
        if message is not None:
            self.show_error(message)
            return False
        self.show_error("")
        self.refresh()
        return True


def show_function_settings(
    session: DocumentSession, fid: FunctionId, parent: QWidget | None = None
) -> FunctionSettingsDialog:
    """Open the (modeless) settings dialog of ``fid``; it deletes itself when closed."""
    dialog = FunctionSettingsDialog(session, fid, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
