"""Show Changes after a global modification, with real widgets: FP16 of a real model on the
document, sanitize to a file, batch cast; the Compare view lists exactly what the diff of
the two models says, and stays as it was when the document is edited (undone) later."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
from helpers.gui import open_model
from helpers.transform_models import shape_subgraph_model
from pytestqt.qtbot import QtBot

from designer.core.diff import diff_models
from designer.ui.dialogs.cast_dialog import CastDialog
from designer.ui.dialogs.fp16_dialog import FP16Dialog
from designer.ui.dialogs.sanitize_dialog import SanitizeDialog
from designer.ui.dialogs.status_dialog import RunState, StatusDialog
from designer.ui.dialogs.transform_runner import TransformDialog
from designer.ui.diff import diff_tabs
from designer.ui.diff.show_changes import Snapshot
from designer.ui.diff.tab import DiffTab
from designer.ui.main_window import MainWindow
from designer.ui.tools.global_modification import offer_changes

MODELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "models"
SQUEEZENET = MODELS / "squeezenet1_0.torchscript.onnx"


def open_tool(window: MainWindow, name: str, kind: type[TransformDialog]) -> Any:
    window.actions_by_name[name].trigger()
    (dialog,) = [d for d in window.findChildren(kind) if d.isVisible()]
    return dialog


def run(qtbot: QtBot, dialog: TransformDialog) -> StatusDialog:
    with qtbot.waitSignal(dialog.runEnded, timeout=60_000) as blocker:
        dialog.run_button.click()
    assert blocker.args[0] in (RunState.SUCCESS, RunState.WARNING), dialog.status.text()  # type: ignore[union-attr]
    status = dialog.status
    assert isinstance(status, StatusDialog)
    return status


def click_show_changes(window: MainWindow, qtbot: QtBot, status: StatusDialog) -> DiffTab:
    assert status.show_changes is not None and status.show_changes.isVisible()
    status.show_changes.click()
    assert not status.isVisible()
    tabs = diff_tabs(window)
    assert len(tabs) == 1 and window.tabs.currentWidget() is tabs[0]
    assert tabs[0].left.view.wait_for_layout(30_000)
    return tabs[0]


def test_fp16_of_a_real_model_then_show_changes(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_model(window, SQUEEZENET, qtbot)
    before = onnx.ModelProto()
    before.CopyFrom(tab.session.doc.model)
    dialog = open_tool(window, "convert_fp16", FP16Dialog)
    dialog.keep_io.setChecked(True)
    status = run(qtbot, dialog)
    after = tab.session.doc.model
    diff_tab = click_show_changes(window, qtbot, status)
    assert diff_tab.title == "Changes: Convert to FP16"
    expected = diff_models(before, after)
    shown = diff_tab.diff
    assert shown.change_count == expected.change_count > 0
    assert {c.before.name for c in shown.graph.initializers_changed} == {
        t.name for t in before.graph.initializer if t.data_type == onnx.TensorProto.FLOAT
    }
    assert {c.after.dtype for c in shown.graph.initializers_changed} == {"float16"}
    assert diff_tab.table.rowCount() == len(diff_tab.rows) >= shown.change_count - 1
    # the view keeps its own copies: undoing the conversion does not change it
    nodes_shown = len(diff_tab.right.session.doc.model.graph.node)
    tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before.SerializeToString()
    assert len(diff_tab.right.session.doc.model.graph.node) == nodes_shown
    assert any(
        t.data_type == onnx.TensorProto.FLOAT16
        for t in diff_tab.right.session.doc.model.graph.initializer
    )


def test_sanitize_to_a_file_then_show_changes(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    source = tmp_path / "shapes.onnx"
    onnx.save(shape_subgraph_model(), source)
    open_model(window, source, qtbot)
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    out = tmp_path / "clean.onnx"
    dialog.destination.to_file.setChecked(True)
    dialog.destination.path.setText(str(out))
    status = run(qtbot, dialog)
    diff_tab = click_show_changes(window, qtbot, status)
    expected = diff_models(onnx.load(source), onnx.load(out))
    assert diff_tab.diff.graph.nodes_removed == expected.graph.nodes_removed != ()
    assert diff_tab.diff.b == "clean.onnx (written)"
    assert "clean.onnx" in diff_tab.right.caption.text()


def test_cast_then_show_changes(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    source = tmp_path / "shapes.onnx"
    onnx.save(shape_subgraph_model(), source)
    open_model(window, source, qtbot)
    dialog = open_tool(window, "batch_tensor_cast", CastDialog)
    dialog.initializers.dtype.setCurrentText("float")
    dialog.initializers.check_shown(True)
    dialog.target.setCurrentText("float16")
    dialog.confirm_loss = lambda _text, _details: True
    status = run(qtbot, dialog)
    diff_tab = click_show_changes(window, qtbot, status)
    changed = {c.before.name: c.after.dtype for c in diff_tab.diff.graph.initializers_changed}
    assert changed == {"proj": "float16", "one_f": "float16", "two": "float16"}


def test_no_show_changes_when_nothing_changed(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_model(window, SQUEEZENET, qtbot)
    dialog = open_tool(window, "sanitize_graph", SanitizeDialog)
    before = Snapshot("before", tab.session.doc.model, None)
    assert not offer_changes(window, dialog, before, RunState.SUCCESS)  # no run yet
    dialog.report(RunState.FAILURE, "failed", "")
    assert not offer_changes(window, dialog, before, RunState.FAILURE)
    assert dialog.status is not None and dialog.status.show_changes is None
    dialog.status.close()
    dialog.report(RunState.SUCCESS, "model untouched", "")
    assert not offer_changes(window, dialog, before, RunState.SUCCESS)  # same model object
    dialog.status.close()
    dialog.close()


def test_group_then_inline_then_show_changes_of_last_step(
    window: MainWindow, qtbot: QtBot, resnet_path: Path, monkeypatch: Any
) -> None:
    from designer.ui.tools import functions as tool

    tab = open_model(window, resnet_path, qtbot)
    action = window.actions_by_name["show_last_changes"]
    window.menus["Edit"].aboutToShow.emit()
    assert not action.isEnabled()  # nothing done yet
    doc = tab.session.doc
    by_name = {node.name: key for key, node in doc.scope().nodes()}
    grouped = ("block0a_conv", "block0a_bn", "block0a_relu")
    tab.view.select_keys([by_name[n] for n in grouped])
    qtbot.waitUntil(lambda: len(tab.view.selected_keys()) == 3)
    monkeypatch.setattr(tool, "ask_group_names", lambda _p, _d, _c: ("ConvBnRelu", "local"))
    assert tool.group_selection(window, tab.view) is not None
    window.menus["Edit"].aboutToShow.emit()
    assert action.isEnabled() and "Group into Local Function" in action.text()
    action.trigger()
    (diff_tab,) = diff_tabs(window)
    diff = diff_tab.diff
    assert sorted(n.name for n in diff.graph.nodes_removed) == sorted(grouped)
    (call,) = diff.graph.nodes_added
    assert call.op_type == "ConvBnRelu" and call.domain == "local"
    assert diff.functions_added == ("local:ConvBnRelu",)
    assert diff.graph.initializers_changed == () and diff.graph.nodes_changed == ()
    assert any("compared by name, type and shape" in w for w in diff.warnings)
    window.close_tab(window.tabs.indexOf(diff_tab))

    # inline the call: the step after it shows the call replaced by the body again
    window.tabs.setCurrentWidget(tab)
    call_key = next(k for k, n in doc.scope().nodes() if n.op_type == "ConvBnRelu")
    tab.view.select_keys([call_key])
    qtbot.waitUntil(lambda: tab.view.selected_keys() == [call_key])
    assert tool.inline_selection(window, tab.view)
    diff = show_last_changes(window)
    assert [n.op_type for n in diff.graph.nodes_removed] == ["ConvBnRelu"]
    assert sorted(n.op_type for n in diff.graph.nodes_added) == [
        "BatchNormalization",
        "Conv",
        "Relu",
    ]
    # any later change makes the remembered step stale
    tab.session.undo_stack.undo()
    window.menus["Edit"].aboutToShow.emit()
    assert not action.isEnabled()


def show_last_changes(window: MainWindow) -> Any:
    from designer.ui.diff.last_step import show_last

    shown = show_last(window)
    assert shown is not None
    return shown.diff
