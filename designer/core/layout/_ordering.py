"""Order inside layers (barycenter crossing reduction) and x coordinates (neighbour-mean
pulls that keep order and gaps), for nodes and dummies numbered ``0..items-1``."""

from __future__ import annotations

from itertools import chain, islice, pairwise
from operator import le

import numpy as np
import numpy.typing as npt

from designer.core.layout._control import Control
from designer.core.layout._ranking import IntArray

FloatArray = npt.NDArray[np.float64]

_CHECK_EVERY = 512  # layers between cancel checks inside a sweep


def _adjacency(items: int, frm: IntArray, to: IntArray) -> list[list[int]]:
    """For every item, the list of ``to`` ends of its segments. Cost: O(items + segments)."""
    order = np.argsort(frm, kind="stable")
    start = np.zeros(items + 1, dtype=np.int64)
    np.cumsum(np.bincount(frm, minlength=items), out=start[1:])
    flat = to[order].tolist()
    bounds = start.tolist()
    return [flat[a:b] for a, b in pairwise(bounds)]


def order_layers(
    item_layer: IntArray,
    item_comp: IntArray,
    seg_u: IntArray,
    seg_v: IntArray,
    sweeps: int,
    control: Control,
    span: tuple[float, float],
) -> list[list[int]]:
    """Items of each layer, left to right, after ``sweeps`` down+up barycenter sweeps.

    Each layer is sorted by (component, mean relative position of its neighbours in the
    previous layer of the sweep); items without such neighbours use their neighbours on the
    other side, shifted half a slot right (so a pulled-down source sits just right of its
    consumer's column), else keep their place. Stops
    early when a full sweep changes nothing. Progress goes from ``span[0]`` to ``span[1]``.
    Cost: O(sweeps * (items + segments)) Python steps plus sorting; layers of one item are
    skipped.
    """
    items = len(item_layer)
    n_layers = int(item_layer.max()) + 1 if items else 0
    by_layer = np.lexsort((np.arange(items), item_comp, item_layer))
    counts = np.bincount(item_layer, minlength=n_layers).tolist()
    flat = by_layer.tolist()
    layers: list[list[int]] = []
    at = 0
    for c in counts:
        layers.append(flat[at : at + c])
        at += c
    pos = [0.0] * items
    for members in layers:
        m = len(members)
        for r, v in enumerate(members):
            pos[v] = (r + 0.5) / m
    if sweeps <= 0 or items == 0:
        return layers
    ups = _adjacency(items, seg_v, seg_u)
    downs = _adjacency(items, seg_u, seg_v)
    comp = item_comp.tolist()
    lo, hi = span
    halves = 2 * sweeps
    # Only layers of two or more items can change order (deep chains are mostly 1-wide).
    down_order = [i for i in range(1, n_layers) if counts[i] >= 2]
    up_order = [i for i in range(n_layers - 2, -1, -1) if counts[i] >= 2]
    for half in range(halves):
        going_down = half % 2 == 0
        near, far = (ups, downs) if going_down else (downs, ups)
        order = down_order if going_down else up_order
        changed = False
        for count, layer_index in enumerate(order):
            if count % _CHECK_EVERY == 0:
                control.check()
            members = layers[layer_index]
            m = len(members)
            shift = 0.5 / m
            keys = []
            for v in members:
                nb = near[v]
                if nb:
                    keys.append(pos[nb[0]] if len(nb) == 1 else sum([pos[u] for u in nb]) / len(nb))
                    continue
                # A source pulled down (or a sink) follows its neighbours on the far side,
                # just right of them, so the main flow stays a straight column.
                nb = far[v]
                if not nb:
                    keys.append(pos[v])
                elif len(nb) == 1:
                    keys.append(pos[nb[0]] + shift)
                else:
                    keys.append(sum([pos[u] for u in nb]) / len(nb) + shift)
            # Members are kept sorted by component, and pos[] follows their order: a stable
            # sort by (component, key) is the sort by (component, key, pos). Keys already in
            # order leave the layer as it is (the common case once the order settles).
            if comp[members[0]] == comp[members[-1]]:
                if all(map(le, keys, islice(keys, 1, None))):
                    continue
                new = [members[i] for i in sorted(range(m), key=keys.__getitem__)]
            else:
                ranked = [(comp[v], k) for v, k in zip(members, keys, strict=True)]
                if all(map(le, ranked, islice(ranked, 1, None))):
                    continue
                new = [members[i] for i in sorted(range(m), key=ranked.__getitem__)]
            changed = True
            layers[layer_index] = new
            for r, v in enumerate(new):
                pos[v] = (r + 0.5) / m
        control.report(lo + (hi - lo) * (half + 1) / halves)
        if not going_down and not changed and half > 0:
            break
    control.report(hi)
    return layers


def _resolve(z: FloatArray, seg_id: IntArray) -> FloatArray:
    """A nondecreasing-per-segment sequence close to ``z``: the mean of the smallest
    nondecreasing majorant and the largest nondecreasing minorant. Cost: O(len(z)) numpy."""
    if len(z) == 0:
        return z
    spread = float(z.max() - z.min()) + 1.0
    offset = seg_id.astype(np.float64) * spread
    lifted = z + offset
    upper = np.maximum.accumulate(lifted)
    lower = np.minimum.accumulate(lifted[::-1])[::-1]
    result: FloatArray = (upper + lower) * 0.5 - offset
    return result


def place_x(
    layers: list[list[int]],
    item_layer: IntArray,
    item_comp: IntArray,
    item_width: FloatArray,
    seg_u: IntArray,
    seg_v: IntArray,
    gap: float,
    passes: int,
    control: Control,
) -> FloatArray:
    """Centre x of every item.

    Each (layer, component) run is packed left to right with ``gap`` between boxes, then
    ``passes`` times every item is pulled to the mean x of its neighbours (all at once) and
    each run is projected back onto "same order, at least ``gap`` apart". Finally components
    are set side by side, in component order, ``gap`` apart. Cost: O(passes * (items +
    segments)) numpy work.
    """
    items = len(item_layer)
    flat = np.fromiter(chain.from_iterable(layers), dtype=np.int64, count=items)
    fl_layer, fl_comp, fl_w = item_layer[flat], item_comp[flat], item_width[flat]
    new_run = np.ones(items, dtype=np.bool_)
    new_run[1:] = (fl_layer[1:] != fl_layer[:-1]) | (fl_comp[1:] != fl_comp[:-1])
    run_id = np.cumsum(new_run) - 1
    sep = np.zeros(items)
    sep[1:] = (fl_w[1:] + fl_w[:-1]) * 0.5 + gap
    sep[new_run] = 0.0
    packed = np.cumsum(sep)
    packed -= packed[np.flatnonzero(new_run)][run_id]
    x = np.empty(items)
    x[flat] = packed
    degree = np.bincount(seg_u, minlength=items) + np.bincount(seg_v, minlength=items)
    linked = degree > 0
    for _ in range(passes):
        control.check()
        sums = np.bincount(seg_u, weights=x[seg_v], minlength=items)
        sums += np.bincount(seg_v, weights=x[seg_u], minlength=items)
        wanted = x.copy()
        wanted[linked] = sums[linked] / degree[linked]
        x[flat] = _resolve(wanted[flat] - packed, run_id) + packed
    n_comp = int(item_comp.max()) + 1
    left = np.full(n_comp, np.inf)
    right = np.full(n_comp, -np.inf)
    np.minimum.at(left, item_comp, x - item_width * 0.5)
    np.maximum.at(right, item_comp, x + item_width * 0.5)
    extent = right - left
    start = np.concatenate([[0.0], np.cumsum(extent + gap)[:-1]])
    shifted: FloatArray = x + (start - left)[item_comp]
    return shifted
