"""Pausing Python's cyclic garbage collector, safely across threads.

Two reasons to pause it: building hundreds of thousands of small objects (full collections
would traverse the heap again and again), and running work on a pool thread of the GUI: a
collection triggered there could finalise Qt wrappers of the GUI thread off that thread,
which crashes Qt. Pauses nest and may overlap between threads; the collector runs again
when the last pause ends (if it was running before the first one began).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


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
                gc.enable()
