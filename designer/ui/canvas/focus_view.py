"""Focus on one module group: the canvas shows that group alone (its nodes where the whole
graph has them, its border values as input/output stubs), until focus returns to the whole
graph. View state of one canvas, not saved and not a model edit.

The focused group lives in a :class:`FocusState` child of the scene, which tells listeners
(the breadcrumb bar) when it changes. The scene draws through
:func:`designer.ui.canvas.collapse_view.collapsed_graph`, which cuts the graph down with
:func:`designer.core.focus.focus_graph` before collapsing what is collapsed inside.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QGraphicsItem, QMenu

from designer.core.document import Position
from designer.core.focus import ancestors, focus_graph, is_stub_key
from designer.core.hierarchy import Hierarchy
from designer.core.viewgraph import NodeKind, ViewGraph
from designer.ui.canvas import style as st

if TYPE_CHECKING:
    from designer.ui.canvas.scene import CanvasScene
    from designer.ui.canvas.view import CanvasView

#: Vertical room between a stub and the node it feeds (or is fed by): stubs sit in the
#: gap between rows of the layout.
STUB_GAP = 18.0
#: Horizontal step between stubs above one reader.
STUB_STEP = 150.0


class FocusState(QObject):
    """The focused group id of one scene (None: the whole graph); ``changed`` carries the
    new id ("" for the whole graph: Qt signals do not carry None portably)."""

    changed = Signal(str)

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.group: str | None = None

    def set(self, group_id: str | None) -> None:
        if group_id != self.group:
            self.group = group_id
            self.changed.emit(group_id or "")


def focus_state(scene: CanvasScene) -> FocusState:
    """The scene's focus state (made on first use; it lives and dies with the scene)."""
    state = scene.findChild(FocusState)
    if state is None:
        state = FocusState(scene)
    return state


def focus_of(scene: CanvasScene) -> str | None:
    """The focused group id of ``scene``; None when it shows the whole graph."""
    state = scene.findChild(FocusState)
    return state.group if state is not None else None


def focused_graph(
    scene: CanvasScene, graph: ViewGraph, hierarchy: Hierarchy
) -> tuple[ViewGraph, set[str]]:
    """``graph`` cut down to the focused group, and the collapsed ids to apply inside it
    (the focused group and those holding it stay open). A focused group that no longer
    exists (an edit removed its nodes) drops the focus."""
    state = scene.findChild(FocusState)
    collapsed = scene.collapsed
    if state is None or state.group is None:
        return graph, collapsed
    if state.group not in hierarchy.by_id:
        state.set(None)
        return graph, collapsed
    out = focus_graph(graph, hierarchy, state.group)
    open_ids = {g.id for g in ancestors(hierarchy, state.group)}
    scene.set_positions(place_stubs(out, scene.positions))
    QTimer.singleShot(0, scene, lambda: lock_stubs(scene))  # once the items exist
    return out, collapsed - open_ids


def place_stubs(graph: ViewGraph, positions: Mapping[int, Position]) -> dict[int, Position]:
    """Positions of a focused graph's stubs: an input stub above the first of its readers,
    an output stub below its producer (the nodes keep theirs)."""
    out: dict[int, Position] = {}
    kinds = {n.key: n.kind for n in graph.nodes}
    fed: dict[int, int] = {}  # reader → stubs above it so far (side by side)
    for edge in graph.edges:
        if kinds.get(edge.source) is NodeKind.INPUT and edge.source < 0:
            target = positions.get(edge.target)
            if target is not None and edge.source not in out:
                n = fed[edge.target] = fed.get(edge.target, -1) + 1
                y = target[1] - st.IO_HEIGHT - STUB_GAP
                out[edge.source] = (target[0] + n * STUB_STEP, y)
        elif kinds.get(edge.target) is NodeKind.OUTPUT and edge.target < 0:
            source = positions.get(edge.source)
            if source is not None and edge.target not in out:
                out[edge.target] = (source[0], source[1] + st.OP_HEIGHT + STUB_GAP)
    return out


def add_focus_action(menu: QMenu, view: CanvasView, group_id: str) -> None:
    """Add "Focus <name>" for group ``group_id`` of ``view``'s scope to ``menu``."""
    name = group_id.rsplit("/", 1)[-1]
    action = menu.addAction(f"Focus {name}")
    action.setToolTip(f"Show {group_id} alone on the canvas (Esc: the whole graph)")
    action.triggered.connect(lambda _c=False: set_focus(view, group_id))


def lock_stubs(scene: CanvasScene) -> None:
    """Border stubs are labels, not nodes: they can be neither selected nor dragged."""
    for key, item in scene.node_items.built.items():  # (the scene locks items built later)
        if is_stub_key(key):
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, False)
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsMovable, False)


def set_focus(view: CanvasView, group_id: str | None) -> None:
    """Show group ``group_id`` alone (None: the whole graph again) and fit it in view."""
    from designer.ui.canvas.collapse_view import redraw

    scene = view.canvas
    view.flush()
    state = focus_state(scene)
    if group_id == state.group:
        return
    state.set(group_id)
    redraw(view)
    view.fit_to_view()
