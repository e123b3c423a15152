"""A layout file written by a newer designer is read as far as this one knows it, and the
tab says that saving rewrites it in this version (it was rewritten without a word)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pytestqt.qtbot import QtBot

from designer.core.io.companion import VERSION
from designer.ui.main_window import MainWindow
from tests.helpers.shared import model


def test_a_newer_layout_file_is_read_and_said_to_be_rewritten(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "sq.onnx"
    shutil.copy(model("squeezenet1_0.torchscript.onnx"), path)
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    assert window.save(tab)  # a layout file of this version
    assert window.close_tab()
    companion = tmp_path / "sq.onnx.designer.json"
    data = json.loads(companion.read_text())
    assert data["version"] == VERSION
    data["version"] = 99
    data["future"] = {"kept": False}
    companion.write_text(json.dumps(data))
    window.open_files([path])
    tab = window.tab()
    assert tab is not None and tab.session.layout_restored
    text = tab.banner.text()
    assert tab.banner.isVisibleTo(tab)
    assert "written by a newer ONNX Designer (layout version 99)" in text
    assert f"saving rewrites it as version {VERSION}" in text


def test_a_layout_file_of_this_version_says_nothing(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "sq.onnx"
    shutil.copy(model("squeezenet1_0.torchscript.onnx"), path)
    window.open_files([path])
    tab = window.tab()
    assert tab is not None and window.save(tab) and window.close_tab()
    window.open_files([path])
    tab = window.tab()
    assert tab is not None and tab.session.layout_restored
    assert not tab.banner.isVisibleTo(tab)
