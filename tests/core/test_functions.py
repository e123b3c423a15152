"""Queries about local functions (designer.core.functions) on a model that calls functions
from the main graph, from an If branch and from another function's body, and the type
checker's findings about call sites."""

from __future__ import annotations

import onnx
import pytest
from helpers.models import function_model
from onnx import TensorProto, helper

from designer.core.analysis import check_document
from designer.core.document import Document
from designer.core.functions import (
    attribute_users,
    call_counts,
    call_sites,
    called_function,
    function_ids,
    inline_nodes,
    outer_reads,
    plan_group,
)
from designer.core.scope import MAIN_SCOPE, ScopeId

F = ("local", "F", "")
F2 = ("local", "F", "v2")
G = ("local", "G", "")
UNUSED = ("other", "Unused", "")


def _fn(name: str, nodes: list[onnx.NodeProto], overload: str = "") -> onnx.FunctionProto:
    fn = helper.make_function(
        "local" if name != "Unused" else "other",
        name,
        ["x"],
        ["y"],
        nodes,
        [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
    )
    fn.overload = overload
    return fn


def nested_model() -> onnx.ModelProto:
    """F called in main and in an If branch (also a nested Loop-free If inside it), G (whose
    body calls F) called once, an overload F:v2 called once and a function nobody calls."""
    inner_then = helper.make_graph(
        [helper.make_node("F", ["X"], ["inner_out"], name="deep_call", domain="local")],
        "inner_then",
        [],
        [helper.make_tensor_value_info("inner_out", TensorProto.FLOAT, [2])],
    )
    inner_else = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["inner_else_out"], name="inner_id")],
        "inner_else",
        [],
        [helper.make_tensor_value_info("inner_else_out", TensorProto.FLOAT, [2])],
    )
    then_branch = helper.make_graph(
        [
            helper.make_node(
                "If",
                ["c"],
                ["then_out"],
                name="inner_if",
                then_branch=inner_then,
                else_branch=inner_else,
            )
        ],
        "then_branch",
        [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [2])],
    )
    else_branch = helper.make_graph(
        [helper.make_node("F", ["X"], ["else_out"], name="branch_call", domain="local")],
        "else_branch",
        [],
        [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [2])],
    )
    v2 = helper.make_node("F", ["X"], ["V"], name="overload_call", domain="local")
    v2.overload = "v2"
    nodes = [
        helper.make_node("F", ["X"], ["A"], name="main_call", domain="local"),
        helper.make_node("G", ["A"], ["B"], name="g_call", domain="local"),
        helper.make_node(
            "If", ["c"], ["Y"], name="branch", then_branch=then_branch, else_branch=else_branch
        ),
        v2,
    ]
    leaky = helper.make_node("LeakyRelu", ["x"], ["y"], name="leaky")
    leaky.attribute.add(name="alpha", ref_attr_name="slope", type=onnx.AttributeProto.FLOAT)
    sub_node = helper.make_node("Elu", ["x"], ["sub_y"], name="nested_elu")
    sub_node.attribute.add(name="alpha", ref_attr_name="slope", type=onnx.AttributeProto.FLOAT)
    sub = helper.make_graph(
        [sub_node], "sub", [], [helper.make_tensor_value_info("sub_y", TensorProto.FLOAT, [2])]
    )
    f = _fn("F", [helper.make_node("Relu", ["x"], ["y"], name="relu")])
    f2 = _fn("F", [leaky], overload="v2")
    f2.attribute_proto.append(helper.make_attribute("slope", 0.1))
    g_body = [
        helper.make_node("F", ["x"], ["t"], name="body_call", domain="local"),
        helper.make_node("If", ["t_cond"], ["y"], name="body_if", then_branch=sub, else_branch=sub),
    ]
    g = _fn("G", g_body)
    g.input.append("t_cond")
    unused = _fn("Unused", [helper.make_node("Relu", ["x"], ["y"])])
    graph = helper.make_graph(
        nodes,
        "nested",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
        functions=[f, g, f2, unused],
    )
    model.ir_version = 10
    return model


def _names(doc: Document, sites: list[tuple[ScopeId, int]]) -> list[str]:
    return sorted(doc.scope(sid).node(key).name for sid, key in sites)


def test_function_ids_are_in_model_order() -> None:
    assert function_ids(Document(nested_model())) == [F, G, F2, UNUSED]


def test_call_sites_span_main_graph_subgraphs_and_function_bodies() -> None:
    doc = Document(nested_model())
    assert _names(doc, call_sites(doc, F)) == ["body_call", "branch_call", "deep_call", "main_call"]
    sites = dict(call_sites(doc, F))
    assert ScopeId(G) in sites  # inside G's body
    assert any(len(sid.steps) == 2 for sid in sites)  # If inside an If branch
    assert _names(doc, call_sites(doc, F2)) == ["overload_call"]
    assert _names(doc, call_sites(doc, G)) == ["g_call"]
    assert call_sites(doc, UNUSED) == []
    assert call_counts(doc) == {F: 4, G: 1, F2: 1, UNUSED: 0}


def test_called_function_tells_calls_from_operators() -> None:
    doc = Document(nested_model())
    nodes = {n.name: n for n in doc.model.graph.node}
    assert called_function(doc, nodes["main_call"]) == F
    assert called_function(doc, nodes["overload_call"]) == F2
    assert called_function(doc, nodes["branch"]) is None
    stranger = helper.make_node("F", ["X"], ["Z"], domain="elsewhere")
    assert called_function(doc, stranger) is None


def test_attribute_users_include_nested_subgraph_nodes() -> None:
    model = nested_model()
    assert attribute_users(model.functions[2], "slope") == ["leaky"]
    g = model.functions[1]
    then_branch = next(a.g for a in g.node[1].attribute if a.name == "then_branch")
    then_branch.node[0].attribute[0].ref_attr_name = "gain"
    assert attribute_users(g, "gain") == ["nested_elu"]
    assert attribute_users(g, "slope") == ["nested_elu"]  # else_branch still refers to slope
    assert attribute_users(model.functions[0], "slope") == []


def test_outer_reads_and_group_plan() -> None:
    model = nested_model()
    then_branch = next(a.g for a in model.graph.node[2].attribute if a.name == "then_branch")
    assert outer_reads(then_branch) == ["c", "X"]
    plan = plan_group(model.graph.node, [2, 0], ["Y"])
    assert plan.inputs == ["X", "c"] and plan.outputs == ["A", "Y"]
    assert plan.before == []  # g_call reads A: it stays after the call
    plan = plan_group(model.graph.node, [3, 0], [])
    assert plan.before == [2] and plan.outputs == ["A"]  # the If does not need the group


def test_inline_nodes_renames_only_clashing_names() -> None:
    model = function_model()
    fn, call = model.functions[0], model.graph.node[1]
    taken = {"X", "B", "T", "Y", "s"}
    nodes = inline_nodes(fn, call, taken, {"call1", "fn_add"})
    assert [n.name for n in nodes] == ["fn_alpha", "fn_add_1", "fn_mul"]
    assert list(nodes[1].input) == ["T", "B"] and nodes[1].output[0] == "s_1"
    assert list(nodes[2].output) == ["Y"]
    assert helper.get_attribute_value(nodes[0].attribute[0]) == pytest.approx(3.0)


def test_checker_flags_unknown_call_and_missing_required_attribute() -> None:
    model = nested_model()
    model.functions[0].attribute.append("gain")  # F now needs 'gain' at every call
    del model.functions[3]  # nothing called it
    model.graph.node.append(helper.make_node("Gone", ["X"], ["W"], name="gone", domain="local"))
    doc = Document(model)
    result = check_document(doc)
    missing = [d for d in result.diagnostics if d.code == "missing-attribute"]
    assert sorted(d.node_name for d in missing) == [
        "body_call",
        "branch_call",
        "deep_call",
        "main_call",
    ]
    assert all("'gain' of local function 'local:F'" in d.message for d in missing)
    gone = [d for d in result.diagnostics if d.node_name == "gone"]
    assert gone and "no operator or local function 'local:Gone'" in gone[0].message
    assert not any(d.scope == MAIN_SCOPE and d.node_name == "g_call" for d in result.errors)
