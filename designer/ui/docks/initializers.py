"""The Initializer Editor (SPEC I-1..I-4): top, every initializer of the current scope with
filter, create, edit and delete; bottom, the selected node's initializer-fed terminals."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    QTimer,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from designer.core.document import ChangeKind, DocumentEvent
from designer.core.edits import AddInitializer, ReplaceInitializer
from designer.core.io.external import is_external, tensor_array
from designer.core.tensorgen import TensorGenError, make_tensor
from designer.ui.dialogs import create_initializer, tensor_editor
from designer.ui.params.initializer_model import InitializerTableModel, delete_edit
from designer.ui.params.terminal_panel import TerminalPanel

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow


#: The columns of InitializerTableModel the dock treats apart.
NAME_COLUMN = 0
STORAGE_COLUMN = 4


class _SortedBySource(QSortFilterProxyModel):
    """Filters here; sorting is the source model's (one key per tensor, not two cell reads
    per comparison: a 30k-initializer model sorted in seconds otherwise). A name's tooltip
    is the whole name (the column shows it elided at the start)."""

    def data(
        self,
        index: QModelIndex | QPersistentModelIndex,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == NAME_COLUMN:
            role = Qt.ItemDataRole.DisplayRole
        return super().data(index, role)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        source = self.sourceModel()
        if source is not None:
            source.sort(column, order)
        super().sort(-1, Qt.SortOrder.AscendingOrder)  # the source order, as it is


class InitializersDock(QDockWidget):
    def __init__(self, window: MainWindow) -> None:
        super().__init__("Initializers", window)
        self.setObjectName("dock_initializers")
        self.window_ = window
        self.tab: DocumentTab | None = None
        self.keys: list[int] = []
        self.terminals: TerminalPanel | None = None

        self.model = InitializerTableModel(self)
        self.proxy = _SortedBySource(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(0)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by name")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        # Names take what the other columns leave and lose their start, not their end: a
        # module path ends in what tells its weights apart ("…h.3.attn.c_attn.weight",
        # "…MatMul_550"); the start is what they share.
        self.table.setTextElideMode(Qt.TextElideMode.ElideLeft)
        self.table.setWordWrap(False)  # a name wrapped at its dots showed neither end
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(NAME_COLUMN, QHeaderView.ResizeMode.Stretch)
        for column in range(1, STORAGE_COLUMN + 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        # widths from the first 100 rows (Qt reads 1,000 by default: four cells each, a
        # tenth of a second per resize with a 30k-initializer model)
        header.setResizeContentsPrecision(100)
        self.table.setMinimumHeight(24)  # the dock shares the side with others
        self.table.doubleClicked.connect(lambda _i: self.edit_selected())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.new_button = QPushButton("New…")
        self.new_button.clicked.connect(self.create_initializer)
        self.edit_button = QPushButton("Edit…")
        self.edit_button.setToolTip("Edit the selected initializer in the Tensor Editor")
        self.edit_button.clicked.connect(self.edit_selected)
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip("Delete the selected initializers and disconnect their users")
        self.delete_button.clicked.connect(self.delete_selected)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setVisible(False)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(4, 4, 4, 4)
        top_layout.addWidget(self.filter)
        top_layout.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        for button in (self.new_button, self.edit_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        top_layout.addLayout(buttons)
        top_layout.addWidget(self.message)
        self.bottom = QScrollArea()
        self.bottom.setWidgetResizable(True)
        self.bottom.setMinimumHeight(24)
        self.splitter = splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(self.bottom)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([330, 270])
        self.setWidget(splitter)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.refresh)
        window.currentTabChanged.connect(self._tab_changed)
        window.selectionChanged.connect(self._selection_changed)
        self.refresh()

    # --- following the window ------------------------------------------------------------
    def _tab_changed(self, tab: DocumentTab | None) -> None:
        if self.tab is not None:
            with contextlib.suppress(RuntimeError, TypeError):  # session already gone
                self.tab.session.changed.disconnect(self._doc_changed)
        self.tab = tab
        self.keys = list(tab.view.selected_keys()) if tab is not None else []
        if tab is not None:
            tab.session.changed.connect(self._doc_changed)
        self.refresh()

    def _selection_changed(self, keys: list[int]) -> None:
        self.keys = list(keys)
        self._timer.start()

    def _doc_changed(self, event: DocumentEvent) -> None:
        if event.kind not in (ChangeKind.POSITIONS, ChangeKind.SAVED):
            self._timer.start()

    def refresh(self) -> None:
        self._timer.stop()
        tab = self.tab
        selected = set(self.selected_names())
        doc = tab.session.doc if tab is not None else None
        self.model.refresh(doc, tab.view.scope_id if tab is not None else None)
        # "embedded" on every row tells nothing and takes the names' room: Storage shows
        # only where some initializer is stored outside the model file.
        external = any(is_external(t) for t in self.model.tensors)
        self.table.setColumnHidden(STORAGE_COLUMN, not external)
        if selected:  # select them again (found by name: no cell reads per row)
            flags = self.table.selectionModel().SelectionFlag
            for row, tensor in enumerate(self.model.tensors):
                if tensor.name in selected:
                    index = self.proxy.mapFromSource(self.model.index(row, 0))
                    if index.isValid():
                        self.table.selectionModel().select(index, flags.Select | flags.Rows)
        scope_ok = tab is not None and not tab.session.doc.scope(tab.view.scope_id).is_function
        self.new_button.setEnabled(scope_ok)
        self.new_button.setToolTip(
            "Create an initializer" if scope_ok else "A local function body has no initializers"
        )
        self._update_buttons()
        self._refresh_terminals()

    def _update_buttons(self) -> None:
        has = bool(self.selected_names())
        self.edit_button.setEnabled(len(self.selected_names()) == 1)
        self.delete_button.setEnabled(has)

    def _refresh_terminals(self) -> None:
        tab = self.tab
        panel: QWidget
        self.terminals = None
        if tab is None:
            panel = QLabel(self.window_.idle_text("edit its initializers"))
        else:
            scope = tab.session.doc.scope(tab.view.scope_id)
            nodes = [k for k in self.keys if scope.has_node(k)]
            if len(nodes) == 1 and not scope.is_function:
                self.terminals = TerminalPanel(
                    tab.session, tab.view.scope_id, nodes[0], self.edit_initializer
                )
                panel = self.terminals
            else:
                panel = QLabel("Select one node to see and connect its initializer inputs.")
        if isinstance(panel, QLabel):
            panel.setWordWrap(True)
            panel.setAlignment(Qt.AlignmentFlag.AlignTop)
            panel.setContentsMargins(8, 8, 8, 8)
        old = self.bottom.takeWidget()
        self.bottom.setWidget(panel)
        if old is not None:
            old.deleteLater()

    # --- actions -------------------------------------------------------------------------
    def selected_names(self) -> list[str]:
        rows = self.table.selectionModel().selectedRows(0)
        return [str(index.data()) for index in rows]

    def select_name(self, name: str) -> None:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data() == name:
                self.table.selectRow(row)
                return

    def _show(self, text: str) -> None:
        self.message.setText(text)
        self.message.setStyleSheet("color:#b00020;" if text else "")
        self.message.setVisible(bool(text))

    def create_initializer(self) -> None:
        tab = self.tab
        if tab is None:
            return
        tensor = create_initializer.ask_new_initializer(self, tab.session.doc, tab.view.scope_id)
        if tensor is not None and tab.session.push(AddInitializer(tab.view.scope_id, tensor)):
            self._show("")

    def delete_selected(self) -> None:
        tab = self.tab
        names = self.selected_names()
        if tab is None or not names:
            return
        tab.session.push(delete_edit(tab.session.doc, tab.view.scope_id, names))

    def edit_selected(self) -> None:
        names = self.selected_names()
        if len(names) == 1:
            self.edit_initializer(names[0])

    def edit_initializer(self, name: str) -> None:
        """Open ``name`` in the Tensor Editor; accepted values replace it (one undo step)."""
        tab = self.tab
        if tab is None:
            return
        tensor = tab.session.doc.scope(tab.view.scope_id).initializer(name)
        if tensor is None:
            self._show(f"no initializer named '{name}'")
            return
        try:
            array = tensor_array(tensor, tab.session.doc.base_dir)
        except (ValueError, OSError) as exc:
            self._show(f"cannot read '{name}': {exc}")
            return
        result = tensor_editor.edit_tensor(
            self, np.asarray(array), tensor.data_type, title=f"{name} — Tensor Editor"
        )
        if result is None:
            return
        values, elem_type = result
        try:
            new = make_tensor(name, values, elem_type)
        except TensorGenError as exc:
            self._show(str(exc))
            return
        if tab.session.push(ReplaceInitializer(tab.view.scope_id, new)):
            self._show(f"'{name}' is now stored in the model file" if is_external(tensor) else "")


def create_dock(window: MainWindow) -> QDockWidget:
    return InitializersDock(window)
