"""Focus on one group of a scope: the view graph of that group alone. Its nodes keep their
own terminals and the links between them; a value read from outside the group becomes one
input stub (a :class:`NodeKind.INPUT` pseudo node named by the value) and a value read
outside or a graph output becomes one output stub (:class:`NodeKind.OUTPUT`). Stub keys are
negative and never document keys (nor group-box keys, see :func:`designer.core.collapse.group_key`).

:func:`crumbs` gives the path a breadcrumb bar shows (``model › layers.3 › self_attn``).
Qt-free; O(nodes + edges) of the graph.
"""

from __future__ import annotations

import bisect
import itertools
import zlib

from designer.core.hierarchy import Group, Hierarchy
from designer.core.viewgraph import (
    NodeKind,
    Terminal,
    TerminalState,
    ViewEdge,
    ViewGraph,
    ViewNode,
)

#: Stub keys lie below every group-box key (those are ``-1 - crc32``, at least ``-2**32``).
_STUB_BASE = -(2**33)

#: The label of the first crumb: the whole graph.
TOP = "model"


def stub_key(side: str, tensor: str) -> int:
    """The (negative, stable) view key of a border stub: ``side`` is "in" or "out"."""
    return _STUB_BASE - zlib.crc32(f"{side}:{tensor}".encode())


def is_stub_key(key: int) -> bool:
    """True for keys :func:`stub_key` hands out."""
    return key <= _STUB_BASE


def focus_graph(graph: ViewGraph, hierarchy: Hierarchy, group_id: str) -> ViewGraph:
    """``graph`` cut down to the nodes of group ``group_id`` (its whole subtree) with one
    stub per value crossing its border; ``graph`` itself is not changed. KeyError when the
    hierarchy has no such group."""
    group = hierarchy.by_id[group_id]
    inside = set(group.keys())
    nodes = [n for n in graph.nodes if n.kind is NodeKind.OP and n.key in inside]
    kept = {n.key for n in nodes}
    inputs: dict[str, ViewNode] = {}
    outputs: dict[str, ViewNode] = {}
    edges: list[ViewEdge] = []
    linked = TerminalState.LINKED
    for edge in graph.edges:
        source_in, target_in = edge.source in kept, edge.target in kept
        if source_in and target_in:
            edges.append(edge)
        elif target_in:  # read inside, made outside: an input stub feeds every reader
            stub = inputs.get(edge.tensor)
            if stub is None:
                key = stub_key("in", edge.tensor)
                terminal = Terminal(0, edge.tensor, edge.tensor, linked)
                stub = inputs[edge.tensor] = ViewNode(
                    key, NodeKind.INPUT, edge.tensor, "Input", outputs=[terminal]
                )
            edges.append(ViewEdge(stub.key, 0, edge.target, edge.target_index, edge.tensor))
        elif source_in and edge.tensor not in outputs:  # made inside, read outside
            key = stub_key("out", edge.tensor)
            terminal = Terminal(0, edge.tensor, edge.tensor, linked)
            outputs[edge.tensor] = ViewNode(
                key, NodeKind.OUTPUT, edge.tensor, "Output", inputs=[terminal]
            )
            edges.append(ViewEdge(edge.source, edge.source_index, key, 0, edge.tensor))
    return ViewGraph(graph.scope, [*inputs.values(), *nodes, *outputs.values()], edges)


def ancestors(hierarchy: Hierarchy, group_id: str) -> list[Group]:
    """The groups from the top level down to ``group_id`` (inclusive); empty when there is
    no such group."""
    group = hierarchy.by_id.get(group_id)
    out: list[Group] = []
    while group is not None and group.path:
        out.append(group)
        group = group.parent
    out.reverse()
    return out


def crumbs(hierarchy: Hierarchy, group_id: str | None) -> list[tuple[str, str | None]]:
    """(label, group id) of each crumb: first :data:`TOP` (id None: the whole graph), then
    every group from the top level down to ``group_id``."""
    out: list[tuple[str, str | None]] = [(TOP, None)]
    if group_id is not None:
        out.extend((g.name, g.id) for g in ancestors(hierarchy, group_id))
    return out


Point = tuple[float, float]
#: A box as (left, top, right, bottom), without its terminals.
Rect = tuple[float, float, float, float]

#: Room above a box's top for its input triangles, and below its bottom for its output
#: circles: a routed link passes a row of boxes this far clear of them.
ROW_ROOM = 11.0
#: Two rows of boxes closer than this are passed as one (an S-bend between them needs it).
MIN_ROW_GAP = 20.0
#: Horizontal room kept between a routed link and the boxes beside it.
SIDE_ROOM = 14.0


def curve_points(points: list[Point], step: float = 6.0) -> list[Point]:
    """Points at most about ``step`` apart along the link the canvas draws through
    ``points`` (the cubic pieces of ``designer.ui.canvas.items.edge_path_xy``, with
    vertical tangents at every point)."""
    out = [points[0]]
    for (ax, ay), (bx, by) in itertools.pairwise(points):
        dy = by - ay
        d = max(dy * 0.5, 24.0) if dy > 0 else 60.0 + abs(dy) * 0.1
        per_piece = max(16, int((abs(bx - ax) + abs(dy) + 2 * d) / step))
        for i in range(1, per_piece + 1):
            t = i / per_piece
            u = 1.0 - t
            a, b, c, e = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
            out.append((ax * (a + b) + bx * (c + e), ay * a + (ay + d) * b + (by - d) * c + by * e))
    return out


def _hits(points: list[Point], boxes: list[Rect]) -> bool:
    return any(
        left < x < right and top < y < bottom
        for x, y in points
        for left, top, right, bottom in boxes
    )


def _bands(boxes: list[Rect]) -> list[tuple[float, float, list[Rect]]]:
    """``boxes`` gathered into rows: (top, bottom, boxes) with their terminals' room, rows
    closer than MIN_ROW_GAP merged, top to bottom."""
    bands: list[tuple[float, float, list[Rect]]] = []
    for box in sorted(boxes, key=lambda b: b[1]):
        top, bottom = box[1] - ROW_ROOM, box[3] + ROW_ROOM
        if bands and top < bands[-1][1] + MIN_ROW_GAP:
            last_top, last_bottom, members = bands[-1]
            members.append(box)
            bands[-1] = (last_top, max(last_bottom, bottom), members)
        else:
            bands.append((top, bottom, [box]))
    return bands


def _free_x(boxes: list[Rect], want: float, toward: float) -> float:
    """The x nearest ``want`` (ties: nearer ``toward``) that keeps SIDE_ROOM from every
    box of ``boxes`` (a row)."""
    spans = sorted((b[0] - SIDE_ROOM, b[2] + SIDE_ROOM) for b in boxes)
    blocked: list[tuple[float, float]] = []
    for left, right in spans:  # the union of the rows' spans
        if blocked and left <= blocked[-1][1]:
            blocked[-1] = (blocked[-1][0], max(blocked[-1][1], right))
        else:
            blocked.append((left, right))
    for left, right in blocked:
        if left < want < right:
            return min((left, right), key=lambda x: (abs(x - want), abs(x - toward)))
    return want


def route_around(start: Point, end: Point, boxes: list[Rect]) -> list[Point]:
    """Bend points that take a link from ``start`` (an output, above) down to ``end`` (an
    input) around ``boxes`` (every box but its two ends): none when the plain link misses
    them; else, at each row of boxes in between, the link runs straight down a gap of the
    row and bends between rows, as the layout's routes do. Links that run up are left as
    they are. O(boxes · samples)."""
    (x0, y0), (x1, y1) = start, end
    if y1 <= y0:
        return []
    low, high = min(x0, x1), max(x0, x1)
    between = [b for b in boxes if b[3] > y0 and b[1] < y1]
    near = [b for b in between if b[2] > low and b[0] < high]  # a link keeps to its x range
    if not near or not _hits(curve_points([start, end]), near):
        return []
    bends: list[Point] = []
    x = x0
    for top, bottom, row in _bands(between):
        x = _free_x(row, x, x1)
        bends.append((x, max(top, y0 + 1.0)))
        bends.append((x, min(bottom, y1 - 1.0)))
    return bends


def route_links(
    links: dict[tuple[int, int], tuple[Point, Point]], boxes: dict[int, Rect]
) -> dict[tuple[int, int], list[Point]]:
    """Bend points (:func:`route_around`) of each link (source key, target key) → its ends,
    around every box but its own two; links that need none are left out. The boxes are
    looked up by their row (sorted by top), so a short link costs little."""
    order = sorted(boxes.items(), key=lambda kv: kv[1][1])
    tops = [rect[1] for _k, rect in order]
    tallest = max((rect[3] - rect[1] for rect in boxes.values()), default=0.0)
    routes: dict[tuple[int, int], list[Point]] = {}
    for (source, target), (start, end) in links.items():
        lo = bisect.bisect_left(tops, start[1] - tallest)
        hi = bisect.bisect_right(tops, end[1])
        near = [rect for key, rect in order[lo:hi] if key != source and key != target]
        bends = route_around(start, end, near)
        if bends:
            routes[(source, target)] = bends
    return routes
