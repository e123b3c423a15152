"""The collector pause: nested and threaded pauses, and the freeze after big ones."""

from __future__ import annotations

import gc
import threading

from designer.core import gcpause
from designer.core.gcpause import gc_paused, thaw


def test_pauses_nest_and_overlap_between_threads() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
        seen: list[bool] = []
        worker = threading.Thread(target=lambda: seen.append(_paused_inside()))
        worker.start()
        worker.join()
        assert seen == [False] and not gc.isenabled()
    assert gc.isenabled()


def _ring(n: int) -> None:
    ring: list[list[object]] = [[] for _ in range(n)]
    for a, b in zip(ring, ring[1:] + ring[:1], strict=True):
        a.append(b)


def _paused_inside() -> bool:
    with gc_paused():
        return gc.isenabled()


def test_many_objects_made_in_an_opening_pause_are_frozen_then_thawed() -> None:
    thaw()
    gc.collect()
    with gc_paused(freeze=True):
        small = [[i] for i in range(10)]
    assert gc.get_freeze_count() == 0  # a small pause leaves the collector as it was
    with gc_paused():
        plain = [[i] for i in range(gcpause.FREEZE_AT + 10_000)]
    assert gc.get_freeze_count() == 0  # a pause that opens nothing freezes nothing
    with gc_paused():  # a freeze asked for by a nested pause applies when the outer one ends
        with gc_paused(freeze=True):
            big = [[i] for i in range(gcpause.FREEZE_AT + 10_000)]
        assert gc.get_freeze_count() == 0
    assert gc.get_freeze_count() >= len(big)  # not traversed by later collections
    young = gc.get_count()[0]
    assert young < 1_000  # the next collection does not see them as young
    thaw()
    assert gc.get_freeze_count() == 0
    # frozen cyclic garbage is collected once thawed
    with gc_paused(freeze=True):
        _ring(gcpause.FREEZE_AT + 10_000)  # made and dropped: garbage in one big cycle
    assert gc.collect() < 1_000  # frozen: the collector does not look at the ring
    thaw()
    assert gc.collect() >= gcpause.FREEZE_AT  # handed back: the ring is garbage
    del small, plain, big
