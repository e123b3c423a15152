"""Tools > Global Model Modification (M-1..M-3) with real widgets: each dialog applied to the
open document (one undo step, bit-exact undo, redo), written to a file (full checker),
cancelled, failing, the cast filters and precision-loss warning, and bad destinations."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from helpers.transform_models import (
    overflow_model,
    resnet_like,
    save_external,
    shape_subgraph_model,
)
from onnx import TensorProto, numpy_helper
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from designer.core.transforms import TransformCancelled, TransformError
from designer.ui.dialogs import fp16_dialog, sanitize_dialog
from designer.ui.dialogs.cast_dialog import CastDialog
from designer.ui.dialogs.fp16_dialog import FP16Dialog
from designer.ui.dialogs.sanitize_dialog import SanitizeDialog
from designer.ui.dialogs.status_dialog import RunState, StatusDialog
from designer.ui.dialogs.transform_runner import TransformDialog
from designer.ui.main_window import MainWindow


@pytest.fixture
def open_model(
    window: MainWindow, tmp_path: Path, qtbot: QtBot
) -> Callable[[onnx.ModelProto, str], Path]:
    def open_(model: onnx.ModelProto, name: str = "model.onnx") -> Path:
        path = tmp_path / name
        onnx.save(model, str(path))
        window.open_files([path])
        tab = window.tab()
        assert tab is not None
        qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=20_000)
        return path

    return open_


def session_of(window: MainWindow) -> Any:
    tab = window.tab()
    assert tab is not None
    return tab.session


def model_bytes(window: MainWindow) -> bytes:
    return bytes(session_of(window).doc.model.SerializeToString())


def open_tool(window: MainWindow, name: str, kind: type[TransformDialog]) -> Any:
    window.actions_by_name[name].trigger()
    dialogs = [d for d in window.findChildren(kind) if d.isVisible()]
    assert len(dialogs) == 1
    return dialogs[0]


def run_and_wait(qtbot: QtBot, dialog: TransformDialog) -> RunState:
    with qtbot.waitSignal(dialog.runEnded, timeout=30_000) as blocker:
        dialog.run_button.click()
    state = blocker.args[0]
    assert isinstance(state, RunState)
    return state


def assert_one_step_undo(window: MainWindow, before: bytes, qtbot: QtBot) -> None:
    stack = session_of(window).undo_stack
    assert stack.count() == 1
    after = model_bytes(window)
    assert after != before
    stack.undo()
    assert model_bytes(window) == before
    stack.redo()
    assert model_bytes(window) == after


def float_types(model: onnx.ModelProto) -> set[int]:
    return {t.data_type for t in model.graph.initializer}


# --- menu ----------------------------------------------------------------------------------
def test_menu_entries_follow_the_current_document(window: MainWindow, open_model: Any) -> None:
    menu = next(
        a.menu()
        for a in window.menus["Tools"].actions()
        if a.menu() is not None and "Global Model Modification" in a.text()
    )
    names = [a.text().replace("&", "") for a in menu.actions()]
    assert names == ["Convert to FP16…", "Sanitize Graph…", "Batch Tensor Cast…"]
    assert not window.actions_by_name["convert_fp16"].isEnabled()
    open_model(resnet_like(channels=4, blocks=1, size=8))
    assert all(
        window.actions_by_name[n].isEnabled()
        for n in ("convert_fp16", "sanitize_graph", "batch_tensor_cast")
    )


# --- FP16 ----------------------------------------------------------------------------------
def test_fp16_on_the_document_is_one_exact_undo_step(
    window: MainWindow, open_model: Any, qtbot: QtBot
) -> None:
    open_model(resnet_like(channels=4, blocks=1, size=8))
    before = model_bytes(window)
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    dialog.keep_io.setChecked(True)
    assert run_and_wait(qtbot, dialog) is RunState.SUCCESS
    assert not dialog.isVisible()
    status = dialog.status
    assert isinstance(status, StatusDialog)
    assert "numerical check" in status.message.text() and "passed" in status.message.text()
    assert "Convert to FLOAT16" in status.details.toPlainText()
    assert not status.details.isVisible()
    status.toggle.setChecked(True)
    assert status.details.isVisible()
    model = session_of(window).doc.model
    assert TensorProto.FLOAT16 in float_types(model)
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert_one_step_undo(window, before, qtbot)
    status.close()


def test_fp16_options_map_to_the_transform(
    window: MainWindow, open_model: Any, qtbot: QtBot
) -> None:
    open_model(resnet_like(channels=4, blocks=1, size=8))
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    node = session_of(window).doc.model.graph.node[0].name
    dialog.block_nodes.entry.setText("no_such_node")
    assert not dialog.block_nodes.add_entry()
    assert "no node named 'no_such_node'" in dialog.block_nodes.message.text()
    dialog.block_nodes.entry.setText(node)
    assert dialog.block_nodes.add_entry()
    dialog.block_ops.entry.setText("Softmax")
    qtbot.keyClick(dialog.block_ops.entry, Qt.Key.Key_Return)  # adds; does not convert
    assert "Softmax" in dialog.block_ops.names() and not dialog.running
    dialog.block_ops.list.item(0).setSelected(True)
    first = dialog.block_ops.list.item(0).text()
    dialog.block_ops.remove_selected()
    dialog.bfloat16.setChecked(True)
    dialog.clip.setChecked(False)
    dialog.seed.setValue(7)
    dialog.rtol.setText("0.05")
    dialog.atol.setText("1e-2")
    dialog.auto_block.setChecked(True)
    options, check = dialog.options_now()
    assert options.block_nodes == {node}
    assert "Softmax" in options.block_ops and first not in options.block_ops
    assert options.bfloat16 and not options.clip_constants
    assert (check.seed, check.rtol, check.atol, check.auto_block) == (7, 0.05, 0.01, True)
    dialog.rtol.setText("tight")
    dialog.run_button.click()
    assert dialog.error.isVisible() and "rtol must be a number" in dialog.error.text()
    dialog.rtol.setText("0.01")
    dialog.folder_inputs.setChecked(True)
    dialog.folder.setText(str(Path("/nonexistent/inputs")))
    dialog.run_button.click()
    assert "does not exist" in dialog.error.text()
    assert dialog.job is None and session_of(window).undo_stack.count() == 0
    dialog.reject()


def test_fp16_with_input_folder_writes_a_valid_file(
    window: MainWindow, open_model: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    source = open_model(resnet_like(channels=4, blocks=1, size=8))
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    data = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    (inputs / "input_0.pb").write_bytes(numpy_helper.from_array(data, "input").SerializeToString())
    before = model_bytes(window)
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    dialog.folder_inputs.setChecked(True)
    dialog.folder.setText(str(inputs))
    dialog.destination.to_file.setChecked(True)
    out = tmp_path / "out" / "half.onnx"
    out.parent.mkdir()
    dialog.destination.path.setText(str(out))
    assert run_and_wait(qtbot, dialog) is RunState.SUCCESS
    onnx.checker.check_model(str(out), full_check=True)
    assert TensorProto.FLOAT16 in float_types(onnx.load(str(out)))
    assert str(out) in dialog.status.message.text()
    assert f"folder {inputs}" in dialog.status.message.text()
    assert model_bytes(window) == before and session_of(window).undo_stack.count() == 0
    assert source.exists()


def test_output_path_equal_to_the_model_is_refused(
    window: MainWindow, open_model: Any, qtbot: QtBot
) -> None:
    path = open_model(resnet_like(channels=4, blocks=1, size=8))
    original = path.read_bytes()
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    dialog.destination.to_file.setChecked(True)
    dialog.destination.path.setText(str(path.parent / "." / path.name))
    dialog.run_button.click()
    assert dialog.error.isVisible() and "open model's own file" in dialog.error.text()
    assert dialog.job is None and dialog.status is None
    assert path.read_bytes() == original
    dialog.destination.path.setText("")
    dialog.run_button.click()
    assert "Enter the file" in dialog.error.text()
    dialog.reject()


def _slow(*args: Any, cancel: Callable[[], bool], **kwargs: Any) -> Any:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if cancel():
            raise TransformCancelled("FP16 conversion")
        time.sleep(0.01)
    raise AssertionError("the run was not cancelled")


@pytest.mark.parametrize("to_file", [False, True])
def test_cancel_during_a_slow_run_changes_nothing(
    window: MainWindow,
    open_model: Any,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    to_file: bool,
) -> None:
    open_model(resnet_like(channels=4, blocks=1, size=8))
    before = model_bytes(window)
    monkeypatch.setattr(fp16_dialog, "convert_and_check", _slow)
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    out = tmp_path / "never.onnx"
    if to_file:
        dialog.destination.to_file.setChecked(True)
        dialog.destination.path.setText(str(out))
    dialog.run_button.click()
    assert dialog.running and dialog.progress.isVisible()
    assert not dialog.options.isEnabled() and not dialog.run_button.isEnabled()
    assert dialog.close_button.text() == "Cancel"
    with qtbot.waitSignal(dialog.runEnded, timeout=10_000) as blocker:
        dialog.close_button.click()
    assert blocker.args == [RunState.CANCELLED]
    assert dialog.isVisible() and dialog.options.isEnabled()  # ready to try again
    assert model_bytes(window) == before and session_of(window).undo_stack.count() == 0
    assert not out.exists() and not list(tmp_path.glob(".never.onnx*"))
    dialog.status.close()
    dialog.reject()


def test_failure_shows_the_message(
    window: MainWindow, open_model: Any, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_model(shape_subgraph_model())
    before = model_bytes(window)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise TransformError("cannot fold node 'mul_5': unsupported input")

    monkeypatch.setattr(sanitize_dialog, "sanitize", broken)
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    assert run_and_wait(qtbot, dialog) is RunState.FAILURE
    assert dialog.status.state is RunState.FAILURE
    assert "cannot fold node 'mul_5'" in dialog.status.message.text()
    assert "Nothing was changed" in dialog.status.message.text()
    assert model_bytes(window) == before and dialog.isVisible()
    dialog.status.close()
    dialog.reject()


# --- Sanitize ------------------------------------------------------------------------------
def test_sanitize_on_the_document_and_to_a_file(
    window: MainWindow, open_model: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    open_model(shape_subgraph_model())
    before = model_bytes(window)
    nodes_before = len(session_of(window).doc.model.graph.node)
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    assert dialog.options_now().passes is None  # automatic unless limited
    dialog.limit_passes.setChecked(True)
    dialog.passes.setValue(0)
    assert dialog.options_now().passes == 0
    dialog.limit_passes.setChecked(False)
    dialog.limit_size.setChecked(True)
    dialog.threshold.setValue(4096)
    assert dialog.options_now().fold_size_threshold == 4096
    dialog.destination.to_file.setChecked(True)
    out = tmp_path / "clean.onnx"
    dialog.destination.path.setText(str(out))
    assert run_and_wait(qtbot, dialog) is RunState.SUCCESS
    onnx.checker.check_model(str(out), full_check=True)
    assert len(onnx.load(str(out)).graph.node) < nodes_before
    assert "Nodes" in dialog.status.message.text()
    assert "Sanitize Graph" in dialog.status.details.toPlainText()
    dialog.status.close()
    assert model_bytes(window) == before

    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    assert run_and_wait(qtbot, dialog) is RunState.SUCCESS
    assert len(session_of(window).doc.model.graph.node) < nodes_before
    assert_one_step_undo(window, before, qtbot)
    dialog.status.close()


# --- Cast ----------------------------------------------------------------------------------
def test_cast_filters(window: MainWindow, open_model: Any, qtbot: QtBot) -> None:
    open_model(shape_subgraph_model())
    dialog = open_tool(window, "batch_tensor_cast", CastDialog)
    inits, attrs = dialog.initializers, dialog.attributes
    assert inits.table.rowCount() == len(session_of(window).doc.model.graph.initializer)
    ops = {c.node.split("_")[0] for c in attrs.candidates}
    assert ops == {"constant", "constantofshape"}
    inits.filter_edits[0].setText("I")  # case-insensitive substring of the name
    assert {inits.candidates[r].name for r in inits.visible_rows()} == {"i0", "i1", "i2", "five"}
    inits.filter_edits[0].setText("")
    inits.dtype.setCurrentText("int64")
    shown = {inits.candidates[r].name for r in inits.visible_rows()}
    assert shown == {"i0", "i1", "i2", "axes0", "five"}
    inits.check_shown(True)
    inits.dtype.setCurrentText("float")
    assert {inits.candidates[r].name for r in inits.visible_rows()} == {"proj", "one_f", "two"}
    assert len(inits.checked()) == 5  # ticks survive filtering
    attrs.filter_edits[0].setText("constantofshape")
    shown_nodes = [attrs.candidates[r].node for r in attrs.visible_rows()]
    assert len(shown_nodes) == 1 and shown_nodes[0].startswith("constantofshape_")
    attrs.filter_edits[0].setText("")
    tensor = attrs.candidates[0].tensor_name
    attrs.filter_edits[1].setText(tensor)
    assert [attrs.candidates[r].tensor_name for r in attrs.visible_rows()] == [tensor]
    attrs.check_shown(True)
    assert "5 initializer(s), 1 attribute(s) selected" in dialog.selected.text()
    qtbot.keyClick(attrs.filter_edits[1], Qt.Key.Key_Return)  # Enter never starts a cast
    assert not dialog.running and dialog.status is None
    inits.set_checked(set())
    attrs.set_checked(set())
    assert not dialog.run_button.isEnabled()
    dialog.reject()


def test_cast_warns_with_counts_and_undo_is_exact(
    window: MainWindow, open_model: Any, qtbot: QtBot
) -> None:
    open_model(overflow_model())
    before = model_bytes(window)
    dialog = open_tool(window, "batch_tensor_cast", CastDialog)
    dialog.initializers.check_shown(True)
    dialog.target.setCurrentText("float16")
    asked: list[tuple[str, str]] = []

    def refuse(text: str, details: str) -> bool:
        asked.append((text, details))
        return False

    dialog.confirm_loss = refuse
    dialog.run_button.click()
    qtbot.waitUntil(lambda: bool(asked) and not dialog.running, timeout=10_000)
    text, details = asked[0]
    assert "1 value(s) clipped to the float16 range" in text and "1 rounded" in text
    assert "k_up: 1 clipped" in details and "k_down: 0 clipped, 1 rounded" in details
    assert dialog.preview.isVisible() and "clipped" in dialog.preview.text()
    assert model_bytes(window) == before and dialog.isVisible()

    dialog.confirm_loss = lambda text, details: True
    assert run_and_wait(qtbot, dialog) is RunState.SUCCESS
    assert float_types(session_of(window).doc.model) == {TensorProto.FLOAT16}
    assert "2 tensor(s) cast" in dialog.status.message.text()
    assert_one_step_undo(window, before, qtbot)
    dialog.status.close()


def test_exact_cast_to_a_file_asks_nothing(
    window: MainWindow, open_model: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    open_model(shape_subgraph_model())
    dialog = open_tool(window, "batch_tensor_cast", CastDialog)
    dialog.initializers.dtype.setCurrentText("int64")
    dialog.initializers.check_shown(True)
    dialog.target.setCurrentText("int32")
    dialog.confirm_loss = lambda text, details: pytest.fail("an exact cast needs no warning")
    dialog.destination.to_file.setChecked(True)
    out = tmp_path / "int32.onnx"
    dialog.destination.path.setText(str(out))
    assert run_and_wait(qtbot, dialog) is RunState.SUCCESS
    onnx.checker.check_model(str(out), full_check=True)
    written = {t.name: t.data_type for t in onnx.load(str(out)).graph.initializer}
    assert written["i0"] == TensorProto.INT32
    assert session_of(window).undo_stack.count() == 0
    dialog.status.close()


def test_status_dialog_states(qtbot: QtBot) -> None:
    failed = StatusDialog("Sanitize Graph", RunState.FAILURE, "boom", "line 1\nline 2")
    qtbot.addWidget(failed)
    failed.show()
    assert failed.details.isVisible() and failed.toggle.isChecked()
    assert "Sanitize Graph failed" in failed.text() and "line 2" in failed.text()
    quiet = StatusDialog("Sanitize Graph", RunState.CANCELLED, "Nothing was changed.")
    qtbot.addWidget(quiet)
    quiet.show()
    assert not quiet.toggle.isEnabled() and not quiet.details.isVisible()
    assert quiet.windowTitle().endswith("Cancelled")


def test_external_data_model_to_another_folder_and_cast_in_place(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    source = tmp_path / "ext" / "big.onnx"
    source.parent.mkdir()
    save_external(resnet_like(channels=4, blocks=1, size=8), str(source))
    window.open_files([source])
    session = session_of(window)
    qtbot.waitUntil(lambda: session.check_result is not None, timeout=20_000)
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    dialog.destination.to_file.setChecked(True)
    out = tmp_path / "elsewhere" / "half.onnx"
    out.parent.mkdir()
    dialog.destination.path.setText(str(out))
    assert run_and_wait(qtbot, dialog) is RunState.SUCCESS, dialog.status.text()
    assert "passed" in dialog.status.message.text()
    onnx.checker.check_model(str(out), full_check=True)
    dialog.status.close()

    before = model_bytes(window)
    cast = open_tool(window, "batch_tensor_cast", CastDialog)
    cast.initializers.filter_edits[0].setText("fc_w")
    cast.initializers.check_shown(True)
    cast.target.setCurrentText("double")
    cast.confirm_loss = lambda text, details: pytest.fail("float to double is exact")
    assert run_and_wait(qtbot, cast) is RunState.SUCCESS, cast.status.text()
    types = {t.name: t.data_type for t in session.doc.model.graph.initializer}
    assert types["fc_w"] == TensorProto.DOUBLE
    assert_one_step_undo(window, before, qtbot)
    cast.status.close()


def test_fp16_check_failure_warns_and_auto_block_fixes_it(
    window: MainWindow, open_model: Any, qtbot: QtBot
) -> None:
    open_model(overflow_model())
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    assert run_and_wait(qtbot, dialog) is RunState.WARNING
    assert "numerical check failed for out" in dialog.status.message.text()
    assert "FAIL" in dialog.status.details.toPlainText()
    dialog.status.close()
    session_of(window).undo_stack.undo()

    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    dialog.auto_block.setChecked(True)
    assert run_and_wait(qtbot, dialog) is RunState.SUCCESS
    assert "auto-block kept" in dialog.status.details.toPlainText()
    dialog.status.close()


def test_from_a_function_tab_the_model_is_transformed(
    window: MainWindow, open_model: Any, qtbot: QtBot
) -> None:
    from helpers.models import FN_DOMAIN, function_model

    from designer.core.edits import SetNodeInput
    from designer.core.scope import ScopeId

    open_model(function_model(), "fn.onnx")
    root = session_of(window)
    fid = (FN_DOMAIN, "ScaledAdd", "")
    tab = window.open_scope(root, ScopeId(fid))
    assert tab is not None and tab.session is not root
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    assert dialog.session is root  # the model, not the tab's working copy
    dialog.close()
    # with unconfirmed edits in the tab the model is read-only: refused before running
    body = tab.session.doc.scope(tab.scope_id)
    add = next(k for k, n in body.nodes() if n.name == "fn_add")
    assert tab.session.push(SetNodeInput(tab.scope_id, add, 1, "a"))
    window.actions_by_name["sanitize_graph"].trigger()
    assert not [d for d in window.findChildren(SanitizeDialog) if d.isVisible()]
    assert window.errors and "unconfirmed edits" in window.errors[-1]
