"""Quick add (L-2): Ctrl+Space over the canvas opens a search popup at the cursor; typing
filters the operators (fuzzy match on the name), Enter or a double-click adds the chosen
one under the cursor, Esc closes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, QPointF, Qt
from PySide6.QtGui import (
    QAction,
    QCursor,
    QKeyEvent,
    QKeySequence,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import QFrame, QLabel, QLineEdit, QListView, QVBoxLayout, QWidget

from designer.ui.canvas import style as st
from designer.ui.canvas.view import CanvasView
from designer.ui.docks.palette import add_operator
from designer.ui.qtmodels.palette_model import (
    OP_ROLE,
    OpEntry,
    contrib_schemas,
    function_entries,
    fuzzy_filter,
    imports_contrib,
    palette_entries,
)
from designer.ui.tools.graph_io import free_scene_point

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

SHORTCUT = "Ctrl+Space"
MAX_ROWS = 200


class QuickAddPopup(QFrame):
    """The search popup of one canvas; adds at scene point ``at`` and closes."""

    def __init__(self, view: CanvasView, at: QPointF, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.view = view
        self.at = at
        self.added_key: int | None = None
        opsets = view.session.doc.opset_imports
        if imports_contrib(opsets):
            contrib_schemas().ensure()  # ready for next time if not loaded yet
        self.entries: list[OpEntry] = palette_entries(opsets) + function_entries(
            view.session.doc, view.scope_id
        )
        self.search = QLineEdit()
        self.search.setPlaceholderText("Add layer: type to search")
        self.search.textChanged.connect(self.set_query)
        self.search.installEventFilter(self)
        self.model = QStandardItemModel(self)
        self.list = QListView()
        self.list.setModel(self.model)
        self.list.setUniformItemSizes(True)
        self.list.setEditTriggers(QListView.EditTrigger.NoEditTriggers)
        self.list.doubleClicked.connect(self._activate)
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hint = QLabel()
        self.hint.setStyleSheet("color: palette(mid);")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.hint)
        self.resize(280, 320)
        self.set_query("")

    def set_query(self, text: str) -> None:
        matches = fuzzy_filter(text, self.entries) if text.strip() else self.entries
        self.model.clear()
        for entry in matches[:MAX_ROWS]:
            item = QStandardItem(entry.label)
            item.setData((entry.domain, entry.name), OP_ROLE)
            item.setToolTip(entry.summary)
            item.setEditable(False)
            self.model.appendRow(item)
        if matches:
            self.list.setCurrentIndex(self.model.index(0, 0))
            shown = f"{min(len(matches), MAX_ROWS)} of {len(matches)}"
            self.hint.setText(f"{shown} · Enter adds · Esc closes")
        else:
            self.hint.setText(f"No operator matches '{text.strip()}'")

    def current_op(self) -> tuple[str, str] | None:
        op = self.list.currentIndex().data(OP_ROLE)
        return (str(op[0]), str(op[1])) if op else None

    def add_current(self) -> None:
        op = self.current_op()
        if op is None:
            return
        self.added_key = add_operator(self.view, op[0], op[1], self.at)
        self.close()

    def _activate(self, index: QModelIndex) -> None:
        self.list.setCurrentIndex(index)
        self.add_current()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.search and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.add_current()
                return True
            if key == Qt.Key.Key_Escape:
                self.close()
                return True
            if key in (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
                self._move(key)
                return True
        return super().eventFilter(watched, event)

    def _move(self, key: int) -> None:
        rows = self.model.rowCount()
        if not rows:
            return
        steps: dict[int, int] = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1, Qt.Key.Key_PageUp: -10}
        step = steps.get(key, 10)
        row = min(rows - 1, max(0, self.list.currentIndex().row() + step))
        self.list.setCurrentIndex(self.model.index(row, 0))


def open_quick_add(window: MainWindow, global_pos: QPoint | None = None) -> QuickAddPopup | None:
    """Open the popup for the current canvas at ``global_pos`` (the cursor by default; the
    centre of the canvas when the cursor is elsewhere)."""
    view = window.current_view()
    if view is None:
        window.statusBar().showMessage("Quick add: open or create a model first", 5000)
        return None
    pos = QCursor.pos() if global_pos is None else global_pos
    local = view.viewport().mapFromGlobal(pos)
    at = view.mapToScene(local)
    if not view.viewport().rect().contains(local):
        local = view.viewport().rect().center()
        pos = view.viewport().mapToGlobal(local)
        # not where the user points: a free spot near the centre, not on the node there
        w, h = st.MIN_WIDTH, st.OP_HEIGHT  # the popup places the node centred on ``at``
        at = free_scene_point(view, view.mapToScene(local), w, h) + QPointF(w / 2, h / 2)
    popup = QuickAddPopup(view, at, window)
    popup.move(pos)
    popup.show()
    popup.search.setFocus()
    return popup


def install(window: MainWindow) -> None:
    action = QAction("&Quick Add Layer…", window)
    action.setShortcut(QKeySequence(SHORTCUT))
    action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    action.triggered.connect(lambda _checked=False: open_quick_add(window))
    window.addAction(action)
    edit_menu = window.menus["Edit"]  # type: ignore[attr-defined, unused-ignore]
    edit_menu.addSeparator()
    edit_menu.addAction(action)
    window.actions_by_name["quick_add"] = action

    def update(tab: object) -> None:
        action.setEnabled(tab is not None)
        action.setToolTip(
            "Search an operator and add it under the mouse cursor (Ctrl+Space)"
            if tab is not None
            else "Open or create a model to add layers"
        )

    window.currentTabChanged.connect(update)
    update(window.tab())
