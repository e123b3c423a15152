"""Graph steps of the layered layout on integer arrays: cycle breaking, layer assignment,
connected components and dummy nodes for long edges.

Nodes are ``0..n-1``; edges are two int64 arrays ``src``, ``dst`` without self loops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def csr(n: int, src: IntArray, dst: IntArray) -> tuple[IntArray, IntArray]:
    """Successor lists as (start, targets): targets of ``v`` are
    ``targets[start[v]:start[v + 1]]`` in edge order. Cost: O(n + m log m)."""
    order = np.argsort(src, kind="stable")
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=start[1:])
    return start, dst[order]


def _longest_path(n: int, src: IntArray, dst: IntArray) -> list[int] | None:
    """Layer of each node by longest path from the sources, or None when the graph has a
    cycle. Cost: O(n + m) Python steps (:func:`_longest_path_in_order` when it applies)."""
    found = _longest_path_in_order(n, src, dst)
    return found if found is not None else _longest_path_kahn(n, src, dst)


def _longest_path_in_order(n: int, src: IntArray, dst: IntArray) -> list[int] | None:
    """Longest-path layers when the node indices are a topological order apart from the
    sources (every edge leaves a source or goes to a higher index: graphs of models list
    nodes in that order), else None. One pass over the edges sorted by source: a
    comparison and maybe a store per edge."""
    indeg = np.bincount(dst, minlength=n)
    from_source = indeg[src] == 0
    if not (from_source | (src < dst)).all():
        return None
    layer = np.zeros(n, dtype=np.int64)
    layer[dst[from_source]] = 1
    inner = ~from_source
    s, d = src[inner], dst[inner]
    by_source = np.argsort(s, kind="stable")
    out: list[int] = layer.tolist()
    # Edges of lower sources come first, so out[v] is final when v's edges come up.
    for v, w in zip(s[by_source].tolist(), d[by_source].tolist(), strict=True):
        lv = out[v] + 1
        if out[w] < lv:
            out[w] = lv
    return out


def _longest_path_kahn(n: int, src: IntArray, dst: IntArray) -> list[int] | None:
    """Layer of each node by longest path from the sources (Kahn's algorithm), or None when
    the graph has a cycle. Cost: O(n + m) Python steps."""
    start_a, tgt_a = csr(n, src, dst)
    start, tgt = start_a.tolist(), tgt_a.tolist()
    indeg = np.bincount(dst, minlength=n).tolist()
    queue = [v for v in range(n) if indeg[v] == 0]
    layer = [0] * n
    head = 0
    while head < len(queue):
        v = queue[head]
        head += 1
        lv = layer[v] + 1
        for w in tgt[start[v] : start[v + 1]]:
            if layer[w] < lv:
                layer[w] = lv
            indeg[w] -= 1
            if indeg[w] == 0:
                queue.append(w)
    return layer if len(queue) == n else None


def _back_edges(n: int, src: IntArray, dst: IntArray) -> BoolArray:
    """Edges that close a cycle in an iterative depth-first search (roots and successors in
    index order); reversing them leaves a DAG. Cost: O(n + m) Python steps."""
    order = np.argsort(src, kind="stable")
    start_a, tgt_a = csr(n, src, dst)
    start, tgt, eid = start_a.tolist(), tgt_a.tolist(), order.tolist()
    state = [0] * n  # 0 new, 1 on the stack, 2 done
    back = np.zeros(len(src), dtype=np.bool_)
    for root in range(n):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, start[root])]
        while stack:
            v, j = stack[-1]
            if j == start[v + 1]:
                stack.pop()
                state[v] = 2
                continue
            stack[-1] = (v, j + 1)
            w = tgt[j]
            if state[w] == 1:
                back[eid[j]] = True
            elif state[w] == 0:
                state[w] = 1
                stack.append((w, start[w]))
    return back


def assign_layers(n: int, src: IntArray, dst: IntArray) -> tuple[IntArray, BoolArray]:
    """Layer of every node and the mask of edges reversed to break cycles.

    Longest path from the sources, then every source with consumers is pulled down to just
    above its highest consumer, then empty layers are squeezed out. Callers flip the reversed
    edges (``src``/``dst`` swapped) so that every edge goes from a lower to a higher layer.
    Cost: O(n + m) Python steps, plus one extra pass of each kind when there is a cycle.
    """
    reversed_mask = np.zeros(len(src), dtype=np.bool_)
    layers = _longest_path(n, src, dst)
    if layers is None:
        reversed_mask = _back_edges(n, src, dst)
        src, dst = np.where(reversed_mask, dst, src), np.where(reversed_mask, src, dst)
        layers = _longest_path(n, src, dst)
        assert layers is not None, "reversing DFS back edges must leave a DAG"
    layer = np.asarray(layers, dtype=np.int64)
    if len(src):
        indeg = np.bincount(dst, minlength=n)
        outdeg = np.bincount(src, minlength=n)
        first_use = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first_use, src, layer[dst])
        pulled = (indeg == 0) & (outdeg > 0)
        layer[pulled] = first_use[pulled] - 1
    _, squeezed = np.unique(layer, return_inverse=True)
    return squeezed.astype(np.int64).reshape(-1), reversed_mask


def components(n: int, src: IntArray, dst: IntArray) -> IntArray:
    """Weakly connected component of every node, numbered 0.. in order of each component's
    smallest node. Cost: O((n + m) log n) numpy work (hooking and pointer jumping)."""
    parent = np.arange(n, dtype=np.int64)
    while len(src):
        ps, pd = parent[src], parent[dst]
        if np.array_equal(ps, pd):
            break
        np.minimum.at(parent, np.maximum(ps, pd), np.minimum(ps, pd))
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand
    _, rank = np.unique(parent, return_inverse=True)
    return rank.astype(np.int64).reshape(-1)


@dataclass(frozen=True)
class Dummies:
    """Long edges split into unit segments. Dummy items are numbered ``n..n+count-1``."""

    item_layer: IntArray  # layer of every node and dummy
    seg_u: IntArray  # segment sources (layer L)
    seg_v: IntArray  # segment targets (layer L + 1)
    first: IntArray  # per edge: first dummy item of the edge
    count: IntArray  # per edge: number of dummies (0 for a short edge)
    edge_of: IntArray  # per dummy: the edge it belongs to


def insert_dummies(layer: IntArray, src: IntArray, dst: IntArray, budget: int) -> Dummies:
    """One dummy per layer crossed by each edge, for at most ``budget`` dummies in all: when
    more would be needed, the longest edges get none and stay one segment spanning several
    layers (still ordered and pulled, never routed). Cost: O(n + m + dummies), numpy only.
    """
    n = len(layer)
    count = layer[dst] - layer[src] - 1
    if int(count.sum()) > budget:
        by_length = np.sort(count)
        fits = np.searchsorted(np.cumsum(by_length), budget, side="right")
        limit = int(by_length[fits - 1]) if fits else 0
        if int(count[count <= limit].sum()) > budget:  # ties at the limit: drop that length
            limit -= 1
        count = np.where(count > limit, 0, count)
    total = int(count.sum())
    ends = np.cumsum(count)
    first = n + ends - count
    edge_of = np.repeat(np.arange(len(src), dtype=np.int64), count)
    within = np.arange(total, dtype=np.int64) - (ends - count)[edge_of]
    item_layer = np.concatenate([layer, layer[src][edge_of] + 1 + within])
    seg_edge = np.repeat(np.arange(len(src), dtype=np.int64), count + 1)
    seg_ends = np.cumsum(count + 1)
    j = np.arange(len(seg_edge), dtype=np.int64) - (seg_ends - count - 1)[seg_edge]
    base = first[seg_edge]
    seg_u = np.where(j == 0, src[seg_edge], base + j - 1)
    seg_v = np.where(j == count[seg_edge], dst[seg_edge], base + j)
    return Dummies(item_layer, seg_u, seg_v, first, count, edge_of)
