"""Groups from the model's own structure (designer.core.hierarchy) on the real shared exports:
TorchScript scoped names and the dynamo exporter's name_scopes metadata give the same module
tree (24 decoder layers with attention and MLP inside for Llama), with op counts, parameters
and boundary values; local-function calls and subgraphs are groups of their own."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.core.document import Document
from designer.core.hierarchy import auto_depth, build_hierarchy, visible_count
from designer.core.io.load import open_document
from designer.core.scope_path import NAME_SCOPES_KEY, scope_path
from tests.helpers.shared import model

LLAMA = ("llama_24l_h64.dynamo.onnx", "llama_24l_h64.torchscript.onnx")


def _layers(name: str):  # type: ignore[no-untyped-def]
    h = build_hierarchy(open_document(model(name)))
    model_group = h.by_id["m/model"]
    return h, [g for g in model_group.children if g.name.startswith("layers.")]


@pytest.mark.parametrize("name", LLAMA)
def test_llama_has_24_decoder_layers_with_attention_and_mlp(name: str) -> None:
    h, layers = _layers(name)
    assert [g.name for g in layers] == [f"layers.{i}" for i in range(24)]
    for layer in layers:
        children = [c.name for c in layer.children]
        assert {"self_attn", "mlp", "input_layernorm", "post_attention_layernorm"} <= set(children)
        attn = h.by_id[f"{layer.id}/self_attn"]
        assert [c.name for c in attn.children] == ["q_proj", "k_proj", "v_proj", "o_proj"]
        info = h.info(attn)
        assert info.op_counts["MatMul"] >= 4
        # q,o: 64x64, k,v: 64x32 (grouped-query attention) → 12288 weights of 4 bytes
        assert info.param_count >= 12288 and info.param_bytes >= 4 * 12288
        assert info.inputs and info.outputs
    # every node is in exactly one group; lm_head and the embedding are modules too
    assert sum(len(g.own_keys) for g in h.root.walk()) == len(h.doc.scope())
    assert "m/lm_head" in h.by_id and "m/model/embed_tokens" in h.by_id


def test_both_exporters_give_the_same_module_tree() -> None:
    trees = []
    for name in LLAMA:
        h = _layers(name)[0]
        # modules that hold a MatMul (the exporters differ in helper nodes, not modules)
        trees.append(
            sorted(g.id for g in h.groups() if "MatMul" in h.info(g).op_counts and g.depth >= 3)
        )
    assert trees[0] == trees[1]
    assert len([t for t in trees[0] if t.endswith("/q_proj")]) == 24


def test_linear_parameters_and_boundary_types() -> None:
    h, _ = _layers("llama_24l_h64.dynamo.onnx")
    q = h.info(h.by_id["m/model/layers.5/self_attn/q_proj"])
    assert q.op_counts == {"MatMul": 1}
    assert q.param_count == 64 * 64 and q.param_bytes == 4 * 64 * 64
    assert len(q.inputs) == 1 and len(q.outputs) == 1
    # the whole model: its boundary is the graph's inputs and outputs, typed
    top = h.info(h.by_id["m"])
    graph = h.doc.model.graph
    outputs = {v.name for v in graph.output}
    assert {b.name for b in top.outputs} == outputs
    assert all(b.type.startswith("float32[") for b in top.outputs)
    scope = h.doc.scope()
    outside = {n for k in h.root.own_keys for n in scope.node(k).output}  # hook Shape nodes
    assert {b.name for b in top.inputs} <= {v.name for v in graph.input} | outside


@pytest.mark.parametrize(
    ("name", "layer_parent", "prefix", "count"),
    [
        ("gpt2_6l_h64.torchscript.onnx", "m/transformer", "h.", 6),
        ("bert_4l_h64.torchscript.onnx", "m/encoder", "layer.", 4),
    ],
)
def test_gpt2_and_bert_layers(name: str, layer_parent: str, prefix: str, count: int) -> None:
    h = build_hierarchy(open_document(model(name)))
    layers = [g for g in h.by_id[layer_parent].children if g.name.startswith(prefix)]
    assert [g.name for g in layers] == [f"{prefix}{i}" for i in range(count)]
    for layer in layers:
        assert h.info(layer).param_count > 0
    # exporter-hoisted Constant / weight Identity nodes are adopted by their modules
    assert len(h.root.own_keys) < 5


def test_scope_path_sources() -> None:
    named = helper.make_node("MatMul", ["a", "b"], ["c"], name="/m/model/layers.3/q/MatMul")
    assert scope_path(named) == ("m", "model", "layers.3", "q")
    assert scope_path(helper.make_node("Relu", ["a"], ["b"], name="relu")) == ()
    meta = helper.make_node("Relu", ["a"], ["b"], name="node_relu")
    entry = meta.metadata_props.add()
    entry.key = NAME_SCOPES_KEY
    entry.value = "['', 'm', 'm.model', 'm.model.layers.2', 'relu_3']"
    assert scope_path(meta) == ("m", "model", "layers.2")
    entry.value = "['_hook', 'sym_size_int_1']"  # no module stack
    assert scope_path(meta) == ()


def _function_and_if_doc() -> Document:
    f = helper.make_function(
        "local",
        "Block",
        ["x"],
        ["y"],
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_opsetid("", 17)],
    )
    branch = helper.make_graph(
        [helper.make_node("Identity", ["h"], ["z"])],
        "then",
        [],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
    )
    w = numpy_helper.from_array(np.ones(2, np.float32), "w")
    nodes = [
        helper.make_node("Add", ["x", "w"], ["a"], name="/enc/Add"),
        helper.make_node("Block", ["a"], ["h"], name="/enc/block", domain="local"),
        helper.make_node(
            "If", ["c"], ["y"], name="/enc/if", then_branch=branch, else_branch=branch
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [w],
    )
    m = helper.make_model(
        graph,
        functions=[f],
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
    )
    return Document(m)


def test_function_calls_and_subgraphs_are_groups() -> None:
    doc = _function_and_if_doc()
    h = build_hierarchy(doc)
    enc = h.by_id["enc"]
    kinds = {c.name: c.kind for c in enc.children}
    assert kinds == {"block": "function", "if": "subgraph"}
    call = h.by_id["enc/block"]
    assert call.inner_scopes and call.inner_scopes[0].function == ("local", "Block", "")
    inner = build_hierarchy(doc, call.inner_scopes[0])
    assert len(inner.root.own_keys) == 1
    sub = h.by_id["enc/if"]
    assert len(sub.inner_scopes) == 2  # then and else branches
    info = h.info(enc)
    assert info.param_count == 2 and info.param_bytes == 8
    assert [b.name for b in info.inputs] == ["x", "c"]
    assert [(b.name, b.type) for b in info.outputs] == [("y", "float32[2]")]
    assert h.path_of(call.own_keys[0]) == [enc, call]


def test_auto_depth_keeps_first_view_small() -> None:
    h, _ = _layers("llama_24l_h64.dynamo.onnx")
    depth = auto_depth(h, max_boxes=60)
    assert visible_count(h, depth) <= 60 < visible_count(h, depth + 1)
    assert visible_count(h, h.depth()) == len(h.doc.scope())
