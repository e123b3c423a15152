"""Items of big scenes, built when they come into view; the geometry of every box and link
as numpy arrays.

A PySide item costs about 20 µs to make and a few hundred bytes to keep, so a 100,000-node
scene cannot afford one per node and per link at open. The scene instead knows every
drawable node (:class:`LazyNodeItems`: its view and box size) and builds an item the first
time something needs it: the view asking for what lies in (and around) the visible area
(:meth:`designer.ui.canvas.scene.CanvasScene.materialize`), or code looking a node up
(``scene.node_items[key]`` builds it). Far zooms draw the overview tiles from the arrays of
:class:`SceneGeometry` and need no items at all.

Scenes up to ``designer.ui.canvas.scene.LAZY_NODES`` nodes build every item at once.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING

import numpy as np

from designer.core.viewgraph import NodeKind, ViewEdge, ViewNode
from designer.ui.canvas import style as st

if TYPE_CHECKING:
    from PySide6.QtCore import QRectF

    from designer.ui.canvas.items import NodeItem

Point = tuple[float, float]
Size = tuple[float, float]


class LazyNodeItems(MutableMapping[int, "NodeItem"]):
    """Node items by key, over every drawable node; an item not built yet is built on
    first access (``[key]``, ``get``, ``values``). :attr:`built` holds those that exist."""

    def __init__(self, build: Callable[[int], NodeItem]) -> None:
        self._views: dict[int, ViewNode] = {}
        self._sizes: dict[int, Size] = {}
        self.built: dict[int, NodeItem] = {}
        self._build = build

    def register(self, view: ViewNode, size: Size) -> None:
        """Know node ``view`` (drawn ``size``); its item is built when first needed."""
        self._views[view.key] = view
        self._sizes[view.key] = size

    def register_all(self, views: Iterable[ViewNode], sizes: Mapping[int, Size]) -> None:
        """:meth:`register` for each of ``views`` (sizes by key), in one pass."""
        table = {view.key: view for view in views}
        self._views.update(table)
        self._sizes.update({key: sizes[key] for key in table})

    def view(self, key: int) -> ViewNode:
        return self._views[key]

    def size(self, key: int) -> Size:
        return self._sizes[key]

    @property
    def views(self) -> Mapping[int, ViewNode]:
        """Every drawable node's view, in graph order (no item is built)."""
        return self._views

    @property
    def sizes(self) -> Mapping[int, Size]:
        return self._sizes

    def __getitem__(self, key: int) -> NodeItem:
        item = self.built.get(key)
        if item is None:
            if key not in self._views:
                raise KeyError(key)
            item = self._build(key)
        return item

    def __setitem__(self, key: int, item: NodeItem) -> None:
        self._views[key] = item.view
        self._sizes[key] = (item.width, item.height)
        self.built[key] = item

    def __delitem__(self, key: int) -> None:
        del self._views[key]
        del self._sizes[key]
        self.built.pop(key, None)

    def pop(self, key: int, default: object = None) -> NodeItem | None:  # type: ignore[override]
        """Forget ``key``; its item when one was built (else None: nothing to remove)."""
        if key not in self._views:
            return default  # type: ignore[return-value]
        item = self.built.pop(key, None)
        del self._views[key]
        del self._sizes[key]
        return item

    def __contains__(self, key: object) -> bool:
        return key in self._views

    def __iter__(self) -> Iterator[int]:
        return iter(self._views)

    def __len__(self) -> int:
        return len(self._views)

    def clear(self) -> None:
        self._views.clear()
        self._sizes.clear()
        self.built.clear()


def output_xy(pos: Point, size: Size, view: ViewNode, slot: int) -> Point:
    """Scene point where a link leaves output ``slot`` of a box at ``pos`` (NodeItem's)."""
    return (
        pos[0] + size[0] * (slot + 1) / (len(view.outputs) + 1),
        pos[1] + size[1] + st.CIRCLE,
    )


def input_xy(pos: Point, size: Size, view: ViewNode, slot: int) -> Point:
    """Scene point where a link enters input ``slot`` (NodeItem.input_xy, from numbers)."""
    if slot < 0:
        return pos[0] + size[0] - st.IMPLICIT_INSET, pos[1]
    inputs = view.inputs
    tri = (
        (st.TRIANGLE_OPTIONAL if inputs[slot].optional else st.TRIANGLE)
        if slot < len(inputs)
        else 0.0
    )
    return pos[0] + size[0] * (slot + 1) / (len(inputs) + 1), pos[1] - tri


class SceneGeometry:
    """Boxes (n, 4: x, y, w, h) of the drawable nodes and, for each drawn link, its straight
    ends (m, 4: x0, y0, x1, y1) and the bounds of its curve (``lo``/``hi``, bend points
    included). Built in O(nodes + links) from the positions table and the node sizes;
    moving nodes updates their rows (:meth:`move`)."""

    def __init__(
        self,
        views: Mapping[int, ViewNode],
        sizes: Mapping[int, Size],
        positions: Mapping[int, Point],
        edges: list[ViewEdge],
        routes: Mapping[tuple[int, int], list[Point]],
    ) -> None:
        self.keys = list(views)
        n = len(self.keys)
        self.rows = dict(zip(self.keys, range(n), strict=True))
        # (C-level iteration throughout: one Python call per element costs ~0.1 s at 100k)
        self.boxes = np.empty((n, 4), dtype=np.float64)
        self.boxes[:, :2] = _pairs(map(positions.__getitem__, self.keys), n)
        self.boxes[:, 2:] = _pairs(map(sizes.__getitem__, self.keys), n)
        view_list = list(views.values())
        kinds = map(_KIND, view_list)
        self.is_io = np.fromiter(
            map(operator.is_not, kinds, itertools.repeat(NodeKind.OP)), dtype=bool, count=n
        )
        self.edges = edges
        self.routes = routes
        self._touching: dict[int, list[int]] | None = None
        m = len(edges)
        self._n_out = np.fromiter(map(len, map(_OUTPUTS, view_list)), dtype=np.float64, count=n)
        n_in = np.fromiter(map(len, map(_INPUTS, view_list)), dtype=np.intp, count=n)
        self._n_in = n_in.astype(np.float64)
        # Rows of both ends by key (sorted keys and a binary search), slots, and each input's
        # triangle from one flat table of every node's inputs.
        ends = np.fromiter(
            itertools.chain.from_iterable(map(_ENDS, edges)), dtype=np.int64, count=4 * m
        ).reshape(-1, 4)
        key_array = np.array(self.keys, dtype=np.int64)
        order = np.argsort(key_array, kind="stable")
        ordered = key_array[order]
        self._src = order[np.searchsorted(ordered, ends[:, 0])].astype(np.intp)
        self._tgt = order[np.searchsorted(ordered, ends[:, 2])].astype(np.intp)
        self._out = ends[:, 1].astype(np.float64)
        self._in = ends[:, 3].astype(np.float64)
        optional = np.fromiter(
            map(_OPTIONAL, itertools.chain.from_iterable(map(_INPUTS, view_list))),
            dtype=bool,
            count=int(n_in.sum()),
        )
        flat = np.where(optional, st.TRIANGLE_OPTIONAL, st.TRIANGLE)
        start = np.zeros(n + 1, dtype=np.intp)
        start[1:] = np.cumsum(n_in)
        slot = ends[:, 3].astype(np.intp)
        valid = (slot >= 0) & (slot < n_in[self._tgt])
        self._tri = np.zeros(m, dtype=np.float64)
        self._tri[valid] = flat[start[self._tgt[valid]] + slot[valid]]
        #: rows of the links that go through bend points of the layout
        self._routed = _routed_rows(ends[:, 0], ends[:, 2], routes) if routes else []
        self.ends = np.empty((m, 4), dtype=np.float64)
        self.lo = np.empty((m, 2), dtype=np.float64)
        self.hi = np.empty((m, 2), dtype=np.float64)
        self._compute(np.arange(len(edges)))

    def _compute(self, rows: np.ndarray) -> None:
        """Ends and curve bounds of links ``rows`` from the boxes (vectorised)."""
        if not len(rows):
            return
        b = self.boxes
        s, t = self._src[rows], self._tgt[rows]
        ends = np.empty((len(rows), 4), dtype=np.float64)
        ends[:, 0] = b[s, 0] + b[s, 2] * (self._out[rows] + 1) / (self._n_out[s] + 1)
        ends[:, 1] = b[s, 1] + b[s, 3] + st.CIRCLE
        slot = self._in[rows]
        implicit = slot < 0
        ends[:, 2] = np.where(
            implicit,
            b[t, 0] + b[t, 2] - st.IMPLICIT_INSET,
            b[t, 0] + b[t, 2] * (slot + 1) / (self._n_in[t] + 1),
        )
        ends[:, 3] = b[t, 1] - self._tri[rows]
        self.ends[rows] = ends
        # A link's cubic pieces bulge beyond its ends by up to 60 + |dy| / 10 (edge_path_xy).
        pad = 60.0 + np.abs(ends[:, 3] - ends[:, 1]) * 0.1
        self.lo[rows, 0] = np.minimum(ends[:, 0], ends[:, 2])
        self.hi[rows, 0] = np.maximum(ends[:, 0], ends[:, 2])
        self.lo[rows, 1] = np.minimum(ends[:, 1], ends[:, 3]) - pad
        self.hi[rows, 1] = np.maximum(ends[:, 1], ends[:, 3]) + pad
        if self._routed:  # bend points widen the bounds (one flat array of them all)
            chosen = self._routed if len(rows) == len(self.edges) else rows.tolist()
            at: list[int] = []
            points: list[Point] = []
            for row in chosen:
                edge = self.edges[row]
                bends = self.routes.get((edge.source, edge.target))
                if bends:
                    at.extend([row] * len(bends))
                    points.extend(bends)
            if points:
                where = np.array(at, dtype=np.intp)
                xy = np.array(points, dtype=np.float64).reshape(-1, 2)
                np.minimum.at(self.lo[:, 0], where, xy[:, 0])
                np.maximum.at(self.hi[:, 0], where, xy[:, 0])
                np.minimum.at(self.lo[:, 1], where, xy[:, 1] - 60.0)
                np.maximum.at(self.hi[:, 1], where, xy[:, 1] + 60.0)

    def touching(self, keys: Iterable[int]) -> list[int]:
        """Rows of the links to or from nodes ``keys``."""
        if self._touching is None:
            table: dict[int, list[int]] = {}
            for row, edge in enumerate(self.edges):
                table.setdefault(edge.source, []).append(row)
                if edge.target != edge.source:
                    table.setdefault(edge.target, []).append(row)
            self._touching = table
        found: set[int] = set()
        for key in keys:
            found.update(self._touching.get(key, ()))
        return sorted(found)

    def move(self, table: Mapping[int, Point], keys: Iterable[int]) -> None:
        """Nodes ``keys`` moved to their positions in ``table``: update their rows and
        those of their links."""
        moved = [k for k in keys if k in self.rows]
        if not moved:
            return
        rows = [self.rows[k] for k in moved]
        self.boxes[rows, :2] = _pairs(map(table.__getitem__, moved), len(moved))
        self._compute(np.array(self.touching(moved), dtype=np.intp))

    def boxes_in(self, rect: QRectF) -> np.ndarray:
        return boxes_in(self.boxes, rect)

    def links_in(self, rect: QRectF) -> np.ndarray:
        return bounds_in(self.lo, self.hi, rect)

    def segments(self) -> np.ndarray:
        """Straight pieces (k, 4) of every link: its ends, or through its bend points."""
        if not self.routes:
            return self.ends.copy()
        plain: list[int] = []
        extra: list[tuple[float, float, float, float]] = []
        ends = self.ends.tolist()
        for row, edge in enumerate(self.edges):
            bends = self.routes.get((edge.source, edge.target))
            if not bends:
                plain.append(row)
                continue
            x0, y0, x1, y1 = ends[row]
            points = [(x0, y0), *bends, (x1, y1)]
            extra.extend((*p, *q) for p, q in itertools.pairwise(points))
        pieces = np.array(extra, dtype=np.float64).reshape(-1, 4)
        return np.concatenate([self.ends[plain], pieces])


def boxes_in(boxes: np.ndarray, rect: QRectF) -> np.ndarray:
    """Rows of ``boxes`` (x, y, w, h) that meet ``rect``."""
    lo = boxes[:, :2]
    return bounds_in(lo, lo + boxes[:, 2:], rect)


def bounds_in(lo: np.ndarray, hi: np.ndarray, rect: QRectF) -> np.ndarray:
    """Rows whose bounds (``lo`` x, y to ``hi`` x, y) meet ``rect``."""
    return np.flatnonzero(
        (lo[:, 0] <= rect.right())
        & (hi[:, 0] >= rect.left())
        & (lo[:, 1] <= rect.bottom())
        & (hi[:, 1] >= rect.top())
    )


_KIND = operator.attrgetter("kind")
_INPUTS = operator.attrgetter("inputs")
_OUTPUTS = operator.attrgetter("outputs")
_OPTIONAL = operator.attrgetter("optional")
_ENDS = operator.attrgetter("source", "source_index", "target", "target_index")


def _pairs(values: Iterable[tuple[float, float]], count: int) -> np.ndarray:
    """(count, 2) float64 from pairs (2-3x faster than np.array on a list of tuples)."""
    flat = itertools.chain.from_iterable(values)
    return np.fromiter(flat, dtype=np.float64, count=2 * count).reshape(-1, 2)


def _routed_rows(
    sources: np.ndarray, targets: np.ndarray, routes: Mapping[tuple[int, int], object]
) -> list[int]:
    """Rows of the links (``sources[i]`` → ``targets[i]``) that have bend points."""
    pairs = np.array(list(routes), dtype=np.int64).reshape(-1, 2)
    low = min(int(sources.min(initial=0)), int(targets.min(initial=0)), int(pairs.min(initial=0)))
    high = max(int(sources.max(initial=0)), int(targets.max(initial=0)), int(pairs.max(initial=0)))
    width = high - low + 1
    if width >= 2**31:  # keys too far apart to pack two into an int64
        rows = zip(sources.tolist(), targets.tolist(), strict=True)
        return [r for r, pair in enumerate(rows) if pair in routes]
    packed = (sources - low) * width + (targets - low)
    wanted = (pairs[:, 0] - low) * width + (pairs[:, 1] - low)
    return np.flatnonzero(np.isin(packed, wanted)).tolist()
