"""Order inside layers: barycenter sweeps down and up, computed many layers at a time.

A sweep visits the layers in order and sorts each one by the mean position of its
neighbours in the layers already visited (see :func:`order_layers`). Sequentially that is
one Python step per layer and item, most of the layout's time on deep graphs. Here each
layer's new order is a function of the final orders of the layers before it (in the
sweep's direction) and of the orders at the start of the sweep only, so the sweep's result
is the unique fixed point of "every layer sorted from the current orders of the layers
before it". It is found by rounds that sort every layer whose earlier neighbours moved in
the previous round, all at once with numpy (the first round sorts every layer); a change
usually dies out within a few layers, so a sweep takes a handful of rounds. When few
layers are left to sort (a change running down a long ladder) or after many rounds, the
rest is finished one layer at a time in Python, sorting each layer at most once and only
where a change reaches. Either way the result is exactly that of the sequential sweep.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from designer.core.layout._control import Control
from designer.core.layout._ranking import IntArray

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: Below this many layers to sort in a round, the sweep goes on one layer at a time.
WALK_BELOW = 24
#: After this many rounds in one sweep, too (long changes in many places at once): from
#: there on each layer is sorted at most once more, as in the sequential sweep.
MAX_ROUNDS = 64
_CHECK_EVERY = 512  # layers between cancel checks when going one layer at a time


def ranges(start: IntArray, stop: IntArray) -> IntArray:
    """``start[0]..stop[0]-1``, then ``start[1]..stop[1]-1``, … concatenated."""
    lengths = stop - start
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    out: IntArray = np.arange(total, dtype=np.int64)
    out += np.repeat(start - (ends - lengths), lengths)
    return out


def _sums(owner: IntArray, weights: FloatArray, count: int) -> FloatArray:
    """Sum of ``weights`` per ``owner`` (``0..count-1``), added up in order."""
    out: FloatArray = np.bincount(owner, weights=weights, minlength=count).astype(
        np.float64, copy=False
    )
    return out


def _csr(items: int, frm: IntArray, to: IntArray) -> tuple[IntArray, IntArray]:
    """For every item, the ``to`` ends of its segments (in segment order), as
    (start, flat): item v's are ``flat[start[v]:start[v + 1]]``."""
    order = np.argsort(frm, kind="stable")
    start = np.zeros(items + 1, dtype=np.int64)
    np.cumsum(np.bincount(frm, minlength=items), out=start[1:])
    return start, to[order]


@dataclass
class _State:
    """Current orders: ``flat`` holds layer 0's items left to right, then layer 1's, …
    (layer L at ``flat[start[L]:start[L + 1]]``); ``pos`` is each item's relative
    position (rank + 0.5) / (items in its layer)."""

    flat: IntArray
    start: IntArray
    size: FloatArray  # per item: items in its layer
    pos: FloatArray
    comp: IntArray
    item_layer: IntArray


@dataclass
class _Half:
    """One sweep direction: ``near`` neighbours are in the layers sorted before, ``far``
    ones in those sorted after; ``flat0``/``pos0`` are the orders when the sweep began."""

    near_start: IntArray
    near: IntArray
    near_owner: IntArray  # per entry of ``near``: the item it is a neighbour of
    far_start: IntArray
    far: IntArray
    eligible: BoolArray  # per layer: sorted in this direction
    flat0: IntArray
    pos0: FloatArray


def _keys(state: _State, half: _Half, v: IntArray) -> FloatArray:
    """Sort keys of items ``v``: the mean current position of their near neighbours; items
    without any use their far neighbours at the sweep's start, half a slot right (so a
    source pulled down sits just right of its consumer's column); items without either
    keep their position at the sweep's start."""
    count = len(v)
    if count * 4 > len(state.pos):  # most items: sum over every segment at once
        sums = _sums(half.near_owner, state.pos[half.near], len(state.pos))
        keys: FloatArray = sums[v]
        degree = half.near_start[v + 1] - half.near_start[v]
    else:
        lo, hi = half.near_start[v], half.near_start[v + 1]
        degree = hi - lo
        owner = np.repeat(np.arange(count, dtype=np.int64), degree)
        picked = half.near[ranges(lo, hi)]
        keys = _sums(owner, state.pos[picked], count)
    linked = degree > 0
    keys[linked] /= degree[linked]
    alone = np.flatnonzero(~linked)
    if len(alone):
        w = v[alone]
        lo, hi = half.far_start[w], half.far_start[w + 1]
        degree = hi - lo
        owner = np.repeat(np.arange(len(w), dtype=np.int64), degree)
        sums = _sums(owner, half.pos0[half.far[ranges(lo, hi)]], len(w))
        far = degree > 0
        sums[far] = sums[far] / degree[far] + 0.5 / state.size[w[far]]
        sums[~far] = half.pos0[w[~far]]
        keys[alone] = sums
    return keys


def _sort_round(state: _State, half: _Half, slots: IntArray) -> IntArray:
    """Sort the layers at ``slots`` (all slots of each; layers in increasing order), from
    their orders at the sweep's start, ties kept in that order, against the current orders
    of all other layers; returns the items that moved."""
    v = half.flat0[slots]
    keys = _keys(state, half, v)
    comp = state.comp[v]
    layer = state.item_layer[v]
    # Start orders are sorted by component; only layers with a pair out of order need a sort.
    unsorted = (layer[1:] == layer[:-1]) & (comp[1:] == comp[:-1]) & (keys[1:] < keys[:-1])
    new = v
    if unsorted.any():
        to_sort = np.zeros(len(state.start) - 1, dtype=np.bool_)
        to_sort[layer[1:][unsorted]] = True
        picked = np.flatnonzero(to_sort[layer])
        new = v.copy()
        new[picked] = v[picked][np.lexsort((keys[picked], comp[picked], layer[picked]))]
    moved = state.flat[slots] != new
    if not moved.any():
        return np.zeros(0, dtype=np.int64)
    new_slots = slots[moved]
    movers: IntArray = new[moved]
    state.flat[new_slots] = movers
    rank = new_slots - state.start[state.item_layer[movers]]
    state.pos[movers] = (rank + 0.5) / state.size[movers]
    return movers


def _dependents(state: _State, half: _Half, movers: IntArray) -> IntArray:
    """Layers (to sort in this direction) holding a far neighbour of ``movers``."""
    hit = half.far[ranges(half.far_start[movers], half.far_start[movers + 1])]
    found = np.unique(state.item_layer[hit])
    out: IntArray = found[half.eligible[found]]
    return out


def _walk(
    state: _State, half: _Half, pending: IntArray, going_down: bool, control: Control
) -> None:
    """Finish the sweep one layer at a time: sort the pending layers in sweep order, and
    every layer a change reaches (Python lists; same arithmetic as :func:`_keys`)."""
    flat, flat0 = state.flat.tolist(), half.flat0.tolist()
    pos, pos0 = state.pos.tolist(), half.pos0.tolist()
    start, layer_of = state.start.tolist(), state.item_layer.tolist()
    comp, eligible = state.comp.tolist(), half.eligible.tolist()
    near_start, near = half.near_start.tolist(), half.near.tolist()
    far_start, far = half.far_start.tolist(), half.far.tolist()
    sign = 1 if going_down else -1  # the heap pops layers in sweep order
    heap = [sign * layer for layer in pending.tolist()]
    heapq.heapify(heap)
    queued = set(heap)
    visits = 0
    while heap:
        key = heapq.heappop(heap)
        queued.discard(key)
        visits += 1
        if visits % _CHECK_EVERY == 0:
            control.check()
        layer = sign * key
        a, b = start[layer], start[layer + 1]
        m = b - a
        members = flat0[a:b]
        keys = []
        shift = 0.5 / m
        for v in members:
            lo, hi = near_start[v], near_start[v + 1]
            if hi - lo == 1:
                keys.append(pos[near[lo]])
            elif hi > lo:
                total = 0.0
                for u in near[lo:hi]:
                    total += pos[u]
                keys.append(total / (hi - lo))
            else:
                lo, hi = far_start[v], far_start[v + 1]
                if hi > lo:
                    total = 0.0
                    for u in far[lo:hi]:
                        total += pos0[u]
                    keys.append(total / (hi - lo) + shift)
                else:
                    keys.append(pos0[v])
        if comp[members[0]] != comp[members[-1]]:
            keys = [(comp[v], k) for v, k in zip(members, keys, strict=True)]
        new = [members[i] for i in sorted(range(m), key=keys.__getitem__)]
        if new == flat[a:b]:
            continue
        for r, v in enumerate(new):
            if flat[a + r] == v:
                continue
            flat[a + r] = v
            pos[v] = (r + 0.5) / m
            for u in far[far_start[v] : far_start[v + 1]]:
                nxt = sign * layer_of[u]
                if nxt not in queued and eligible[layer_of[u]]:
                    queued.add(nxt)
                    heapq.heappush(heap, nxt)
    state.flat[:] = flat
    state.pos[:] = pos


def _sweep(state: _State, half: _Half, going_down: bool, control: Control) -> None:
    """One sweep in place: rounds of :func:`_sort_round`, then :func:`_walk` when few
    layers are left or after MAX_ROUNDS rounds."""
    pending = np.flatnonzero(half.eligible)
    slots = np.flatnonzero(half.eligible[state.item_layer[half.flat0]])  # all of them
    rounds = 0
    while len(pending):
        control.check()
        rounds += 1
        if len(pending) < WALK_BELOW or rounds > MAX_ROUNDS:
            _walk(state, half, pending, going_down, control)
            return
        movers = _sort_round(state, half, slots)
        if not len(movers):
            return
        pending = _dependents(state, half, movers)
        slots = ranges(state.start[pending], state.start[pending + 1])


def order_layers(
    item_layer: IntArray,
    item_comp: IntArray,
    seg_u: IntArray,
    seg_v: IntArray,
    sweeps: int,
    control: Control,
    span: tuple[float, float],
) -> tuple[IntArray, IntArray]:
    """Items of each layer, left to right, after ``sweeps`` down+up barycenter sweeps, as
    (flat, start): layer L is ``flat[start[L]:start[L + 1]]``.

    Layers start in (component, item) order. A down sweep sorts layers 1, 2, … in turn, an
    up sweep the layers from the second last up to 0; each layer is sorted by (component,
    mean relative position of its neighbours in the layers sorted before it); items
    without such neighbours use their neighbours on the other side, shifted half a slot
    right (so a pulled-down source sits just right of its consumer's column), else keep
    their place; ties keep their order. Layers of one item never change. Stops early when
    a down and up sweep change nothing. Progress goes from ``span[0]`` to ``span[1]``.
    Deterministic. Cost: O(rounds * (items + segments)) numpy work per sweep, a few
    rounds on the graphs of real models (see the module docstring).
    """
    items = len(item_layer)
    n_layers = int(item_layer.max()) + 1 if items else 0
    flat = np.lexsort((np.arange(items), item_comp, item_layer)).astype(np.int64)
    counts = np.bincount(item_layer, minlength=n_layers)
    start = np.zeros(n_layers + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    lo, hi = span
    if sweeps <= 0 or items == 0:
        control.report(hi)
        return flat, start
    size = counts[item_layer].astype(np.float64)
    pos = np.empty(items)
    pos[flat] = (np.arange(items) - start[item_layer[flat]] + 0.5) / size[flat]
    state = _State(flat, start, size, pos, item_comp, item_layer)
    up_start, ups = _csr(items, seg_v, seg_u)
    down_start, downs = _csr(items, seg_u, seg_v)
    up_owner = np.repeat(np.arange(items, dtype=np.int64), np.diff(up_start))
    down_owner = np.repeat(np.arange(items, dtype=np.int64), np.diff(down_start))
    wide = counts >= 2
    below_top, above_bottom = wide.copy(), wide.copy()
    below_top[:1] = False
    above_bottom[-1:] = False
    halves = 2 * sweeps
    for index in range(halves):
        going_down = index % 2 == 0
        half = _Half(
            *(
                (up_start, ups, up_owner, down_start, downs)
                if going_down
                else (down_start, downs, down_owner, up_start, ups)
            ),
            below_top if going_down else above_bottom,
            state.flat.copy(),
            state.pos.copy(),
        )
        _sweep(state, half, going_down, control)
        control.report(lo + (hi - lo) * (index + 1) / halves)
        if not going_down and index > 0 and np.array_equal(state.flat, half.flat0):
            break
    control.report(hi)
    return state.flat, start
