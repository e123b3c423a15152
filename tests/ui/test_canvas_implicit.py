"""A graph input (or any value) used only inside a subgraph is drawn as used: a dashed link
to the node whose subgraph reads it, never a green, unconnected output (issue 15)."""

from __future__ import annotations

from pathlib import Path

import onnx
from helpers.gui import open_model
from onnx import TensorProto, helper
from pytestqt.qtbot import QtBot

from designer.core.viewgraph import IMPLICIT, NodeKind, TerminalState
from designer.ui.canvas import controller
from designer.ui.main_window import MainWindow


def only_inside_if() -> onnx.ModelProto:
    """Graph input ``A`` is read only inside both branches of an If."""
    vi = helper.make_tensor_value_info

    def branch(op: str, out: str) -> onnx.GraphProto:
        node = helper.make_node(op, ["A", "X"], [out], name=f"{out}_node")
        return helper.make_graph([node], out, [], [vi(out, TensorProto.FLOAT, [2])])

    node = helper.make_node(
        "If",
        ["cond"],
        ["Y"],
        name="branch",
        then_branch=branch("Add", "t"),
        else_branch=branch("Sub", "e"),
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            vi("A", TensorProto.FLOAT, [2]),
            vi("X", TensorProto.FLOAT, [2]),
            vi("cond", TensorProto.BOOL, []),
        ],
        [vi("Y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_input_read_only_inside_an_if_is_linked(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "if.onnx"
    onnx.checker.check_model(only_inside_if(), full_check=True)
    onnx.save(only_inside_if(), path)
    tab = open_model(window, path, qtbot)
    canvas = tab.view.canvas
    graph = canvas.graph
    a = next(n for n in graph.nodes if n.kind == NodeKind.INPUT and n.name == "A")
    if_node = next(n for n in graph.nodes if n.op_type == "If")
    assert "A" not in tab.session.doc.scope(graph.scope).node(if_node.key).input
    assert a.outputs[0].state == TerminalState.LINKED  # not green: it is used
    implicit = [e for e in graph.edges if e.implicit and e.source == a.key]
    assert {e.target for e in implicit} >= {if_node.key}
    assert all(e.target_index == IMPLICIT for e in implicit)
    canvas.complete()
    edge = next(e for e in implicit if e.target == if_node.key)
    item = canvas.edge_items[edge]  # drawn, into the If's top right corner
    end = item.path().pointAtPercent(1.0)
    box = canvas.node_items[if_node.key]
    assert abs(end.x() - (box.x() + box.width - 14.0)) < 1 and abs(end.y() - box.y()) < 1
    view = tab.view
    view.centerOn(item.path().pointAtPercent(0.5))
    centre = view.mapFromScene(item.path().pointAtPercent(0.5))
    assert "read inside" in view._tooltip_at(centre)
    # deleting the link changes nothing: the read is inside the subgraph
    assert controller.delete_edit(tab.session.doc, graph, [], [edge]) is None
