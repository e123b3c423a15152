"""Layer Palette (L-1): the operators of the current document's opset imports by name, by
collection (domain/opset) or by category, sortable and filterable. Drag one onto the canvas
(or double-click it) to add a node with a generated unique name."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPointF,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from designer.core.errors import DesignerError
from designer.ui.canvas.view import CanvasView
from designer.ui.params.node_state import scope_opsets
from designer.ui.qtmodels.palette_model import (
    GROUP_ROLE,
    OP_ROLE,
    SORT_ROLE,
    OpEntry,
    PaletteModel,
    add_op_edit,
    contrib_schemas,
    decode_op,
    function_entries,
    imports_contrib,
    palette_entries,
)
from designer.ui.widgets.filter_line import FilterLineEdit

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow

VIEW_LABELS = {"category": "By category", "collection": "By collection", "name": "By name"}


def add_operator(view: CanvasView, domain: str, op_type: str, at: QPointF) -> int | None:
    """Add ``op_type`` centred on scene point ``at`` of ``view`` as one undo step, select
    it and return its node key; None (with a status message) when refused."""
    view.flush()
    try:
        edit = add_op_edit(view.session.doc, view.scope_id, domain, op_type, (at.x(), at.y()))
    except DesignerError as exc:
        view.statusMessage.emit(f"Cannot add {op_type}: {exc}")
        return None
    if not view.session.push(edit):
        return None
    view.flush()
    assert edit.key is not None
    view.select_keys([edit.key])
    return edit.key


class CanvasDropFilter(QObject):
    """Event filter on canvas viewports accepting operators dragged from the palette."""

    def attach(self, view: CanvasView) -> None:
        if not view.property("palette_drop"):
            view.setProperty("palette_drop", True)
            view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop):
            return False
        assert isinstance(event, QDragEnterEvent | QDragMoveEvent | QDropEvent)
        op = decode_op(event.mimeData())
        view = watched.parent()
        if op is None or not isinstance(view, CanvasView):
            return False
        event.setDropAction(Qt.DropAction.CopyAction)
        event.accept()
        if kind == QEvent.Type.Drop:
            add_operator(view, op[0], op[1], view.mapToScene(event.position().toPoint()))
        return True


class _SortProxy(QSortFilterProxyModel):
    """Sorted and filtered operators; a group's count is of the operators shown in it."""

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if role == Qt.ItemDataRole.DisplayRole:
            label = super().data(index, GROUP_ROLE)
            if label is not None:
                return f"{label} ({self.rowCount(index)})"
        return super().data(index, role)

    def lessThan(
        self,
        left: QModelIndex | QPersistentModelIndex,
        right: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        return str(left.data(SORT_ROLE)) < str(right.data(SORT_ROLE))


class PalettePanel(QWidget):
    def __init__(self, window: MainWindow) -> None:
        super().__init__()
        self.window_ = window
        self.drop_filter = CanvasDropFilter(self)
        self.model = PaletteModel(self)
        self.proxy = _SortProxy(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setRecursiveFilteringEnabled(True)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setSortRole(SORT_ROLE)
        self._opsets: dict[str, int] | None = None
        self._functions: list[OpEntry] = []

        self.search = FilterLineEdit("Filter operators", delay_ms=80)
        self.search.filterChanged.connect(self.set_filter)
        self.arrange = QComboBox()
        for key, label in VIEW_LABELS.items():
            self.arrange.addItem(label, key)
        self.arrange.setToolTip(
            "Arrange operators by name, by collection (domain and opset) or by category"
        )
        self.arrange.currentIndexChanged.connect(lambda _i: self.refresh(force=True))
        self.order = QToolButton()
        self.order.setCheckable(True)
        self.order.setText("A→Z")
        self.order.setToolTip("Sort order (click to reverse)")
        self.order.toggled.connect(self._sort)
        self.tree = QTreeView()
        self.tree.setModel(self.proxy)
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setMinimumHeight(40)  # many docks share the right side
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.doubleClicked.connect(self._double_clicked)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setStyleSheet("color: palette(mid); padding: 2px;")

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.search, 1)
        top.addWidget(self.arrange)
        top.addWidget(self.order)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.status)
        window.currentTabChanged.connect(self._tab_changed)
        contrib_schemas().ready.connect(self._contrib_ready)  # a method: Qt disconnects it
        self.refresh()

    # --- content ---------------------------------------------------------------------------
    def _tab_changed(self, tab: DocumentTab | None) -> None:
        if tab is not None:
            self.drop_filter.attach(tab.view)
            if not tab.session.property("palette_follows"):
                tab.session.setProperty("palette_follows", True)
                tab.session.changed.connect(lambda _e: self.refresh())  # opsets may change
        self.refresh()

    def _contrib_ready(self, _status: str) -> None:
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Rebuild the list when the opset imports of the current tab's scope changed (or
        ``force``)."""
        tab = self.window_.tab()
        opsets: dict[str, int] = {}
        if tab is not None:  # a function tab offers the function's own opset imports
            with contextlib.suppress(KeyError):  # its function was just removed
                opsets = scope_opsets(tab.session.doc, tab.scope_id)
        functions = function_entries(tab.session.doc, tab.scope_id) if tab is not None else []
        if opsets == self._opsets and functions == self._functions and not force:
            return
        self._opsets = opsets
        self._functions = functions
        notes = []
        entries = palette_entries(opsets) + functions
        loader = contrib_schemas()
        if imports_contrib(opsets):
            if not loader.ensure():
                notes.append("Loading ONNX Runtime contrib operators…")
            elif not any(imports_contrib([e.domain]) for e in entries):
                notes.append(loader.status)
        self.model.set_entries(entries, self.arrange.currentData())
        self._sort()
        if self.search.text():
            self.tree.expandAll()
        if tab is None:
            notes.insert(0, self.window_.idle_text("see its operators"))
        else:
            imports = ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in sorted(opsets.items()))
            notes.insert(0, f"{len(entries)} operators ({imports}). Drag one onto the canvas.")
        self.status.setText("\n".join(notes))

    def set_filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        if text.strip():
            self.tree.expandAll()

    def set_view(self, view: str) -> None:
        """'name', 'collection' or 'category'."""
        self.arrange.setCurrentIndex(self.arrange.findData(view))

    def _sort(self, _checked: bool = False) -> None:
        descending = self.order.isChecked()
        self.order.setText("Z→A" if descending else "A→Z")
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        self.proxy.sort(0, order)

    def _double_clicked(self, index: QModelIndex) -> None:
        op = index.data(OP_ROLE)
        view = self.window_.current_view()
        if not op or view is None:
            return
        centre = view.mapToScene(view.viewport().rect().center())
        add_operator(view, op[0], op[1], centre)


def create_dock(window: MainWindow) -> QDockWidget:
    dock = QDockWidget("Layer Palette", window)
    dock.setObjectName("dock_palette")
    dock.setWidget(PalettePanel(window))
    return dock
