"""Save from the close prompt keeps the tab open when the layout file could not be written
(it closed, the arrangement was lost, and the warning went to the banner of the tab being
deleted); the message names the layout file and what to do, not a temporary file; a
successful save clears the banner of an earlier one."""

from __future__ import annotations

import shutil
from pathlib import Path

from pytestqt.qtbot import QtBot

from designer.core.edits import SetMetadataProp
from designer.ui.main_window import MainWindow
from tests.helpers.shared import model


def test_a_layout_that_cannot_be_written_keeps_the_tab_open(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "sq.onnx"
    shutil.copy(model("squeezenet1_0.torchscript.onnx"), path)
    blocker = tmp_path / "sq.onnx.designer.json"
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    blocker.mkdir()  # a folder where the layout file goes
    tab.session.push(SetMetadataProp("note", "kept"))
    window.ask_save_changes = lambda tab: "save"  # type: ignore[method-assign]
    assert not window.close_tab()
    assert window.tab() is tab  # still open: Save As elsewhere keeps the arrangement
    errors = window.errors  # type: ignore[attr-defined]  # the fixture's
    assert errors and "layout file sq.onnx.designer.json was not" in errors[-1]
    assert "a folder of that name is in the way" in errors[-1] and ".tmp" not in errors[-1]
    assert b"kept" in path.read_bytes()  # the model itself was saved
    assert tab.banner.isVisibleTo(tab)
    blocker.rmdir()
    assert window.save(tab)
    assert not tab.banner.isVisibleTo(tab)  # the old warning is gone with the problem
    assert blocker.is_file()
    assert window.close_tab()


def test_the_close_prompt_offers_save_as(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    """A model whose folder cannot be written any more could only be rescued by Cancel,
    then Save As: the prompt offers Save As… itself (the real message box, clicked)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    path = tmp_path / "sq.onnx"
    shutil.copy(model("squeezenet1_0.torchscript.onnx"), path)
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    tab.session.push(SetMetadataProp("note", "rescued"))
    elsewhere = tmp_path / "elsewhere.onnx"
    window.choose_save_path = lambda tab, current: elsewhere  # type: ignore[method-assign]
    seen: list[list[str]] = []

    def click_save_as() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, click_save_as)
            return
        seen.append([b.text() for b in box.buttons()])
        next(b for b in box.buttons() if b.text() == "Save As…").click()

    QTimer.singleShot(0, click_save_as)
    assert MainWindow.ask_save_changes(window, tab) == "save_as"
    assert seen and "Save As…" in seen[0]
    window.ask_save_changes = lambda tab: "save_as"  # type: ignore[method-assign]
    assert window.close_tab()
    assert b"rescued" in elsewhere.read_bytes() and b"rescued" not in path.read_bytes()
