"""The FP16 dialog's numerical check: limits, top-k, element-wise tolerances and backend map to
CheckOptions, bad values are refused, defaults follow the target type, an overflow warns
naming the node, and a real export's check shows its numbers in the status dialog."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from pytestqt.qtbot import QtBot

from designer.ui.dialogs.fp16_dialog import FP16Dialog
from designer.ui.dialogs.status_dialog import RunState
from designer.ui.main_window import MainWindow

MODELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "models"


def _overflow() -> onnx.ModelProto:
    k = numpy_helper.from_array(np.array(1000.0, np.float32), "k")
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "k"], ["a"], name="mul_a"),
            helper.make_node("Mul", ["a", "k"], ["y"], name="mul_b"),
        ],
        "overflow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
        [k],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _open(window: MainWindow, qtbot: QtBot, path: Path) -> Any:
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=30_000)
    window.actions_by_name["convert_fp16"].trigger()
    (dialog,) = [d for d in window.findChildren(FP16Dialog) if d.isVisible()]
    return dialog


def _run(qtbot: QtBot, dialog: FP16Dialog) -> RunState:
    with qtbot.waitSignal(dialog.runEnded, timeout=60_000) as blocker:
        dialog.run_button.click()
    state = blocker.args[0]
    assert isinstance(state, RunState)
    return state


def test_check_options_map_and_bad_values_are_refused(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    onnx.save(_overflow(), tmp_path / "o.onnx")
    dialog = _open(window, qtbot, tmp_path / "o.onnx")
    _, check = dialog.options_now()
    assert (check.max_rel_l2, check.min_cosine, check.max_range_error) == (None, None, None)
    assert (check.rtol, check.atol, check.backend, check.top_k) == (None, None, "auto", 5)
    assert dialog.max_rel_l2.placeholderText() == "0.01"
    dialog.bfloat16.setChecked(True)  # the placeholders show the defaults of the target
    assert dialog.max_rel_l2.placeholderText() == "0.05"
    assert dialog.min_cosine.placeholderText() == "0.998"
    dialog.bfloat16.setChecked(False)
    dialog.max_rel_l2.setText("0.002")
    dialog.min_cosine.setText("0.99")
    dialog.max_range_error.setText("1e-3")
    dialog.top_k.setValue(3)
    dialog.min_topk.setText("0.5")
    dialog.atol.setText("0.1")
    dialog.backend.setCurrentIndex(dialog.backend.findData("reference"))
    _, check = dialog.options_now()
    assert (check.max_rel_l2, check.min_cosine, check.max_range_error) == (0.002, 0.99, 1e-3)
    assert (check.top_k, check.min_topk, check.rtol, check.atol) == (3, 0.5, None, 0.1)
    assert check.backend == "reference"
    dialog.min_cosine.setText("1.5")
    dialog.run_button.click()
    assert dialog.error.isVisible() and "cosine limit must be at most 1" in dialog.error.text()
    dialog.min_cosine.setText("-")
    assert "must be a number" in dialog.options_now()
    assert dialog.job is None
    dialog.reject()


def test_overflow_warns_naming_the_node_and_auto_block_fixes_it(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    onnx.save(_overflow(), tmp_path / "o.onnx")
    dialog = _open(window, qtbot, tmp_path / "o.onnx")
    dialog.keep_io.setChecked(True)
    assert _run(qtbot, dialog) is RunState.WARNING
    status = dialog.status
    assert "Node 'mul_b' is the first whose result went Inf/NaN" in status.message.text()
    assert "emulated float16" in status.message.text()
    assert "first Inf/NaN: node 'mul_b'" in status.details.toPlainText()
    status.close()
    tab = window.tab()
    assert tab is not None
    tab.session.undo_stack.undo()
    window.actions_by_name["convert_fp16"].trigger()
    (dialog,) = [d for d in window.findChildren(FP16Dialog) if d.isVisible()]
    dialog.keep_io.setChecked(True)
    dialog.auto_block.setChecked(True)
    assert _run(qtbot, dialog) is RunState.SUCCESS
    status = dialog.status
    assert status is not None
    assert "auto-block kept in float32: mul_b" in status.message.text()
    status.close()


def test_real_export_check_shows_its_numbers(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    source = tmp_path / "squeezenet.onnx"
    shutil.copyfile(MODELS / "squeezenet1_0.torchscript.onnx", source)
    dialog = _open(window, qtbot, source)
    dialog.keep_io.setChecked(True)
    assert _run(qtbot, dialog) is RunState.SUCCESS
    message = dialog.status.message.text()
    assert "passed" in message and "emulated float16" in message
    assert "rel L2" in message and "cosine" in message and "top-5 100%" in message
    assert "limits: rel L2 <= 0.01" in dialog.status.details.toPlainText()
    dialog.status.close()


def test_symbolic_dims_field(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    from designer.ui.dialogs.fp16_check_view import parse_dims

    assert parse_dims(" batch=2, seq=16 ") == {"batch": 2, "seq": 16}
    assert parse_dims("") == {}
    assert "NAME=N" in str(parse_dims("seq=0"))
    source = tmp_path / "bert.onnx"
    shutil.copyfile(MODELS / "bert_4l_h64.torchscript.onnx", source)
    dialog = _open(window, qtbot, source)
    assert dialog.dims.isEnabled() and "batch=8, seq=8" in dialog.dims.placeholderText()
    dialog.dims.setText("seq=12")
    _, check = dialog.options_now()
    assert check.dims == {"seq": 12}
    dialog.dims.setText("seq")
    assert "NAME=N" in dialog.options_now()
    dialog.reject()


def test_auto_block_keeps_unnamed_nodes_and_leaves_them_unnamed(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """The dialog labels a copy's unnamed nodes for the check (the document's are never
    renamed): auto-block keeps the overflowing Exp and Log in float32, by those labels,
    and the converted model's nodes are unnamed again."""
    nodes = [
        helper.make_node("Mul", ["x", "k"], ["a"]),
        helper.make_node("Exp", ["a"], ["b"]),
        helper.make_node("Log", ["b"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "exp_log",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [numpy_helper.from_array(np.array(12.0, np.float32), "k")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "e.onnx")
    dialog = _open(window, qtbot, tmp_path / "e.onnx")
    dialog.keep_io.setChecked(True)
    dialog.auto_block.setChecked(True)
    assert _run(qtbot, dialog) is RunState.SUCCESS
    status = dialog.status
    assert status is not None
    assert "Exp #1 (unnamed)" in status.message.text()
    status.close()
    tab = window.tab()
    assert tab is not None
    converted = tab.session.doc.model
    assert all(not n.name for n in converted.graph.node if n.op_type != "Cast")
    kept = [n for n in converted.graph.node if n.op_type == "Exp"]
    assert kept  # still there, run in float32: its input is a float32 value
