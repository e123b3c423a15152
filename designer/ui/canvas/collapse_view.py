"""Collapse and expand module scopes on a canvas (view state, not a model edit).

The scene keeps the ids of its collapsed groups (``CanvasScene.collapsed``) and draws the
graph through :func:`designer.core.collapse.collapse_graph`; a box sits at the top-left of
its nodes' positions, so collapsing and expanding leave every other box where it was, and
dragging a box moves its nodes (one ordinary Move edit). Selecting a box selects its nodes
for the docks; selecting a hidden node (Find, Layer Explorer) opens the groups hiding it.

Opening or folding one box moves what lies below; the nodes hidden in the boxes below move
later (``Document.defer_shift``, one pending shift per box): when their box opens, or when
anything reads ``Document.positions`` (saving, export, Find, Focus, edits, a full redraw).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from PySide6.QtCore import QTimer

from designer.core.collapse import (
    auto_graph_depth,
    collapse_graph,
    collapse_in_graph,
    edges_by_node,
    expand_in_graph,
    expose,
    group_caption,
    group_key,
    groups_below,
)
from designer.core.document import Position
from designer.core.gcpause import gc_paused
from designer.core.hierarchy import Group, Hierarchy, build_hierarchy
from designer.core.viewgraph import (
    NodeKind,
    Terminal,
    TerminalState,
    ViewEdge,
    ViewGraph,
    ViewNode,
    build_view_graph,
)
from designer.ui.canvas import style as st
from designer.ui.canvas.focus_view import focus_of, focus_state, focused_graph, lock_stubs
from designer.ui.canvas.placement import layout_graph

if TYPE_CHECKING:
    from designer.ui.canvas.scene import CanvasScene
    from designer.ui.canvas.view import CanvasView


def _full_token(scene: CanvasScene) -> ViewGraph:
    """The uncollapsed view graph the scene's drawing comes from (a new object after every
    document change, since the scene rebuilds its graph then)."""
    full = scene.collapse_full
    if full is not None and scene.collapse_derived is scene.graph:
        return full
    return scene.graph


def hierarchy_of(scene: CanvasScene) -> Hierarchy:
    """The scene's module groups, rebuilt whenever the scene rebuilt its graph from the
    document (a pure collapse/expand reuses them)."""
    token = scene.collapse_building or _full_token(scene)
    cached = scene.collapse_hierarchy
    if cached is None or cached[0] is not token:
        scene.doc.settle_positions(scene.scope_id)  # pending shifts name the old groups
        cached = (token, build_hierarchy(scene.doc, scene.scope_id))
        scene.collapse_hierarchy = cached
    return cached[1]


def place_boxes(
    graph: ViewGraph, hierarchy: Hierarchy, positions: Mapping[int, Position]
) -> dict[int, Position]:
    """Positions of the group boxes: the top-left corner of their nodes' positions."""
    boxes: dict[int, Position] = {}
    for node in graph.nodes:
        if node.kind is not NodeKind.GROUP:
            continue
        members = hierarchy.by_id[node.group].keys()
        points = [positions[k] for k in members if k in positions]
        if points:
            boxes[node.key] = (min(p[0] for p in points), min(p[1] for p in points))
    return boxes


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


@contextmanager
def drawn_only(scene: CanvasScene) -> Iterator[None]:
    """Within: the scene reads and writes the positions of what it draws only, and shifts
    of hidden nodes stay deferred (see ``CanvasScene.drawn_only``)."""
    before = scene.drawn_only
    scene.drawn_only = True
    try:
        with gc_paused():  # a full collection of a 100k-node model's heap: ~40 ms
            yield
    finally:
        scene.drawn_only = before


def settle_around(scene: CanvasScene, group_id: str) -> None:
    """Apply the deferred shifts of ``group_id``'s box, of boxes inside it and of those
    holding it: their nodes are about to be drawn, measured or hidden in a new box."""
    prefix = group_id + "/"

    def related(token: str) -> bool:
        return token == group_id or token.startswith(prefix) or group_id.startswith(token + "/")

    scene.doc.settle_positions(scene.scope_id, related)


def set_collapsed(view: CanvasView, ids: set[str]) -> None:
    """Collapse exactly the groups ``ids`` and redraw (positions as they are)."""
    scene = view.canvas
    view.flush()
    if ids == scene.collapsed:
        return
    if switch_collapsed(scene, ids):
        view.overview.invalidate()
        view.viewport().update()
        return
    scene.collapsed = set(ids)
    redraw(view)


_LINKS: list[tuple[ViewGraph, dict[int, list[ViewEdge]]]] = []  # one entry: the last graph


#: Graphs with more links than this have them indexed right after a collapse (in idle
#: time; ~0.1 s at 100k links), so that the first expand is as quick as the next ones.
INDEX_AHEAD = 20_000


def _links_of(graph: ViewGraph) -> dict[int, list[ViewEdge]]:
    """The links of ``graph`` by node (kept for the last graph asked about)."""
    if not _LINKS or _LINKS[0][0] is not graph:
        with gc_paused():
            _LINKS[:] = [(graph, edges_by_node(graph))]
    return _LINKS[0][1]


def switch_collapsed(scene: CanvasScene, ids: set[str]) -> bool:
    """Open or fold one group incrementally when ``ids`` is the scene's collapsed set less
    that group or plus it (groups inside it aside): only its part of the view graph and
    its items are rebuilt, every other box keeps its terminals and position. False
    (nothing done) when that does not apply; the caller then redraws in full."""
    removed, added = scene.collapsed - ids, ids - scene.collapsed
    full = scene.collapse_full
    if (
        len(added) > 1
        or full is None
        or scene.collapse_derived is not scene.graph
        or focus_of(scene) is not None
    ):
        return False
    top = next(iter(added)) if added else min(removed, key=len, default="")
    if not top or any(i != top and not i.startswith(top + "/") for i in removed):
        return False
    hierarchy = hierarchy_of(scene)
    settle_around(scene, top)
    with drawn_only(scene):
        return _switch(scene, ids, top, hierarchy, full, bool(added))


def _switch(
    scene: CanvasScene, ids: set[str], top: str, hierarchy: Hierarchy, full: ViewGraph, added: bool
) -> bool:
    """:func:`switch_collapsed` once it applies: fold (``added``) or open group ``top``."""
    if added:
        out = _fold_graph(scene.graph, hierarchy, top, ids)
        _FOLDED.clear()  # kept for this drawing only
        touched = [k for k in (group_key(top),) if scene.graph.has_node(k)]
    else:
        out = expand_in_graph(full, scene.graph, hierarchy, top, ids, _links_of(full))
        touched = [group_key(top)]
    if out is None:
        return False
    scene.forget_routes(touched)  # links of the box no longer follow the layout's bends
    scene.collapsed = set(ids)
    scene.collapse_full, scene.collapse_derived = full, out
    if added:  # the new box sits at the top-left corner of its nodes
        subtree = hierarchy.by_id[top].keys()
        table = scene.positions
        points = [table[k] for k in subtree if k in table]
        if points:
            corner = (min(p[0] for p in points), min(p[1] for p in points))
            scene.set_positions({group_key(top): corner})
    # only the box, its nodes and the links touching them change; which links are too
    # long to draw is decided again, as a full rebuild would (the box below keeps its stubs)
    scene.refresh_to(out, restub=True)
    scene.positions_changed(list(scene.node_items))  # what made room for it moves
    return True


def redraw(view: CanvasView) -> None:
    """Draw the scene again from the graph it came from, with its collapsed groups and its
    focus as they are now (the document is unchanged: no need to read it again)."""
    scene = view.canvas
    full = _full_token(scene)
    scene.routes = {}  # bends of the previous drawing do not fit the new boxes
    scene.rebuild(collapsed_graph(scene, full))
    lock_stubs(scene)
    view.overview.invalidate()
    view.viewport().update()


def _shift(
    positions: Mapping[int, Position], keys: Iterable[int], dx: float, dy: float
) -> dict[int, Position]:
    """New positions of ``keys`` (those that have one) moved by (dx, dy)."""
    if dx == 0.0:  # one comprehension: room is made for 100k hidden nodes at a time
        return {k: (p[0], p[1] + dy) for k in keys if (p := positions.get(k)) is not None}
    return {k: (p[0] + dx, p[1] + dy) for k in keys if (p := positions.get(k)) is not None}


Size = tuple[float, float]
#: A box as (left, top, right, bottom), in scene units.
Rect = tuple[float, float, float, float]

#: The width a box is taken to have when its real size is not known (no item drawn).
BOX_WIDTH = st.MAX_WIDTH / 2
#: Room left between a box and what it pushes aside on its row (the layout's).
_ROW_GAP = st.NODE_GAP


def _open_parts(group: Group, collapsed: set[str]) -> tuple[list[int], list[Group]]:
    """What ``group`` draws when it is open and ``collapsed`` are the collapsed groups:
    the nodes outside every collapsed group inside it, and the outermost collapsed groups
    inside it (boxes)."""
    keys: list[int] = []
    boxes: list[Group] = []
    stack = [group]
    while stack:
        current = stack.pop()
        keys.extend(current.own_keys)
        for child in current.children:
            (boxes if child.id in collapsed else stack).append(child)
    return keys, boxes


def _box_view(hierarchy: Hierarchy, group: Group, links: Mapping[int, list[ViewEdge]]) -> ViewNode:
    """The box ``group`` is drawn as when collapsed: its caption and one terminal per value
    crossing its border, as :func:`collapse_graph` makes it, from the links touching its
    nodes only (``links``: :func:`edges_by_node` of the full graph). A box's width comes
    from its terminals and their names (``style.group_input_spacing``), so a box that is not
    drawn yet is measured from this."""
    keys = group.keys()
    members = set(keys)
    inputs: dict[str, None] = {}
    outputs: dict[str, None] = {}
    for key in keys:
        for edge in links.get(key, ()):
            if edge.target == key and edge.source not in members:
                inputs.setdefault(edge.tensor)
            elif edge.source == key and edge.target not in members:
                outputs.setdefault(edge.tensor)
    linked = TerminalState.LINKED
    return ViewNode(
        group_key(group.id),
        NodeKind.GROUP,
        group.name,
        group_caption(hierarchy, group),
        inputs=[Terminal(i, t, t, linked) for i, t in enumerate(inputs)],
        outputs=[Terminal(i, t, t, linked) for i, t in enumerate(outputs)],
        group=group.id,
    )


def _open_rects(
    scene: CanvasScene, hierarchy: Hierarchy, group: Group, collapsed: set[str]
) -> list[Rect]:
    """The boxes ``group`` draws when open and ``collapsed`` are the collapsed groups
    (:func:`_open_parts`), at their nodes' positions now and in their real sizes: a node as
    drawn (or as the full graph draws it), a group collapsed inside it as its box at the
    top-left corner of its nodes. A node that has a position but is not drawn (a hidden
    Constant) is a point: it places the group's corner, as it places the group's box."""
    keys, boxes = _open_parts(group, collapsed)
    positions = scene.positions
    drawn = scene.node_items.sizes
    full = _full_token(scene)
    rects: list[Rect] = []
    for key in keys:
        point = positions.get(key)
        if point is None:
            continue
        size = drawn.get(key)
        if size is None:
            size = st.node_size(full.node(key)) if full.has_node(key) else (0.0, 0.0)
        rects.append((point[0], point[1], point[0] + size[0], point[1] + size[1]))
    links: Mapping[int, list[ViewEdge]] | None = None
    for box in boxes:
        held = box.keys()
        inner = [positions[k] for k in held if k in positions]
        if not inner:
            continue
        size = drawn.get(group_key(box.id))
        if size is None:
            links = links if links is not None else _links_of(full)
            size = st.node_size(_box_view(hierarchy, box, links))
        x, y = min(p[0] for p in inner), min(p[1] for p in inner)
        rects.append((x, y, x + size[0], y + size[1]))
    return rects


def _extent(rects: list[Rect]) -> Rect | None:
    """The rectangle around ``rects``; None when there are none."""
    if not rects:
        return None
    return (
        min(r[0] for r in rects),
        min(r[1] for r in rects),
        max(r[2] for r in rects),
        max(r[3] for r in rects),
    )


#: The last fold's graph (derived, group id, collapsed ids, result): :func:`_collapse`
#: measures the new box from it before :func:`_switch` draws it.
_FOLDED: list[tuple[ViewGraph, str, frozenset[str], ViewGraph | None]] = []


def _fold_graph(
    derived: ViewGraph, hierarchy: Hierarchy, group_id: str, ids: set[str]
) -> ViewGraph | None:
    """:func:`collapse_in_graph` of ``derived``, kept for the next call with the same
    arguments (the fold's measuring and its drawing build it once)."""
    key = frozenset(ids)
    if _FOLDED and _FOLDED[0][0] is derived and _FOLDED[0][1] == group_id and _FOLDED[0][2] == key:
        return _FOLDED[0][3]
    out = collapse_in_graph(derived, hierarchy, group_id, ids)
    _FOLDED[:] = [(derived, group_id, key, out)]
    return out


def _folded_size(scene: CanvasScene, hierarchy: Hierarchy, group: Group, ids: set[str]) -> Size:
    """The size of the box ``group`` folds into (``ids``: the collapsed groups then)."""
    key = group_key(group.id)
    out = _fold_graph(scene.graph, hierarchy, group.id, ids)
    if out is not None and out.has_node(key):
        return st.node_size(out.node(key))
    return st.node_size(_box_view(hierarchy, group, _links_of(_full_token(scene))))


def _rect(point: Position, size: Size) -> Rect:
    """The room a box at ``point`` takes with its terminals: the bounds of its item without
    tags (``items._plain_bounds``: 2 left of it, 8 right of it for a badge)."""
    return (
        point[0] - 2.0,
        point[1] - st.TRIANGLE - 8.0,
        point[0] + size[0] + 8.0,
        point[1] + size[1] + 2.0 * st.CIRCLE + 2.0,
    )


def _push_row(
    view: CanvasView, row: list[tuple[int, float]], right: float
) -> tuple[list[int], float]:
    """Push the drawn boxes ``row`` (key, left) aside as one block, just far enough that
    the leftmost is _ROW_GAP right of ``right``, when any of them is closer to it than
    _CLEAR (else nothing moves); returns the keys moved and by how much."""
    if not row:
        return [], 0.0
    left = min(x for _k, x in row)
    if left >= right + _CLEAR:
        return [], 0.0
    keys, dx = [k for k, _x in row], right + _ROW_GAP - left
    _push(view, keys, dx)
    return keys, dx


def _make_room_beside(
    view: CanvasView, key: int, box: Position, right: float
) -> tuple[list[int], float]:
    """Move the drawn boxes on the row of box ``key`` at ``box`` (their top within one
    node's height above its top, or at it; not wholly left of it) aside as one block, so
    that they clear ``right``, the right edge of what it opens into (an opened box grows to
    the right as well as down; what lies lower moves down); returns their keys and the
    distance."""
    scene = view.canvas
    positions, sizes = scene.positions, scene.node_items.sizes
    top = box[1]
    row = [
        (node.key, point[0])
        for node in scene.graph.nodes
        if node.key != key
        and (point := positions.get(node.key)) is not None
        and top - st.OP_HEIGHT < point[1] <= top
        and point[0] + sizes.get(node.key, (BOX_WIDTH, 0.0))[0] > box[0]
    ]
    return _push_row(view, row, right)


def _clear_beside(
    view: CanvasView, box: Rect, below: float, hidden: set[int]
) -> tuple[list[int], float]:
    """Move what stays beside a folding group (not ``hidden`` in it, its top at ``below``
    or above) and would be covered by its new box ``box`` aside, with what lies right of
    it on the box's row, as one block: a box is wider than the room its group's first row
    took when it has many inputs (``style.group_input_spacing``). Returns the keys moved
    and the distance."""
    scene = view.canvas
    positions, sizes = scene.positions, scene.node_items.sizes
    _left, b_top, _right, b_bottom = _rect((box[0], box[1]), (box[2] - box[0], box[3] - box[1]))
    row: list[tuple[int, float]] = []
    for node in scene.graph.nodes:
        point = positions.get(node.key)
        if node.key in hidden or point is None or point[1] > below:
            continue
        size = sizes.get(node.key)
        if size is None:
            continue
        _left, top, right, bottom = _rect(point, size)
        if top < b_bottom and b_top < bottom and right > box[0]:
            row.append((node.key, point[0]))
    return _push_row(view, row, box[2])


def _push(view: CanvasView, keys: list[int], dx: float) -> None:
    """Move the drawn nodes and boxes ``keys`` sideways by ``dx``, with the nodes inside
    the boxes."""
    scene = view.canvas
    hierarchy = hierarchy_of(scene)
    graph = scene.graph
    moved = list(keys)
    for key in keys:
        node = graph.node(key) if graph.has_node(key) else None
        if node is not None and node.kind is NodeKind.GROUP and node.group in hierarchy.by_id:
            scene.doc.settle_positions(scene.scope_id, partial(_is_token, node.group))
            moved.extend(hierarchy.keys_of(hierarchy.by_id[node.group]))
    scene.set_positions(_shift(scene.positions, moved, dx, 0.0))


#: What opening a box pushed aside on its row, by scene and group id (keys, distance):
#: folding it again moves them back.
_PUSHED: WeakKeyDictionary[CanvasScene, dict[str, tuple[list[int], float]]] = WeakKeyDictionary()
#: What folding a group pushed aside because its box is wider than the room the group took
#: on its row, by scene and group id: opening it again moves them back.
_FOLD_PUSHED: WeakKeyDictionary[CanvasScene, dict[str, tuple[list[int], float]]] = (
    WeakKeyDictionary()
)


def _remember(
    table: WeakKeyDictionary[CanvasScene, dict[str, tuple[list[int], float]]],
    scene: CanvasScene,
    group_id: str,
    pushed: tuple[list[int], float],
) -> None:
    """Keep what ``group_id``'s opening or folding pushed aside (when anything moved)."""
    if pushed[0]:
        table.setdefault(scene, {})[group_id] = pushed


def _give_back(
    view: CanvasView,
    table: WeakKeyDictionary[CanvasScene, dict[str, tuple[list[int], float]]],
    group_id: str,
) -> None:
    """Move back what the last opening or folding (``table``) of ``group_id`` pushed aside,
    those of them still drawn."""
    scene = view.canvas
    pushed = table.get(scene, {}).pop(group_id, None)
    if pushed is not None:
        keys, dx = pushed
        drawn = [k for k in keys if scene.graph.has_node(k)]
        if drawn:
            _push(view, drawn, -dx)


def forget_pushes(scene: CanvasScene) -> None:
    """Forget what openings and foldings pushed aside: the graph was laid out afresh
    (Collapse to Level, Expand All), so moving it back would move it off its new place."""
    _PUSHED.pop(scene, None)
    _FOLD_PUSHED.pop(scene, None)


def _is_token(group_id: str, token: str) -> bool:
    return token == group_id


#: Whether the nodes hidden in the boxes below move later (``Document.defer_shift``) rather
#: than at once; tests turn it off to compare with shifting everything right away.
DEFER_HIDDEN = True


def _safe_lift(
    view: CanvasView,
    box: Rect,
    below: float,
    dy: float,
    skip: set[int],
) -> float:
    """``dy`` (< 0: what lies below ``below`` moves up, a group folding into ``box``) cut
    short where something that moves would land on something that stays: a box beside the
    folded group, or the group's own box. 0 when nothing can move up."""
    scene = view.canvas
    positions = scene.positions
    staying = [_rect((box[0], box[1]), (box[2] - box[0], box[3] - box[1]))]
    moving: list[tuple[float, float, float]] = []  # left, top, right
    reach = below - dy + st.MAX_WIDTH  # lower than this, a moved box stays clear of the band
    for node in scene.graph.nodes:
        point = positions.get(node.key)
        if node.key in skip or point is None:
            continue
        left, top, right, bottom = _rect(point, st.node_size(node))
        if point[1] > below:
            if point[1] < reach:
                moving.append((left, top, right))
        elif bottom > box[1] - st.OP_HEIGHT:
            staying.append((left, top, right, bottom))
    for left, top, right in moving:
        for s_left, _s_top, s_right, s_bottom in staying:
            if left < s_right and s_left < right and top + dy < s_bottom + _CLEAR:
                dy = max(dy, s_bottom + _CLEAR - top)
    return min(dy, 0.0)


#: Space kept between a box that moves up and one it would otherwise land on.
_CLEAR = 8.0


def _make_room(view: CanvasView, below: float, dy: float, skip: set[int]) -> None:
    """Move every box whose top is below ``below`` (and the nodes inside those that are
    groups: deferred, see :data:`DEFER_HIDDEN`) down by ``dy`` (up when negative): the
    rest of the drawing keeps its shape."""
    scene = view.canvas
    focus = focus_of(scene)
    if focus is not None:  # every position is read below
        scene.doc.settle_positions(scene.scope_id)
    defer = DEFER_HIDDEN and focus is None and scene.drawn_only
    positions = scene.positions
    moved: list[int] = []
    hierarchy = hierarchy_of(scene)
    for node in scene.graph.nodes:
        point = positions.get(node.key)
        if node.key in skip or point is None or point[1] <= below:
            continue
        moved.append(node.key)
        if node.kind is NodeKind.GROUP:
            group = hierarchy.by_id[node.group]
            if defer:
                keys = partial(hierarchy.keys_of, group)
                scene.doc.defer_shift(scene.scope_id, node.group, keys, 0.0, dy)
            else:
                moved.extend(hierarchy.keys_of(group))
    if focus is not None:  # what lies below outside the focused group moves as well
        inside = set(hierarchy.by_id[focus].keys())
        moved.extend(
            k
            for k, (_x, y) in positions.items()
            if k >= 0 and y > below and k not in inside and k not in skip
        )
    scene.set_positions(_shift(positions, moved, 0.0, dy))


def collapse_to_depth(view: CanvasView, depth: int | str) -> int:
    """Keep ``depth`` levels open (``"auto"``: what keeps the view to a few dozen boxes),
    lay the boxes out afresh (each box's nodes move with it) and show the first view;
    returns the depth used."""
    scene = view.canvas
    view.flush()
    focus_state(scene).set(None)  # the whole graph is laid out afresh
    hierarchy = hierarchy_of(scene)
    if depth == "auto":
        depth = auto_graph_depth(full_graph(scene), hierarchy)
    assert isinstance(depth, int)
    forget_pushes(scene)
    # the groups collapsed deeper inside the new boxes stay so: their nodes are packed at
    # their own boxes' corners, and they are boxes again when an outer box opens
    deeper = {
        i for i in scene.collapsed if i in hierarchy.by_id and hierarchy.by_id[i].depth > depth + 1
    }
    scene.collapsed = groups_below(hierarchy, depth) | deeper
    graph = scene.build_graph()  # boxes at their nodes' top-left corners
    placement = layout_graph(graph, scene.sizes(graph))
    positions = scene.positions
    moves: dict[int, Position] = {}
    for node in graph.nodes:
        new = placement.positions.get(node.key)
        if new is None:
            continue
        if node.kind is NodeKind.GROUP:
            old = positions.get(node.key, new)
            members = hierarchy.by_id[node.group].keys()
            moves.update(_shift(positions, members, new[0] - old[0], new[1] - old[1]))
        moves[node.key] = new
    scene.set_positions(moves)
    scene.rebuild(graph, placement)
    view.overview.invalidate()
    view.show_first_view()
    return depth


def expand_group(view: CanvasView, group_id: str) -> None:
    """Open ``group_id`` in place: its nodes take its box's place, and what lies below
    moves down to make room (what lies above stays where it is)."""
    scene = view.canvas
    view.flush()
    hierarchy = hierarchy_of(scene)
    group = hierarchy.by_id.get(group_id)
    if group is None or group_id not in scene.collapsed:
        return
    settle_around(scene, group_id)  # its nodes are drawn now
    with drawn_only(scene):
        _expand(view, hierarchy, group_id)


def _expand(view: CanvasView, hierarchy: Hierarchy, group_id: str) -> None:
    """Open ``group_id`` alone (groups collapsed inside it stay boxes): what it draws then
    takes its box's place, and what lies below, and beside it on its row, moves to make
    room, as far as the real sizes of its nodes and boxes need."""
    scene = view.canvas
    group = hierarchy.by_id[group_id]
    key = group_key(group_id)
    after = scene.collapsed - {group_id}
    _give_back(view, _FOLD_PUSHED, group_id)  # what folding it pushed aside comes back
    box = scene.positions.get(key)
    extent = _extent(_open_rects(scene, hierarchy, group, after))
    if box is not None and extent is not None:
        dx, dy = box[0] - extent[0], box[1] - extent[1]
        scene.set_positions(_shift(scene.positions, group.keys(), dx, dy))
        height = scene.node_items.sizes.get(key, (BOX_WIDTH, st.OP_HEIGHT))[1]
        grow = (extent[3] - extent[1]) - height  # what folding it again gives back
        _make_room(view, box[1], grow, {key})
        pushed = _make_room_beside(view, key, box, extent[2] + dx)
        _remember(_PUSHED, scene, group_id, pushed)
    set_collapsed(view, after)


def collapse_group(view: CanvasView, group_id: str) -> None:
    """Collapse ``group_id`` in place (groups inside it fold into its box); what lies
    below moves up by the room it no longer takes."""
    scene = view.canvas
    view.flush()
    hierarchy = hierarchy_of(scene)
    group = hierarchy.by_id.get(group_id)
    if group is None:
        return
    settle_around(scene, group_id)  # its nodes are measured and hidden in its box
    with drawn_only(scene):
        _collapse(view, hierarchy, group_id)


def _collapse(view: CanvasView, hierarchy: Hierarchy, group_id: str) -> None:
    """Fold ``group_id`` into one box; the groups collapsed inside it are remembered (they
    are boxes again when it opens). What lay beside it on its row and was pushed aside when
    it opened comes back, what its box would cover moves aside, and what lay below moves
    back up by the room it no longer takes (as the box's real size allows)."""
    scene = view.canvas
    group = hierarchy.by_id[group_id]
    members = group.keys()
    inner = {g.id for g in group.walk()}
    after = scene.collapsed | {group_id}
    _give_back(view, _PUSHED, group_id)  # what opening it pushed aside comes back first
    extent = _extent(_open_rects(scene, hierarchy, group, scene.collapsed - {group_id}))
    if extent is not None:
        hidden = set(members) | {group_key(i) for i in inner}
        width, height = _folded_size(scene, hierarchy, group, after)
        box = (extent[0], extent[1], extent[0] + width, extent[1] + height)
        _remember(_FOLD_PUSHED, scene, group_id, _clear_beside(view, box, extent[3], hidden))
        lift = -((extent[3] - extent[1]) - height)
        _make_room(view, extent[3], _safe_lift(view, box, extent[3], lift, hidden), hidden)
    set_collapsed(view, after)
    _FOLDED.clear()  # when it was drawn in full, not from the kept graph


def expose_keys(view: CanvasView, keys: Iterable[int]) -> None:
    """Show nodes ``keys``: end a focus that leaves any of them out (the whole graph is
    shown again), then open the collapsed groups hiding them."""
    scene = view.canvas
    keys = list(keys)
    focus = focus_of(scene)
    if focus is not None:
        inside = hierarchy_of(scene).by_id.get(focus)
        members = set(inside.keys()) if inside is not None else set()
        if any(k >= 0 and k not in members for k in keys):
            from designer.ui.canvas.focus_view import set_focus

            set_focus(view, None)
    if not scene.collapsed:
        return
    hierarchy = None
    hidden: set[str] = set()
    for key in keys:
        if key >= 0 and key not in scene.node_items:
            hierarchy = hierarchy or hierarchy_of(scene)
            hidden |= expose(hierarchy, scene.collapsed, key)
    for group_id in sorted(hidden, key=lambda i: i.count("/")):  # outermost first
        expand_group(view, group_id)  # each makes room for itself, as a double-click does


def expose_key(view: CanvasView, key: int) -> int:
    """Open the collapsed groups hiding node ``key``; returns ``key``."""
    expose_keys(view, [key])
    return key


def full_graph(scene: CanvasScene) -> ViewGraph:
    """The scene's graph with nothing collapsed nor focused (the scene's own when it is
    neither)."""
    if not scene.collapsed and focus_of(scene) is None:
        return scene.graph
    return build_view_graph(
        scene.doc,
        scene.scope_id,
        show_constants=scene.show_constants,
        pinned_outer=scene.pinned_outer,
    )


def collapsed_graph(scene: CanvasScene, graph: ViewGraph) -> ViewGraph:
    """``graph`` cut down to the focused group (if any, see
    :mod:`designer.ui.canvas.focus_view`) with the scene's collapsed groups as boxes, placed
    (``CanvasScene`` calls this from ``build_graph``)."""
    scene.doc.settle_positions(scene.scope_id)  # every box is placed from its nodes
    if not scene.collapsed and focus_of(scene) is None:
        return graph
    scene.collapse_building = graph
    try:
        hierarchy = hierarchy_of(scene)
    finally:
        scene.collapse_building = None
    out, collapsed = focused_graph(scene, graph, hierarchy)
    out = collapse_graph(out, hierarchy, collapsed)
    scene.set_positions(place_boxes(out, hierarchy, scene.positions))
    scene.collapse_full, scene.collapse_derived = graph, out
    if collapsed and len(graph.edges) > INDEX_AHEAD:  # index the links for a quick expand
        QTimer.singleShot(0, scene, lambda: _links_of(graph))
    return out
