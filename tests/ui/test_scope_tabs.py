"""Subgraph and local-function tabs (G-1, G-4): open, edit in a working copy, confirm into
the parent as one undo step, parent read-only meanwhile, nested to any depth, closing asks,
outer-scope values drawn and usable, checked with onnx and onnxruntime."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers.gui import open_model
from helpers.models import FN_DOMAIN, function_model
from helpers.shots import save_screenshot
from onnx import TensorProto, helper, numpy_helper
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFormLayout, QLabel, QPushButton
from pytestqt.qtbot import QtBot

from designer.core.edits import RemoveNodes, SetModelProperty, SetNodeInput
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.viewgraph import NodeKind
from designer.ui.main_window import DocumentTab, MainWindow
from designer.ui.working import ScopeSession

SaveModel = Callable[[onnx.ModelProto, str], Path]
X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(autouse=True)
def _discard_on_close(window: MainWindow) -> None:
    """Working copies left unconfirmed are discarded (not asked about) when the window
    closes at the end of a test."""
    window.ask_confirm_changes = lambda tab: "discard"  # type: ignore[method-assign]


def _info(name: str, elem: int = TensorProto.FLOAT, shape: list[int] | None = None):  # type: ignore[no-untyped-def]
    return helper.make_tensor_value_info(name, elem, [2, 3] if shape is None else shape)


def if_model(loop_in_then: bool = False) -> onnx.ModelProto:
    """``Y = If(cond, then: X + W, else: X - W)`` and ``Z = X * V``; with ``loop_in_then``
    the then branch is a Loop of 3 iterations ``v = v + W`` (so ``Y = X + 3W``)."""
    if loop_in_then:
        body = helper.make_graph(
            [
                helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
                helper.make_node("Add", ["v_in", "W"], ["v_out"], name="body_add"),
            ],
            "loop_body",
            [
                _info("i", TensorProto.INT64, []),
                _info("cond_in", TensorProto.BOOL, []),
                _info("v_in"),
            ],
            [_info("cond_out", TensorProto.BOOL, []), _info("v_out")],
        )
        then_nodes = [
            helper.make_node("Loop", ["trip", "", "X"], ["t_out"], name="loop", body=body)
        ]
    else:
        then_nodes = [helper.make_node("Add", ["X", "W"], ["t_out"], name="then_add")]
    then_branch = helper.make_graph(then_nodes, "then_graph", [], [_info("t_out")])
    else_branch = helper.make_graph(
        [helper.make_node("Sub", ["X", "W"], ["e_out"], name="else_sub")],
        "else_graph",
        [],
        [_info("e_out")],
    )
    graph = helper.make_graph(
        [
            helper.make_node(
                "If",
                ["cond"],
                ["Y"],
                name="choose",
                then_branch=then_branch,
                else_branch=else_branch,
            ),
            helper.make_node("Mul", ["X", "V"], ["Z"], name="scale"),
        ],
        "main",
        [_info("X"), _info("cond", TensorProto.BOOL, [])],
        [_info("Y"), _info("Z")],
        [
            numpy_helper.from_array(np.full((2, 3), 2.0, np.float32), "W"),
            numpy_helper.from_array(np.full((2, 3), 5.0, np.float32), "V"),
        ]
        + ([numpy_helper.from_array(np.array(3, np.int64), "trip")] if loop_in_then else []),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def run(path: Path, cond: bool = True) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(["Y"], {"X": X, "cond": np.array(cond)})[0]


def key_of(tab: DocumentTab, name: str) -> int:
    return next(k for k, n in tab.session.doc.scope(tab.scope_id).nodes() if n.name == name)


def open_branch(window: MainWindow, root: DocumentTab) -> DocumentTab:
    root.view.subgraphRequested.emit(key_of(root, "choose"), "then_branch", -1)
    child = window.tab()
    assert child is not None and child is not root
    return child


def outer_node(tab: DocumentTab, name: str) -> int:
    tab.view.flush()
    return next(
        n.key
        for n in tab.view.canvas.graph.nodes
        if n.kind == NodeKind.OUTER and n.outputs[0].tensor == name
    )


def test_subgraph_tab_edit_confirm_save_undo(
    window: MainWindow, save_model: SaveModel, qtbot: QtBot, tmp_path: Path
) -> None:
    path = save_model(if_model(), "if.onnx")
    original = path.read_bytes()
    root = open_model(window, path, qtbot)
    child = open_branch(window, root)
    assert window.tabs.tabText(window.tabs.indexOf(child)) == "if.onnx ▸ choose ▸ then_branch"
    assert window.open_scope(root.session, child.scope_id) is child  # focused, not reopened
    assert window.tabs.count() == 2
    assert window.open_scope(root.session, MAIN_SCOPE) is root
    assert window.open_scope(root.session, child.scope_id) is child

    # the outer value X is drawn as its own node; dragging it onto then_add's 2nd input
    assert child.view.link_terminals((outer_node(child, "X"), 0), (key_of(child, "then_add"), 1))
    assert child.session.doc.scope(child.scope_id).node(key_of(child, "then_add")).input[1] == "X"
    assert window.tabs.tabText(window.tabs.indexOf(child)).endswith("then_branch*")
    assert root.session.doc.model.SerializeToString() == onnx.load(str(path)).SerializeToString()

    # the parent is read-only while the child has unconfirmed edits
    rejected: list[str] = []
    root.session.editRejected.connect(rejected.append)
    assert not root.session.push(SetNodeInput(MAIN_SCOPE, key_of(root, "scale"), 1, "W"))
    assert "read-only" in rejected[0] and "then_branch" in rejected[0]
    window.tabs.setCurrentWidget(root)
    assert not root.lock_banner.isHidden() and "then_branch" in root.lock_banner.text()
    assert window.undo_group.activeStack() is None
    assert not window.actions_by_name["undo"].isEnabled()
    assert not window.actions_by_name["confirm_scope"].isEnabled()

    window.tabs.setCurrentWidget(child)
    confirm = window.actions_by_name["confirm_scope"]
    assert confirm.isEnabled() and confirm.text() == "Confirm Subgraph Edits"
    assert not window.actions_by_name["save"].isEnabled()
    confirm.trigger()
    assert not child.session.has_unconfirmed and not confirm.isEnabled()
    assert root.session.modified and root.lock_banner.isHidden()
    assert root.session.undo_stack.count() == 1
    assert root.session.undo_stack.text(0) == "Confirm edits of choose ▸ then_branch"

    window.tabs.setCurrentWidget(root)
    assert window.undo_group.activeStack() is root.session.undo_stack
    assert window.save(root)
    saved = onnx.load(str(path))
    onnx.checker.check_model(saved, full_check=True)
    np.testing.assert_allclose(run(path), X + X)  # was X + 2
    np.testing.assert_allclose(run(path, False), X - 2.0)

    root.session.undo_stack.undo()
    assert root.session.doc.model.SerializeToString() == original
    window.tabs.setCurrentWidget(child)
    qtbot.waitUntil(
        lambda: (
            child.session.doc.scope(child.scope_id).node(key_of(child, "then_add")).input[1] == "W"
        )
    )
    assert not child.session.stale and not child.session.has_unconfirmed


def test_nested_loop_in_if_confirms_twice(
    window: MainWindow, save_model: SaveModel, qtbot: QtBot
) -> None:
    path = save_model(if_model(loop_in_then=True), "nested.onnx")
    np.testing.assert_allclose(run(path), X + 6.0)
    root = open_model(window, path, qtbot)
    branch = open_branch(window, root)
    branch.view.subgraphRequested.emit(key_of(branch, "loop"), "body", -1)
    body = window.tab()
    assert body is not None and body.scope_id == branch.scope_id.child(
        key_of(branch, "loop"), "body"
    )
    assert window.tabs.tabText(window.tabs.indexOf(body)) == (
        "nested.onnx ▸ choose ▸ then_branch ▸ loop ▸ body"
    )
    assert body.session.push(SetNodeInput(body.scope_id, key_of(body, "body_add"), 1, "v_in"))
    assert root.session.locked and branch.session.locked
    assert root.session.blocking_session() is body.session
    assert window.scope_tabs.confirm(body)
    assert branch.session.has_unconfirmed and root.session.locked
    assert root.session.blocking_session() is branch.session
    assert not root.session.modified
    window.tabs.setCurrentWidget(branch)
    window.actions_by_name["confirm_scope"].trigger()
    assert not root.session.locked and root.session.undo_stack.count() == 1
    assert window.save(root)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    np.testing.assert_allclose(run(path), X * 8.0)  # v doubled three times

    # a deep scope opened from the model's tab goes through the enclosing tabs
    window.close_tab(window.tabs.indexOf(branch))
    assert window.tabs.count() == 1
    deep = window.open_scope(root.session, body.scope_id)
    assert deep is not None and window.tabs.count() == 3
    assert isinstance(deep.session, ScopeSession)
    assert deep.session.parent_session.parent_session is root.session


def test_closing_an_unconfirmed_tab_asks(
    window: MainWindow, save_model: SaveModel, qtbot: QtBot
) -> None:
    path = save_model(if_model(), "close.onnx")
    root = open_model(window, path, qtbot)
    before = root.session.doc.model.SerializeToString()

    def edit_child() -> DocumentTab:
        child = open_branch(window, root)
        child.session.push(SetNodeInput(child.scope_id, key_of(child, "then_add"), 1, "V"))
        return child

    child = edit_child()
    window.ask_confirm_changes = lambda tab: "cancel"  # type: ignore[method-assign]
    assert not window.close_tab(window.tabs.indexOf(child))
    assert window.tabs.indexOf(child) >= 0 and child.session.has_unconfirmed
    assert not window.close_tab(window.tabs.indexOf(root))  # closing the parent asks too
    assert window.tabs.count() == 2

    window.ask_confirm_changes = lambda tab: "discard"  # type: ignore[method-assign]
    assert window.close_tab(window.tabs.indexOf(child))
    assert window.tabs.count() == 1 and not root.session.locked
    assert root.session.doc.model.SerializeToString() == before

    child = edit_child()
    window.ask_confirm_changes = lambda tab: "confirm"  # type: ignore[method-assign]
    assert window.close_tab(window.tabs.indexOf(child))
    assert window.tabs.count() == 1 and root.session.undo_stack.count() == 1
    then = root.session.doc.scope(MAIN_SCOPE.child(key_of(root, "choose"), "then_branch"))
    assert then.proto.node[0].input[1] == "V"


def test_function_tab_confirm_updates_every_call_site(
    window: MainWindow, save_model: SaveModel, qtbot: QtBot
) -> None:
    path = save_model(function_model(), "fn.onnx")
    root = open_model(window, path, qtbot)
    call = root.view.canvas.node_items[key_of(root, "call1")]
    assert call.view.function == (FN_DOMAIN, "ScaledAdd", "")
    save_screenshot(root.view, "function_call_nodes.png")
    point = root.view.mapFromScene(call.sceneBoundingRect().center())
    qtbot.mouseDClick(root.view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    tab = window.tab()
    assert tab is not None and tab.scope_id == ScopeId((FN_DOMAIN, "ScaledAdd", ""))
    assert window.tabs.tabText(window.tabs.indexOf(tab)) == "fn.onnx ▸ ƒ ScaledAdd"
    palette = next(d for d in window.docks if d.objectName() == "dock_palette").widget()
    assert "(ai.onnx 17)" in palette.status.text()  # the function's imports, not the model's
    window.tabs.setCurrentWidget(root)
    assert "(ai.onnx 17, local.fn 1)" in palette.status.text()
    window.tabs.setCurrentWidget(tab)
    # (a + b) * alpha  →  (a + a) * alpha
    assert tab.session.push(SetNodeInput(tab.scope_id, key_of(tab, "fn_add"), 1, "a"))
    confirm = window.actions_by_name["confirm_scope"]
    assert confirm.text() == "Confirm Local Function Edits" and confirm.isEnabled()
    window.activateWindow()
    tab.view.setFocus()
    QTest.keyClick(
        tab.view,
        Qt.Key.Key_Return,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: root.session.undo_stack.count() == 1)  # Ctrl+Shift+Enter
    assert not confirm.isEnabled()
    assert window.save(root)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    result = session.run(["Y"], {"X": X})[0]
    np.testing.assert_allclose(result, (X + X) * 2.0 * 2.0 * 3.0)  # call1 α=2, call2 α=3


def test_parent_node_deleted_closes_the_tab(
    window: MainWindow, save_model: SaveModel, qtbot: QtBot
) -> None:
    root = open_model(window, save_model(if_model(), "gone.onnx"), qtbot)
    open_branch(window, root)
    window.tabs.setCurrentWidget(root)
    assert root.session.push(RemoveNodes(MAIN_SCOPE, [key_of(root, "choose")]))
    qtbot.waitUntil(lambda: window.tabs.count() == 1)
    assert "no longer exists" in window.statusBar().currentMessage()


def test_outer_values_drawn_pinned_and_linked(
    window: MainWindow, save_model: SaveModel, qtbot: QtBot
) -> None:
    root = open_model(window, save_model(if_model(), "outer.onnx"), qtbot)
    child = open_branch(window, root)
    qtbot.waitUntil(lambda: child.session.check_result is not None, timeout=30_000)
    w_key = outer_node(child, "W")
    assert child.view.canvas.graph.node(w_key).name == "outer ▸ W"
    tip = child.view._outer_tooltip("W")
    assert "initializer of graph main" in tip and "float" in tip
    assert "input of graph main" in child.view._outer_tooltip("X")
    assert child.session.check_result is not None and not child.session.check_result.errors

    from designer.ui.dialogs.outer_value import OuterValueDialog

    dialog = OuterValueDialog(child.view, window)
    assert set(dialog.names()) >= {"X", "W", "V", "cond", "Z"}
    dialog.set_filter("v")
    assert dialog.names() == ["V"] and dialog.chosen() == "V"
    dialog.deleteLater()

    window.scope_tabs.ask_outer_value = lambda view: "V"  # type: ignore[method-assign]
    menu = window.canvas_menu(child, child.view.mapToScene(20, 20))
    action = next(a for a in menu.actions() if a.text() == "Use Outer-Scope Value…")
    action.trigger()
    menu.deleteLater()
    v_key = outer_node(child, "V")
    assert child.view.link_terminals((v_key, 0), (key_of(child, "then_add"), 1))
    assert child.session.undo_stack.count() == 1
    assert child.session.doc.scope(child.scope_id).node(key_of(child, "then_add")).input[1] == "V"
    child.view.flush()
    assert not child.view.canvas.graph.has_node(w_key)  # W is read by nothing now

    window.tabs.setCurrentWidget(root)
    save_screenshot(window, "subgraph_parent_read_only.png")
    window.tabs.setCurrentWidget(child)
    child.view.fit_to_view()
    save_screenshot(window, "subgraph_tab.png")


def test_working_copy_changes_only_its_scope(
    window: MainWindow, save_model: SaveModel, qtbot: QtBot
) -> None:
    root = open_model(window, save_model(if_model(), "only.onnx"), qtbot)
    child = open_branch(window, root)
    rejected: list[str] = []
    child.session.editRejected.connect(rejected.append)
    assert not child.session.push(SetModelProperty("producer_name", "x"))
    assert not child.session.push(SetNodeInput(MAIN_SCOPE, key_of(root, "scale"), 1, "W"))
    assert len(rejected) == 2 and "outside choose ▸ then_branch" in rejected[0]
    assert not child.session.has_unconfirmed and not root.session.locked
    assert not window.save(child)  # a working copy is saved with its model
    assert "confirm" in window.statusBar().currentMessage()
    # a clean working copy follows its parent
    window.tabs.setCurrentWidget(root)
    assert root.session.push(SetNodeInput(MAIN_SCOPE, key_of(root, "scale"), 1, "W"))
    window.tabs.setCurrentWidget(child)
    qtbot.waitUntil(
        lambda: child.session.doc.scope(MAIN_SCOPE).node(key_of(root, "scale")).input[1] == "W"
    )


def test_parameters_show_the_scope_of_a_tab_with_nothing_selected(
    window: MainWindow, save_model: SaveModel, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from designer.ui.dialogs.function_settings import FunctionSettingsDialog
    from designer.ui.params.model_panel import ModelPanel
    from designer.ui.params.scope_panel import ScopePanel

    dock = next(d for d in window.docks if d.objectName() == "dock_parameters")
    root = open_model(window, save_model(if_model(), "panel.onnx"), qtbot)
    qtbot.waitUntil(lambda: isinstance(dock.panel, ModelPanel))
    child = open_branch(window, root)
    qtbot.waitUntil(lambda: child.session.check_result is not None, timeout=30_000)
    dock.rebuild()
    panel = dock.panel
    assert isinstance(panel, ScopePanel)
    text = " ".join(label.text() for label in panel.findChildren(QLabel))
    assert "<b>Subgraph</b>" in text and "then_branch" in text
    assert "<b>t_out</b>: <i>float32[2, 3]</i>" in text
    assert "writes them into panel.onnx as one undo step" in text
    assert "<b>W</b>: initializer of graph main" in text
    assert "<b>X</b>: input of graph main" in text
    save_screenshot(window, "parameters_subgraph_scope.png")

    fn_root = open_model(window, save_model(function_model(), "fnpanel.onnx"), qtbot)
    tab = window.open_scope(fn_root.session, ScopeId((FN_DOMAIN, "ScaledAdd", "")))
    assert tab is not None
    dock.rebuild()
    panel = dock.panel
    assert isinstance(panel, ScopePanel)
    text = " ".join(label.text() for label in panel.findChildren(QLabel))
    assert "<b>Local function</b>" in text and "ScaledAdd" in text
    sites = next(
        panel.findChildren(QFormLayout)[0].labelForField(w)
        for w in panel.findChildren(QLabel)
        if w.text() == "2"
    )
    assert sites is not None and sites.text() == "Call sites"
    assert "<b>alpha</b>: default" in text
    opened: list[FunctionSettingsDialog] = []
    monkeypatch.setattr(FunctionSettingsDialog, "exec", lambda self: opened.append(self) or 0)
    settings = next(b for b in panel.findChildren(QPushButton) if b.text() == "Settings…")
    settings.click()
    assert opened and opened[0].fid == (FN_DOMAIN, "ScaledAdd", "")


def test_type_checking_lists_the_tab_scope_unless_asked(
    window: MainWindow, save_model: SaveModel, qtbot: QtBot
) -> None:
    model = if_model()
    model.graph.node.append(helper.make_node("Relu", ["missing"], ["r"], name="broken"))
    root = open_model(window, save_model(model, "broken.onnx"), qtbot)
    panel = next(d for d in window.docks if d.objectName() == "dock_type_check").widget()
    assert root.session.check_result is not None and root.session.check_result.errors
    assert panel.scope_only.isHidden() and panel.proxy.rowCount() >= 1
    total = panel.proxy.rowCount()
    child = open_branch(window, root)
    qtbot.waitUntil(lambda: child.session.check_result is not None, timeout=30_000)
    panel.show_result(child.session.check_result)
    assert not panel.scope_only.isHidden() and panel.scope_only.isChecked()
    assert panel.proxy.rowCount() == 0
    assert panel.status.text() == f"No problems in this scope ({total} elsewhere in the model)"
    panel.scope_only.setChecked(False)
    assert panel.proxy.rowCount() == total
    window.tabs.setCurrentWidget(root)
    assert panel.scope_only.isHidden() and panel.proxy.rowCount() == total
