"""Position shifts of nodes nobody draws, applied later (see ``Document.defer_shift``).

Opening or folding one module box on a collapsed 100k-node canvas moves what lies below by
the room it takes or gives back; the boxes below hold ~100k hidden nodes whose saved
positions move with them. Shifting them all at once costs more than the whole redraw, and
nobody looks at them until their box opens, the layout is saved, or anything else reads
``Document.positions``. So the shift of each box's hidden nodes is recorded here (one entry
per box, named by a token, e.g. the group id, with a function giving its keys, called only
when the shift is applied) and applied when it is needed: to one box when it opens, to
everything when ``Document.positions`` is read. A token names one set of keys until its
shifts are applied (the canvas applies them all when its groups change).

Applied shifts give exactly the positions that shifting right away gives: each entry keeps
its shifts in order and adds them one by one (float64 adds over all its keys at once, so
applying costs O(keys) however many shifts wait). Qt-free.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable

import numpy as np

from designer.core.scope import ScopeId

Position = tuple[float, float]

#: Shifts kept per entry before it is applied to its keys on the spot (applying costs
#: O(keys) Python steps however many there are; this only bounds the memory).
MAX_PENDING = 4096

#: What gives the keys a shift moves (called when it is applied).
Keys = Callable[[], Iterable[int]]


class DeferredShifts:
    """Pending shifts by scope and token: (what gives the keys, the (dx, dy) shifts in
    order)."""

    def __init__(self) -> None:
        #: shifts as dx, dy, dx, dy, … (16 bytes a shift: expand-all piles up many)
        self._pending: dict[ScopeId, dict[str, tuple[Keys, array[float]]]] = {}

    def __bool__(self) -> bool:
        return bool(self._pending)

    def tokens(self, scope_id: ScopeId) -> list[str]:
        """Tokens with a shift pending in ``scope_id``."""
        return list(self._pending.get(scope_id, ()))

    def add(
        self,
        table: dict[int, Position],
        scope_id: ScopeId,
        token: str,
        keys: Keys,
        dx: float,
        dy: float,
    ) -> None:
        """Record that the keys ``keys()`` gives (those ``table`` has) move by (dx, dy)."""
        entries = self._pending.setdefault(scope_id, {})
        entry = entries.get(token)
        if entry is None:
            entry = entries[token] = (keys, array("d"))
        entry[1].extend((dx, dy))
        if len(entry[1]) >= 2 * MAX_PENDING:
            del entries[token]
            _apply(table, *entry)

    def settle(
        self,
        tables: dict[ScopeId, dict[int, Position]],
        scope_id: ScopeId | None = None,
        chosen: Callable[[str], bool] | None = None,
    ) -> None:
        """Apply the pending shifts (of one scope, of the tokens ``chosen`` accepts)."""
        for sid in [scope_id] if scope_id is not None else list(self._pending):
            entries = self._pending.get(sid)
            if not entries:
                continue
            table = tables.setdefault(sid, {})
            for token in [t for t in entries if chosen is None or chosen(t)]:
                _apply(table, *entries.pop(token))
            if not entries:
                del self._pending[sid]

    def clear(self) -> None:
        """Forget every pending shift (the positions were replaced as a whole)."""
        self._pending.clear()


def _apply(table: dict[int, Position], keys_of: Keys, flat: array[float]) -> None:
    """Move the keys by each shift in turn, exactly as shifting them one after the other
    does (float64 adds in the same order; x kept as it is while no shift moves it), in
    O(keys) Python steps whatever the number of shifts."""
    keys = [k for k in keys_of() if k in table]
    if not keys:
        return
    points = [table[k] for k in keys]
    ys = np.fromiter((p[1] for p in points), dtype=np.float64, count=len(points))
    shifts = list(zip(flat[0::2], flat[1::2], strict=True))
    moves_x = any(dx != 0.0 for dx, _dy in shifts)
    xs = np.fromiter((p[0] for p in points), dtype=np.float64, count=len(points))
    for dx, dy in shifts:
        if dx != 0.0:
            xs += dx
        ys += dy
    new_x: Iterable[float] = xs.tolist() if moves_x else (p[0] for p in points)
    table.update(zip(keys, zip(new_x, ys.tolist(), strict=True), strict=True))
