"""Background jobs: result, failure, cancel, progress all arrive on the GUI thread."""

from __future__ import annotations

import time

from pytestqt.qtbot import QtBot

from designer.core.errors import DesignerError
from designer.ui.jobs import start_job


def test_result_and_progress(qtbot: QtBot) -> None:
    seen: list[float] = []

    def work(report, cancelled):  # type: ignore[no-untyped-def]
        for i in range(3):
            report(i / 2, f"step {i}")
        return 42

    job = start_job(work)
    job.progress.connect(lambda f, _t: seen.append(f))
    with qtbot.waitSignal(job.finished, timeout=5000) as blocker:
        pass
    assert blocker.args == [42]
    qtbot.waitUntil(lambda: len(seen) == 3)


def test_failure_is_a_message(qtbot: QtBot) -> None:
    def work(report, cancelled):  # type: ignore[no-untyped-def]
        raise DesignerError("model.onnx: broken")

    job = start_job(work)
    with qtbot.waitSignal(job.failed, timeout=5000) as blocker:
        pass
    assert blocker.args == ["model.onnx: broken"]


def test_cancel(qtbot: QtBot) -> None:
    def work(report, cancelled):  # type: ignore[no-untyped-def]
        while not cancelled():
            time.sleep(0.01)
        return "too late"

    job = start_job(work)
    with qtbot.waitSignal(job.cancelled, timeout=5000):
        job.cancel()
    assert job.wait(1)
