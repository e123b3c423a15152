"""Placing nodes that have no saved position."""

from __future__ import annotations

from onnx import TensorProto, helper

from designer.core.document import Document
from designer.core.scope import MAIN_SCOPE
from designer.core.viewgraph import build_view_graph
from designer.ui.canvas.placement import place_missing


def test_place_missing_ignores_positions_of_nodes_that_are_gone() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["h"], name="a"), helper.make_node("Relu", ["h"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    view = build_view_graph(Document(helper.make_model(graph)), MAIN_SCOPE)
    sizes = {n.key: (100.0, 40.0) for n in view.nodes}
    first = view.nodes[0].key
    stale = max(sizes) + 1000  # a node of an older layout, no longer in the graph
    placed = place_missing(view, {first: (0.0, 0.0), stale: (0.0, 80.0)}, sizes)
    assert set(placed) == set(sizes) - {first}
    assert all(y > 0.0 for _x, y in placed.values())
