"""Crash recovery is a safety net: when its folder cannot be made (a path through a file, a
read-only home) the designer starts, says once that recovery is off and what to do, and
saving and closing documents work as usual. And ``screenshot`` of a model that cannot be
opened ends with the reason instead of waiting for a click on an offscreen message box."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from designer.core.edits import SetMetadataProp
from designer.core.errors import DesignerError
from designer.ui import recovery
from designer.ui.main_window import MainWindow
from designer.ui.screenshot import render_window

MODEL = Path(__file__).resolve().parents[3] / "shared" / "models" / "bert_4l_h64.torchscript.onnx"


@pytest.fixture
def no_recovery_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ONNX_DESIGNER_RECOVERY_DIR", str(blocker / "recovery"))
    return blocker


def test_the_window_starts_and_says_recovery_is_off(
    window: MainWindow, no_recovery_folder: Path
) -> None:
    with pytest.raises(recovery.RecoveryUnavailable):
        recovery.recovery_dir()
    window.offer_recovery()  # raised NotADirectoryError: the window never appeared
    message = window.statusBar().currentMessage()
    assert "crash recovery is off" in message and "ONNX_DESIGNER_RECOVERY_DIR" in message


@pytest.mark.parametrize("how", ["discard", "save"])
def test_documents_save_and_close_without_a_recovery_folder(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, no_recovery_folder: Path, how: str
) -> None:
    path = tmp_path / "model.onnx"
    shutil.copy(MODEL, path)
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    tab.session.push(SetMetadataProp("note", "changed"))
    window.autosave()  # fails, and says so
    assert "Autosave" in window.statusBar().currentMessage()
    window.ask_save_changes = lambda tab: how  # type: ignore[method-assign]
    assert window.close_tab()  # raised from remove_recovery: no tab could be closed
    assert window.tab() is None and not window.errors  # type: ignore[attr-defined]
    saved = path.read_bytes()
    assert (b"changed" in saved) == (how == "save")


def test_screenshot_of_a_model_that_cannot_open_ends_with_the_reason(
    qtbot: QtBot, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    output = tmp_path / "shot.png"
    with pytest.raises(DesignerError, match=r"empty\.onnx: file is empty"):
        render_window(empty, output, (800, 600), timeout=5)
    assert not output.exists()
