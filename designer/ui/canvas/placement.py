"""Where nodes go: the layered layout of a whole view graph, and a quick placement of the
few nodes that have no position yet (added by an edit, or new in a changed model).

Qt-free apart from the node sizes the caller passes in; runs on a worker thread.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from designer.core.layout import LayoutOptions, layered_layout_of
from designer.core.viewgraph import NodeKind, ViewEdge, ViewGraph

Point = tuple[float, float]
Size = tuple[float, float]

#: A graph input with more consumers than this is drawn as one proxy above each consumer.
PROXY_FANOUT = 16
#: A node output read by more nodes than this (a mask, position ids, rotary tables, a shape
#: used by every layer) is drawn as a labelled stub above each reader instead of links that
#: run the length of the graph; the layout ignores those links.
STUB_FANOUT = 8
#: A link crossing more layers than this is drawn as a stub above its reader too (and the
#: layout neither orders nor routes it); on the canvas: a vertical distance of that many
#: operator rows.
STUB_SPAN = 24
_ROW = 44.0  # height of an operator box (style.OP_HEIGHT; this module is Qt-free)
LAYER_GAP = 70.0
NODE_GAP = 36.0
_FREE_SPOT_LIMIT = 200


@dataclass
class Placement:
    """Top-left positions by node key, and bend points of long links by (source, target)."""

    positions: dict[int, Point]
    routes: dict[tuple[int, int], list[Point]] = field(default_factory=dict)


#: Pseudo nodes that feed the graph: graph inputs and values of enclosing graphs.
_SOURCES = (NodeKind.INPUT, NodeKind.OUTER)


def proxied_inputs(graph: ViewGraph) -> dict[int, str]:
    """Graph inputs (key → name) with more than PROXY_FANOUT distinct consumers.
    O(edges) once per graph (memoised on it; do not change the result)."""
    found = graph.memo.get("proxied")
    if found is None:
        found = graph.memo["proxied"] = _proxied_inputs(graph)
    return found  # type: ignore[return-value]


def _proxied_inputs(graph: ViewGraph) -> dict[int, str]:
    consumers: dict[int, set[int]] = {}
    inputs = {n.key: n.name for n in graph.nodes if n.kind in _SOURCES}
    if inputs:
        for edge in graph.edges:
            if edge.source in inputs:
                consumers.setdefault(edge.source, set()).add(edge.target)
    return {k: inputs[k] for k, c in consumers.items() if len(c) > PROXY_FANOUT}


def stubbed_outputs(graph: ViewGraph) -> dict[tuple[int, int], str]:
    """Operator and collapsed-group outputs (node key, output index) → tensor read by more
    than STUB_FANOUT distinct nodes. O(edges) once per graph (memoised on it; do not
    change the result)."""
    found = graph.memo.get("stubbed")
    if found is None:
        found = graph.memo["stubbed"] = _stubbed_outputs(graph)
    return found  # type: ignore[return-value]


def _stubbed_outputs(graph: ViewGraph) -> dict[tuple[int, int], str]:
    # A first cheap pass, in C: outputs with many links at all; then only their links.
    count = Counter(map(_SOURCE_SLOT, graph.edges))
    boxes = (NodeKind.OP, NodeKind.GROUP)
    wide = {
        k
        for k, c in count.items()
        if c > STUB_FANOUT and graph.has_node(k[0]) and graph.node(k[0]).kind in boxes
    }
    if not wide:
        return {}
    sources = {k[0] for k in wide}
    readers: dict[tuple[int, int], set[int]] = {k: set() for k in wide}
    tensors: dict[tuple[int, int], str] = {}
    for edge in graph.edges:
        if edge.source in sources:
            key = (edge.source, edge.source_index)
            if key in wide:
                readers[key].add(edge.target)
                tensors[key] = edge.tensor
    return {k: tensors[k] for k, r in readers.items() if len(r) > STUB_FANOUT}


_SOURCE_SLOT = operator.itemgetter(0, 1)  # a ViewEdge's (source, source_index)


def long_links(
    graph: ViewGraph,
    positions: Mapping[int, Point],
    sizes: Mapping[int, Size],
    skip: Callable[[ViewEdge], bool],
) -> set[ViewEdge]:
    """Links (not ``skip``-ped) whose target lies more than STUB_SPAN operator rows below
    the bottom of their source. O(edges)."""
    limit = STUB_SPAN * (_ROW + LAYER_GAP)
    found: set[ViewEdge] = set()
    at, size_of, default = positions.get, sizes.get, (0.0, _ROW)
    for edge in graph.edges:
        a, b = at(edge.source), at(edge.target)
        if a is None or b is None or b[1] - a[1] <= limit:  # cheap test first: never long
            continue
        if b[1] - (a[1] + size_of(edge.source, default)[1]) > limit and not skip(edge):
            found.add(edge)
    return found


def layout_graph(
    graph: ViewGraph,
    sizes: Mapping[int, Size],
    *,
    progress: Callable[[float], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> Placement:
    """Top-to-bottom layered layout of every node of ``graph`` (raises layout.Cancelled).

    Proxied graph inputs get no position (they are drawn above each consumer); links from
    stubbed outputs do not take part (they are drawn as stubs)."""
    keys = [n.key for n in graph.nodes]
    box = [sizes[k] for k in keys]
    stubs = stubbed_outputs(graph)
    edges = graph.edges
    if stubs:
        edges = [e for e in edges if (e.source, e.source_index) not in stubs]
    options = LayoutOptions(
        layer_gap=LAYER_GAP, node_gap=NODE_GAP, proxy_fanout=PROXY_FANOUT, max_span=STUB_SPAN
    )
    result = layered_layout_of(
        keys,
        [b[0] for b in box],
        [b[1] for b in box],
        [e.source for e in edges],
        [e.target for e in edges],
        options,
        progress=progress,
        cancel=cancel,
        rounded=True,
    )
    positions = result.positions
    for source, copies in result.proxies.items():
        if source not in positions and copies and not _is_input(graph, source):
            positions[source] = copies[0][1]  # a proxied non-input: keep it at its first copy
    return Placement(positions, dict(result.routes))


def _is_input(graph: ViewGraph, key: int) -> bool:
    return graph.has_node(key) and graph.node(key).kind in _SOURCES


def needs_full_layout(graph: ViewGraph, positions: Mapping[int, Point]) -> bool:
    """True when more than half of the nodes (not counting proxied inputs) have no position."""
    proxied = proxied_inputs(graph)
    keys = [n.key for n in graph.nodes if n.key not in proxied]
    missing = sum(1 for k in keys if k not in positions)
    return missing * 2 > len(keys)


def place_missing(
    graph: ViewGraph, positions: Mapping[int, Point], sizes: Mapping[int, Size]
) -> dict[int, Point]:
    """Positions for nodes of ``graph`` that have none: below their placed producers (at
    their mean x), else above their placed consumers, else right of everything. O(n + m)."""
    proxied = proxied_inputs(graph)
    missing = [n.key for n in graph.nodes if n.key not in positions and n.key not in proxied]
    if not missing:
        return {}
    # saved positions of nodes that no longer exist (a stale layout) are ignored
    positions = {k: p for k, p in positions.items() if k in sizes}
    placed: dict[int, Point] = dict(positions)
    producers: dict[int, list[int]] = {}
    consumers: dict[int, list[int]] = {}
    for e in graph.edges:
        producers.setdefault(e.target, []).append(e.source)
        consumers.setdefault(e.source, []).append(e.target)
    xs = [p[0] for p in positions.values()] or [0.0]
    right = max(xs) + 200.0
    new: dict[int, Point] = {}
    for key in missing:
        w, h = sizes[key]
        above = [p for p in producers.get(key, ()) if p in placed]
        below = [c for c in consumers.get(key, ()) if c in placed]
        if above:
            x = sum(placed[p][0] + sizes[p][0] / 2 for p in above) / len(above) - w / 2
            y = max(placed[p][1] + sizes[p][1] for p in above) + LAYER_GAP
        elif below:
            x = sum(placed[c][0] + sizes[c][0] / 2 for c in below) / len(below) - w / 2
            y = min(placed[c][1] for c in below) - LAYER_GAP - h
        else:
            x, y = right, 0.0
            right += w + NODE_GAP
        if len(missing) <= _FREE_SPOT_LIMIT:  # O(n) per node: only for a few new nodes
            x, y = free_spot(x, y, w, h, placed, sizes)
        placed[key] = new[key] = (float(round(x)), float(round(y)))
    return new


def free_spot(
    x: float, y: float, w: float, h: float, placed: Mapping[int, Point], sizes: Mapping[int, Size]
) -> Point:
    """Shift (x, y) right until the box no longer overlaps a placed node on that row."""
    row = [
        (px, sizes[k][0]) for k, (px, py) in placed.items() if py < y + h and py + sizes[k][1] > y
    ]
    row.sort()
    for px, pw in row:
        if px < x + w + NODE_GAP / 2 and px + pw + NODE_GAP / 2 > x:
            x = px + pw + NODE_GAP
    return x, y


def grid_placement(graph: ViewGraph, sizes: Mapping[int, Size], columns: int = 0) -> Placement:
    """Nodes in graph order on a grid (the fallback when a layout is cancelled). O(n)."""
    proxied = proxied_inputs(graph)
    keys = [n.key for n in graph.nodes if n.key not in proxied]
    columns = columns or max(1, int(len(keys) ** 0.5))
    cell_w = max((sizes[k][0] for k in keys), default=0.0) + NODE_GAP
    cell_h = max((sizes[k][1] for k in keys), default=0.0) + LAYER_GAP
    return Placement(
        {k: ((i % columns) * cell_w, (i // columns) * cell_h) for i, k in enumerate(keys)}
    )
