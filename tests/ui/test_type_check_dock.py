"""Type Checking window (T-1): live diagnostics, filters, title count, jump to the node."""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot

from designer.core.analysis import Severity
from designer.core.edits import SetNodeInput
from designer.core.scope import MAIN_SCOPE
from designer.ui.docks.type_check import TypeCheckPanel
from designer.ui.main_window import MainWindow


def broken_model() -> onnx.ModelProto:
    """x → [Relu r, input missing] → y: one missing required input."""
    graph = helper.make_graph(
        [helper.make_node("Relu", [], ["y"], name="r")],
        "broken",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def panel_of(window: MainWindow) -> TypeCheckPanel:
    dock = next(d for d in window.docks if d.objectName() == "dock_type_check")
    widget = dock.widget()
    assert isinstance(widget, TypeCheckPanel)
    return widget


def test_missing_input_listed_then_cleared(
    window: MainWindow, save_model: object, qtbot: QtBot
) -> None:
    panel = panel_of(window)
    assert panel.dock.windowTitle() == "Type Checking"
    path = save_model(broken_model(), "broken.onnx")  # type: ignore[operator]
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=30_000)
    total = len(panel.model.diagnostics)
    assert total >= 1 and panel.dock.windowTitle() == f"Type Checking ({total})"
    missing = [d for d in panel.model.diagnostics if d.code == "missing-input"]
    assert missing and missing[0].node_name == "r"
    assert panel.buttons[Severity.ERROR].text().startswith("Errors (")
    assert panel.model.index(0, 0).data(1) is not None  # a severity icon

    # filters: text, then severity
    panel.search.setText("required input")
    panel.search.flush()
    assert panel.proxy.rowCount() == 1
    panel.buttons[Severity.ERROR].setChecked(False)
    assert panel.proxy.rowCount() == 0
    panel.buttons[Severity.ERROR].setChecked(True)
    assert panel.proxy.rowCount() == 1

    # double-click jumps to the node
    panel.table.doubleClicked.emit(panel.proxy.index(0, 2))
    key = tab.session.doc.scope().keys[0]
    assert tab.view.selected_keys() == [key]

    # connecting the input clears the problem once the background check has run
    assert tab.session.push(SetNodeInput(MAIN_SCOPE, key, 0, "x"))
    qtbot.waitUntil(lambda: panel.dock.windowTitle() == "Type Checking (0)", timeout=30_000)
    assert panel.status.text() == "No problems found"
    tab.session.undo_stack.undo()
    qtbot.waitUntil(lambda: panel.dock.windowTitle() == f"Type Checking ({total})", timeout=30_000)
    tab.session.undo_stack.setClean()


def test_follows_the_current_tab(
    window: MainWindow, save_model: object, resnet_path: Path, qtbot: QtBot
) -> None:
    panel = panel_of(window)
    window.open_files([save_model(broken_model(), "broken.onnx"), resnet_path])  # type: ignore[operator]
    for tab in window.document_tabs():
        qtbot.waitUntil(lambda t=tab: t.session.check_result is not None, timeout=30_000)
    window.tabs.setCurrentIndex(1)
    assert panel.dock.windowTitle() == "Type Checking (0)"
    window.tabs.setCurrentIndex(0)
    assert panel.dock.windowTitle() != "Type Checking (0)"
    window.close_tab(0)
    window.close_tab(0)
    assert panel.dock.windowTitle() == "Type Checking"
    assert panel.status.text() == "Open a model to see its problems."
