"""Opening one collapsed group incrementally (designer.core.collapse.expand_in_graph) gives
the same boxes, nodes and links as collapsing the whole graph again, on the real Llama
exports (both exporters), for a layer box and for a box inside an open layer."""

from __future__ import annotations

import pytest

from designer.core.collapse import collapse_graph, edges_by_node, expand_in_graph, groups_below
from designer.core.hierarchy import build_hierarchy
from designer.core.io.load import open_document
from designer.core.scope import MAIN_SCOPE
from designer.core.viewgraph import build_view_graph
from tests.helpers.shared import model


@pytest.mark.parametrize("name", ["llama_24l_h64.dynamo.onnx", "llama_24l_h64.torchscript.onnx"])
def test_expanding_one_box_matches_a_full_collapse(name: str) -> None:
    doc = open_document(model(name))
    h = build_hierarchy(doc)
    full = build_view_graph(doc, MAIN_SCOPE)
    links = edges_by_node(full)
    before = groups_below(h, 2)  # the 24 layers (and the rest at that level) are boxes
    derived = collapse_graph(full, h, before)
    for group_id in ("m/model/layers.3", "m/model/layers.0", "m/model/layers.23"):
        after = before - {group_id}
        fast = expand_in_graph(full, derived, h, group_id, after, links)
        assert fast is not None
        slow = collapse_graph(full, h, after)
        assert {n.key: n for n in fast.nodes} == {n.key: n for n in slow.nodes}
        assert sorted(fast.edges, key=repr) == sorted(slow.edges, key=repr)
        # one level deeper: the layer's modules as boxes, then one of them opened
        inner = after | {g.id for g in h.by_id[group_id].children}
        derived_inner = collapse_graph(full, h, inner)
        attn = f"{group_id}/self_attn"
        fast = expand_in_graph(full, derived_inner, h, attn, inner - {attn}, links)
        assert fast is not None
        slow = collapse_graph(full, h, inner - {attn})
        assert {n.key: n for n in fast.nodes} == {n.key: n for n in slow.nodes}
        assert sorted(fast.edges, key=repr) == sorted(slow.edges, key=repr)
    # a group with collapsed groups inside is left to the full collapse
    nested = before | {"m/model/layers.3/self_attn"}
    assert (
        expand_in_graph(full, derived, h, "m/model/layers.3", nested - {"m/model/layers.3"}, links)
        is None
    )


def _same(fast, slow) -> None:  # type: ignore[no-untyped-def]
    """The same nodes and links; a box's terminals may come in another order."""

    def norm(graph):  # type: ignore[no-untyped-def]
        names = {}
        for n in graph.nodes:
            for side, terms in (("in", n.inputs), ("out", n.outputs)):
                for t in terms:
                    names[(n.key, side, t.index)] = t.tensor
        nodes = {
            n.key: (
                n.kind,
                n.name,
                n.op_type,
                n.group,
                sorted(t.tensor for t in n.inputs),
                sorted(t.tensor for t in n.outputs),
            )
            for n in graph.nodes
        }
        edges = sorted(
            (
                e.source,
                names.get((e.source, "out", e.source_index), ""),
                e.target,
                names.get((e.target, "in", e.target_index), str(e.target_index)),
                e.tensor,
            )
            for e in graph.edges
        )
        return nodes, edges

    assert norm(fast) == norm(slow)


@pytest.mark.parametrize("name", ["llama_24l_h64.dynamo.onnx", "llama_24l_h64.torchscript.onnx"])
def test_collapsing_one_group_matches_a_full_collapse(name: str) -> None:
    from designer.core.collapse import collapse_in_graph

    doc = open_document(model(name))
    h = build_hierarchy(doc)
    full = build_view_graph(doc, MAIN_SCOPE)
    links = edges_by_node(full)
    layers = groups_below(h, 2)
    open_ = layers - {"m/model/layers.3", "m/model/layers.4"}
    derived = collapse_graph(full, h, open_)
    for group_id in ("m/model/layers.3", "m/model/layers.4/self_attn"):
        after = open_ | {group_id}
        fast = collapse_in_graph(derived, h, group_id, after)
        assert fast is not None
        _same(fast, collapse_graph(full, h, after))
    # a layer with its attention folded, then the layer folded: one box for both
    inner = open_ | {"m/model/layers.3/self_attn"}
    derived = collapse_graph(full, h, inner)
    after = (inner - {"m/model/layers.3/self_attn"}) | {"m/model/layers.3"}
    fast = collapse_in_graph(derived, h, "m/model/layers.3", after)
    assert fast is not None
    _same(fast, collapse_graph(full, h, after))
    # and back open, incrementally, then folded again: the same graph each time
    back = expand_in_graph(full, fast, h, "m/model/layers.3", after - {"m/model/layers.3"}, links)
    assert back is not None
    _same(back, collapse_graph(full, h, after - {"m/model/layers.3"}))
    # inside a collapsed layer nothing is drawn: left to the full collapse
    assert (
        collapse_in_graph(fast, h, "m/model/layers.3/mlp", after | {"m/model/layers.3/mlp"}) is None
    )
