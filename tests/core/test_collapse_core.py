"""Collapsing module scopes of a view graph (designer.core.collapse) on the real Llama
exports: depth 2 leaves one box per decoder layer, links crossing a box's border are
re-targeted to its terminals, links inside are dropped, nothing else changes."""

from __future__ import annotations

import pytest

from designer.core.collapse import (
    auto_graph_depth,
    collapse_graph,
    expose,
    group_key,
    groups_below,
    parse_depth,
)
from designer.core.hierarchy import AUTO_MAX_BOXES, AUTO_STRETCH_BOXES, build_hierarchy, pick_depth
from designer.core.io.load import open_document
from designer.core.viewgraph import NodeKind, build_view_graph
from tests.helpers.shared import model


def _setup(name: str):  # type: ignore[no-untyped-def]
    doc = open_document(model(name))
    h = build_hierarchy(doc)
    return doc, h, build_view_graph(doc, doc.scope().id)


@pytest.mark.parametrize("name", ["llama_24l_h64.dynamo.onnx", "llama_24l_h64.torchscript.onnx"])
def test_depth_two_is_one_box_per_layer(name: str) -> None:
    _doc, h, graph = _setup(name)
    before = (list(graph.nodes), list(graph.edges))
    out = collapse_graph(graph, h, groups_below(h, 2))
    assert (graph.nodes, graph.edges) == before  # the input graph is untouched
    boxes = [n for n in out.nodes if n.kind is NodeKind.GROUP]
    layers = sorted(
        (n.name for n in boxes if n.name.startswith("layers.")), key=lambda s: int(s[7:])
    )
    assert layers == [f"layers.{i}" for i in range(24)]
    assert len(out.nodes) < 100  # a first view of a few dozen boxes
    keys = {n.key for n in out.nodes}
    assert all(e.source in keys and e.target in keys for e in out.edges)
    for box in boxes:
        assert box.key == group_key(box.group) < 0
        assert box.inputs and box.outputs  # its border values as terminals
        for terminals in (box.inputs, box.outputs):
            assert [t.index for t in terminals] == list(range(len(terminals)))
        count = box.op_type.split(" · ")[0]  # ``66 ops``, or ``1 op`` (embed_tokens)
        assert count.endswith(" op" if count.startswith("1 ") else " ops")
    layer3 = next(b for b in boxes if b.name == "layers.3")
    info = h.info(h.by_id[layer3.group])
    # every value a box shows on its border is a real boundary value of the group
    assert {t.tensor for t in layer3.outputs} <= {b.name for b in info.outputs}
    assert {t.tensor for t in layer3.inputs} <= {b.name for b in info.inputs}
    # links into layers.4 come from outside it, each terminal once per source terminal
    into = [e for e in out.edges if e.target == group_key("m/model/layers.4")]
    assert into and len({(e.source, e.source_index, e.target_index) for e in into}) == len(into)


def test_nested_collapsed_groups_and_expose() -> None:
    _doc, h, graph = _setup("llama_24l_h64.dynamo.onnx")
    attn = h.by_id["m/model/layers.7/self_attn"]
    collapsed = {"m/model/layers.7", attn.id}
    out = collapse_graph(graph, h, collapsed)
    boxes = [n for n in out.nodes if n.kind is NodeKind.GROUP]
    assert [b.group for b in boxes] == ["m/model/layers.7"]  # the inner one hides inside
    assert len(out.nodes) == len(graph.nodes) - len(h.by_id["m/model/layers.7"].keys()) + 1
    q = attn.children[0].own_keys[0]
    assert expose(h, collapsed, q) == collapsed
    open_layer = collapse_graph(graph, h, collapsed - {"m/model/layers.7"})
    assert [n.group for n in open_layer.nodes if n.kind is NodeKind.GROUP] == [attn.id]
    assert collapse_graph(graph, h, set()) is graph


def test_depth_parsing_and_auto() -> None:
    _doc, h, graph = _setup("llama_24l_h64.dynamo.onnx")
    assert parse_depth("3", graph, h) == 3
    depth = parse_depth("auto", graph, h)
    assert depth == auto_graph_depth(graph, h) == 2
    assert len(collapse_graph(graph, h, groups_below(h, depth)).nodes) <= 60
    for bad in ("x", "-1", "1.5"):
        with pytest.raises(ValueError, match="--collapse"):
            parse_depth(bad, graph, h)


@pytest.mark.parametrize(
    ("name", "depth"),
    [
        ("llama_24l_h64.torchscript.onnx", 2),  # level 1: model + lm_head alone
        ("gpt2_6l_h64.torchscript.onnx", 2),  # level 1: transformer + lm_head alone
        ("bert_4l_h64.torchscript.onnx", 1),  # level 1 already shows 55
        ("squeezenet1_0.torchscript.onnx", 1),  # 19 boxes; level 2 shows 67
    ],
)
def test_auto_opens_past_a_first_view_of_a_handful(name: str, depth: int) -> None:
    """Auto shows the model's structure: where the deepest level within the box budget
    shows only a handful of boxes (TorchScript puts everything in ``model``), it opens
    one level more, within a stretched budget."""
    _doc, h, graph = _setup(name)
    assert auto_graph_depth(graph, h) == depth
    shown = collapse_graph(graph, h, groups_below(h, depth)).nodes
    assert len(shown) <= AUTO_STRETCH_BOXES
    if len(shown) > AUTO_MAX_BOXES:  # stretched: the level above showed a handful
        above = collapse_graph(graph, h, groups_below(h, depth - 1)).nodes
        assert len(above) < 12
    if name.startswith("llama"):
        boxes = {n.name for n in shown if n.kind is NodeKind.GROUP}
        assert {f"layers.{i}" for i in range(24)} <= boxes


def test_pick_depth_rule() -> None:
    assert pick_depth([4, 5, 81, 219]) == 2  # a handful, then within the stretch
    assert pick_depth([4, 5, 151, 219]) == 1  # a handful, but the next is too many
    assert pick_depth([4, 55, 91]) == 1  # enough at the budget: not stretched
    assert pick_depth([4, 4, 59, 71]) == 2  # a chain is opened through
    assert pick_depth([70, 90]) == 0  # even the top is over budget
    assert pick_depth([3]) == 0
    assert pick_depth([]) == 0
    assert pick_depth([4, 11, 61], few=12) == 2 and pick_depth([4, 12, 61], few=12) == 1
    # one box (a 100k-node model of 1,000 layers) gives way to a column of its layers …
    assert pick_depth([1, 1, 1000, 25000]) == 2 and pick_depth([1, 2, 300, 7500]) == 2
    assert pick_depth([1, 1, 2001]) == 1  # … unless that column is too long
    assert pick_depth([3, 1000]) == 0  # three boxes show some structure already


@pytest.mark.parametrize(
    "name",
    ["llama_24l_h64.torchscript.onnx", "llama_24l_h64.dynamo.onnx", "googlenet.dynamo.onnx"],
)
def test_collapsed_count_is_the_size_of_the_collapsed_graph(name: str) -> None:
    """auto_graph_depth counts boxes without building them: the count must be exactly the
    number of nodes collapse_graph draws, at every level (and one level past the deepest)."""
    from designer.core.collapse import collapse_graph, collapsed_counts, groups_below

    doc = open_document(model(name))
    graph = build_view_graph(doc, doc.scope().id)
    hierarchy = build_hierarchy(doc)
    counted = collapsed_counts(graph, hierarchy)
    assert len(counted) == hierarchy.depth() + 1
    counts = []
    for depth in range(hierarchy.depth() + 2):
        drawn = collapse_graph(graph, hierarchy, groups_below(hierarchy, depth))
        assert counted[min(depth, len(counted) - 1)] == len(drawn.nodes), depth
        counts.append(len(drawn.nodes))
    assert counts[0] < counts[-1] == len(graph.nodes)  # from boxes to the flat graph
