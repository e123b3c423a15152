"""The canvas's view graph: nodes, terminals and their states, links, constants."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper, numpy_helper

from designer.core.document import Document
from designer.core.scope import MAIN_SCOPE
from designer.core.viewgraph import NodeKind, TerminalState, build_view_graph

S = TerminalState


def _doc(nodes, inputs=("x",), outputs=("y",), inits=()) -> Document:  # type: ignore[no-untyped-def]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in outputs],
        list(inits),
    )
    return Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_io_nodes_terminals_and_edges() -> None:
    w = numpy_helper.from_array(__import__("numpy").ones((2, 2), "float32"), "w")
    doc = _doc(
        [
            helper.make_node("Gemm", ["x", "w"], ["h"], name="fc"),
            helper.make_node("Relu", ["h"], ["y"]),
        ],
        inits=[w],
    )
    graph = build_view_graph(doc, MAIN_SCOPE)
    kinds = [n.kind for n in graph.nodes]
    assert kinds == [NodeKind.INPUT, NodeKind.OP, NodeKind.OP, NodeKind.OUTPUT]
    fc = graph.nodes[1]
    assert [t.label for t in fc.inputs] == ["A", "B", "C"]
    assert [t.state for t in fc.inputs] == [S.LINKED, S.INITIALIZER, S.UNCONNECTED]
    assert fc.inputs[2].optional and not fc.inputs[0].optional
    assert graph.nodes[2].name == "Relu_1"  # generated display name
    assert len(graph.edges) == 3
    assert graph.node(graph.nodes[3].key).inputs[0].state == S.LINKED
    assert doc.io_key(MAIN_SCOPE, "input", "x") == graph.nodes[0].key


def test_variadic_growth_terminal() -> None:
    doc = _doc([helper.make_node("Concat", ["x", "x"], ["y"], axis=0)])
    concat = build_view_graph(doc, MAIN_SCOPE).nodes[1]
    assert [t.state for t in concat.inputs] == [S.LINKED, S.LINKED, S.GROWTH]
    assert concat.inputs[2].index == 2 and concat.inputs[2].tensor == ""


def test_constants_hidden_by_default() -> None:
    doc = _doc(
        [
            helper.make_node("Constant", [], ["k"], name="c", value_float=1.0),
            helper.make_node("Add", ["x", "k"], ["y"], name="add"),
        ]
    )
    hidden = build_view_graph(doc, MAIN_SCOPE)
    assert "c" not in {n.name for n in hidden.nodes}
    assert hidden.node(doc.scope().keys[1]).inputs[1].state == S.INITIALIZER
    shown = build_view_graph(doc, MAIN_SCOPE, show_constants=True)
    assert "c" in {n.name for n in shown.nodes}
    assert shown.node(doc.scope().keys[1]).inputs[1].state == S.LINKED


def test_dangling_input_and_unknown_op() -> None:
    doc = _doc([helper.make_node("Mystery", ["x", "nothing"], ["y"], domain="x.y")])
    node = build_view_graph(doc, MAIN_SCOPE).nodes[1]
    assert [t.label for t in node.inputs] == ["x", "nothing"]  # no schema: tensor names
    assert [t.state for t in node.inputs] == [S.LINKED, S.UNCONNECTED]


def test_ir3_initializer_inputs_are_not_nodes() -> None:
    w = numpy_helper.from_array(__import__("numpy").ones(2, "float32"), "w")
    doc = _doc([helper.make_node("Add", ["x", "w"], ["y"])], inputs=("x", "w"), inits=[w])
    graph = build_view_graph(doc, MAIN_SCOPE)
    assert [n.name for n in graph.nodes if n.kind == NodeKind.INPUT] == ["x"]
    assert isinstance(doc.model, onnx.ModelProto)
