"""File > Export > Canvas As Image never writes over the document's own files (it wrote a
PNG over the open .onnx, whose model was then lost), refuses a name whose suffix is another
format than the one chosen, writes atomically, says on the status bar what it wrote, and
says when a focused module is what will be exported."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import onnx
import pytest
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

import designer.ui.dialogs.export_image as export_dialog
from designer.core.errors import DesignerError
from designer.ui.canvas.export import ExportOptions
from designer.ui.canvas.focus_view import set_focus
from designer.ui.dialogs.export_image import ExportImageDialog
from designer.ui.main_window import MainWindow
from tests.helpers.gui import open_model
from tests.helpers.shared import model

SQUEEZENET = model("squeezenet1_0.torchscript.onnx")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def external_copy(tmp_path: Path) -> Path:
    path = tmp_path / "sq.onnx"
    onnx.save(onnx.load(SQUEEZENET), path, save_as_external_data=True, location="sq.data")
    (tmp_path / "sq.onnx.designer.json").write_text("{}")  # replaced when the tab saves
    return path


def test_the_documents_files_are_refused(
    window: MainWindow, qtbot: QtBot, external_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tab = open_model(window, external_copy, qtbot)
    files = [
        external_copy,
        external_copy.with_name("sq.data"),
        external_copy.with_name("sq.onnx.designer.json"),
    ]
    before = [digest(f) for f in files]
    shown: list[str] = []
    monkeypatch.setattr(
        export_dialog.QMessageBox, "critical", lambda _p, _t, text: shown.append(text)
    )
    dialog = ExportImageDialog(tab.view, window)
    qtbot.addWidget(dialog)
    for target in files:
        dialog.path.setText(str(target))
        dialog.accept()  # the dialog's Save
        assert dialog.result() != QDialog.DialogCode.Accepted  # it stays open
    assert len(shown) == 3
    assert "the output path is the input" in shown[0]
    assert "the external data file of tensor" in shown[1] and "would destroy it" in shown[1]
    assert "its layout file" in shown[2]
    assert [digest(f) for f in files] == before
    onnx.checker.check_model(str(external_copy), full_check=True)


def test_a_suffix_of_another_format_is_refused(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "sq.onnx"
    shutil.copy(SQUEEZENET, path)
    tab = open_model(window, path, qtbot)
    with pytest.raises(DesignerError, match=r"ends in \.svg but the format is PNG"):
        tab.view.export_image(tmp_path / "out.svg", ExportOptions(format="png"))
    assert not (tmp_path / "out.svg").exists()


def test_the_status_bar_says_what_was_written(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "sq.onnx"
    shutil.copy(SQUEEZENET, path)
    tab = open_model(window, path, qtbot)
    messages: list[str] = []
    tab.view.statusMessage.connect(messages.append)
    out = tmp_path / "sq.png"
    tab.view.export_image(out, ExportOptions(format="png"))
    assert messages and messages[-1].startswith(f"Wrote {out} (") and "×" in messages[-1]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_focused_module_is_said_to_be_what_is_exported(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_model(window, model("llama_24l_h64.dynamo.onnx"), qtbot)
    plain = ExportImageDialog(tab.view, window)
    qtbot.addWidget(plain)
    assert plain.note.text() == ""
    set_focus(tab.view, "m/model/layers.3")
    dialog = ExportImageDialog(tab.view, window)
    qtbot.addWidget(dialog)
    assert "module layers.3 alone (Focus): that is what is exported" in dialog.note.text()
