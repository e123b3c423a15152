"""TensorRT settings from the canvas (X-1, X-2): right-click a graph input > Set TensorRT
Optimization Profile…, right-click nodes > Set Layer Precision ▸ (the whole selection when
the clicked node is part of it, one undo step)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QMenu, QWidget

from designer.core.viewgraph import NodeKind
from designer.ui.canvas.items import NodeItem
from designer.ui.canvas.precision_menu import add_precision_submenu
from designer.ui.canvas.view import CanvasView

if TYPE_CHECKING:
    from designer.ui.dialogs.trt_profile_dialog import TrtProfileDialog
    from designer.ui.main_window import MainWindow
    from designer.ui.session import DocumentSession

PROFILE_ACTION = "Set TensorRT Optimization Profile…"


def node_at(view: CanvasView, scene_pos: QPointF) -> NodeItem | None:
    return next((i for i in view.canvas.items(scene_pos) if isinstance(i, NodeItem)), None)


def precision_targets(view: CanvasView, clicked: NodeItem | None) -> list[int]:
    """Operator nodes the precision menu acts on: the selection when the clicked node is in
    it (or nothing was clicked), else the clicked node alone."""
    ops = {
        item.key
        for item in view.canvas.selectedItems()  # O(selection), not O(nodes)
        if isinstance(item, NodeItem) and item.view.kind == NodeKind.OP
    }
    if clicked is None:
        return sorted(ops)
    if clicked.view.kind != NodeKind.OP:
        return []
    return sorted(ops) if clicked.key in ops else [clicked.key]


def open_profile_dialog(
    session: DocumentSession, name: str, parent: QWidget | None
) -> TrtProfileDialog:
    """Show the profile dialog for input ``name`` (window-modal, deleted when closed)."""
    from designer.ui.dialogs.trt_profile_dialog import TrtProfileDialog

    dialog = TrtProfileDialog(session, name, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def canvas_hook(window: MainWindow, menu: QMenu, view: CanvasView, scene_pos: QPointF) -> None:
    clicked = node_at(view, scene_pos)
    is_input = clicked is not None and clicked.view.kind == NodeKind.INPUT
    keys = precision_targets(view, clicked)
    if not keys and not is_input:
        return
    menu.addSeparator()
    if clicked is not None and is_input and view.scope_id.is_main:
        name = clicked.view.name
        entry = menu.addAction(PROFILE_ACTION)
        entry.setObjectName("set_trt_profile")
        entry.triggered.connect(lambda _c=False: open_profile_dialog(view.session, name, window))
    if keys:
        add_precision_submenu(menu, view.session, view.scope_id, keys)


def install(window: MainWindow) -> None:
    window.canvas_menu_hooks.append(
        lambda menu, view, scene_pos: canvas_hook(window, menu, view, scene_pos)
    )
