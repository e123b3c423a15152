"""The Create Subgraph dialog (G-2) with real widgets: inline name errors create nothing,
"copy from an existing subgraph" copies, "open after creation" opens a tab, and the canvas
context menu offers it for each unset graph attribute."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from helpers.gui import open_model
from helpers.models import tensor_info
from onnx import TensorProto, helper
from PySide6.QtCore import QPointF
from pytestqt.qtbot import QtBot

from designer.core.scope import MAIN_SCOPE
from designer.ui.dialogs.create_subgraph import CreateSubgraphDialog, show_create_subgraph
from designer.ui.main_window import DocumentTab, MainWindow


def if_without_else() -> onnx.ModelProto:
    """``Y = If(cond)`` with a ``then_graph`` branch (reads the outer ``X``) and no else."""
    then_graph = helper.make_graph(
        [helper.make_node("Neg", ["X"], ["neg"], name="then_neg")],
        "then_graph",
        [],
        [tensor_info("neg")],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["Y"], name="choose", then_branch=then_graph)],
        "if_model",
        [tensor_info("X"), tensor_info("cond", TensorProto.BOOL, [])],
        [tensor_info("Y")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def node_key(tab: DocumentTab, name: str) -> int:
    return next(k for k, n in tab.session.doc.scope().nodes() if n.name == name)


def dialog_for(window: MainWindow, tab: DocumentTab, attribute: str) -> CreateSubgraphDialog:
    key = node_key(tab, "choose")
    return show_create_subgraph(window, tab.session, MAIN_SCOPE, key, attribute)


def test_name_clash_and_bad_names_show_inline_and_create_nothing(
    window: MainWindow, save_model, qtbot: QtBot
) -> None:
    tab = open_model(window, save_model(if_without_else(), "if.onnx"), qtbot)
    before = tab.session.doc.model.SerializeToString()
    dialog = dialog_for(window, tab, "else_branch")
    assert dialog.name.text() == "choose_else_branch"
    assert dialog.error.text() == ""
    assert "outputs: Y_else" in dialog.contents.text()

    for text, expected in (
        ("then_graph", "already exists"),
        ("if_model", "already exists"),  # the scope's own name
        ("2nd", "starts with a digit"),
        ("", "cannot be empty"),
    ):
        dialog.name.setText(text)
        assert expected in dialog.error.text()
        dialog.buttons.accepted.emit()
        assert dialog.isVisible()
        assert tab.session.doc.model.SerializeToString() == before
    assert tab.session.undo_stack.count() == 0
    dialog.name.setText("else_graph")
    assert dialog.error.text() == ""
    dialog.open_after.setChecked(False)
    dialog.buttons.accepted.emit()
    assert not dialog.isVisible()
    node = tab.session.doc.model.graph.node[0]
    else_graph = next(a.g for a in node.attribute if a.name == "else_branch")
    assert else_graph.name == "else_graph"
    assert [v.name for v in else_graph.output] == ["Y_else"]


def test_copy_from_an_existing_subgraph(window: MainWindow, save_model, qtbot: QtBot) -> None:
    tab = open_model(window, save_model(if_without_else(), "if.onnx"), qtbot)
    before = tab.session.doc.model.SerializeToString()
    dialog = dialog_for(window, tab, "else_branch")
    assert not dialog.source.isEnabled()
    assert [dialog.source.itemText(i) for i in range(dialog.source.count())] == [
        "main ▸ choose ▸ then_branch"
    ]
    dialog.copy.setChecked(True)
    assert dialog.source.isEnabled()
    assert "a copy of main ▸ choose ▸ then_branch (1 nodes)" in dialog.contents.text()
    dialog.name.setText("else_copy")
    dialog.open_after.setChecked(False)
    dialog.buttons.accepted.emit()

    model = tab.session.doc.model
    node = model.graph.node[0]
    graphs = {a.name: a.g for a in node.attribute}
    assert graphs["else_branch"].name == "else_copy"
    assert [n.op_type for n in graphs["else_branch"].node] == ["Neg"]
    assert graphs["then_branch"].name == "then_graph"  # the source is untouched
    onnx.checker.check_model(model, full_check=True)
    run = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for cond in (True, False):
        (y,) = run.run(None, {"X": x, "cond": np.array(cond)})
        np.testing.assert_array_equal(y, -x)
    assert tab.session.undo_stack.count() == 1
    tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before


def test_open_after_creation_opens_a_tab(window: MainWindow, save_model, qtbot: QtBot) -> None:
    tab = open_model(window, save_model(if_without_else(), "if.onnx"), qtbot)
    dialog = dialog_for(window, tab, "else_branch")
    assert dialog.open_after.isEnabled() and dialog.open_after.isChecked()
    count = window.tabs.count()
    dialog.buttons.accepted.emit()
    qtbot.waitUntil(lambda: window.tabs.count() == count + 1)
    opened = window.tab()
    assert opened is not None and opened is not tab
    assert opened.scope_id == MAIN_SCOPE.child(node_key(tab, "choose"), "else_branch")  # type: ignore[attr-defined]


def test_canvas_menu_offers_create_for_unset_graph_attributes(
    window: MainWindow, save_model, qtbot: QtBot
) -> None:
    tab = open_model(window, save_model(if_without_else(), "if.onnx"), qtbot)
    key = node_key(tab, "choose")
    item = tab.view.canvas.node_items[key]
    menu = window.canvas_menu(tab, item.sceneBoundingRect().center())
    entries = {a.text(): a for a in menu.actions()}
    assert "Create Subgraph else_branch…" in entries
    assert not any("then_branch" in text for text in entries)  # already set
    entries["Create Subgraph else_branch…"].trigger()
    dialog = window.findChild(CreateSubgraphDialog)
    assert dialog is not None and dialog.isVisible() and dialog.attribute == "else_branch"
    dialog.reject()
    menu.deleteLater()
    # Empty canvas, nothing selected: no entry.
    tab.view.select_keys([])
    menu = window.canvas_menu(tab, QPointF(-5000, -5000))
    assert not any(a.text().startswith("Create Subgraph") for a in menu.actions())
    menu.deleteLater()
