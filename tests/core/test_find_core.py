"""Find (designer.core.find) over node names, op types, tensor names, attribute values and
initializer names, on a real Llama export and a small built model."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from designer.core.document import Document
from designer.core.find import find
from designer.core.io.load import open_document
from tests.helpers.shared import model


def _doc() -> Document:
    w = numpy_helper.from_array(np.ones((2, 2), np.float32), "dense.weight")
    unused = numpy_helper.from_array(np.ones(1, np.float32), "spare.bias")
    nodes = [
        helper.make_node("MatMul", ["x", "dense.weight"], ["hidden"], name="/enc/dense/MatMul"),
        helper.make_node("Softmax", ["hidden"], ["y"], name="/enc/softmax", axis=-1),
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2]),
            helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 2]),
        ],
        [w, unused],
    )
    return Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_each_kind_is_found_with_the_key_that_shows_it() -> None:
    doc = _doc()
    keys = doc.scope().keys
    by = {(h.kind, h.text): h for h in find(doc, "dense").hits}
    assert by[("node", "/enc/dense/MatMul")].key == keys[0]
    assert by[("initializer", "dense.weight")].key == keys[0]  # its first reader
    assert ("tensor", "dense.weight") not in by  # initializers are listed as such
    (op,) = find(doc, "softMAX", kinds=("op",)).hits
    assert op.key == keys[1] and op.text == "Softmax"
    (attr,) = find(doc, "axis=-1").hits
    assert attr.kind == "attribute" and attr.key == keys[1]
    (perm,) = find(doc, "perm=[1, 0]").hits
    assert perm.key == keys[2] and perm.detail == "node Transpose_2"
    (hidden,) = find(doc, "hidden").hits
    assert hidden.kind == "tensor" and hidden.key == keys[0]
    (x,) = [h for h in find(doc, "x", kinds=("tensor",)).hits if h.text == "x"]
    assert x.key == doc.io_key(doc.scope().id, "input", "x") and x.detail == "graph input"
    (spare,) = find(doc, "spare").hits
    assert spare.key is None and spare.detail == "not read"


def test_case_limit_and_empty_query() -> None:
    doc = _doc()
    assert find(doc, "").hits == []
    assert find(doc, "SOFTMAX", match_case=True).hits == []
    result = find(doc, "e", limit=2)
    assert len(result.hits) == 2 and result.truncated


def test_finds_inside_a_real_llama_layer() -> None:
    doc = open_document(model("llama_24l_h64.torchscript.onnx"))
    result = find(doc, "layers.17/self_attn/q_proj")
    nodes = [h for h in result.hits if h.kind == "node"]
    assert [h.text for h in nodes] == ["/m/model/layers.17/self_attn/q_proj/MatMul"]
    tensors = [h for h in result.hits if h.kind == "tensor"]
    assert tensors and all(h.key == nodes[0].key for h in tensors)
    (weight,) = find(doc, "onnx::MatMul_6868", kinds=("initializer",)).hits
    assert weight.key == nodes[0].key  # the q_proj MatMul reads it
    norms = find(doc, "layernorm.weight", kinds=("initializer",)).hits
    assert [h.text for h in norms] == ["m.model.layers.0.input_layernorm.weight"]


def test_module_scopes_are_found_in_dynamo_metadata() -> None:
    doc = open_document(model("llama_24l_h64.dynamo.onnx"))
    hits = find(doc, "layers.5/self_attn", kinds=("scope",)).hits
    texts = [h.text for h in hits]
    assert texts[0] == "m/model/layers.5/self_attn"
    assert {"m/model/layers.5/self_attn/q_proj", "m/model/layers.5/self_attn/o_proj"} <= set(texts)
    assert all(h.key is not None and h.detail.startswith("module scope, ") for h in hits)
    assert len(hits[0].keys) == int(hits[0].detail.split(", ")[1].split()[0]) > 4
    assert find(doc, "layers.5/self_attn").hits[0].kind == "scope"  # listed first
