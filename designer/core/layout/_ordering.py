"""x coordinates of the ordered layers (neighbour-mean pulls that keep order and gaps), for
nodes and dummies numbered ``0..items-1``; the order itself comes from ``_sweep``."""

from __future__ import annotations

import numpy as np

from designer.core.layout._control import Control
from designer.core.layout._ranking import IntArray
from designer.core.layout._sweep import FloatArray


def _resolve(z: FloatArray, seg_id: FloatArray) -> FloatArray:
    """A nondecreasing-per-segment sequence close to ``z``: the mean of the smallest
    nondecreasing majorant and the largest nondecreasing minorant. Cost: O(len(z)) numpy."""
    if len(z) == 0:
        return z
    spread = float(z.max() - z.min()) + 1.0
    offset = seg_id * spread
    lifted = z + offset
    upper = np.maximum.accumulate(lifted)
    lower = np.minimum.accumulate(lifted[::-1])[::-1]
    result: FloatArray = (upper + lower) * 0.5 - offset
    return result


def place_x(
    flat: IntArray,
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

    ``flat``: every layer's items left to right, layer after layer. Each (layer, component)
    run is packed left to right with ``gap`` between boxes, then ``passes`` times every
    item is pulled to the mean x of its neighbours (all at once) and each run is projected
    back onto "same order, at least ``gap`` apart". Finally components are set side by
    side, in component order, ``gap`` apart. Cost: O(passes * (items + segments)) numpy
    work.
    """
    items = len(item_layer)
    # Everything below is in slot order (``flat``): runs are contiguous there.
    slot = np.empty(items, dtype=np.int64)
    slot[flat] = np.arange(items, dtype=np.int64)
    su, sv = slot[seg_u], slot[seg_v]
    fl_layer, fl_comp, fl_w = item_layer[flat], item_comp[flat], item_width[flat]
    new_run = np.ones(items, dtype=np.bool_)
    new_run[1:] = (fl_layer[1:] != fl_layer[:-1]) | (fl_comp[1:] != fl_comp[:-1])
    run_id = np.cumsum(new_run) - 1
    sep = np.zeros(items)
    sep[1:] = (fl_w[1:] + fl_w[:-1]) * 0.5 + gap
    sep[new_run] = 0.0
    packed = np.cumsum(sep)
    packed -= packed[np.flatnonzero(new_run)][run_id]
    xs = packed.copy()
    degree = (np.bincount(su, minlength=items) + np.bincount(sv, minlength=items)).astype(
        np.float64
    )
    linked = degree > 0
    np.maximum(degree, 1.0, out=degree)  # unlinked items keep their x (np.where below)
    run_f = run_id.astype(np.float64)
    for _ in range(passes):
        control.check()
        sums = np.bincount(su, weights=xs[sv], minlength=items)
        sums += np.bincount(sv, weights=xs[su], minlength=items)
        wanted = np.where(linked, sums / degree, xs)
        wanted -= packed
        xs = _resolve(wanted, run_f)
        xs += packed
    n_comp = int(item_comp.max()) + 1
    left = np.full(n_comp, np.inf)
    right = np.full(n_comp, -np.inf)
    np.minimum.at(left, fl_comp, xs - fl_w * 0.5)
    np.maximum.at(right, fl_comp, xs + fl_w * 0.5)
    extent = right - left
    start = np.concatenate([[0.0], np.cumsum(extent + gap)[:-1]])
    xs += (start - left)[fl_comp]
    x: FloatArray = np.empty(items)
    x[flat] = xs
    return x
