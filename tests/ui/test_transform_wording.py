"""What the global modification dialogs write (real widgets, real models): the FP16 check of
an output that is all Inf shows no perfect-looking metrics; the cast's confirmation does not
promise Edit > Undo for a new file, and its counts carry thousands separators as the box's do."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from helpers.shared import model as shared_model
from onnx import TensorProto, helper, numpy_helper
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from designer.ui.dialogs.cast_dialog import CastDialog
from designer.ui.dialogs.fp16_dialog import FP16Dialog
from designer.ui.dialogs.status_dialog import RunState
from designer.ui.dialogs.transform_runner import TransformDialog
from designer.ui.main_window import MainWindow


def reduce_overflow_model(n: int = 200_000) -> onnx.ModelProto:
    """mean(|x|) as ReduceSum(|x|) / n: the sum (~160,000) is Inf in float16, so the one
    value of the output is Inf after conversion."""
    graph = helper.make_graph(
        [
            helper.make_node("Abs", ["x"], ["ax"], name="abs"),
            helper.make_node("ReduceSum", ["ax"], ["s"], name="rsum", keepdims=1),
            helper.make_node("Div", ["s", "n"], ["y"], name="div"),
        ],
        "ovr",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])],
        [numpy_helper.from_array(np.array(float(n), np.float32), "n")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.fixture
def open_path(window: MainWindow, qtbot: QtBot) -> Callable[[Path], Any]:
    def open_(path: Path) -> Any:
        window.open_files([path])
        tab = window.tab()
        assert tab is not None
        qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=30_000)
        return tab.session

    return open_


def open_tool(window: MainWindow, action: str, kind: type[TransformDialog]) -> Any:
    window.actions_by_name[action].trigger()
    (dialog,) = [d for d in window.findChildren(kind) if d.isVisible()]
    return dialog


def run(qtbot: QtBot, dialog: TransformDialog) -> RunState:
    with qtbot.waitSignal(dialog.runEnded, timeout=120_000) as blocker:
        dialog.run_button.click()
    state = blocker.args[0]
    assert isinstance(state, RunState)
    return state


def test_an_all_inf_output_shows_no_metrics_over_no_values(
    window: MainWindow, open_path: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "ov_reduce.onnx"
    onnx.save(reduce_overflow_model(), path)
    open_path(path)
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    dialog.keep_io.setChecked(True)
    assert run(qtbot, dialog) is RunState.WARNING
    assert dialog.status is not None
    text = dialog.status.message.text()
    line = next(x for x in text.splitlines() if x.strip().startswith("y:"))
    assert "n/a (no value is finite on both sides)" in line
    assert "0 NaN, 1 Inf" in line and "[FAIL: 1 new NaN/Inf]" in line
    assert "cosine 1.0000000" not in line and "of range 0" not in line
    assert "metrics over the finite values" not in line
    assert "Node 'rsum' is the first whose result went Inf/NaN" in text


def test_the_fixed_check_of_a_one_value_output_names_no_range_of_zero(
    window: MainWindow, open_path: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "ov_reduce.onnx"
    onnx.save(reduce_overflow_model(), path)
    open_path(path)
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    dialog.keep_io.setChecked(True)
    dialog.auto_block.setChecked(True)
    assert run(qtbot, dialog) is RunState.SUCCESS
    assert dialog.status is not None
    text = dialog.status.message.text()
    line = next(x for x in text.splitlines() if x.strip().startswith("y:"))
    assert "of range 0)" not in line and "of its magnitude: the output is constant" in line
    assert line.endswith("[ok]")


def _box_texts(answer: QMessageBox.StandardButton, seen: list[tuple[str, str]]) -> None:
    """Note the texts of the next message box and press ``answer`` in it."""

    def poll() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            seen.append((box.text(), box.informativeText()))
            button = box.button(answer)
            assert button is not None
            button.click()
            return
        QTimer.singleShot(20, poll)

    QTimer.singleShot(20, poll)


def _cast_dialog(window: MainWindow, open_path: Any) -> Any:
    session = open_path(shared_model("bert_4l_h64.torchscript.onnx"))
    dialog = open_tool(window, "batch_tensor_cast", CastDialog)
    dialog.initializers.dtype.setCurrentText("float32")
    dialog.initializers.check_shown(True)
    return session, dialog


def test_the_cast_confirmation_promises_undo_only_for_the_document(
    window: MainWindow, open_path: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    session, dialog = _cast_dialog(window, open_path)
    seen: list[tuple[str, str]] = []
    _box_texts(QMessageBox.StandardButton.No, seen)
    dialog.run_button.click()
    qtbot.waitUntil(lambda: bool(seen) and not dialog.running, timeout=60_000)
    assert "Edit > Undo restores the original values exactly" in seen[0][1]

    out = tmp_path / "bert_cast.onnx"
    dialog.destination.to_file.setChecked(True)
    dialog.destination.path.setText(str(out))
    _box_texts(QMessageBox.StandardButton.No, seen)
    dialog.run_button.click()
    qtbot.waitUntil(lambda: len(seen) == 2 and not dialog.running, timeout=60_000)
    _text, informative = seen[1]
    assert "Undo" not in informative
    assert "bert_cast.onnx" in informative and "the open document keeps" in informative
    assert not out.exists() and session.undo_stack.count() == 0  # No: nothing ran


def test_the_cast_counts_carry_thousands_separators(
    window: MainWindow, open_path: Any, qtbot: QtBot
) -> None:
    _session, dialog = _cast_dialog(window, open_path)
    seen: list[tuple[str, str]] = []
    _box_texts(QMessageBox.StandardButton.Yes, seen)
    assert run(qtbot, dialog) is RunState.SUCCESS
    counted = re.search(r"([\d,]+) rounded", seen[0][0])
    assert counted is not None and "," in counted.group(1)
    assert dialog.status is not None
    summary = dialog.status.message.text().splitlines()[1]
    assert f"value(s) clipped, {counted.group(1)} rounded;" in summary
