"""Box captions and Find results count in English: ``1 op``, ``1 param``, ``1 node``, and
plural otherwise (QA finding 11: the Llama ``lm_head`` box said ``1 ops · 64.0k params``)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from designer.core.collapse import collapse_graph, counted, group_caption
from designer.core.document import Document
from designer.core.find import find
from designer.core.hierarchy import build_hierarchy
from designer.core.io.load import open_document
from designer.core.viewgraph import NodeKind, build_view_graph
from tests.helpers.shared import model


def _doc() -> Document:
    """Module ``m/one`` holds one Relu; ``m/two`` a Mul by a one-element weight and an Add
    by a two-element one."""
    scale = numpy_helper.from_array(np.ones(1, np.float32), "two.scale")
    shift = numpy_helper.from_array(np.ones(2, np.float32), "two.shift")
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="/m/one/Relu"),
        helper.make_node("Mul", ["r", "two.scale"], ["s"], name="/m/two/Mul"),
        helper.make_node("Add", ["s", "two.shift"], ["y"], name="/m/two/Add"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [scale, shift],
    )
    return Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_counted_is_singular_for_one_only() -> None:
    assert counted(1, "op") == "1 op"
    assert counted(0, "op") == "0 ops"
    assert counted(2, "node") == "2 nodes"
    assert counted(1500, "param", "1.5k") == "1.5k params"


def test_captions_and_find_say_one_op_and_one_node() -> None:
    doc = _doc()
    h = build_hierarchy(doc)
    assert group_caption(h, h.by_id["m/one"]) == "1 op"
    assert group_caption(h, h.by_id["m/two"]) == "2 ops · 3 params"
    (one,) = [hit for hit in find(doc, "m/one", kinds=("scope",)).hits]
    assert one.detail == "module scope, 1 node"
    two = next(hit for hit in find(doc, "m/two", kinds=("scope",)).hits)
    assert two.detail == "module scope, 2 nodes"


def test_one_param_is_singular() -> None:
    scale = numpy_helper.from_array(np.ones(1, np.float32), "one.scale")
    node = helper.make_node("Mul", ["x", "one.scale"], ["y"], name="/m/one/Mul")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [scale],
    )
    doc = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    h = build_hierarchy(doc)
    assert group_caption(h, h.by_id["m/one"]) == "1 op · 1 param"


def test_llama_lm_head_box_says_one_op() -> None:
    doc = open_document(model("llama_24l_h64.dynamo.onnx"))
    h = build_hierarchy(doc)
    graph = build_view_graph(doc, doc.scope().id)
    out = collapse_graph(graph, h, {"m/lm_head", "m/model/layers.3"})
    captions = {n.name: n.op_type for n in out.nodes if n.kind is NodeKind.GROUP}
    assert captions["lm_head"].startswith("1 op · ")
    assert captions["layers.3"].startswith(f"{h.size(h.by_id['m/model/layers.3'])[0]} ops · ")
