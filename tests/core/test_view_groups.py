"""View-only groups made by hand (designer.core.view_groups) on the real dynamo Llama: a
group sits under the innermost module holding its nodes, whole modules move under it,
single nodes leave their module; ungroup restores the module tree; the layout file (v3)
saves and restores the groups by node label; the model is never touched; bad names fail
with one line and change nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from designer.core.focus import crumbs, focus_graph
from designer.core.hierarchy import build_hierarchy
from designer.core.io.companion import load_positions, positions_to_json, save_positions
from designer.core.io.load import open_document
from designer.core.scope import MAIN_SCOPE
from designer.core.view_groups import (
    ViewGroupError,
    add_view_group,
    constants_feeding_only,
    remove_view_group,
    view_groups,
)
from designer.core.viewgraph import NodeKind, build_view_graph
from tests.helpers.shared import model

LLAMA = "llama_24l_h64.dynamo.onnx"
LAYER = "m/model/layers.3"


def test_hand_group_takes_whole_modules_and_single_nodes() -> None:
    doc = open_document(model(LLAMA))
    before = build_hierarchy(doc)
    attn = before.by_id[f"{LAYER}/self_attn"].keys()
    mlp = before.by_id[f"{LAYER}/mlp"].keys()
    add_view_group(doc, MAIN_SCOPE, "attn+gate", [*attn, mlp[0]])
    h = build_hierarchy(doc)
    group = h.by_id[f"{LAYER}/attn+gate"]
    assert group.kind == "view" and group.view_name == "attn+gate"
    assert group.parent is h.by_id[LAYER]
    assert [c.name for c in group.children] == ["self_attn"]  # the whole module moved in
    assert f"{LAYER}/attn+gate/self_attn/q_proj" in h.by_id
    assert f"{LAYER}/self_attn" not in h.by_id
    assert mlp[0] in group.own_keys  # a single node left its module for the group
    left = h.by_id[f"{LAYER}/mlp"].keys()
    assert mlp[0] not in left
    assert sorted(group.keys()) == sorted([*attn, mlp[0]])
    assert sorted(h.root.keys()) == sorted(before.root.keys())  # no node lost or doubled
    assert [label for label, _ in crumbs(h, f"{LAYER}/attn+gate/self_attn")][-3:] == [
        "layers.3",
        "attn+gate",
        "self_attn",
    ]
    assert remove_view_group(doc, MAIN_SCOPE, "attn+gate")
    again = build_hierarchy(doc)
    assert sorted(again.by_id[f"{LAYER}/self_attn"].keys()) == sorted(attn)
    assert not remove_view_group(doc, MAIN_SCOPE, "attn+gate")


def test_bad_names_and_empty_selections_change_nothing() -> None:
    doc = open_document(model(LLAMA))
    keys = build_hierarchy(doc).by_id[f"{LAYER}/mlp"].keys()
    add_view_group(doc, MAIN_SCOPE, "g", keys)
    for name, message in (
        ("", "needs a name"),
        ("a/b", "cannot contain '/'"),
        ("g", "already a view group named 'g'"),
    ):
        with pytest.raises(ViewGroupError, match=message):
            add_view_group(doc, MAIN_SCOPE, name, keys)
    with pytest.raises(ViewGroupError, match="Select the nodes"):
        add_view_group(doc, MAIN_SCOPE, "h", [-5])
    assert [g.name for g in view_groups(doc, MAIN_SCOPE)] == ["g"]


def test_layout_file_saves_and_restores_groups_and_leaves_the_model(tmp_path: Path) -> None:
    path = tmp_path / "llama.onnx"
    shutil.copyfile(model(LLAMA), path)
    original = path.read_bytes()
    doc = open_document(path)
    mlp = build_hierarchy(doc).by_id[f"{LAYER}/mlp"].keys()
    add_view_group(doc, MAIN_SCOPE, "my mlp", mlp)
    doc.collapsed[MAIN_SCOPE] = {f"{LAYER}/my mlp"}
    data = positions_to_json(doc)
    assert data["version"] == 3
    assert data["groups"]["main"][0]["name"] == "my mlp"  # type: ignore[index]
    save_positions(doc, path)
    assert path.read_bytes() == original  # view state only
    reopened = open_document(path)
    load_positions(reopened, path)
    groups = view_groups(reopened, MAIN_SCOPE)
    assert [(g.name, sorted(g.keys)) for g in groups] == [("my mlp", sorted(mlp))]
    h = build_hierarchy(reopened)
    assert h.by_id[f"{LAYER}/my mlp"].children[0].name == "mlp"
    assert reopened.collapsed[MAIN_SCOPE] == {f"{LAYER}/my mlp"}


def test_focus_graph_is_one_layer_with_border_stubs() -> None:
    doc = open_document(model(LLAMA))
    h = build_hierarchy(doc)
    graph = build_view_graph(doc, MAIN_SCOPE)
    focused = focus_graph(graph, h, LAYER)
    inside = set(h.by_id[LAYER].keys())
    ops = [n for n in focused.nodes if n.kind is NodeKind.OP]
    assert ops and all(n.key in inside for n in ops)
    assert len(ops) == sum(1 for n in graph.nodes if n.key in inside)
    stubs = {n.key: n for n in focused.nodes if n.kind is not NodeKind.OP}
    assert all(k < 0 for k in stubs)
    keys = {n.key for n in focused.nodes}
    assert all(e.source in keys and e.target in keys for e in focused.edges)
    # the hidden state comes in from layers.2 and goes out to layers.4
    assert any(n.kind is NodeKind.INPUT for n in stubs.values())
    assert any(n.kind is NodeKind.OUTPUT for n in stubs.values())


def test_constants_go_with_the_nodes_that_alone_read_them() -> None:
    """Taken: a Constant read only by chosen nodes, also from inside a chosen If's branch.
    Left: one read by an unchosen node too, one that is a graph output, one nobody reads."""
    import onnx
    from onnx import TensorProto, helper

    def const(name: str) -> onnx.NodeProto:
        value = helper.make_tensor(name, TensorProto.FLOAT, [], [1.0])
        return helper.make_node("Constant", [], [name], name=f"c_{name}", value=value)

    branch = helper.make_graph(
        [helper.make_node("Add", ["x", "inner"], ["b"], name="in_branch")],
        "branch",
        [],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])],
    )
    nodes = [
        const("a"),
        const("inner"),
        const("both"),
        const("out"),
        const("unread"),
        helper.make_node("Add", ["x", "a"], ["y1"], name="add1"),
        helper.make_node("Add", ["y1", "both"], ["y2"], name="add2"),
        helper.make_node("Greater", ["y2", "x"], ["cond"], name="gt"),
        helper.make_node("If", ["cond"], ["y3"], name="if", then_branch=branch, else_branch=branch),
        helper.make_node("Mul", ["y3", "both"], ["y4"], name="mul_outside"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y4", "out")],
    )
    from designer.core.document import Document

    doc = Document(helper.make_model(graph))
    scope = doc.scope()
    key = {scope.node(k).name: k for k in scope.keys}
    chosen = [key[n] for n in ("add1", "add2", "gt", "if")]
    taken = {scope.node(k).name for k in constants_feeding_only(doc, MAIN_SCOPE, chosen)}
    assert taken == {"c_a", "c_inner"}
