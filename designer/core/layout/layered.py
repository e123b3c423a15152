"""Top-to-bottom layered (Sugiyama-style) layout of a directed graph given as plain records.

Steps: (1) reverse depth-first back edges if the graph has a cycle; (2) longest-path layers
from the sources, then sources pulled down right above their first consumer; sources with
more than ``proxy_fanout`` consumers (an attention mask, a shared constant) leave the layering
and get one proxy copy per consumer instead; (3) a dummy item per layer crossed by a long
edge; (4) barycenter sweeps down and up (many layers sorted at a time, see ``_sweep``);
(5) x packed per layer, then pulled toward the mean x of the neighbours while keeping order
and gaps, so deep repetitive graphs stay a narrow strip; (6) y from the layer index and the
tallest node of each layer.

Pure Python + numpy; no Qt. Cost: O(n + m + d) memory and about O(sweeps * (n + m + d))
time for n nodes, m edges and d dummies, nearly all of it numpy work; the Python steps left
are one per edge for the layers (when node order is topological, as in models; else two)
and one per node and routed edge for the result (measured in ``bench/bench_layout.py``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

import numpy as np
import numpy.typing as npt

from designer.core.layout._control import Cancelled, Control
from designer.core.layout._ordering import place_x
from designer.core.layout._ranking import (
    Dummies,
    IntArray,
    assign_layers,
    components,
    insert_dummies,
)
from designer.core.layout._sweep import FloatArray, order_layers

__all__ = [
    "Cancelled",
    "LayoutEdge",
    "LayoutNode",
    "LayoutOptions",
    "LayoutResult",
    "layered_layout",
    "layered_layout_of",
]

_X_PASSES = 8  # neighbour-mean passes in the x placement


@dataclass(frozen=True)
class LayoutNode:
    """A box to place: caller's ``id`` and its size in scene units."""

    id: int
    width: float
    height: float


@dataclass(frozen=True)
class LayoutEdge:
    """A directed edge; the layout puts ``source`` above ``target`` (unless on a cycle)."""

    source: int
    target: int


#: Above these many nodes + dummies, automatic effort uses fewer sweeps.
LARGE_ITEMS = 20_000
HUGE_ITEMS = 60_000


def auto_sweeps(items: int) -> int:
    """Barycenter sweeps used when LayoutOptions.sweeps is None."""
    return 4 if items <= LARGE_ITEMS else 2 if items <= HUGE_ITEMS else 1


@dataclass(frozen=True)
class LayoutOptions:
    """Spacing and effort.

    ``sweeps``: down+up pairs of barycenter sweeps (0 keeps the input order); None picks
    by size (:func:`auto_sweeps`: 4, then 2 above ``LARGE_ITEMS`` nodes and dummies, 1 above
    ``HUGE_ITEMS``; on the bench graphs, 10k and 100k transformer and residual stacks, fewer
    sweeps give the same crossings and width in a fraction of the time).
    ``proxy_fanout``: a source (no incoming edge) with more than this many distinct targets
    is not placed itself; it gets one proxy copy right above each consumer instead.
    ``max_span``: an edge crossing more layers than this still keeps its target below its
    source, but takes no part in ordering and gets no route (it is reported in
    ``LayoutResult.long_edges``, for drawing as a stub); None routes every edge.
    """

    layer_gap: float = 60.0
    node_gap: float = 30.0
    sweeps: int | None = None
    proxy_fanout: int = 16
    max_span: int | None = None


@dataclass
class LayoutResult:
    """Where everything goes; (0, 0) is the top-left of the drawing.

    ``positions``: top-left corner of every node except proxied sources.
    ``proxies``: for each proxied source id, (consumer id, top-left of a copy of the source
    with the source's size) pairs, the copy sitting in the layer right above the consumer.
    ``routes``: for each edge spanning more than one layer, keyed ``(source id, target id)``,
    the bend points (centre of the edge's channel in each crossed layer), from source to
    target. Short edges, edges from proxied sources and, in graphs where routing every edge
    would need more than about 2 (nodes + edges) bends, the longest edges have no entry
    (draw those straight).
    ``width``/``height``: extent of all boxes and bend points.
    ``long_edges``: (source id, target id) of the edges longer than ``max_span`` layers.
    """

    positions: dict[int, tuple[float, float]]
    proxies: dict[int, list[tuple[int, tuple[float, float]]]]
    width: float
    height: float
    routes: dict[tuple[int, int], list[tuple[float, float]]] = field(default_factory=dict)
    long_edges: list[tuple[int, int]] = field(default_factory=list)


_DEFAULT_OPTIONS = LayoutOptions()


def _dummy_budget(items: int, edges: int) -> int:
    """Most dummy items to create; beyond it the longest edges go unrouted (linear memory)."""
    return 2 * (items + edges) + 1000


def _check_options(options: LayoutOptions) -> None:
    for name in ("layer_gap", "node_gap"):
        value = getattr(options, name)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"LayoutOptions.{name} must be a finite number >= 0, got {value!r}")
    if options.sweeps is not None and options.sweeps < 0:
        raise ValueError(f"LayoutOptions.sweeps must be >= 0, got {options.sweeps!r}")


def _indices(keys: Sequence[int], index: dict[int, int]) -> IntArray:
    """``index[k]`` for every k of ``keys`` (KeyError for one that is not there), looked up
    in one C call (operator.itemgetter gives a tuple from two keys on)."""
    if len(keys) < 2:
        return np.array([index[k] for k in keys], dtype=np.int64)
    return np.array(itemgetter(*keys)(index), dtype=np.int64)


def _edge_arrays(
    sources: Sequence[int], targets: Sequence[int], index: dict[int, int]
) -> tuple[IntArray, IntArray]:
    """Edges as index arrays: self loops dropped, duplicates dropped (first kept, in order)."""
    try:
        src, dst = _indices(sources, index), _indices(targets, index)
    except KeyError as exc:
        raise ValueError(
            f"edge refers to node id {exc.args[0]!r}, which is not among the nodes; "
            "pass a LayoutNode for every edge end"
        ) from None
    keep = src != dst
    src, dst = src[keep], dst[keep]
    _, first = np.unique(src * len(index) + dst, return_index=True)
    first.sort()
    return src[first], dst[first]


def _routes(
    dummies: Dummies,
    x: FloatArray,
    layer_mid: FloatArray,
    v_count: int,
    item_id: npt.NDArray[np.object_],
    edges: tuple[IntArray, IntArray, npt.NDArray[np.bool_]],
) -> dict[tuple[int, int], list[tuple[float, float]]]:
    """Bend points of every edge with dummies, keyed (source id, target id), from source
    to target: one slice of a list of all dummies' points per edge."""
    routed = np.flatnonzero(dummies.count)
    if not len(routed):
        return {}
    src, dst, flipped = edges
    points = list(
        zip(x[v_count:].tolist(), layer_mid[dummies.item_layer[v_count:]].tolist(), strict=True)
    )
    starts = dummies.first[routed] - v_count
    bends = [
        points[a:b]
        for a, b in zip(starts.tolist(), (starts + dummies.count[routed]).tolist(), strict=True)
    ]
    for i in np.flatnonzero(flipped[routed]).tolist():
        bends[i].reverse()
    keys = zip(item_id[src[routed]].tolist(), item_id[dst[routed]].tolist(), strict=True)
    return dict(zip(keys, bends, strict=True))


def layered_layout(
    nodes: Sequence[LayoutNode],
    edges: Sequence[LayoutEdge],
    options: LayoutOptions = _DEFAULT_OPTIONS,
    *,
    progress: Callable[[float], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> LayoutResult:
    """Lay ``nodes`` out top to bottom so that edges point down (see the module docstring).

    ``progress(fraction)`` is called with nondecreasing fractions, the last one 1.0;
    ``cancel()`` is polled between steps and during each sweep, and
    :class:`Cancelled` is raised as soon as it returns True. Output depends only on the
    input (order included). Raises ValueError for duplicate node ids, edges to unknown ids
    or invalid options. Cost: about 0.25 s per 100k nodes of model-like graphs on one core
    (see ``bench/bench_layout.py``); memory linear in nodes + edges + dummies.
    """
    return layered_layout_of(
        [node.id for node in nodes],
        [node.width for node in nodes],
        [node.height for node in nodes],
        [e.source for e in edges],
        [e.target for e in edges],
        options,
        progress=progress,
        cancel=cancel,
    )


def layered_layout_of(
    ids: Sequence[int],
    widths: Sequence[float],
    heights: Sequence[float],
    sources: Sequence[int],
    targets: Sequence[int],
    options: LayoutOptions = _DEFAULT_OPTIONS,
    *,
    progress: Callable[[float], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    rounded: bool = False,
) -> LayoutResult:
    """:func:`layered_layout` of nodes and edges given as parallel columns (node ids with
    their widths and heights; edge sources and targets): no record object per node or edge,
    which at 100,000 nodes is a good part of the cost. ``rounded``: positions rounded to
    whole scene units (round half to even, as ``round``)."""
    _check_options(options)
    control = Control(progress, cancel)
    control.report(0.0)
    control.check()
    ids = list(ids)
    index = dict(zip(ids, range(len(ids)), strict=True))
    if len(index) != len(ids):
        dup = next(i for i, count in Counter(ids).items() if count > 1)
        raise ValueError(f"node id {dup!r} appears more than once; ids must be unique")
    if not ids:
        control.report(1.0)
        return LayoutResult({}, {}, 0.0, 0.0)
    n = len(ids)
    width = np.fromiter(widths, dtype=np.float64, count=n)
    height = np.fromiter(heights, dtype=np.float64, count=n)
    if (
        not (np.isfinite(width).all() and np.isfinite(height).all())
        or min(width.min(), height.min()) < 0
    ):
        raise ValueError("node widths and heights must be finite numbers >= 0")
    src, dst = _edge_arrays(sources, targets, index)

    # Proxied sources leave the graph; each of their edges gets its own proxy item.
    outdeg = np.bincount(src, minlength=n)
    indeg = np.bincount(dst, minlength=n)
    proxied = (indeg == 0) & (outdeg > options.proxy_fanout)
    via_proxy = proxied[src]
    kept = np.flatnonzero(~proxied)  # working index -> node index, for real items
    working = np.full(n, -1, dtype=np.int64)
    working[kept] = np.arange(len(kept))
    proxy_source, proxy_consumer = src[via_proxy], dst[via_proxy]
    n_proxies = len(proxy_source)
    v_count = len(kept) + n_proxies
    w_src = np.concatenate([working[src[~via_proxy]], len(kept) + np.arange(n_proxies)])
    w_dst = np.concatenate([working[dst[~via_proxy]], working[proxy_consumer]])
    origin = np.concatenate([kept, proxy_source])  # node whose box each working item uses
    control.report(0.05)
    control.check()

    layer, flipped = assign_layers(v_count, w_src, w_dst)
    top_src = np.where(flipped, w_dst, w_src)
    top_dst = np.where(flipped, w_src, w_dst)
    comp = components(v_count, top_src, top_dst)
    long_edges: list[tuple[int, int]] = []
    if options.max_span is not None:  # long edges: layered, but neither ordered nor routed
        long = (layer[top_dst] - layer[top_src]) > options.max_span
        if long.any():
            for e in np.flatnonzero(long).tolist():
                long_edges.append((ids[origin[w_src[e]]], ids[origin[w_dst[e]]]))
            keep = ~long
            w_src, w_dst, flipped = w_src[keep], w_dst[keep], flipped[keep]
            top_src, top_dst = top_src[keep], top_dst[keep]
    dummies = insert_dummies(layer, top_src, top_dst, _dummy_budget(v_count, len(w_src)))
    n_items = len(dummies.item_layer)
    item_comp = np.concatenate([comp, comp[top_src][dummies.edge_of]])
    item_width = np.concatenate([width[origin], np.zeros(n_items - v_count)])
    control.report(0.2)
    control.check()

    flat, layer_start = order_layers(
        dummies.item_layer,
        item_comp,
        dummies.seg_u,
        dummies.seg_v,
        options.sweeps if options.sweeps is not None else auto_sweeps(n_items),
        control,
        (0.2, 0.8),
    )
    x = place_x(
        flat,
        dummies.item_layer,
        item_comp,
        item_width,
        dummies.seg_u,
        dummies.seg_v,
        options.node_gap,
        _X_PASSES,
        control,
    )
    control.report(0.9)
    control.check()

    n_layers = len(layer_start) - 1
    layer_height = np.zeros(n_layers)
    item_height = height[origin]
    np.maximum.at(layer_height, layer, item_height)
    layer_top = np.concatenate([[0.0], np.cumsum(layer_height + options.layer_gap)[:-1]])
    left = x[:v_count] - item_width[:v_count] * 0.5
    top = layer_top[layer] + (layer_height[layer] - item_height) * 0.5
    k = len(kept)
    if rounded:  # node positions only; proxy copies stay exact
        left[:k] = np.round(left[:k]) + 0.0  # + 0.0: no -0.0
        top[:k] = np.round(top[:k]) + 0.0
    id_of = np.fromiter(ids, dtype=object, count=n)  # gathers give the caller's id objects
    kept_ids = ids if k == n else id_of[kept].tolist()
    lefts, tops = left.tolist(), top.tolist()
    positions = dict(zip(kept_ids, zip(lefts[:k], tops[:k], strict=True), strict=True))
    proxies: dict[int, list[tuple[int, tuple[float, float]]]] = {}
    proxy_corners = zip(lefts[k:], tops[k:], strict=True)
    proxy_ends = zip(id_of[proxy_source].tolist(), id_of[proxy_consumer].tolist(), strict=True)
    for (s, c), corner in zip(proxy_ends, proxy_corners, strict=True):
        proxies.setdefault(s, []).append((c, corner))
    routes = _routes(
        dummies, x, layer_top + layer_height * 0.5, v_count, id_of[origin], (w_src, w_dst, flipped)
    )
    right = float(max((x + item_width * 0.5).max(), 0.0))
    bottom = float(layer_top[-1] + layer_height[-1])
    control.report(1.0)
    return LayoutResult(positions, proxies, right, bottom, routes, long_edges)
