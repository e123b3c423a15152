"""Run long work off the GUI thread with progress and Cancel.

``start_job(work)`` runs ``work(report, cancelled)`` on the thread pool, where ``report(
fraction, text)`` publishes progress and ``cancelled()`` says whether the user pressed Cancel
(the work should then stop and raise, or return early). The returned :class:`Job` emits
``progress``, then exactly one of ``finished(result)``, ``failed(message)`` or
``cancelled()`` on the GUI thread.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from designer.core.errors import DesignerError
from designer.core.gcpause import gc_paused

logger = logging.getLogger(__name__)

#: Jobs still running, so that the last reference to one is never dropped on a pool thread
#: (a QObject must be deleted on its own thread); released on the GUI thread when it ends.
_RUNNING: set[QObject] = set()


def keep_until_done(job: QObject, *ends: Any) -> None:
    """Hold ``job`` until one of its end signals (``ends``) arrives on the GUI thread."""
    _RUNNING.add(job)
    for signal in ends:
        signal.connect(lambda *_args, job=job: _RUNNING.discard(job))


Report = Callable[[float, str], None]
IsCancelled = Callable[[], bool]
Work = Callable[[Report, IsCancelled], Any]


class Job(QObject):
    progress = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cancel = threading.Event()
        self._done = threading.Event()
        self.running = True

    def cancel(self) -> None:
        """Ask the work to stop; ``cancelled`` follows once it has."""
        self._cancel.set()

    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the work has ended (for tests and shutdown); True if it did."""
        return self._done.wait(timeout)


class _Runner(QRunnable):
    def __init__(self, job: Job, work: Work) -> None:
        super().__init__()
        self.job = job
        self.work = work

    def run(self) -> None:
        job = self.job
        try:
            with gc_paused():  # no collection of GUI-thread objects on this thread
                result = self.work(
                    lambda f, t: job.progress.emit(float(f), str(t)), job.is_cancelled
                )
        except DesignerError as exc:
            outcome: tuple[str, object] = (
                ("cancelled", None) if job.is_cancelled() else ("failed", str(exc))
            )
        except Exception as exc:  # an unexpected bug: say what it was, keep the GUI alive
            if job.is_cancelled():
                outcome = ("cancelled", None)
            else:
                detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
                outcome = ("failed", f"internal error: {detail}")
                logger.error("a background job failed: %s", detail, exc_info=exc)
        else:
            outcome = ("cancelled", None) if job.is_cancelled() else ("finished", result)
        job.running = False
        job._done.set()
        kind, value = outcome
        with contextlib.suppress(RuntimeError):  # the job's owner (a closed dialog) is gone
            if kind == "finished":
                job.finished.emit(value)
            elif kind == "failed":
                job.failed.emit(str(value))
            else:
                job.cancelled.emit()


def start_job(work: Work, parent: QObject | None = None) -> Job:
    """Run ``work`` on the global thread pool; see the module docstring.

    The work starts on the next turn of the event loop, so the caller can connect the
    job's signals first even when the work is over in microseconds."""
    job = Job(parent)
    keep_until_done(job, job.finished, job.failed, job.cancelled)
    runner = _Runner(job, work)
    QTimer.singleShot(0, lambda: QThreadPool.globalInstance().start(runner))
    return job


def start_job_with(
    work: Work,
    parent: QObject | None = None,
    *,
    finished: Callable[[Any], object] | None = None,
    failed: Callable[[str], object] | None = None,
    cancelled: Callable[[], object] | None = None,
    progress: Callable[[float, str], object] | None = None,
) -> Job:
    """:func:`start_job` with its slots given up front (a convenience)."""
    job = start_job(work, parent)
    for signal, slot in (
        (job.finished, finished),
        (job.failed, failed),
        (job.cancelled, cancelled),
        (job.progress, progress),
    ):
        if slot is not None:
            signal.connect(slot)
    return job
