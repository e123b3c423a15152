"""Canvas context menu: *Group Selection (view only)…* names the selected nodes as one
group that collapses, expands and can be focused like a module scope, without changing the
model (unlike *Group into Local Function*); *Ungroup* drops such a group again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMenu

from designer.core.view_groups import VIEW_KIND, ViewGroupError, check_name
from designer.core.viewgraph import NodeKind
from designer.ui.canvas.collapse_view import hierarchy_of
from designer.ui.canvas.hand_groups import group_selection, ungroup
from designer.ui.canvas.items import NodeItem

if TYPE_CHECKING:
    from designer.ui.canvas.view import CanvasView
    from designer.ui.main_window import MainWindow


def ask_and_group(window: MainWindow, view: CanvasView) -> None:
    """Ask for a name, then group the selection (a bad name: one line, nothing changed)."""
    scene = view.canvas
    name, ok = QInputDialog.getText(
        window, "Group Selection (view only)", "Group name:", QLineEdit.EchoMode.Normal, "group"
    )
    if not ok:
        return
    try:
        check_name(scene.doc, scene.scope_id, name)
        gid = group_selection(view, name)
    except ViewGroupError as exc:
        window.statusBar().showMessage(f"Cannot group: {exc}", 8000)
        return
    _refresh_explorer(window)
    window.statusBar().showMessage(
        f"View group {gid} made (the model is unchanged; saved in the layout file)", 8000
    )


def ask_and_ungroup(window: MainWindow, view: CanvasView, group_id: str) -> None:
    if ungroup(view, group_id):
        _refresh_explorer(window)


def _refresh_explorer(window: MainWindow) -> None:
    """The Layer Explorer's scope tree shows the changed groups (it caches the tree)."""
    from designer.ui.docks.explorer import ExplorerPanel

    for dock in window.docks:
        panel = dock.widget()
        if isinstance(panel, ExplorerPanel):
            panel.follow(window.tab())


def _hook(window: MainWindow, menu: QMenu, view: CanvasView, scene_pos: QPointF) -> None:
    item = next((i for i in view.canvas.items(scene_pos) if isinstance(i, NodeItem)), None)
    selected = [k for k in view.selected_keys() if k >= 0]
    menu.addSeparator()
    action = menu.addAction("Group Selection (view only)…")
    action.setToolTip("A named group drawn as one box; the model is not changed")
    action.setEnabled(bool(selected))
    action.triggered.connect(lambda _c=False: ask_and_group(window, view))
    if item is None:
        return
    hierarchy = hierarchy_of(view.canvas)
    node = item.view
    if node.kind is NodeKind.GROUP:
        box = hierarchy.by_id.get(node.group)
        path = [] if box is None else [box]
        while box is not None and box.parent is not None:
            box = box.parent
            path.append(box)
    else:
        path = list(reversed(hierarchy.path_of(node.key)))
    for group in path:  # innermost first
        if group.kind == VIEW_KIND:
            entry = menu.addAction(f"Ungroup {group.view_name}")
            entry.triggered.connect(lambda _c=False, g=group.id: ask_and_ungroup(window, view, g))


def install(window: MainWindow) -> None:
    window.canvas_menu_hooks.append(lambda menu, view, pos: _hook(window, menu, view, pos))
