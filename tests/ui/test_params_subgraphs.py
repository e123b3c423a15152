"""The Parameters window and subgraphs / local functions: "Create…" for an unset graph
attribute (G-2) and attribute references (``ref_attr_name``) inside function bodies (G-5),
with real widgets, onnx's full check and onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from helpers.gui import open_model
from helpers.shots import save_screenshot
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot

from designer.core.scope import ScopeId
from designer.ui.canvas.view import CanvasView
from designer.ui.dialogs.create_subgraph import CreateSubgraphDialog
from designer.ui.docks.parameters import ParametersDock
from designer.ui.main_window import DocumentTab, MainWindow
from designer.ui.params.node_panel import NodePanel

A = onnx.AttributeProto
FN = ("local.fn", "ScaledSoftmax", "")


def loop_without_body() -> onnx.ModelProto:
    """``Z = Loop(trip, cond, X)`` whose ``body`` is not set yet."""
    trip = helper.make_tensor("trip", TensorProto.INT64, [], [3])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trip", "cond", "X"], ["Z"], name="loop")],
        "needs_body",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [2, 3])],
        [trip],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def softmax_function_model() -> onnx.ModelProto:
    """``Y = local.fn:ScaledSoftmax<ax=0>(X)`` = Softmax(X * alpha, axis=-1) with a defaulted
    FLOAT attribute ``alpha`` (referenced by a Constant) and a required attribute ``ax``."""
    const = helper.make_node("Constant", [], ["k"], name="fn_alpha")
    const.attribute.append(A(name="value_float", ref_attr_name="alpha", type=A.FLOAT))
    body = [
        const,
        helper.make_node("Mul", ["x", "k"], ["m"], name="fn_mul"),
        helper.make_node("Softmax", ["m"], ["y"], name="fn_softmax", axis=-1),
    ]
    fn = helper.make_function(
        FN[0],
        FN[1],
        ["x"],
        ["y"],
        body,
        [helper.make_opsetid("", 17)],
        attributes=["ax"],
        attribute_protos=[helper.make_attribute("alpha", 2.0)],
    )
    call = helper.make_node("ScaledSoftmax", ["X"], ["Y"], name="call", domain=FN[0], ax=0)
    graph = helper.make_graph(
        [call],
        "calls",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(FN[0], 1)],
        functions=[fn],
    )
    model.ir_version = 8
    return model


def select(window: MainWindow, tab: DocumentTab, qtbot: QtBot, name: str) -> NodePanel:
    scope = tab.session.doc.scope(tab.view.scope_id)
    keys = [k for k, n in scope.nodes() if n.name == name]
    tab.view.select_keys(keys)
    window.selectionChanged.emit(keys)
    dock = next(d for d in window.docks if isinstance(d, ParametersDock))
    qtbot.waitUntil(lambda: isinstance(dock.panel, NodePanel) and dock.panel.keys == keys)
    assert isinstance(dock.panel, NodePanel)
    return dock.panel


def test_create_loop_body_from_the_parameters_link(
    window: MainWindow, save_model, qtbot: QtBot
) -> None:
    tab = open_model(window, save_model(loop_without_body(), "loop.onnx"), qtbot)
    before = tab.session.doc.model.SerializeToString()
    panel = select(window, tab, qtbot, "loop")
    row = panel.rows["body"]
    assert row.create_link is not None and row.create_link.isVisible()
    row.create_link.linkActivated.emit("create")
    dialog = panel.create_dialog
    assert isinstance(dialog, CreateSubgraphDialog) and dialog.isVisible()
    assert dialog.name.text() == "loop_body"
    assert "iteration_num" in dialog.contents.text()  # the template is described up front
    save_screenshot(dialog, "create_subgraph_dialog.png")
    dialog.open_after.setChecked(False)
    dialog.buttons.accepted.emit()

    loop = tab.session.doc.model.graph.node[0]
    body = next(a for a in loop.attribute if a.name == "body").g
    assert body.name == "loop_body"
    types = [(v.name, v.type.tensor_type.elem_type) for v in body.input]
    assert types == [
        ("iteration_num", TensorProto.INT64),
        ("cond_in", TensorProto.BOOL),
        ("X_in", TensorProto.FLOAT),
    ]
    assert [v.name for v in body.output] == ["cond_out", "Z_out"]
    assert [d.dim_value for d in body.input[2].type.tensor_type.shape.dim] == [2, 3]
    assert tab.session.undo_stack.count() == 1  # one undo step
    # The Parameters window now links to the new body instead of offering to create it.
    dock = next(d for d in window.docks if isinstance(d, ParametersDock))
    qtbot.waitUntil(
        lambda: isinstance(dock.panel, NodePanel) and dock.panel.rows["body"].create_link is None
    )

    tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before
    tab.session.undo_stack.redo()
    assert tab.session.doc.model.graph.node[0].attribute[0].g.name == "loop_body"


def test_no_create_link_for_set_graphs_or_several_nodes(
    window: MainWindow, save_model, qtbot: QtBot
) -> None:
    from helpers.models import subgraph_model

    tab = open_model(window, save_model(subgraph_model(), "sub.onnx"), qtbot)
    panel = select(window, tab, qtbot, "branch")
    assert panel.rows["then_branch"].create_link is None  # already set: a link opens it
    assert panel.rows["then_branch"].reference_button is None  # not in a function body
    assert panel.function_attributes is None


def function_panel(
    tab: DocumentTab, qtbot: QtBot, name: str
) -> tuple[NodePanel, CanvasView, list[str]]:
    """A Parameters panel over the function body's canvas, for the node ``name``."""
    view = CanvasView(tab.session, ScopeId(FN))
    qtbot.addWidget(view)
    scope = tab.session.doc.scope(view.scope_id)
    keys = [k for k, n in scope.nodes() if n.name == name]
    messages: list[str] = []
    panel = NodePanel(view, keys, messages.append)
    qtbot.addWidget(panel)
    return panel, view, messages


def run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x})[0]


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_reference_a_function_attribute_in_the_body(
    window: MainWindow, save_model, qtbot: QtBot
) -> None:
    tab = open_model(window, save_model(softmax_function_model(), "fn.onnx"), qtbot)
    doc = tab.session.doc
    before = doc.model.SerializeToString()
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    np.testing.assert_allclose(run(doc.model, x), softmax(x * 2, -1), rtol=1e-5)

    # An existing reference shows as "→ @alpha" instead of a value editor.
    panel, _view, _messages = function_panel(tab, qtbot, "fn_alpha")
    row = panel.rows["value_float"]
    assert row.reference_label is not None and row.reference_label.text() == "→ @alpha"
    assert row.line is None

    panel, _view, _messages = function_panel(tab, qtbot, "fn_softmax")
    assert panel.function_attributes == {"ax": A.UNDEFINED, "alpha": A.FLOAT}
    row = panel.rows["axis"]
    assert row.reference_label is None and row.line is not None
    button = row.reference_button
    assert button is not None and button.isVisibleTo(panel)
    menu = button.menu()
    actions = {a.text(): a for a in menu.actions() if a.text()}
    assert actions["Value (no reference)"].isChecked()
    assert not actions["@alpha"].isEnabled()  # FLOAT cannot feed an INT attribute
    assert "FLOAT" in actions["@alpha"].toolTip()
    assert actions["@ax"].isEnabled()
    actions["@ax"].trigger()

    fn = doc.function(*FN)
    axis = next(a for a in fn.node[2].attribute if a.name == "axis")
    assert (axis.ref_attr_name, axis.type) == ("ax", A.INT)
    assert tab.session.undo_stack.count() == 1
    onnx.checker.check_model(doc.model, full_check=True)
    # The call site says ax=0: the body now normalises over axis 0.
    np.testing.assert_allclose(run(doc.model, x), softmax(x * 2, 0), rtol=1e-5)

    panel, _view, _messages = function_panel(tab, qtbot, "fn_softmax")
    row = panel.rows["axis"]
    assert row.reference_label is not None and row.reference_label.text() == "→ @ax"
    assert row.parent() is panel.set_section.body
    panel.resize(380, 260)
    save_screenshot(panel, "parameters_function_reference.png")
    actions = {a.text(): a for a in row.reference_button.menu().actions() if a.text()}  # type: ignore[union-attr]
    assert actions["@ax"].isChecked() and not actions["Value (no reference)"].isChecked()
    actions["Value (no reference)"].trigger()  # back to a plain value: unset → default -1
    fn = doc.function(*FN)
    assert not any(a.name == "axis" for a in fn.node[2].attribute)
    np.testing.assert_allclose(run(doc.model, x), softmax(x * 2, -1), rtol=1e-5)

    tab.session.undo_stack.undo()
    tab.session.undo_stack.undo()
    assert doc.model.SerializeToString() == before


def test_reference_in_a_function_tab_and_confirm(
    window: MainWindow, save_model, qtbot: QtBot
) -> None:
    """The whole way: open the function in its tab, refer to ``ax`` from the Parameters
    window there, confirm into the model."""
    main = open_model(window, save_model(softmax_function_model(), "fn.onnx"), qtbot)
    fn_tab = window.open_scope(main.session, ScopeId(FN))
    assert fn_tab is not None and window.tab() is fn_tab
    assert fn_tab.view.wait_for_layout(30_000)
    panel = select(window, fn_tab, qtbot, "fn_softmax")
    actions = {a.text(): a for a in panel.rows["axis"].reference_button.menu().actions()}  # type: ignore[union-attr]
    actions["@ax"].trigger()
    working = fn_tab.session.doc.function(*FN)
    assert next(a for a in working.node[2].attribute if a.name == "axis").ref_attr_name == "ax"
    window.actions_by_name["confirm_scope"].trigger()
    fn = main.session.doc.function(*FN)
    assert next(a for a in fn.node[2].attribute if a.name == "axis").ref_attr_name == "ax"
    onnx.checker.check_model(main.session.doc.model, full_check=True)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    np.testing.assert_allclose(run(main.session.doc.model, x), softmax(x * 2, 0), rtol=1e-5)
