"""View ▸ Module Scopes: collapse the canvas to a level of the model's module tree
(``layers``…), expand all; on the canvas, right-click a box to expand it (or double-click
it) and a node to collapse one of the modules holding it; *Focus* shows one module alone,
with the breadcrumb bar above the canvas (added to each tab here) to go back up. View
state only: no model edit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from designer.core.focus import is_stub_key
from designer.core.viewgraph import NodeKind
from designer.ui.canvas.breadcrumbs import BreadcrumbBar
from designer.ui.canvas.collapse_view import (
    collapse_group,
    collapse_to_depth,
    expand_group,
    hierarchy_of,
)
from designer.ui.canvas.expand_all import expand_all
from designer.ui.canvas.focus_view import focus_of, set_focus
from designer.ui.canvas.items import NodeItem

if TYPE_CHECKING:
    from designer.ui.canvas.view import CanvasView
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow

DEPTHS = 6  # "Collapse to Level" offers levels 0..DEPTHS-1 besides Auto


def collapse_view(window: MainWindow, depth: int | str) -> None:
    view = window.current_view()
    if view is None:
        return
    hierarchy = hierarchy_of(view.canvas)
    if not hierarchy.root.children:
        window.statusBar().showMessage(
            "This graph has no module scopes (no scoped node names or name_scopes metadata)",
            8000,
        )
        return
    used = collapse_to_depth(view, depth)
    boxes = len(view.canvas.graph.nodes)
    window.statusBar().showMessage(f"Collapsed to level {used}: {boxes} boxes", 8000)


def _menu_hook(menu: QMenu, view: CanvasView, scene_pos: QPointF) -> None:
    item = next((i for i in view.canvas.items(scene_pos) if isinstance(i, NodeItem)), None)
    focused = focus_of(view.canvas) is not None
    if item is None or is_stub_key(item.view.key):
        if view.canvas.collapsed or focused:
            menu.addSeparator()
        if view.canvas.collapsed:
            menu.addAction("Expand All Modules").triggered.connect(
                lambda _c=False: expand_all(view)
            )
        if focused:
            _add_unfocus(menu, view)
        return
    node = item.view
    menu.addSeparator()
    if node.kind is NodeKind.GROUP:
        group_id = node.group
        entry = menu.addAction(f"Expand {node.name}")
        entry.triggered.connect(lambda _c=False, g=group_id: expand_group(view, g))
        menu.addAction(f"Focus {node.name}").triggered.connect(
            lambda _c=False, g=group_id: set_focus(view, g)
        )
        menu.addAction("Expand All Modules").triggered.connect(lambda _c=False: expand_all(view))
        if focused:
            _add_unfocus(menu, view)
        return
    path = hierarchy_of(view.canvas).path_of(node.key)
    if path:
        sub = menu.addMenu("Collapse Module")
        for group in reversed(path):  # innermost first
            action = sub.addAction(group.id)
            action.triggered.connect(lambda _c=False, g=group.id: collapse_group(view, g))
        focus = menu.addMenu("Focus Module")
        for group in reversed(path):
            action = focus.addAction(group.id)
            action.triggered.connect(lambda _c=False, g=group.id: set_focus(view, g))
    if focused:
        _add_unfocus(menu, view)


def _add_unfocus(menu: QMenu, view: CanvasView) -> None:
    menu.addAction("Show Whole Graph").triggered.connect(lambda _c=False: set_focus(view, None))


def install(window: MainWindow) -> None:
    view_menu = window.menus["View"]
    view_menu.addSeparator()
    scopes = view_menu.addMenu("Module &Scopes")
    scopes.setToolTipsVisible(True)
    levels = scopes.addMenu("&Collapse to Level")
    auto = QAction("&Auto (a readable first view)", window)
    auto.triggered.connect(lambda _c=False: collapse_view(window, "auto"))
    levels.addAction(auto)
    for depth in range(DEPTHS):
        action = QAction(f"Level &{depth}", window)
        action.setToolTip(f"Keep {depth} levels of the module tree open")
        action.triggered.connect(lambda _c=False, d=depth: collapse_view(window, d))
        levels.addAction(action)
    expand = QAction("&Expand All Modules", window)
    expand.triggered.connect(lambda _c=False: _expand_current(window))
    scopes.addAction(expand)
    scopes.addSeparator()
    large = QAction("Open &Large Models Collapsed", window)
    large.setCheckable(True)
    large.setChecked(window.settings.collapse_large_models)
    large.setToolTip(
        f"Models with more than {window.settings.collapse_above_nodes:,} nodes open collapsed "
        "to the level that keeps the first view readable"
    )
    large.toggled.connect(lambda on: setattr(window.settings, "collapse_large_models", on))
    scopes.addAction(large)
    window.actions_by_name["collapse_auto"] = auto
    window.actions_by_name["expand_all_modules"] = expand
    window.actions_by_name["collapse_large_models"] = large
    window.currentTabChanged.connect(lambda tab: _collapse_if_large(window, tab))

    def enable(tab: object) -> None:
        scopes.setEnabled(tab is not None)

    enable(window.tab())
    window.currentTabChanged.connect(enable)
    window.canvas_menu_hooks.append(_menu_hook)


def _expand_current(window: MainWindow) -> None:
    view = window.current_view()
    if view is not None:
        expand_all(view)


def _collapse_if_large(window: MainWindow, tab: DocumentTab | None) -> None:
    """Once per tab: add the breadcrumb bar above its canvas; collapse a large main graph
    (after its first layout) unless the option is off or its layout file placed its nodes
    (then it shows as it was saved, collapsed or not: collapsing afresh would lay the boxes
    out anew over the user's arrangement)."""
    if tab is None or tab.property("collapse_checked"):
        return
    tab.setProperty("collapse_checked", True)
    tab.toolbar.insertWidget(1, BreadcrumbBar(tab.view, tab), 1)
    view = tab.view
    if not window.settings.collapse_large_models or not tab.scope_id.is_main:
        return
    size = len(tab.session.doc.scope(tab.scope_id))
    if view.canvas.collapsed or size <= window.settings.collapse_above_nodes:
        return
    if tab.session.layout_restored:
        return

    def collapse() -> None:
        if not view.canvas.collapsed and hierarchy_of(view.canvas).root.children:
            used = collapse_to_depth(view, "auto")
            window.statusBar().showMessage(
                f"Large model: collapsed to level {used} (View ▸ Module Scopes ▸ Expand All)",
                8000,
            )

    if view.job is None:
        collapse()
        return

    def done(busy: bool) -> None:
        if not busy:  # the view draws the finished layout first: collapse right after
            view.layoutBusy.disconnect(done)
            QTimer.singleShot(0, view, collapse)

    view.layoutBusy.connect(done)
