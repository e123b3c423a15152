"""Local Functions dock (G-4): the current document's local functions with their domain and
number of call sites, a name filter, and the actions on them: open in a tab, settings
(attributes), extract as a standalone model, add a new function, delete one (its call sites
stay, as custom-operator nodes the type checker flags)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    QTimer,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.edits.functions import AddFunction, RemoveFunction
from designer.core.errors import DesignerError
from designer.core.extract import ExtractError, extract_scope
from designer.core.functions import call_counts
from designer.core.io import write_model
from designer.core.scope import ScopeId
from designer.ui.dialogs.function_settings import (
    FunctionSettingsDialog,
    show_function_settings,
)
from designer.ui.dialogs.new_function import NewFunctionDialog
from designer.ui.widgets.filter_line import FilterLineEdit

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow
    from designer.ui.session import DocumentSession

FunctionId = tuple[str, str, str]
MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"
COLUMNS = ("Name", "Domain", "Calls")
FID_ROLE = Qt.ItemDataRole.UserRole + 1


class FunctionTableModel(QAbstractTableModel):
    """One row per local function: name (with the overload, if any), domain, call sites."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[FunctionId, int]] = []

    def load(self, doc: Document | None) -> None:
        self.beginResetModel()
        if doc is None:
            self.rows = []
        else:
            counts = call_counts(doc)
            fids = [(f.domain, f.name, f.overload) for f in doc.model.functions]
            self.rows = [(fid, counts.get(fid, 0)) for fid in fids]
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if not index.isValid():
            return None
        (domain, name, overload), calls = self.rows[index.row()]
        column = index.column()
        if role == FID_ROLE:
            return (domain, name, overload)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if column == 0:
                return f"{name} ({overload})" if overload else name
            if column == 1:
                return domain
            return calls if role == Qt.ItemDataRole.EditRole else f"{calls}"
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            where = "no call sites" if calls == 0 else f"{calls} call site(s)"
            return f"{domain}:{name} — {where}; double-click to open"
        return None


class FunctionsDock(QDockWidget):
    def __init__(self, window: MainWindow) -> None:
        super().__init__("Local Functions", window)
        self.setObjectName("dock_functions")
        self.window_ = window
        self.tab: DocumentTab | None = None
        self.session: DocumentSession | None = None

        self.model = FunctionTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(0)
        self.proxy.setSortRole(Qt.ItemDataRole.EditRole)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter = FilterLineEdit("Filter by name")
        self.filter.filterChanged.connect(self._set_filter)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setMinimumHeight(40)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.doubleClicked.connect(lambda _i: self.open_selected())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())

        def button(text: str, tip: str, slot: object) -> QPushButton:
            b = QPushButton(text)
            b.setToolTip(tip)
            b.clicked.connect(lambda _c=False: slot())  # type: ignore[operator]
            return b

        self.open_button = button(
            "Open", "Open the selected function's body in a tab (double-click)", self.open_selected
        )
        self.settings_button = button(
            "Settings…", "The selected function's attributes", self.settings_selected
        )
        self.extract_button = button(
            "Extract…", "Write the selected function as a standalone model", self.extract_selected
        )
        self.add_button = button("+", "Create a local function and open it", self.add_function)
        self.remove_button = button(
            "−", "Delete the selected function (its call sites stay)", self.remove_selected
        )
        #: the buttons acting on the selected function
        self.fn_buttons = (
            self.open_button,
            self.settings_button,
            self.extract_button,
            self.remove_button,
        )
        self._tips = {b: b.toolTip() for b in (*self.fn_buttons, self.add_button)}
        for small in (self.add_button, self.remove_button):
            small.setFixedWidth(32)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setStyleSheet("color: palette(mid); padding: 2px;")

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.filter)
        layout.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        for b in (self.open_button, self.settings_button, self.extract_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        self.setWidget(body)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.refresh)
        window.currentTabChanged.connect(self.follow)
        self.follow(window.tab())

    # --- following the window ------------------------------------------------------------
    def follow(self, tab: DocumentTab | None) -> None:
        """Show the functions of ``tab``'s document (the model a function tab belongs to)."""
        if self.session is not None:
            with contextlib.suppress(RuntimeError, TypeError):
                self.session.changed.disconnect(self._doc_changed)
        self.tab = tab
        self.session = document_session(tab)
        if self.session is not None:
            self.session.changed.connect(self._doc_changed)
        self.refresh()

    def _doc_changed(self, event: DocumentEvent) -> None:
        if event.kind not in (ChangeKind.POSITIONS, ChangeKind.SAVED):
            self._timer.start()

    def refresh(self) -> None:
        self._timer.stop()
        selected = self.selected_fid()
        doc = self.session.doc if self.session is not None else None
        self.model.load(doc)
        if selected is not None:
            self.select_fid(selected)
        self._update_status()
        self._update_buttons()

    def _set_filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        self._update_status()

    def _update_status(self) -> None:
        if self.session is None:
            self.status.setText(self.window_.idle_text("see and edit its local functions"))
            return
        total, shown = self.model.rowCount(), self.proxy.rowCount()
        if total == 0:
            self.status.setText("This model has no local functions; + creates one.")
        elif shown == total:
            self.status.setText(f"{total} local function(s)")
        else:
            self.status.setText(f"{shown} of {total} local functions shown")

    def _update_buttons(self) -> None:
        has_doc = self.session is not None
        has_fn = has_doc and self.selected_fid() is not None
        self.filter.setEnabled(has_doc)
        self.add_button.setEnabled(has_doc)
        for b in self.fn_buttons:
            b.setEnabled(has_fn)
        for b, tip in self._tips.items():
            if not has_doc:
                b.setToolTip(f"{tip} — open a model first")
            elif not b.isEnabled():
                b.setToolTip(f"{tip} — select a function first")
            else:
                b.setToolTip(tip)

    # --- selection -----------------------------------------------------------------------
    def selected_fid(self) -> FunctionId | None:
        rows = self.table.selectionModel().selectedRows(0)
        if not rows:
            return None
        fid = rows[0].data(FID_ROLE)
        return (str(fid[0]), str(fid[1]), str(fid[2])) if fid else None

    def select_fid(self, fid: FunctionId) -> bool:
        for row in range(self.proxy.rowCount()):
            if self.proxy.index(row, 0).data(FID_ROLE) == fid:
                self.table.selectRow(row)
                return True
        return False

    def visible_rows(self) -> list[tuple[str, str, str]]:
        """(name, domain, calls) as shown, top to bottom."""
        return [
            tuple(str(self.proxy.index(r, c).data()) for c in range(3))  # type: ignore[misc]
            for r in range(self.proxy.rowCount())
        ]

    # --- actions -------------------------------------------------------------------------
    def open_selected(self) -> None:
        fid = self.selected_fid()
        if fid is not None and self.session is not None:
            open_function(self.window_, self.session, fid)

    def settings_selected(self) -> FunctionSettingsDialog | None:
        fid = self.selected_fid()
        if fid is None or self.session is None:
            return None
        return show_function_settings(self.session, fid, self.window_)

    def extract_selected(self) -> Path | None:
        """Ask where, write the function as a standalone model, offer to open it."""

        fid = self.selected_fid()
        session = self.session
        if fid is None or session is None:
            return None
        doc = session.doc
        folder = doc.path.parent if doc.path is not None else Path.cwd()
        name, _ = QFileDialog.getSaveFileName(
            self.window_, "Extract Local Function", str(folder / f"{fid[1]}.onnx"), MODEL_FILTER
        )
        if not name:
            return None
        path = Path(name)
        problem = self.window_.output_problem(path, session)
        if problem is not None:  # it wrote the function over the model being edited
            self.window_.show_error(f"Cannot extract {fid[0]}:{fid[1]}", problem)
            return None
        try:
            model = extract_scope(doc, ScopeId(function=fid))
            write_model(model, path, doc.base_dir, stamps=doc.data_stamps)
        except ExtractError as exc:
            self.window_.show_error(f"Cannot extract {fid[0]}:{fid[1]}", str(exc))
            return None
        except DesignerError as exc:
            self.window_.show_error("Cannot save the extracted model", str(exc))
            return None
        answer = QMessageBox.question(
            self.window_,
            "Function extracted",
            f"{fid[0]}:{fid[1]} was written to {path}.\n\nOpen it in a new tab?",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.window_.open_files([path])
        else:
            self.window_.statusBar().showMessage(f"Extracted {fid[1]} to {path}", 8000)
        return path

    def add_function(self) -> FunctionId | None:
        """Ask for name, domain and imports; add the function (one undo step) and open it."""

        session = self.session
        if session is None:
            return None
        doc = session.doc
        taken = {(f.domain, f.name) for f in doc.model.functions}
        dialog = NewFunctionDialog(doc.opset_imports, taken, self.window_)
        while dialog.exec() == NewFunctionDialog.DialogCode.Accepted:
            edit = AddFunction(dialog.domain, dialog.name, dialog.opset_imports())
            message = session.try_push(edit)
            if message is None:
                fid: FunctionId = edit.fid
                self.refresh()
                self.select_fid(fid)
                open_function(self.window_, session, fid)
                return fid
            dialog.show_error(message)  # shown again with the reason; Cancel gives up
        return None

    def remove_selected(self) -> bool:
        """Delete the selected function after a confirmation naming its call sites."""

        fid = self.selected_fid()
        session = self.session
        if fid is None or session is None:
            return False
        calls = call_counts(session.doc).get(fid, 0)
        if calls:
            consequence = (
                f"Its {calls} call site(s) will stay in the model as unknown custom-operator "
                f"nodes ({fid[0]}:{fid[1]}); the type checker flags them, and no runtime "
                "can run them until a function or operator of that name exists again."
            )
        else:
            consequence = "No node calls it."
        answer = QMessageBox.question(
            self.window_,
            "Delete Local Function",
            f"Delete the local function {fid[0]}:{fid[1]}?\n\n{consequence}\n\n"
            "Edit > Undo brings it back.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        message = session.try_push(RemoveFunction(fid))
        if message is not None:
            self.window_.show_error("Cannot delete the function", message)
            return False
        self.window_.statusBar().showMessage(f"Deleted local function {fid[0]}:{fid[1]}", 8000)
        return True


def document_session(tab: DocumentTab | None) -> DocumentSession | None:
    """The session of the *model* a tab shows: a subgraph or function tab edits a working
    copy (confirmed into its parent as one scope), so the model's function list is read and
    changed through the root document's session."""
    if tab is None:
        return None
    return tab.session.root()


def open_function(window: MainWindow, session: DocumentSession, fid: FunctionId) -> None:
    """Open ``fid``'s body in a tab (MainWindow.open_scope), or say why it cannot."""
    opener = getattr(window, "open_scope", None)
    if opener is None:
        window.statusBar().showMessage("Opening a function in a tab is not available", 8000)
        return
    opener(session, ScopeId(function=fid))


def create_dock(window: MainWindow) -> QDockWidget:
    return FunctionsDock(window)
