"""The global modification dialogs tell the truth the CLI tells (real widgets, real onnx and
onnxruntime): an FP16 check that could not run leaves the conversion unchecked (yellow, why,
what to do); an input the type checker rejects runs only after the user confirms (the CLI's
--force); an invalid plug-in result of a valid input is neither applied nor written; a run
that changes nothing pushes no undo step and offers no Show Changes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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

import designer.ui.tools.plugin_transforms as ui_plugin_transforms
from designer import plugins
from designer.activities.plugin_transforms import PluginTransform
from designer.ui.dialogs.cast_dialog import CastDialog
from designer.ui.dialogs.fp16_dialog import FP16Dialog
from designer.ui.dialogs.plugin_transform_dialog import PluginTransformDialog
from designer.ui.dialogs.sanitize_dialog import SanitizeDialog
from designer.ui.dialogs.status_dialog import RunState
from designer.ui.dialogs.transform_runner import TransformDialog
from designer.ui.main_window import MainWindow


# --- models ----------------------------------------------------------------------------------
def _weight() -> onnx.TensorProto:
    data = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    return numpy_helper.from_array(data, "W")


def _model(
    nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], *domains: str
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        inits,
    )
    opsets = [helper.make_opsetid("", 17), *(helper.make_opsetid(d, 1) for d in domains)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def custom_op_model() -> onnx.ModelProto:
    """Valid for the type checker (a custom operator is a warning), but ORT cannot run it."""
    return _model(
        [
            helper.make_node("MatMul", ["x", "W"], ["a"], name="mm"),
            helper.make_node("FancyAct", ["a"], ["b"], name="fancy", domain="com.example"),
            helper.make_node("Relu", ["b"], ["y"], name="relu"),
        ],
        [_weight()],
        "com.example",
    )


def type_error_model() -> onnx.ModelProto:
    """Add(float, int64): the type checker's error is 'B has inconsistent type'."""
    ones = numpy_helper.from_array(np.ones((1, 8), np.int64), "I")
    return _model(
        [
            helper.make_node("MatMul", ["x", "W"], ["a"], name="mm"),
            helper.make_node("Add", ["a", "I"], ["y"], name="bad_add"),
        ],
        [_weight(), ones],
    )


# --- helpers ---------------------------------------------------------------------------------
@pytest.fixture
def open_path(window: MainWindow, qtbot: QtBot) -> Callable[[Path], Any]:
    def open_(path: Path) -> Any:
        window.open_files([path])
        tab = window.tab()
        assert tab is not None
        qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=30_000)
        return tab.session

    return open_


@pytest.fixture
def open_model(open_path: Any, tmp_path: Path) -> Callable[[onnx.ModelProto, str], Any]:
    def open_(model: onnx.ModelProto, name: str = "model.onnx") -> Any:
        path = tmp_path / name
        onnx.save(model, str(path))
        return open_path(path)

    return open_


def open_tool(window: MainWindow, action: str, kind: type[TransformDialog]) -> Any:
    window.actions_by_name[action].trigger()
    (dialog,) = [d for d in window.findChildren(kind) if d.isVisible()]
    return dialog


def run(qtbot: QtBot, dialog: TransformDialog) -> RunState:
    with qtbot.waitSignal(dialog.runEnded, timeout=60_000) as blocker:
        dialog.run_button.click()
    state = blocker.args[0]
    assert isinstance(state, RunState)
    return state


def message(dialog: TransformDialog) -> str:
    assert dialog.status is not None
    return dialog.status.message.text()


def model_bytes(session: Any) -> bytes:
    return bytes(session.doc.model.SerializeToString())


def answer(dialog: TransformDialog, yes: bool) -> list[str]:
    """Answer the invalid-model question of ``dialog`` (its seam), recording each question."""
    asked: list[str] = []

    def confirm(problem: str) -> bool:
        asked.append(problem)
        return yes

    dialog.confirm_invalid = confirm  # type: ignore[method-assign]
    return asked


def click_in_message_box(button: str, seen: list[tuple[str, str]]) -> None:
    """Click ``button`` of the next message box that opens (it runs its own event loop),
    noting its text and informative text in ``seen``."""

    def poll() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            seen.append((box.text(), box.informativeText()))
            (target,) = [b for b in box.buttons() if b.text().replace("&", "") == button]
            target.click()
            return
        QTimer.singleShot(20, poll)

    QTimer.singleShot(20, poll)


# --- D1: an FP16 check that could not run ------------------------------------------------------
def test_fp16_check_that_cannot_run_leaves_the_conversion_unchecked(
    window: MainWindow, open_model: Any, qtbot: QtBot
) -> None:
    session = open_model(custom_op_model(), "custom.onnx")
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    assert dialog.check.isChecked()
    assert run(qtbot, dialog) is RunState.WARNING
    text = message(dialog)
    assert "The open document was changed as one step" in text  # the conversion is applied
    assert "could not run, so the conversion is unchecked" in text
    assert "com.example:FancyAct" in text  # ORT's reason
    assert "Untick 'Check numerically' to convert without a check on purpose." in text
    assert "give real inputs" not in text.lower()  # no input can make ORT load it
    assert session.undo_stack.count() == 1


def test_fp16_check_on_real_inputs_that_do_not_fit_says_so(
    window: MainWindow, open_path: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    open_path(shared_model("squeezenet1_0.torchscript.onnx"))
    folder = tmp_path / "inputs"
    folder.mkdir()
    small = numpy_helper.from_array(np.zeros((1, 3, 8, 8), np.float32), "input")
    (folder / "input.pb").write_bytes(small.SerializeToString())
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    dialog.folder_inputs.setChecked(True)
    dialog.folder.setText(str(folder))
    assert run(qtbot, dialog) is RunState.WARNING
    text = message(dialog)
    assert "the conversion is unchecked: onnxruntime cannot run the original model" in text
    assert "invalid dimensions" in text
    assert f"Check the inputs in {folder}, or untick 'Check numerically'" in text


# --- D2: an input the type checker rejects -----------------------------------------------------
@pytest.mark.parametrize(
    ("action", "kind"),
    [
        ("convert_fp16", FP16Dialog),
        ("sanitize_graph", SanitizeDialog),
        ("batch_tensor_cast", CastDialog),
    ],
)
def test_an_invalid_model_runs_only_when_confirmed(
    window: MainWindow, open_model: Any, qtbot: QtBot, action: str, kind: type[TransformDialog]
) -> None:
    session = open_model(type_error_model(), "bad_type.onnx")
    before = model_bytes(session)
    dialog = open_tool(window, action, kind)
    if isinstance(dialog, CastDialog):
        dialog.initializers.check_shown(True)
        dialog.confirm_loss = lambda text, details: True  # type: ignore[method-assign]
    asked = answer(dialog, yes=False)
    ended: list[object] = []
    dialog.runEnded.connect(ended.append)
    dialog.run_button.click()
    qtbot.waitUntil(lambda: bool(asked) and not dialog.running, timeout=30_000)
    assert "bad_add" in asked[0] and "inconsistent type" in asked[0]
    assert dialog.isVisible() and not ended  # refused in the dialog: nothing ran
    assert dialog.error.text().startswith("Not run: the model is not valid (")
    assert "bad_add" in dialog.error.text()
    assert model_bytes(session) == before and session.undo_stack.count() == 0

    answer(dialog, yes=True)
    assert run(qtbot, dialog) is RunState.WARNING
    text = message(dialog)
    assert "The input is not a valid model (" in text and "it ran anyway, as confirmed" in text
    if isinstance(dialog, SanitizeDialog):  # sanitize's own check of the result, in the message
        assert "The result does not pass the model check (" in text
    else:
        assert "the result is not valid either (" in text


def test_the_invalid_model_question_is_a_real_message_box(
    window: MainWindow, open_model: Any, qtbot: QtBot
) -> None:
    session = open_model(type_error_model(), "bad_type.onnx")
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    seen: list[tuple[str, str]] = []
    click_in_message_box("Cancel", seen)
    dialog.run_button.click()
    qtbot.waitUntil(lambda: bool(seen) and not dialog.running, timeout=30_000)
    text, informative = seen[0]
    assert text.startswith("bad_type.onnx is not a valid model: g / node bad_add: ")
    assert "run Sanitize Graph anyway" in informative
    assert dialog.error.text().startswith("Not run:") and session.undo_stack.count() == 0

    click_in_message_box("Run Anyway", seen)
    with qtbot.waitSignal(dialog.runEnded, timeout=60_000) as blocker:
        dialog.run_button.click()
    assert blocker.args[0] is RunState.WARNING


def test_a_valid_real_model_is_not_questioned(
    window: MainWindow, open_path: Any, qtbot: QtBot
) -> None:
    open_path(shared_model("bert_4l_h64.torchscript.onnx"))
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    asked = answer(dialog, yes=False)
    assert run(qtbot, dialog) is RunState.SUCCESS
    assert asked == [] and "The input is not a valid model" not in message(dialog)


# --- D3: plug-in results are checked -----------------------------------------------------------
class _BreakGraph:
    title = "Break Graph"
    description = "rewires the last node's first input to a value nothing produces"

    def run(self, model: onnx.ModelProto, base_dir: Path | None) -> onnx.ModelProto:
        model.graph.node[-1].input[0] = "no_such_value"
        return model


class _Unchanged:
    title = "Leave Alone"
    description = "returns the model as it came"

    def run(self, model: onnx.ModelProto, base_dir: Path | None) -> onnx.ModelProto:
        return model


def _transform(name: str, impl: _BreakGraph | _Unchanged) -> PluginTransform:
    plugin = plugins.Plugin(plugins.TRANSFORMS, name, f"tests:{type(impl).__name__}", type(impl))
    return PluginTransform(name, impl.title, impl.description, plugin, impl)


@pytest.fixture
def plugin_window(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The main window with two transform plug-ins in its menu (the entry-point loader
    answers them instead of the installed distributions)."""
    found = [_transform("break", _BreakGraph()), _transform("leave", _Unchanged())]
    monkeypatch.setattr(ui_plugin_transforms, "transform_plugins", lambda: found)
    yield request.getfixturevalue("window")


def test_an_invalid_plugin_result_is_not_applied(
    plugin_window: MainWindow, open_path: Any, qtbot: QtBot
) -> None:
    session = open_path(shared_model("gpt2_6l_h64.torchscript.onnx"))
    before = model_bytes(session)
    dialog = open_tool(plugin_window, "plugin_transform_break", PluginTransformDialog)
    assert dialog.width() >= 600  # the output path shows whole
    assert run(qtbot, dialog) is RunState.FAILURE
    text = message(dialog)
    assert text.startswith("Break Graph produced a model that is not valid (")
    assert "'no_such_value'" in text and "the result was not applied" in text
    assert model_bytes(session) == before and session.undo_stack.count() == 0


def test_an_invalid_plugin_result_is_not_written(
    plugin_window: MainWindow, open_path: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    open_path(shared_model("gpt2_6l_h64.torchscript.onnx"))
    dialog = open_tool(plugin_window, "plugin_transform_break", PluginTransformDialog)
    out = tmp_path / "broken.onnx"
    dialog.destination.to_file.setChecked(True)
    dialog.destination.path.setText(str(out))
    assert run(qtbot, dialog) is RunState.FAILURE
    assert "the result was not written" in message(dialog)
    assert not out.exists() and list(tmp_path.glob(".*.tmp")) == []


def test_a_plugin_on_an_invalid_model_runs_when_confirmed_and_says_so(
    plugin_window: MainWindow, open_model: Any, qtbot: QtBot
) -> None:
    session = open_model(type_error_model(), "bad_type.onnx")
    dialog = open_tool(plugin_window, "plugin_transform_break", PluginTransformDialog)
    answer(dialog, yes=True)
    assert run(qtbot, dialog) is RunState.WARNING  # --force: applied, and said
    text = message(dialog)
    assert "The input is not a valid model (" in text
    assert "the result is not valid either (" in text and "no_such_value" in text
    assert session.undo_stack.count() == 1


# --- D4: nothing changed -----------------------------------------------------------------------
def test_a_sanitize_that_changes_nothing_leaves_the_document_alone(
    window: MainWindow, open_path: Any, qtbot: QtBot
) -> None:
    session = open_path(shared_model("googlenet.dynamo.onnx"))
    before = model_bytes(session)
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    assert run(qtbot, dialog) is RunState.SUCCESS
    text = message(dialog)
    assert text.startswith("Nothing to change: the document is unchanged (no undo step).")
    assert "Edit > Undo" not in text
    assert session.undo_stack.count() == 0 and not session.modified
    assert not window.tabs.tabText(window.tabs.currentIndex()).endswith("*")
    assert dialog.status is not None and dialog.status.show_changes is None
    assert model_bytes(session) == before


def test_an_unchanged_result_written_to_a_file_offers_no_empty_comparison(
    plugin_window: MainWindow, open_path: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    session = open_path(shared_model("bert_4l_h64.torchscript.onnx"))
    dialog = open_tool(plugin_window, "plugin_transform_leave", PluginTransformDialog)
    out = tmp_path / "same.onnx"
    dialog.destination.to_file.setChecked(True)
    dialog.destination.path.setText(str(out))
    assert run(qtbot, dialog) is RunState.SUCCESS
    assert f"written to {out} (the same model as the open document)" in message(dialog)
    assert out.is_file() and dialog.status is not None and dialog.status.show_changes is None
    assert session.undo_stack.count() == 0


def test_a_run_that_changes_something_still_offers_show_changes(
    window: MainWindow, open_path: Any, qtbot: QtBot
) -> None:
    session = open_path(shared_model("bert_4l_h64.torchscript.onnx"))
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    assert run(qtbot, dialog) is RunState.SUCCESS
    assert message(dialog).startswith("The open document was changed as one step")
    assert session.undo_stack.count() == 1 and session.modified
    assert dialog.status is not None and dialog.status.show_changes is not None


def test_a_result_written_to_a_file_refuses_a_data_file_changed_on_disk(
    window: MainWindow, open_path: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    """A transform written to a file copies the document's weights from its data files: one
    rewritten by another program since the model opened is refused, not copied."""
    import os

    source = tmp_path / "m.onnx"
    onnx.save(
        _model([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")], [_weight()]),
        source,
        save_as_external_data=True,
        location="m.data",
        size_threshold=0,
    )
    open_path(source)
    data = tmp_path / "m.data"
    info = data.stat()
    data.write_bytes(bytes(info.st_size))  # same size, other bytes
    os.utime(data, ns=(info.st_atime_ns, info.st_mtime_ns + 10_000_000))
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    out = tmp_path / "out.onnx"
    dialog.destination.to_file.setChecked(True)
    dialog.destination.path.setText(str(out))
    assert run(qtbot, dialog) is RunState.FAILURE
    assert "changed on disk since the model was opened" in message(dialog)
    assert not out.exists()
