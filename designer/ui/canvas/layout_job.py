"""The layered layout on a pool thread, with progress and cancel; results come back to the
GUI thread as a signal. The GUI swaps positions in only when the job succeeded."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from designer.core.gcpause import gc_paused
from designer.core.layout import Cancelled
from designer.core.viewgraph import ViewGraph
from designer.ui.canvas.placement import Placement, Size, layout_graph
from designer.ui.jobs import keep_until_done


class LayoutJob(QObject):
    """One layout run. ``progress(float)`` in [0, 1]; exactly one of ``finished(Placement)``,
    ``cancelled()`` or ``failed(str)`` is emitted at the end."""

    progress = Signal(float)
    finished = Signal(object)
    cancelled = Signal()
    failed = Signal(str)

    def __init__(self, graph: ViewGraph, sizes: Mapping[int, Size], purpose: str) -> None:
        super().__init__()
        self.graph = graph
        self.sizes = dict(sizes)
        self.purpose = purpose  # "open" (first layout) or "arrange" (an undoable edit)
        self.seconds = 0.0
        self.done = False
        self._cancel = threading.Event()
        self._last_report = 0.0

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def run(self) -> None:
        """Run here (blocking); emits the end signal on the calling thread."""
        start = time.perf_counter()
        try:
            with gc_paused():  # a full collection over a 100k-node heap costs seconds
                result = layout_graph(
                    self.graph, self.sizes, progress=self._report, cancel=self._cancel.is_set
                )
        except Cancelled:
            self.done = True
            self.cancelled.emit()
            return
        except (ValueError, MemoryError) as exc:
            self.done = True
            self.failed.emit(f"layout failed: {exc}")
            return
        self.seconds = time.perf_counter() - start
        self.done = True
        if self._cancel.is_set():
            self.cancelled.emit()
        else:
            self.finished.emit(result)

    def start(self) -> None:
        """Run on the global thread pool; signals arrive queued on the GUI thread."""
        keep_until_done(self, self.finished, self.cancelled, self.failed)
        QThreadPool.globalInstance().start(_Runner(self))

    def _report(self, fraction: float) -> None:
        now = time.perf_counter()
        if fraction >= 1.0 or now - self._last_report > 0.05:
            self._last_report = now
            self.progress.emit(fraction)


class _Runner(QRunnable):
    def __init__(self, job: LayoutJob) -> None:
        super().__init__()
        self.job = job

    def run(self) -> None:
        self.job.run()


__all__ = ["LayoutJob", "Placement"]
