"""Layer Explorer (L-3): the current document's layers grouped by type, name prefix or
module scope (a tree: ``m ▸ model ▸ layers.3 ▸ self_attn``),
with a name filter, a sort toggle, advanced filters (gear, with a red badge counting them)
by layer type and attribute value, and a TRT-Prec column. Double-click centres the canvas
on a layer; the selection follows the canvas both ways."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex, QPoint, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from designer.core.document import DocumentEvent
from designer.ui.canvas.focus_view import add_focus_action
from designer.ui.canvas.precision_menu import add_precision_submenu
from designer.ui.qtmodels.explorer_model import ExplorerModel
from designer.ui.widgets.badge_button import BadgeToolButton
from designer.ui.widgets.filter_advanced import AdvancedFilters
from designer.ui.widgets.filter_line import FilterLineEdit

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow
    from designer.ui.session import DocumentSession

GROUP_LABELS = {
    "type": "Group by type",
    "name": "Group by name",
    "scope": "Group by scope",
    "none": "No grouping",
}
EXPAND_ALL_LIMIT = 5000  # expand every group after filtering when no more rows are shown
EXPAND_GROUP_LIMIT = 5000  # a canvas selection opens its groups up to this size


class ExplorerPanel(QWidget):
    def __init__(self, window: MainWindow) -> None:
        super().__init__()
        self.window_ = window
        self.tab: DocumentTab | None = None
        self.model = ExplorerModel(self)
        self._events: list[DocumentEvent] = []
        self._syncing = False
        self._selected: set[int] = set()  # layer keys selected in the tree
        self._expanded: set[str] = set()
        self._in_view = True  # until the dock says otherwise (set_in_view)
        self._stale = False  # layers not read: the panel was hidden (see follow)

        self.search = FilterLineEdit("Filter by name")
        self.search.filterChanged.connect(self._filter)
        self.grouping = QComboBox()
        for key, label in GROUP_LABELS.items():
            self.grouping.addItem(label, key)
        self.grouping.setToolTip(
            "Type: one group per operator type. Name: groups by the name's prefix "
            "(up to its last '/', '.' or '_'). Scope: a tree of the model's modules, from "
            "scoped node names or the exporter's name_scopes metadata."
        )
        self.grouping.currentIndexChanged.connect(lambda _i: self._grouping_changed())
        self.order = QToolButton()
        self.order.setText("A→Z")
        self.order.setCheckable(True)
        self.order.setToolTip("Sort order (click to reverse)")
        self.order.toggled.connect(self._toggle_order)
        self.gear = BadgeToolButton()
        self.gear.setText("⚙")
        self.gear.setMinimumWidth(34)
        self.gear.setCheckable(True)
        self.gear.setToolTip("Advanced filters: by layer type and by attribute value")
        self.gear.toggled.connect(self._show_advanced)
        self.advanced = AdvancedFilters(self.model)
        self.advanced.setVisible(False)
        self.advanced.changed.connect(self._advanced_changed)

        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self._indentation = self.tree.indentation()
        self.tree.setMinimumHeight(40)  # many docks share the right side
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(1, 110)
        header.resizeSection(2, 70)
        header.setSectionsClickable(True)  # click a column to sort by it (TRT-Prec too)
        header.setSortIndicatorShown(True)
        header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        header.sortIndicatorChanged.connect(self._sort_changed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.doubleClicked.connect(self._double_clicked)
        self.tree.selectionModel().selectionChanged.connect(self._tree_selection_changed)
        self.model.modelAboutToBeReset.connect(self._before_reset)
        self.model.modelReset.connect(self._after_reset)
        self.status = QLabel()
        self.status.setStyleSheet("color: palette(mid); padding: 2px;")
        self.status.setWordWrap(True)  # one line of the longest text widened the window

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.search, 1)
        top.addWidget(self.grouping)
        top.addWidget(self.order)
        top.addWidget(self.gear)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.advanced)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.status)
        window.currentTabChanged.connect(self.follow)
        window.selectionChanged.connect(self.select_keys)
        self.follow(window.tab())

    # --- following the document ------------------------------------------------------------
    def follow(self, tab: DocumentTab | None) -> None:
        """Show the layers of ``tab``'s document. While the dock is hidden (closed, or behind
        another tab) they are read only once it is shown: a row for each of 100k layers,
        sorted, takes about half a second, and nobody would see it."""
        self.tab = tab
        self._events.clear()
        if tab is not None:
            session = tab.session
            if not session.property("explorer_follows"):  # connected once per session
                session.setProperty("explorer_follows", True)
                session.changed.connect(lambda event, s=session: self._on_changed(s, event))
        self._stale = tab is not None and not self._in_view
        if self._stale:
            self.model.load(None)
        else:
            self._load()

    def _load(self) -> None:
        tab = self.tab
        if tab is None:
            self.model.load(None)
        else:
            self.model.load(tab.session.doc, tab.view.scope_id)
            self._selected = set()
            self.select_keys(tab.view.selected_keys())
        self.advanced.reset_choices()

    def set_in_view(self, shown: bool) -> None:
        """The dock was shown (or its tab selected), or hidden (``QDockWidget``'s
        ``visibilityChanged``)."""
        self._in_view = shown
        if shown and self._stale:  # the document was opened or changed while hidden
            self._stale = False
            self._load()

    def _on_changed(self, session: DocumentSession, event: DocumentEvent) -> None:
        if self.tab is None or session is not self.tab.session:
            return  # a document in another tab
        if self._stale:
            return  # read as a whole when the panel is shown
        if not self._events:
            QTimer.singleShot(0, self.flush)
        self._events.append(event)

    def flush(self) -> None:
        """Apply the document events received since the last flush (one regroup)."""
        events, self._events = self._events, []
        if events and self.tab is not None:
            self.model.apply_events(events)
            self._update_status()

    # --- filters ---------------------------------------------------------------------------
    def _filter(self, text: str) -> None:
        self.model.set_name_filter(text)
        if text.strip() and self.model.visible_count() <= EXPAND_ALL_LIMIT:
            self.tree.expandAll()

    def _grouping_changed(self) -> None:
        grouping = self.grouping.currentData()
        # the scope tree nests deeply: a narrow indent keeps the names readable
        self.tree.setIndentation(10 if grouping == "scope" else self._indentation)
        self.model.set_grouping(grouping)

    def _toggle_order(self, descending: bool) -> None:
        self.order.setText("Z→A" if descending else "A→Z")
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        header = self.tree.header()
        if header.sortIndicatorOrder() != order:
            header.setSortIndicator(self.model.sort_column, order)  # sorts in _sort_changed
        else:
            self.model.set_ascending(not descending)

    def _sort_changed(self, column: int, order: Qt.SortOrder) -> None:
        descending = order == Qt.SortOrder.DescendingOrder
        self.order.blockSignals(True)
        self.order.setChecked(descending)
        self.order.setText("Z→A" if descending else "A→Z")
        self.order.blockSignals(False)
        self.model.sort(column, order)

    def _context_menu(self, pos: QPoint) -> None:
        """Set Layer Precision ▸ for the selected layers (the clicked one when it is not
        selected); Focus for a module row of the scope tree."""
        if self.tab is None:
            return
        index = self.tree.indexAt(pos)
        key = self.model.key_of(index)
        keys = self.selected_keys()
        if key is not None and key not in keys:
            keys = [key]
        # a module row of the scope tree: Focus shows that module alone on the canvas
        group = self.model.group_label(index) if self.model.tree is not None else None
        if not keys and not group:
            return
        menu = QMenu(self.tree)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one menu per click
        if group:
            add_focus_action(menu, self.tab.view, group)
        if keys:
            add_precision_submenu(menu, self.tab.session, self.tab.view.scope_id, keys)
        menu.popup(self.tree.viewport().mapToGlobal(pos))

    def _show_advanced(self, on: bool) -> None:
        if on:
            self.advanced.fill_choices()
        self.advanced.setVisible(on)

    def _advanced_changed(self) -> None:
        self.gear.set_count(self.model.advanced_count)
        if self.model.advanced_count and self.model.visible_count() <= EXPAND_ALL_LIMIT:
            self.tree.expandAll()

    def _before_reset(self) -> None:
        self._syncing = True  # the reset clears the tree's selection: not a user action
        self._expanded = set()
        if not self.model.grouped:
            return  # layer rows only: nothing to expand
        stack = [self.model.index(r, 0) for r in range(self.model.rowCount())]
        while stack:  # expanded group rows (at every level of the scope tree)
            index = stack.pop()
            if self.tree.isExpanded(index):
                label = self.model.group_label(index)
                if label is not None:
                    self._expanded.add(label)
                if self.model.tree is not None:
                    count = self.model.rowCount(index)
                    stack.extend(self.model.index(r, 0, index) for r in range(count))

    def _after_reset(self) -> None:
        self._syncing = False
        self._selected = set()
        for label in self._expanded:
            self.tree.setExpanded(self.model.group_row(label), True)
        if self.tab is not None:
            self.select_keys(self.tab.view.selected_keys())
        self._update_status()

    def _update_status(self) -> None:
        total = len(self.model.records)
        shown = self.model.visible_count()
        text = f"{total:,} layers" if shown == total else f"{shown:,} of {total:,} layers shown"
        self.status.setText(
            text if self.tab is not None else self.window_.idle_text("see its layers")
        )

    # --- selection -------------------------------------------------------------------------
    def selected_keys(self) -> list[int]:
        keys = (self.model.key_of(i) for i in self.tree.selectionModel().selectedRows())
        return [k for k in keys if k is not None]

    def select_keys(self, keys: list[int]) -> None:
        """Select the rows of ``keys`` (from the canvas) without echoing back."""
        if self._stale or set(keys) == self._selected:
            return  # (a hidden panel takes the canvas's selection when it is shown)
        self._selected = set(keys)
        selection = QItemSelection()
        last = self.model.columnCount() - 1
        runs = self.model.rows_of_keys(keys)
        for parent, first, end in runs:
            selection.select(
                self.model.index(first, 0, parent), self.model.index(end, last, parent)
            )
        self._syncing = True
        try:
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
            self.tree.selectionModel().select(selection, flags)
            if runs:
                parent, first, _end = runs[0]
                for run_parent in {r[0] for r in runs[:50] if r[0].isValid()}:
                    if self.model.rowCount(run_parent) <= EXPAND_GROUP_LIMIT:
                        self._expand_with_ancestors(run_parent)
                if not parent.isValid() or self.tree.isExpanded(parent):
                    self.tree.scrollTo(self.model.index(first, 0, parent))
        finally:
            self._syncing = False

    def _expand_with_ancestors(self, index: QModelIndex) -> None:
        chain = []
        while index.isValid():
            chain.append(index)
            index = self.model.parent(index)
        for item in reversed(chain):
            self.tree.expand(item)

    def _tree_selection_changed(self) -> None:
        if self._syncing or self.tab is None:
            return
        keys = self.selected_keys()
        self._selected = set(keys)
        if self._selected != set(self.tab.view.selected_keys()):
            self.tab.view.select_keys(keys)

    def _double_clicked(self, index: QModelIndex) -> None:
        key = self.model.key_of(index)
        if key is None or self.tab is None:
            return
        self.tab.view.select_keys([key])
        self.tab.view.center_on(key)


def create_dock(window: MainWindow) -> QDockWidget:
    dock = QDockWidget("Layer Explorer", window)
    dock.setObjectName("dock_explorer")
    panel = ExplorerPanel(window)
    dock.setWidget(panel)
    dock.visibilityChanged.connect(panel.set_in_view)
    return dock
