"""Delete in a collapsed view: a selected link into or out of a module box stands for the
links of its tensor between the nodes on either side (it was looked up in the graph with
nothing collapsed, where boxes do not exist: a KeyError, and nothing was deleted), and
Select All + Delete removes the whole model as one undo step."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from designer.ui.canvas.collapse_view import collapse_to_depth, full_graph, member_keys
from designer.ui.canvas.items import EdgeItem
from designer.ui.main_window import MainWindow
from tests.helpers.gui import open_model
from tests.helpers.shared import model

LLAMA = "llama_24l_h64.dynamo.onnx"


def test_a_link_into_a_box_deletes_the_links_it_stands_for(
    window: MainWindow, qtbot: QtBot
) -> None:
    tab = open_model(window, model(LLAMA), qtbot)
    view, doc = tab.view, tab.session.doc
    collapse_to_depth(view, 2)
    scene = view.canvas
    scene.build_all()
    edge = next(e for e in scene.graph.edges if e.target < 0 and e.source >= 0)
    full = full_graph(scene)
    inside = set(member_keys(scene, [edge.target]))
    real = [
        link
        for link in full.edges
        if link.tensor == edge.tensor and link.source == edge.source and link.target in inside
    ]
    others = [link for link in full.edges if link.tensor == edge.tensor and link not in real]
    assert real
    before = doc.model.SerializeToString()
    scene.clearSelection()
    item = scene.edge_items[edge]
    assert isinstance(item, EdgeItem)
    item.setSelected(True)
    view.delete_selection()
    scope = doc.scope()
    for link in real:  # every input the box's link stood for is disconnected
        inputs = scope.node(link.target).input
        assert len(inputs) <= link.target_index or inputs[link.target_index] == ""
    for link in others:  # and no other reader of that tensor
        if link.target >= 0 and not link.implicit:
            assert scope.node(link.target).input[link.target_index] == edge.tensor
    assert window.errors == []  # type: ignore[attr-defined]  # the fixture's
    tab.session.undo_stack.undo()
    assert doc.model.SerializeToString() == before


def test_select_all_and_delete_in_a_collapsed_view(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_model(window, model(LLAMA), qtbot)
    view, doc = tab.view, tab.session.doc
    collapse_to_depth(view, 2)
    before = doc.model.SerializeToString()
    view.canvas.build_all()
    for item in view.canvas.items():
        item.setSelected(bool(item.flags() & item.GraphicsItemFlag.ItemIsSelectable))
    view.delete_selection()
    assert len(doc.model.graph.node) == 0
    assert tab.session.undo_stack.count() == 1
    tab.session.undo_stack.undo()
    assert doc.model.SerializeToString() == before
