"""Tensors read all over a real transformer export (masks, position ids, rotary tables, shapes
used by every layer) are drawn as labelled stubs at their readers, not as links running the
length of the graph (issue 15); a click on a stub goes to the producer."""

from __future__ import annotations

from helpers.gui import open_model
from helpers.shared import model
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from designer.core.io import open_document
from designer.core.scope import ScopeId
from designer.core.viewgraph import NodeKind, ViewEdge, ViewGraph, ViewNode, build_view_graph
from designer.ui.canvas.placement import LAYER_GAP, STUB_FANOUT, STUB_SPAN, _stubbed_outputs
from designer.ui.main_window import MainWindow


def test_llama_export_has_no_links_across_the_graph(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_model(window, model("llama_24l_h64.torchscript.onnx"), qtbot)
    canvas = tab.view.canvas
    canvas.complete()
    assert canvas.stubbed and canvas.long_links  # both kinds occur in this export
    readers: dict[tuple[int, int], set[int]] = {}
    for edge in canvas.graph.edges:
        readers.setdefault((edge.source, edge.source_index), set()).add(edge.target)
    limit = STUB_SPAN * (44.0 + LAYER_GAP)
    for edge in canvas.edge_items:  # every link that is drawn
        source, target = canvas.node_items[edge.source], canvas.node_items[edge.target]
        assert len(readers[(edge.source, edge.source_index)]) <= STUB_FANOUT
        assert target.y() - (source.y() + source.height) <= limit
    for edge in canvas.graph.edges:  # and every one that is not has a stub at its reader
        if canvas.is_stub(edge):
            item = canvas.node_items[edge.target]
            assert (edge.target_index, edge.tensor, True) in [
                (slot, name, stub) for slot, name, _label, stub in item.tags
            ]
    width = canvas.content_rect().width()
    assert width < 60 * 110  # far narrower than with every long link routed


def test_click_on_a_stub_goes_to_the_producer(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_model(window, model("llama_24l_h64.torchscript.onnx"), qtbot)
    view, canvas = tab.view, tab.view.canvas
    edge = next(e for e in canvas.graph.edges if canvas.is_stub(e))
    reader = canvas.node_items[edge.target]
    view.resetTransform()
    view.scale(1.0, 1.0)
    view.centerOn(reader)
    slot_rect = reader._tag_rect(edge.target_index)
    point = view.mapFromScene(reader.mapToScene(slot_rect.center()))
    assert "tensor " + edge.tensor in view._tooltip_at(point)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    producer = canvas.node_items[edge.source]
    assert producer.isSelected()
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.contains(producer.sceneBoundingRect().center())
    assert not shown.contains(reader.sceneBoundingRect())  # it really moved there


def _plain_stubbed(graph: ViewGraph) -> dict[tuple[int, int], str]:
    """Outputs of operators and groups read by more than STUB_FANOUT distinct nodes."""
    readers: dict[tuple[int, int], set[int]] = {}
    tensors: dict[tuple[int, int], str] = {}
    for edge in graph.edges:
        readers.setdefault((edge.source, edge.source_index), set()).add(edge.target)
        tensors[(edge.source, edge.source_index)] = edge.tensor
    boxes = (NodeKind.OP, NodeKind.GROUP)
    return {
        k: tensors[k]
        for k, r in readers.items()
        if len(r) > STUB_FANOUT and graph.has_node(k[0]) and graph.node(k[0]).kind in boxes
    }


def test_stubbed_outputs_are_the_widely_read_operator_outputs() -> None:
    for name in ("llama_24l_h64.torchscript.onnx", "llama_24l_h64.dynamo.onnx"):
        doc = open_document(model(name))
        graph = build_view_graph(doc, doc.scope().id)
        found = _stubbed_outputs(graph)
        assert found == _plain_stubbed(graph)
        assert found or "dynamo" in name  # (the TorchScript export has them)
    # a graph input read everywhere is proxied, not stubbed; links to the same reader
    # count once; an output read by exactly STUB_FANOUT nodes stays a link
    source = ViewNode(1, NodeKind.INPUT, "x", "Input")
    op = ViewNode(2, NodeKind.OP, "op", "Relu")
    edges = [ViewEdge(1, 0, 10 + i, 0, "x") for i in range(20)]
    edges += [ViewEdge(2, 0, 10 + i, 1, "y") for i in range(STUB_FANOUT)]
    edges += [ViewEdge(2, 1, 10 + i % 3, 1, "z") for i in range(30)]
    edges += [ViewEdge(2, 2, 10 + i, 2, "w") for i in range(STUB_FANOUT + 1)]
    readers = [ViewNode(10 + i, NodeKind.OP, f"r{i}", "Add") for i in range(20)]
    graph = ViewGraph(ScopeId(), [source, op, *readers], edges)
    assert _stubbed_outputs(graph) == _plain_stubbed(graph) == {(2, 2): "w"}
