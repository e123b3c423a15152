"""Pausing Python's cyclic garbage collector, safely across threads.

Two reasons to pause it: building hundreds of thousands of small objects (full collections
would traverse the heap again and again), and running work on a pool thread of the GUI: a
collection triggered there could finalise Qt wrappers of the GUI thread off that thread,
which crashes Qt. Pauses nest and may overlap between threads; the collector runs again
when the last pause ends (if it was running before the first one began).

Pausing only defers the work: every object made during a pause is still young when the
collector runs again, and its next collection would traverse them all (about 0.4 s after a
100k-node graph is built, often in the middle of the next frame). So when the last pause
ends after many objects were made, they are frozen instead (``gc.freeze``: moved to a
generation the collector ignores); :func:`thaw` hands them back when a big document goes
away, so cyclic garbage among them is still collected.
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


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                if gc.get_count()[0] > FREEZE_AT:
                    gc.freeze()
                gc.enable()


def thaw() -> None:
    """Give the objects frozen after big pauses back to the collector (a big document
    closed: what it left in reference cycles can be collected again)."""
    if gc.get_freeze_count():
        gc.unfreeze()
