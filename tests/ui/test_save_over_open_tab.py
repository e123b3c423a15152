"""Save As onto the model file another tab has open is refused: it replaced that model and
deleted the external data the open document still read, so its weights existed nowhere."""

from __future__ import annotations

import hashlib
from pathlib import Path

import onnx
from pytestqt.qtbot import QtBot

from designer.core.edits import SetMetadataProp
from designer.ui.main_window import MainWindow

MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_save_as_over_a_model_open_in_another_tab_is_refused(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    first = tmp_path / "a" / "sq.onnx"
    first.parent.mkdir()
    onnx.save(
        onnx.load(MODELS / "squeezenet1_0.torchscript.onnx"),
        first,
        save_as_external_data=True,
        location="sq.data",
    )
    data = first.parent / "sq.data"
    before = digest(first), digest(data)
    second = tmp_path / "t5.onnx"
    second.write_bytes((MODELS / "t5enc_4l_h64.torchscript.onnx").read_bytes())
    window.open_files([first, second])
    tab_a, tab_b = window.document_tabs()
    tab_a.session.push(SetMetadataProp("note", "unsaved work"))
    window.choose_save_path = lambda tab, current: first  # type: ignore[method-assign]
    assert not window.save(tab_b, save_as=True)
    errors = window.errors  # type: ignore[attr-defined]  # the fixture's
    assert errors and "is open in the tab sq.onnx" in errors[-1]
    assert (digest(first), digest(data)) == before  # both files as they were
    assert tab_b.session.doc.path == second.resolve()
    # the first tab's own Save As onto its own file is still a plain save
    assert window.save(tab_a, save_as=True)
    assert b"unsaved work" in first.read_bytes()
