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
from designer.core.focus import Point, Rect, ancestors, focus_graph, is_stub_key, route_links
from designer.core.hierarchy import Hierarchy
from designer.core.viewgraph import NodeKind, ViewEdge, ViewGraph, ViewNode
from designer.ui.canvas import style as st

if TYPE_CHECKING:
    from designer.ui.canvas.scene import CanvasScene
    from designer.ui.canvas.view import CanvasView

#: Vertical room between a stub and the node it feeds (or is fed by): stubs sit in the
#: gap between rows of the layout.
STUB_GAP = 18.0
#: Horizontal room between two stubs side by side.
STUB_SPACE = 12.0
#: Focused graphs with more links than this keep straight links (routing is
#: O(links · boxes in their rows); a focused module has a few hundred).
ROUTE_LIMIT = 20_000


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
    QTimer.singleShot(0, scene, lambda: settle_focus(scene))  # once the items exist
    return out, collapsed - open_ids


def place_stubs(graph: ViewGraph, positions: Mapping[int, Position]) -> dict[int, Position]:
    """Positions of a focused graph's stubs: an input stub centred above the input of the
    first of its readers, an output stub centred below the output that makes it (the nodes
    keep theirs), so that those two links run straight; stubs that would cover each other
    move right. Links to further readers are routed (:func:`route_focus`)."""
    out: dict[int, Position] = {}
    views = {n.key: n for n in graph.nodes}
    placed: list[tuple[float, float, float, float]] = []
    for edge in _first_links(graph, views, positions):
        source, target = views[edge.source], views[edge.target]
        if source.kind is NodeKind.INPUT:
            point = positions[target.key]
            w, h = st.node_size(source)
            x = point[0] + _terminal_x(target, edge.target_index, inputs=True) - w / 2
            out[source.key] = _clear_of(placed, x, point[1] - h - STUB_GAP, w, h)
        else:
            point = positions[source.key]
            w, h = st.node_size(target)
            x = point[0] + _terminal_x(source, edge.source_index, inputs=False) - w / 2
            y = point[1] + st.node_size(source)[1] + STUB_GAP
            out[target.key] = _clear_of(placed, x, y, w, h)
    return out


def _first_links(
    graph: ViewGraph, views: Mapping[int, ViewNode], positions: Mapping[int, Position]
) -> list[ViewEdge]:
    """For each input stub its link to the highest of its placed readers (so that every
    link from it runs down), for each output stub its link from its producer."""
    first: dict[int, ViewEdge] = {}
    for edge in graph.edges:
        source, target = views.get(edge.source), views.get(edge.target)
        if source is None or target is None:
            continue
        if source.kind is NodeKind.INPUT and is_stub_key(source.key):
            point, known = positions.get(target.key), first.get(source.key)
            if point is not None and (known is None or point[1] < positions[known.target][1]):
                first[source.key] = edge
        elif (
            target.kind is NodeKind.OUTPUT
            and is_stub_key(target.key)
            and edge.source in positions
            and target.key not in first
        ):
            first[target.key] = edge
    return list(first.values())


def _terminal_x(node: ViewNode, slot: int, *, inputs: bool) -> float:
    """x of terminal ``slot`` of ``node`` from its left edge (a value read inside its
    subgraphs, slot < 0, enters near its right edge)."""
    width = st.node_size(node)[0]
    if slot < 0:
        return width - st.IMPLICIT_INSET
    return st.terminal_x(width, slot, len(node.inputs if inputs else node.outputs))


def _clear_of(
    placed: list[tuple[float, float, float, float]], x: float, y: float, w: float, h: float
) -> Position:
    """(x, y) moved right until a ``w`` × ``h`` stub there covers none of ``placed``
    (left, top, right, bottom, with STUB_SPACE between), which it then joins."""
    moved = True
    while moved:
        moved = False
        for left, top, right, bottom in placed:
            if x < right + STUB_SPACE and x + w + STUB_SPACE > left and y < bottom and y + h > top:
                x, moved = right + STUB_SPACE, True
    placed.append((x, y, x + w, y + h))
    return (float(round(x)), float(round(y)))


def route_focus(scene: CanvasScene) -> None:
    """Route the links of a focused scene around its boxes (:func:`route_links`). A focus
    draws with no bends of the whole graph's layout (its stubs are new nodes, boxes may be
    folded inside it), so a link from a stub to a far reader, or one whose bends were
    dropped, would run straight through the boxes between. Nothing for the whole graph, or
    a focused graph past ROUTE_LIMIT links."""
    if focus_of(scene) is None or len(scene.graph.edges) > ROUTE_LIMIT:
        return
    views, sizes, positions = scene.node_items.views, scene.node_items.sizes, scene.positions
    boxes: dict[int, Rect] = {}
    for key, (w, h) in sizes.items():
        point = positions.get(key)
        if point is not None:
            boxes[key] = (point[0], point[1], point[0] + w, point[1] + h)
    links: dict[tuple[int, int], tuple[Point, Point]] = {}
    for edge in scene.graph.edges:
        pair = (edge.source, edge.target)
        if pair in links or edge.source not in boxes or edge.target not in boxes:
            continue
        if scene.is_stub(edge) or edge.source in scene.proxied:
            continue
        links[pair] = (
            _output_xy(views[edge.source], boxes[edge.source], edge.source_index),
            _input_xy(views[edge.target], boxes[edge.target], edge.target_index),
        )
    scene.set_routes(route_links(links, boxes))


def _output_xy(view: ViewNode, box: Rect, slot: int) -> Point:
    """Where a link leaves output ``slot`` (as ``NodeItem.output_xy``)."""
    left, _top, right, bottom = box
    return left + st.terminal_x(right - left, slot, len(view.outputs)), bottom + st.CIRCLE


def _input_xy(view: ViewNode, box: Rect, slot: int) -> Point:
    """Where a link enters input ``slot`` (as ``NodeItem.input_xy``)."""
    left, top, right, _bottom = box
    if slot < 0:
        return right - st.IMPLICIT_INSET, top
    inputs = view.inputs
    tri = 0.0
    if slot < len(inputs):
        tri = st.TRIANGLE_OPTIONAL if inputs[slot].optional else st.TRIANGLE
    return left + st.terminal_x(right - left, slot, len(inputs)), top - tri


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


def settle_focus(scene: CanvasScene) -> None:
    """What a focused scene needs once its items exist: stubs locked, links routed."""
    lock_stubs(scene)
    route_focus(scene)


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
    route_focus(scene)
    view.fit_to_view()
