"""Opening a named pipe not called *.onnx: the engine-file sniffing opened it before the
model loader's guard against pipes and froze the window for good."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from designer.ui.engine import is_engine_file
from designer.ui.main_window import MainWindow


@pytest.mark.timeout(30)
def test_a_pipe_is_refused_with_the_reason(window: MainWindow, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.data"
    os.mkfifo(fifo)
    assert not is_engine_file(fifo)
    window.open_files([fifo])
    errors = window.errors  # type: ignore[attr-defined]  # the fixture's
    assert window.tab() is None
    assert errors and "not a regular file" in errors[-1]
