"""File > Compose Models… with real widgets: the table shows both types and flags a
mismatch, collisions fill in prefixes, Compose writes a model that equals running A then B."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from helpers.gui import open_model
from helpers.shots import save_screenshot
from onnx import TensorProto, helper, numpy_helper
from pytestqt.qtbot import QtBot

from designer.ui.dialogs.compose_dialog import NOT_CONNECTED, ComposeDialog
from designer.ui.main_window import MainWindow

SHOTS = Path("/tmp/od-notes/shots")


def _model(inp: str, out: str, n_in: int, n_out: int, seed: int) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((n_in, n_out)).astype(np.float32), "W")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", [inp, "W"], ["mm"], name="mm"),
            helper.make_node("Tanh", ["mm"], [out], name="act"),
        ],
        f"g{seed}",
        [helper.make_tensor_value_info(inp, TensorProto.FLOAT, ["batch", n_in])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", n_out])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _two_input_b() -> onnx.ModelProto:
    """features[batch,8] and bias[batch,3]: Gemm-like head (two inputs of B)."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((8, 3)).astype(np.float32), "W")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["features", "W"], ["mm"], name="mm"),
            helper.make_node("Add", ["mm", "bias"], ["scores"], name="add"),
        ],
        "head",
        [
            helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 8]),
            helper.make_tensor_value_info("bias", TensorProto.FLOAT, ["batch", 3]),
        ],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", 3])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _run(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


def test_compose_dialog_wires_checks_and_writes(
    window: MainWindow, save_model, qtbot: QtBot, tmp_path: Path
) -> None:
    a = save_model(_model("x", "emb", 4, 8, 1), "encoder.onnx")
    b = save_model(_two_input_b(), "head.onnx")
    open_model(window, a, qtbot)
    window.actions_by_name["compose"].trigger()
    (dialog,) = [d for d in window.findChildren(ComposeDialog) if d.isVisible()]
    assert dialog.path_a.text() == str(a.resolve())  # the current document is A
    assert not dialog.compose_button.isEnabled()
    dialog.set_model("B", b)
    table = dialog.table
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["features", "bias"]
    assert table.item(0, 1).text() == "float32[batch,8]"
    dialog.connect_pair("emb", "bias")  # emb is [batch,8], bias [batch,3]: flagged
    assert table.item(1, 3).text() == "float32[batch,8]"
    assert table.item(1, 4).text() == "✗ dimension 1: 8 ≠ 3"
    assert "float32[batch,8] → float32[batch,3]" in table.item(1, 4).toolTip()
    assert not dialog.compose_button.isEnabled()
    if SHOTS.is_dir() and os.access(SHOTS, os.W_OK):
        dialog.grab().save(str(SHOTS / "COMP-compose-mismatch.png"))
    dialog.connect_pair("", "bias")
    dialog.connect_pair("emb", "features")
    assert table.item(0, 4).text() == "✓ fits"
    assert table.item(1, 4).text() == "stays an input of the result"
    assert dialog._combo(1).currentText() == NOT_CONNECTED
    assert (dialog.prefix_a.text(), dialog.prefix_b.text()) == ("a/", "b/")  # W, mm collide
    assert "once the prefixes are applied" in dialog.names.text()
    dialog.prefix_a.setText("")
    dialog.prefix_b.setText("")
    dialog._typed("prefix_a")
    assert "Names both models use: edge 'W', 'mm'; initializer 'W'" in dialog.names.text()
    assert not dialog.compose_button.isEnabled()
    dialog.prefix_a.setText("enc/")
    dialog.prefix_b.setText("b/")
    dialog._typed("prefix_b")
    out = tmp_path / "composed.onnx"
    dialog.output.setText(str(out))
    assert dialog.compose_button.isEnabled(), dialog.problems()
    if SHOTS.is_dir() and os.access(SHOTS, os.W_OK):
        dialog.grab().save(str(SHOTS / "COMP-compose-dialog.png"))
    save_screenshot(dialog, "compose_dialog.png")
    tabs_before = len(window.document_tabs())
    dialog.accept()
    assert dialog.written == out
    qtbot.waitUntil(lambda: len(window.document_tabs()) == tabs_before + 1, timeout=10_000)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    bias = np.ones((2, 3), np.float32)
    (emb,) = _run(a, {"x": x})
    (expected,) = _run(b, {"features": emb, "bias": bias})
    (actual,) = _run(out, {"enc/x": x, "b/bias": bias})
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_compose_dialog_shows_errors_and_stays_open(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = ComposeDialog()
    qtbot.addWidget(dialog)
    dialog.set_model("A", tmp_path / "missing.onnx")
    assert "Model A:" in dialog.error.text() and "file not found" in dialog.error.text()
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    onnx.save(_model("x", "y", 4, 3, 1), a)
    broken = _model("y", "z", 3, 2, 2)
    broken.graph.node[1].op_type = "NoSuchOp"
    onnx.save(broken, b)
    dialog.set_model("A", a)
    dialog.set_model("B", b)
    assert dialog.io_map() == [("y", "y")]  # same name: wired up front
    dialog.output.setText(str(tmp_path / "c.onnx"))
    dialog.show()
    dialog.accept()
    assert dialog.isVisible() and dialog.written is None
    assert "Cannot compose: the composed model is not valid" in dialog.error.text()
    assert not (tmp_path / "c.onnx").exists()
    dialog.close()


def test_compose_refuses_an_open_model_and_waits_for_unsaved_edits(
    window: MainWindow, save_model, qtbot: QtBot, tmp_path: Path
) -> None:
    """Compose wrote over a model open in a tab (which then showed what the file no longer
    held), and read A's file while A's tab had unsaved edits, without a word."""
    from designer.core.edits import SetMetadataProp

    a = save_model(_model("x", "emb", 4, 8, 1), "encoder.onnx")
    b = save_model(_two_input_b(), "head.onnx")
    shown = save_model(_model("q", "r", 2, 2, 5), "shown.onnx")
    open_model(window, shown, qtbot)
    tab_a = open_model(window, a, qtbot)
    window.actions_by_name["compose"].trigger()
    (dialog,) = [d for d in window.findChildren(ComposeDialog) if d.isVisible()]
    dialog.set_model("B", b)
    dialog.connect_pair("emb", "features")
    dialog.prefix_a.setText("enc/")
    dialog.prefix_b.setText("b/")
    dialog._typed("prefix_b")
    before = shown.read_bytes()
    dialog.output.setText(str(shown))
    assert dialog.compose() is None
    assert "is open in the tab shown.onnx" in dialog.error.text()
    assert shown.read_bytes() == before
    dialog.output.setText(str(tmp_path / "composed.onnx"))
    assert dialog.compose_button.isEnabled(), dialog.problems()
    tab_a.session.push(SetMetadataProp("note", "unsaved"))
    problems = dialog.problems()
    assert any("Model A has unsaved changes in the tab encoder.onnx" in p for p in problems)
    window.save(tab_a)
    assert not dialog.problems()
