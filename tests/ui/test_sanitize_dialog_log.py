"""The Sanitize Graph dialog on real models: the symbolic-shape option, the detailed log in
the status dialog (folded groups, initializers with bytes, the size change, the check), and
a result that would fail the check refused with the document untouched."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import pytest
from helpers import sanitize_compare as sc
from helpers.shared import MODELS
from pytestqt.qtbot import QtBot

from designer.ui.dialogs.sanitize_dialog import SanitizeDialog
from designer.ui.dialogs.status_dialog import RunState
from designer.ui.main_window import MainWindow

sanitize_module = importlib.import_module("designer.core.transforms.sanitize")


@pytest.fixture
def open_path(window: MainWindow, qtbot: QtBot) -> Callable[[Path], None]:
    def open_(path: Path) -> None:
        window.open_files([path])
        tab = window.tab()
        assert tab is not None
        qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=30_000)

    return open_


def _dialog(window: MainWindow) -> Any:
    window.actions_by_name["sanitize_graph"].trigger()
    found = [d for d in window.findChildren(SanitizeDialog) if d.isVisible()]
    assert len(found) == 1
    return found[0]


def _run(qtbot: QtBot, dialog: Any) -> RunState:
    with qtbot.waitSignal(dialog.runEnded, timeout=60_000) as blocker:
        dialog.run_button.click()
    state = blocker.args[0]
    assert isinstance(state, RunState)
    return state


def _model_bytes(window: MainWindow) -> bytes:
    tab = window.tab()
    assert tab is not None
    return bytes(tab.session.doc.model.SerializeToString())


def test_log_of_a_real_export(window: MainWindow, open_path: Any, qtbot: QtBot) -> None:
    open_path(MODELS / "bert_4l_h64.torchscript.onnx")
    dialog = _dialog(window)
    assert dialog.symbolic.isChecked() and dialog.symbolic.isEnabled()
    shots = os.environ.get("SAN_SHOTS")  # where to save screenshots to look at
    if shots:
        dialog.grab().save(str(Path(shots) / "SAN-dialog.png"))
    assert _run(qtbot, dialog) is RunState.SUCCESS
    status = dialog.status
    details = dialog.status.details.toPlainText()
    for needle in (
        "added initializer '",
        "bytes) folded from",
        "initializer(s) added (+",
        "size 992,556 -> ",
        "shapes: onnx's inference plus the symbolic shape inferer",
        "the result passes the model check",
    ):
        assert needle in details, needle
    assert "Nodes 448 → 262" in dialog.status.message.text()
    if shots:
        status.set_details_visible(True)
        status.resize(1300, 760)
        qtbot.wait(50)
        status.grab().save(str(Path(shots) / "SAN-status-log.png"))
    status.close()


def test_without_symbolic_shapes_folds_less(
    window: MainWindow, open_path: Any, qtbot: QtBot
) -> None:
    open_path(MODELS / "bert_4l_h64.torchscript.onnx")
    dialog = _dialog(window)
    dialog.symbolic.setChecked(False)
    assert _run(qtbot, dialog) is RunState.SUCCESS
    assert "symbolic shape inferer" not in dialog.status.details.toPlainText()
    tab = window.tab()
    assert tab is not None
    assert sc.count_nodes(tab.session.doc.model) > 262
    dialog.status.close()
    dialog.close()


def test_result_failing_the_check_is_refused(
    window: MainWindow,
    open_path: Any,
    qtbot: QtBot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "affine.onnx"
    onnx.save(sc.backend_model("test_affine_grid_2d_expanded"), path)
    open_path(path)
    before = _model_bytes(window)
    real_summarize = sanitize_module._summarize

    def breaking_summarize(*args: Any) -> None:
        real_summarize(*args)
        args[1].graph.node[-1].input[0] = "no_such_value"

    monkeypatch.setattr(sanitize_module, "_summarize", breaking_summarize)
    dialog = _dialog(window)
    assert _run(qtbot, dialog) is RunState.FAILURE
    assert "fails the check" in dialog.status.message.text()
    assert _model_bytes(window) == before
    dialog.status.close()
    dialog.close()
