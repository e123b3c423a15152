"""Model diff on handmade models: each test makes known changes and checks that the diff
lists exactly those (nodes, attributes, initializers, inputs/outputs, opsets, metadata,
subgraphs, functions, external data)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import onnx
from helpers.models import FN_DOMAIN, chain_model, function_model, subgraph_model, tensor_info
from onnx import helper, numpy_helper

from designer.core.diff import diff_files, diff_models, summary_text


def _node(model: onnx.ModelProto, name: str) -> onnx.NodeProto:
    return next(n for n in model.graph.node if n.name == name)


def test_identical_models_have_no_changes() -> None:
    a = subgraph_model()
    diff = diff_models(a, copy.deepcopy(a))
    assert diff.identical and diff.change_count == 0
    assert diff.graph.nodes_unchanged == len(a.graph.node)
    assert "identical" in summary_text(diff)


def test_deleted_nodes_attribute_and_renamed_initializer() -> None:
    a = chain_model(5)
    a.graph.node[1].attribute.append(helper.make_attribute("unused", 1))  # a known attribute
    b = copy.deepcopy(a)
    del b.graph.node[3]  # relu3
    del b.graph.node[2]  # relu2
    _node(b, "relu1").attribute[0].i = 7
    b.graph.initializer[0].name = "W_renamed"
    _node(b, "add_w").input[1] = "W_renamed"
    diff = diff_models(a, b)
    g = diff.graph
    assert sorted(n.name for n in g.nodes_removed) == ["relu2", "relu3"]
    assert g.nodes_added == ()
    assert [(c.before.name, [f.field for f in c.fields]) for c in g.nodes_changed] == [
        ("relu1", ["attribute unused"])
    ]
    assert g.nodes_changed[0].fields[0].before == "1"
    assert g.nodes_changed[0].fields[0].after == "7"
    (init,) = g.initializers_changed
    assert (init.before.name, init.after.name, init.renamed) == ("W", "W_renamed", True)
    assert not init.values_differ and init.max_abs_diff == 0.0
    assert g.initializers_added == () and g.initializers_removed == ()
    assert diff.change_count == 4  # 2 nodes removed, 1 changed, 1 initializer renamed


def test_unnamed_and_renamed_nodes_match_by_structure() -> None:
    a = chain_model(4)
    b = copy.deepcopy(a)
    for node in b.graph.node:
        node.name = ""
    b.graph.node[0].name = "first"
    diff = diff_models(a, b)
    g = diff.graph
    assert g.nodes_added == () and g.nodes_removed == ()
    assert all(c.by == "structure" for c in g.nodes_changed)
    assert all([f.field for f in c.fields] == ["name"] for c in g.nodes_changed)
    assert [c.after.name for c in g.nodes_changed] == ["first", "", "", "", ""]
    assert g.matches == tuple((i, i) for i in range(len(a.graph.node)))


def test_renamed_tensors_do_not_change_the_readers() -> None:
    """A node renamed with its output: only that node changes; its reader is unchanged."""
    a = chain_model(3)
    b = copy.deepcopy(a)
    n = _node(b, "relu1")
    n.name, n.output[0] = "relu_one", "t2_new"
    _node(b, "relu2").input[0] = "t2_new"
    g = diff_models(a, b).graph
    (c,) = g.nodes_changed
    assert c.by == "structure" and c.before.name == "relu1" and c.after.name == "relu_one"
    assert [f.field for f in c.fields] == ["name", "output 0"]


def test_op_type_inputs_and_attribute_added() -> None:
    a = chain_model(3)
    b = copy.deepcopy(a)
    _node(b, "relu1").op_type = "Sigmoid"
    _node(b, "relu2").input[0] = "X"  # rewired
    _node(b, "relu0").attribute.append(helper.make_attribute("alpha", 0.5))
    g = diff_models(a, b).graph
    fields = {c.before.name: [(f.field, f.kind) for f in c.fields] for c in g.nodes_changed}
    assert fields == {
        "relu0": [("attribute alpha", "added")],
        "relu1": [("op_type", "changed")],
        "relu2": [("input 0", "changed")],
    }


def test_added_node_and_graph_io() -> None:
    a = chain_model(2)
    b = copy.deepcopy(a)
    b.graph.node.append(helper.make_node("Neg", ["Y"], ["Z"], name="neg"))
    b.graph.output.append(tensor_info("Z"))
    b.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    g = diff_models(a, b).graph
    assert [n.name for n in g.nodes_added] == ["neg"]
    assert [(c.field, c.kind) for c in g.outputs] == [("Z", "added")]
    (inp,) = g.inputs
    assert inp.field == "X" and inp.before == "float[2,3]" and inp.after == "float[N,3]"


def test_initializer_values_dtype_shape_added_removed() -> None:
    a = chain_model(1)
    a.graph.initializer.extend(
        [
            numpy_helper.from_array(np.arange(6, dtype=np.float32), "V"),
            numpy_helper.from_array(np.ones(3, dtype=np.float32), "S"),
            numpy_helper.from_array(np.ones(2, dtype=np.int64), "gone"),
        ]
    )
    b = copy.deepcopy(a)
    w = np.zeros((2, 3), dtype=np.float32)
    w[1, 2] = 0.25
    b.graph.initializer[0].CopyFrom(numpy_helper.from_array(w, "W"))
    b.graph.initializer[1].CopyFrom(
        numpy_helper.from_array(np.arange(6, dtype=np.float16) + 0.5, "V")
    )
    b.graph.initializer[2].CopyFrom(numpy_helper.from_array(np.ones(4, dtype=np.float32), "S"))
    del b.graph.initializer[3]
    b.graph.initializer.append(numpy_helper.from_array(np.ones(1, dtype=np.float32), "new"))
    g = diff_models(a, b).graph
    changes = {c.before.name: c for c in g.initializers_changed}
    assert set(changes) == {"W", "V", "S"}
    assert changes["W"].max_abs_diff == 0.25 and changes["W"].values_differ
    assert (changes["V"].before.dtype, changes["V"].after.dtype) == ("float", "float16")
    assert changes["V"].max_abs_diff == 0.5
    assert changes["S"].note == "shapes differ" and changes["S"].max_abs_diff is None
    assert [t.name for t in g.initializers_removed] == ["gone"]
    assert [t.name for t in g.initializers_added] == ["new"]


def test_nan_positions() -> None:
    a = chain_model(1)
    a.graph.initializer[0].CopyFrom(
        numpy_helper.from_array(np.array([np.nan, 1.0], dtype=np.float32), "W")
    )
    same = copy.deepcopy(a)
    assert diff_models(a, same).identical  # NaN in the same place: equal
    b = copy.deepcopy(a)
    b.graph.initializer[0].CopyFrom(
        numpy_helper.from_array(np.array([0.0, 1.5], dtype=np.float32), "W")
    )
    (c,) = diff_models(a, b).graph.initializers_changed
    assert c.values_differ and c.note == "NaN/Inf positions differ" and c.max_abs_diff == 0.5
    json.dumps(diff_models(a, b).to_json(), allow_nan=False)


def test_opsets_and_metadata() -> None:
    a = chain_model(1)
    b = copy.deepcopy(a)
    b.opset_import[0].version += 1
    b.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    b.producer_name = "me"
    b.ir_version = a.ir_version - 1
    helper.set_model_props(b, {"author": "x"})
    diff = diff_models(a, b)
    assert [(c.field, c.kind) for c in diff.opsets] == [
        ("ai.onnx", "changed"),
        ("com.microsoft", "added"),
    ]
    assert {c.field for c in diff.metadata} == {"producer_name", "ir_version", "metadata author"}
    assert diff.graph.identical and diff.change_count == 5


def test_subgraph_changes_are_nested() -> None:
    a = subgraph_model()
    b = copy.deepcopy(a)
    branch = _node(b, "branch")
    then = next(x for x in branch.attribute if x.name == "then_branch")
    then.g.node[0].op_type = "Add"
    loop = _node(b, "loop")
    body = loop.attribute[0].g
    inner_if = body.node[1]
    inner_else = next(x for x in inner_if.attribute if x.name == "else_branch")
    del inner_else.g.node[0]
    g = diff_models(a, b).graph
    by_name = {c.before.name: c for c in g.nodes_changed}
    assert set(by_name) == {"branch", "loop"}
    assert by_name["branch"].fields == ()
    ((where, sub),) = by_name["branch"].subgraphs
    assert where == "then_branch" and [c.before.name for c in sub.nodes_changed] == ["then_mul"]
    ((where, body_diff),) = by_name["loop"].subgraphs
    ((inner_where, inner),) = body_diff.nodes_changed[0].subgraphs
    assert inner_where == "else_branch"
    assert [n.name for n in inner.nodes_removed] == ["inner_identity"]
    assert "else_branch" in summary_text(diff_models(a, b))


def test_functions_added_removed_changed() -> None:
    a = function_model()
    b = copy.deepcopy(a)
    b.functions[0].node[0].op_type = "Sub"
    extra = copy.deepcopy(b.functions[0])
    extra.name = "Other"
    b.functions.append(extra)
    diff = diff_models(a, b)
    assert diff.functions_added == (f"{FN_DOMAIN}:Other",)
    ((name, sub),) = diff.functions_changed
    assert name == f"{FN_DOMAIN}:ScaledAdd"
    assert [[f.field for f in c.fields] for c in sub.nodes_changed] == [["op_type"]]
    removed = diff_models(b, a)
    assert removed.functions_removed == (f"{FN_DOMAIN}:Other",)


def test_constant_value_change_shows_the_difference() -> None:
    a = chain_model(1)
    a.graph.node.insert(
        0,
        helper.make_node(
            "Constant",
            [],
            ["c"],
            value=numpy_helper.from_array(np.ones(4, dtype=np.float32)),
        ),
    )
    b = copy.deepcopy(a)
    b.graph.node[0].attribute[0].t.CopyFrom(
        numpy_helper.from_array(np.full(4, 1.5, dtype=np.float32))
    )
    (c,) = diff_models(a, b).graph.nodes_changed
    (f,) = c.fields
    assert f.field == "attribute value" and f.after == "tensor float[4] (max abs diff 0.5)"


def test_external_data_is_compared(tmp_path: Path) -> None:
    weights = {"W": np.linspace(0, 1, 4096, dtype=np.float32).reshape(64, 64)}
    a = chain_model(1)
    a.graph.initializer[0].CopyFrom(numpy_helper.from_array(weights["W"], "W"))
    b = copy.deepcopy(a)
    changed = weights["W"].copy()
    changed[3, 5] += 2.0
    b.graph.initializer[0].CopyFrom(numpy_helper.from_array(changed, "W"))
    for model, folder in ((a, "a"), (b, "b")):
        (tmp_path / folder).mkdir()
        onnx.save(
            model,
            tmp_path / folder / "m.onnx",
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location="m.data",
            size_threshold=0,
        )
    diff = diff_files(tmp_path / "a" / "m.onnx", tmp_path / "b" / "m.onnx")
    (c,) = diff.graph.initializers_changed
    assert abs((c.max_abs_diff or 0.0) - 2.0) < 1e-6
    assert diff.change_count == 1
    same = diff_files(tmp_path / "a" / "m.onnx", tmp_path / "a" / "m.onnx")
    assert same.identical


def test_json_schema_fields() -> None:
    a = chain_model(2)
    b = copy.deepcopy(a)
    del b.graph.node[0]
    data = diff_models(a, b, a_label="a.onnx", b_label="b.onnx").to_json()
    assert data["schema"] == 1 and data["identical"] is False and data["change_count"] == 1
    assert set(data) == {
        "schema",
        "a",
        "b",
        "identical",
        "change_count",
        "graph",
        "opsets",
        "metadata",
        "functions",
        "warnings",
    }
    nodes = data["graph"]["nodes"]
    assert nodes["removed"] == [{"index": 0, "name": "relu0", "op_type": "Relu", "domain": ""}]
    assert nodes["unchanged"] == 2
    json.dumps(data, allow_nan=False)


def test_skeleton_keeps_structure_and_small_tensors_only() -> None:
    from designer.core.diff.skeleton import KEEP_VALUES_BYTES, skeleton

    a = subgraph_model()
    big = np.ones(KEEP_VALUES_BYTES, dtype=np.float32)
    a.graph.initializer.append(numpy_helper.from_array(big, "big"))
    helper.set_model_props(a, {"k": "v"})
    s = skeleton(a)
    assert [n.SerializeToString() for n in s.graph.node] == [
        n.SerializeToString() for n in a.graph.node
    ]
    assert s.graph.input == a.graph.input and s.metadata_props == a.metadata_props
    assert s.opset_import == a.opset_import and s.ir_version == a.ir_version
    kept = {t.name: t for t in s.graph.initializer}
    assert kept["outer_w"] == a.graph.initializer[0]
    assert list(kept["big"].dims) == [KEEP_VALUES_BYTES] and not kept["big"].raw_data
    s.graph.node[0].name = "changed"
    assert a.graph.node[0].name == "pre_add"  # a copy, not a view


def test_change_rows_point_at_nodes() -> None:
    from designer.core.diff.rows import change_rows

    a = chain_model(4)
    b = copy.deepcopy(a)
    del b.graph.node[2]  # relu2: B centres on the node that read its output
    b.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.ones((2, 3), np.float32), "W"))
    rows = change_rows(diff_models(a, b), a.graph, b.graph)
    removed, init = rows
    assert (removed.kind, removed.item, removed.a_nodes) == ("removed", "node", (2,))
    assert removed.b_near == 1  # relu1 (the producer of relu2's input), index 1 in B
    assert (init.item, init.a_nodes, init.b_nodes) == ("initializer", (4,), (3,))
    assert "max abs diff 1" in init.details
