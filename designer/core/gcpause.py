"""Pausing Python's cyclic garbage collector, safely across threads.

Two reasons to pause it: building hundreds of thousands of small objects (full collections
would traverse the heap again and again), and running work on a pool thread of the GUI: a
collection triggered there could finalise Qt wrappers of the GUI thread off that thread,
which crashes Qt. Pauses nest and may overlap between threads; the collector runs again
when the last pause ends (if it was running before the first one began).

Pausing only defers the work: every object made during a pause is still young when the
collector runs again, and its next collections would traverse them all (about 0.4 s after a
100k-node graph is built, often in the middle of the next frame). A pause that opens a model
(``gc_paused(freeze=True)``) therefore freezes what it made instead (``gc.freeze``: moved to
a generation the collector ignores). Frozen objects are still freed when nothing refers to
them; only garbage in reference cycles waits until :func:`thaw` hands them back, which
closing a document does. Other pauses (edits, redraws) freeze nothing, so a long session
keeps no cyclic garbage.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False

#: Net new tracked objects during a pause above which they are frozen when it ends.
FREEZE_AT = 50_000
_freeze = False  # a pause of the current nest asked for a freeze


@contextmanager
def gc_paused(*, freeze: bool = False) -> Iterator[None]:
    """Pause the collector; with ``freeze`` (opening a model), freeze what the outermost
    pause made when it ends, if that is many objects."""
    global _depth, _was_enabled, _freeze
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            _freeze = False
            gc.disable()
        _depth += 1
        _freeze |= freeze
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                if _freeze and gc.get_count()[0] > FREEZE_AT:
                    gc.freeze()
                gc.enable()


def thaw() -> None:
    """Give the objects frozen after big pauses back to the collector (a big document
    closed: what it left in reference cycles can be collected again)."""
    with _lock:
        if gc.get_freeze_count():
            gc.unfreeze()
