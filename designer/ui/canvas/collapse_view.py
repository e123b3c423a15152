"""Collapse and expand module scopes on a canvas (view state, not a model edit).

The scene keeps the ids of its collapsed groups (``CanvasScene.collapsed``) and draws the
graph through :func:`designer.core.collapse.collapse_graph`; a box sits at the top-left of
its nodes' positions, so collapsing and expanding leave every other box where it was, and
dragging a box moves its nodes (one ordinary Move edit). Selecting a box selects its nodes
for the docks; selecting a hidden node (Find, Layer Explorer) opens the groups hiding it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from designer.core.collapse import (
    auto_graph_depth,
    collapse_graph,
    expose,
    group_key,
    groups_below,
)
from designer.core.document import Position
from designer.core.hierarchy import Hierarchy, build_hierarchy
from designer.core.viewgraph import NodeKind, ViewGraph, build_view_graph
from designer.ui.canvas import style as st
from designer.ui.canvas.placement import layout_graph

if TYPE_CHECKING:
    from designer.ui.canvas.scene import CanvasScene
    from designer.ui.canvas.view import CanvasView


def _full_token(scene: CanvasScene) -> ViewGraph:
    """The uncollapsed view graph the scene's drawing comes from (a new object after every
    document change, since the scene rebuilds its graph then)."""
    full = getattr(scene, "_full", None)
    if scene.collapsed and full is not None and getattr(scene, "_derived", None) is scene.graph:
        return full
    return scene.graph


def hierarchy_of(scene: CanvasScene) -> Hierarchy:
    """The scene's module groups, rebuilt whenever the scene rebuilt its graph from the
    document (a pure collapse/expand reuses them)."""
    token = getattr(scene, "_building", None) or _full_token(scene)
    cached = getattr(scene, "_hierarchy", None)
    if cached is None or cached[0] is not token:
        cached = (token, build_hierarchy(scene.doc, scene.scope_id))
        scene._hierarchy = cached  # type: ignore[attr-defined]
    return cached[1]


def place_boxes(graph: ViewGraph, hierarchy: Hierarchy, positions: dict[int, Position]) -> None:
    """Put each group box at the top-left corner of its nodes' positions."""
    for node in graph.nodes:
        if node.kind is not NodeKind.GROUP:
            continue
        members = hierarchy.by_id[node.group].keys()
        points = [positions[k] for k in members if k in positions]
        if points:
            positions[node.key] = (min(p[0] for p in points), min(p[1] for p in points))


def member_keys(scene: CanvasScene, keys: Iterable[int]) -> list[int]:
    """``keys`` with every group box replaced by the node keys inside it."""
    out: list[int] = []
    hierarchy = None
    for key in keys:
        if key >= 0 or not scene.graph.has_node(key):
            out.append(key)
            continue
        view = scene.graph.node(key)
        if view.kind is not NodeKind.GROUP:
            out.append(key)
            continue
        hierarchy = hierarchy or hierarchy_of(scene)
        group = hierarchy.by_id.get(view.group)
        if group is not None:
            out.extend(group.keys())
    return out


def member_moves(scene: CanvasScene, positions: Mapping[int, Position]) -> dict[int, Position]:
    """Moves of boxes turned into moves of their nodes (same offset); others kept."""
    out: dict[int, Position] = {}
    table = scene.positions
    for key, (x, y) in positions.items():
        if key >= 0 or not scene.graph.has_node(key):
            out[key] = (x, y)
            continue
        old = table.get(key)
        members = member_keys(scene, [key])
        if old is None or not members:
            continue
        dx, dy = x - old[0], y - old[1]
        for member in members:
            point = table.get(member)
            if point is not None:
                out[member] = (point[0] + dx, point[1] + dy)
    return out


def set_collapsed(view: CanvasView, ids: set[str]) -> None:
    """Collapse exactly the groups ``ids`` and redraw (positions as they are)."""
    scene = view.canvas
    view.flush()
    if ids == scene.collapsed:
        return
    full = _full_token(scene)  # the document is unchanged: no need to read it again
    scene.collapsed = set(ids)
    scene.routes = {}  # bends of the previous drawing do not fit the new boxes
    scene.rebuild(collapsed_graph(scene, full))
    view.overview.invalidate()
    view.viewport().update()


def _shift(positions: dict[int, Position], keys: Iterable[int], dx: float, dy: float) -> None:
    for key in keys:
        point = positions.get(key)
        if point is not None:
            positions[key] = (point[0] + dx, point[1] + dy)


def _bbox(positions: Mapping[int, Position], keys: Iterable[int]) -> tuple[float, ...] | None:
    points = [positions[k] for k in keys if k in positions]
    if not points:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs) + st.MAX_WIDTH / 2, max(ys) + st.OP_HEIGHT


def _make_room(view: CanvasView, below: float, dy: float, skip: set[int]) -> None:
    """Move every box whose top is below ``below`` (and the nodes inside those that are
    groups) down by ``dy`` (up when negative): the rest of the drawing keeps its shape."""
    scene = view.canvas
    positions = scene.positions
    moved: list[int] = []
    for node in scene.graph.nodes:
        point = positions.get(node.key)
        if node.key in skip or point is None or point[1] <= below:
            continue
        moved.append(node.key)
        if node.kind is NodeKind.GROUP:
            moved.extend(hierarchy_of(scene).by_id[node.group].keys())
    _shift(positions, moved, 0.0, dy)


def collapse_to_depth(view: CanvasView, depth: int | str) -> int:
    """Keep ``depth`` levels open (``"auto"``: what keeps the view to a few dozen boxes),
    lay the boxes out afresh (each box's nodes move with it) and show the first view;
    returns the depth used."""
    scene = view.canvas
    view.flush()
    hierarchy = hierarchy_of(scene)
    if depth == "auto":
        depth = auto_graph_depth(full_graph(scene), hierarchy)
    assert isinstance(depth, int)
    scene.collapsed = groups_below(hierarchy, depth)
    graph = scene.build_graph()  # boxes at their nodes' top-left corners
    placement = layout_graph(graph, scene.sizes(graph))
    positions = scene.positions
    for node in graph.nodes:
        new = placement.positions.get(node.key)
        if new is None:
            continue
        if node.kind is NodeKind.GROUP:
            old = positions.get(node.key, new)
            members = hierarchy.by_id[node.group].keys()
            _shift(positions, members, new[0] - old[0], new[1] - old[1])
        positions[node.key] = new
    scene.rebuild(graph, placement)
    view.overview.invalidate()
    view.show_first_view()
    return depth


def expand_all(view: CanvasView) -> None:
    """Open every group (each keeps its nodes' positions)."""
    while view.canvas.collapsed:
        expand_group(view, next(iter(view.canvas.collapsed)))


def expand_group(view: CanvasView, group_id: str) -> None:
    """Open ``group_id`` in place: its nodes take its box's place, and what lies below
    moves down to make room (what lies above stays where it is)."""
    scene = view.canvas
    view.flush()
    hierarchy = hierarchy_of(scene)
    group = hierarchy.by_id.get(group_id)
    if group is None or group_id not in scene.collapsed:
        return
    key = group_key(group_id)
    positions = scene.positions
    box = positions.get(key)
    members = group.keys()
    bbox = _bbox(positions, members)
    if box is not None and bbox is not None:
        _shift(positions, members, box[0] - bbox[0], box[1] - bbox[1])
        item = scene.node_items.get(key)
        height = item.height if item is not None else st.OP_HEIGHT
        grow = (bbox[3] - bbox[1]) - height + st.OP_HEIGHT
        _make_room(view, box[1], grow, {key})
    inner = {g.id for g in group.walk()}
    set_collapsed(view, scene.collapsed - inner)


def collapse_group(view: CanvasView, group_id: str) -> None:
    """Collapse ``group_id`` in place (groups inside it fold into its box); what lies
    below moves up by the room it no longer takes."""
    scene = view.canvas
    view.flush()
    hierarchy = hierarchy_of(scene)
    group = hierarchy.by_id.get(group_id)
    if group is None:
        return
    members = group.keys()
    inner = {g.id for g in group.walk()}
    bbox = _bbox(scene.positions, members)
    if bbox is not None:
        hidden = set(members) | {group_key(i) for i in inner}
        _make_room(view, bbox[3], -((bbox[3] - bbox[1]) - st.OP_HEIGHT), hidden)
    set_collapsed(view, (scene.collapsed - inner) | {group_id})


def expose_keys(view: CanvasView, keys: Iterable[int]) -> None:
    """Open the collapsed groups hiding any of nodes ``keys`` (one redraw)."""
    scene = view.canvas
    if not scene.collapsed:
        return
    hierarchy = None
    hidden: set[str] = set()
    for key in keys:
        if key >= 0 and key not in scene.node_items:
            hierarchy = hierarchy or hierarchy_of(scene)
            hidden |= expose(hierarchy, scene.collapsed, key)
    if hidden:
        set_collapsed(view, scene.collapsed - hidden)


def expose_key(view: CanvasView, key: int) -> int:
    """Open the collapsed groups hiding node ``key``; returns ``key``."""
    expose_keys(view, [key])
    return key


def full_graph(scene: CanvasScene) -> ViewGraph:
    """The scene's graph with nothing collapsed (the scene's own when nothing is)."""
    if not scene.collapsed:
        return scene.graph
    return build_view_graph(
        scene.doc,
        scene.scope_id,
        show_constants=scene.show_constants,
        pinned_outer=scene.pinned_outer,
    )


def collapsed_graph(scene: CanvasScene, graph: ViewGraph) -> ViewGraph:
    """``graph`` with the scene's collapsed groups as boxes, placed (``CanvasScene``
    calls this from ``build_graph``)."""
    if not scene.collapsed:
        return graph
    scene._building = graph  # type: ignore[attr-defined]
    try:
        hierarchy = hierarchy_of(scene)
    finally:
        scene._building = None  # type: ignore[attr-defined]
    out = collapse_graph(graph, hierarchy, scene.collapsed)
    place_boxes(out, hierarchy, scene.positions)
    scene._full, scene._derived = graph, out  # type: ignore[attr-defined]
    return out
