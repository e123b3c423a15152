"""Small ONNX models built with ``onnx.helper`` for the core tests, and cached access to the
installed ``onnx`` package's backend test models.

Every builder returns a fresh ``ModelProto``; callers may change it freely.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 10
OPSET = 17
FN_DOMAIN = "local.fn"

#: Names of backend node test models with subgraphs (If/Loop/Scan) used by the edit tests.
SUBGRAPH_NODE_MODELS = (
    "test_if",
    "test_if_seq",
    "test_loop11",
    "test_scan9_sum",
    "test_range_float_type_positive_delta_expanded",
)


def tensor_info(
    name: str, elem_type: int = TensorProto.FLOAT, shape: Sequence[int | str] | None = (2, 3)
) -> onnx.ValueInfoProto:
    """A tensor ValueInfo (``shape=None``: rank unknown)."""
    return helper.make_tensor_value_info(name, elem_type, shape)


def _model(
    graph: onnx.GraphProto,
    functions: Sequence[onnx.FunctionProto] = (),
    extra_opsets: Sequence[tuple[str, int]] = (),
) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", OPSET)]
    opsets.extend(helper.make_opsetid(d, v) for d, v in extra_opsets)
    model = helper.make_model(
        graph, opset_imports=opsets, functions=list(functions), producer_name="designer-tests"
    )
    model.ir_version = IR_VERSION
    return model


# --- a model using (nearly) every field ONNX defines ---------------------------------------
def scaled_add_function() -> onnx.FunctionProto:
    """``local.fn:ScaledAdd(a, b) = (a + b) * alpha`` with a defaulted attribute ``alpha``."""
    alpha = helper.make_node("Constant", [], ["k"], name="fn_alpha")
    alpha.attribute.append(
        onnx.AttributeProto(
            name="value_float", ref_attr_name="alpha", type=onnx.AttributeProto.FLOAT
        )
    )
    nodes = [
        alpha,
        helper.make_node("Add", ["a", "b"], ["s"], name="fn_add", doc_string="sum of inputs"),
        helper.make_node("Mul", ["s", "k"], ["c"], name="fn_mul"),
    ]
    fn = helper.make_function(
        FN_DOMAIN,
        "ScaledAdd",
        ["a", "b"],
        ["c"],
        nodes,
        [helper.make_opsetid("", OPSET)],
        attribute_protos=[helper.make_attribute("alpha", 2.0)],
        doc_string="Adds two tensors and scales the sum.",
        value_info=[tensor_info("s")],
    )
    fn.metadata_props.add(key="fn_note", value="kept")
    return fn


def rich_model() -> onnx.ModelProto:
    """A model with functions, metadata_props, doc strings, value_info, training_info, an
    (unused) sparse initializer, a quantization annotation and tensor metadata."""
    weight = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "W")
    weight.doc_string = "the weight"
    weight.metadata_props.add(key="origin", value="arange")
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([1.5, -2.5], dtype=np.float32), "S"),
        numpy_helper.from_array(np.array([1, 4], dtype=np.int64), "S_indices"),
        [2, 3],
    )
    nodes = [
        helper.make_node(
            "ScaledAdd", ["X", "W"], ["T1"], name="scaled_add", domain=FN_DOMAIN, alpha=0.5
        ),
        helper.make_node("Add", ["T1", "W"], ["T2"], name="add_again", doc_string="adds W"),
        helper.make_node("Relu", ["T2"], ["Y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes,
        "rich",
        [tensor_info("X")],
        [tensor_info("Y")],
        initializer=[weight],
        doc_string="graph doc",
        value_info=[tensor_info("T1"), tensor_info("T2")],
        sparse_initializer=[sparse],
    )
    annotation = graph.quantization_annotation.add(tensor_name="T2")
    annotation.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="W")
    graph.metadata_props.add(key="graph_note", value="g")
    model = _model(graph, [scaled_add_function()], [(FN_DOMAIN, 1)])
    model.doc_string = "A model that uses many ONNX fields."
    model.domain = "ai.designer.tests"
    model.model_version = 7
    model.producer_version = "1.0"
    helper.set_model_props(model, {"author": "tests", "purpose": "round trip"})

    init_graph = helper.make_graph(
        [
            helper.make_node(
                "Constant",
                [],
                ["W_init"],
                value=numpy_helper.from_array(np.ones((2, 3), dtype=np.float32), "W_init_value"),
            )
        ],
        "init",
        [],
        [tensor_info("W_init")],
    )
    algo_graph = helper.make_graph(
        [helper.make_node("Sub", ["W", "X"], ["W_new"], name="step")],
        "algo",
        [],
        [tensor_info("W_new")],
    )
    model.training_info.append(
        helper.make_training_info(algo_graph, [("W", "W_new")], init_graph, [("W", "W_init")])
    )
    return model


def with_unknown_field(model: onnx.ModelProto) -> bytes:
    """``model`` serialized with an extra field number 999 that this onnx does not know."""
    # tag = (999 << 3) | 0 (varint) encoded as a varint, then the value 42.
    tag = 999 << 3
    encoded = bytearray()
    while True:
        byte = tag & 0x7F
        tag >>= 7
        if tag:
            encoded.append(byte | 0x80)
        else:
            encoded.append(byte)
            break
    return bytes(model.SerializeToString()) + bytes(encoded) + bytes([42])


# --- subgraphs -----------------------------------------------------------------------------
def subgraph_model() -> onnx.ModelProto:
    """Main graph with an If (both branches read outer names ``A`` and ``outer_w``) and a Loop
    whose body holds a nested If that also reads ``A``."""
    outer_w = numpy_helper.from_array(np.full((2, 3), 3.0, dtype=np.float32), "outer_w")
    trip = numpy_helper.from_array(np.array(2, dtype=np.int64), "trip")
    then_branch = helper.make_graph(
        [helper.make_node("Mul", ["A", "outer_w"], ["then_out"], name="then_mul")],
        "then_branch",
        [],
        [tensor_info("then_out")],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Sub", ["A", "X"], ["else_out"], name="else_sub")],
        "else_branch",
        [],
        [tensor_info("else_out")],
    )
    inner_then = helper.make_graph(
        [helper.make_node("Add", ["v_in", "A"], ["inner_then_out"], name="inner_add")],
        "inner_then",
        [],
        [tensor_info("inner_then_out")],
    )
    inner_else = helper.make_graph(
        [helper.make_node("Identity", ["v_in"], ["inner_else_out"], name="inner_identity")],
        "inner_else",
        [],
        [tensor_info("inner_else_out")],
    )
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
            helper.make_node(
                "If",
                ["cond_in"],
                ["v_out"],
                name="body_if",
                then_branch=inner_then,
                else_branch=inner_else,
            ),
        ],
        "loop_body",
        [
            tensor_info("iter_num", TensorProto.INT64, []),
            tensor_info("cond_in", TensorProto.BOOL, []),
            tensor_info("v_in"),
        ],
        [tensor_info("cond_out", TensorProto.BOOL, []), tensor_info("v_out")],
    )
    nodes = [
        helper.make_node("Add", ["X", "outer_w"], ["A"], name="pre_add"),
        helper.make_node(
            "If", ["cond"], ["Y"], name="branch", then_branch=then_branch, else_branch=else_branch
        ),
        helper.make_node("Loop", ["trip", "cond", "A"], ["Z"], name="loop", body=body),
    ]
    graph = helper.make_graph(
        nodes,
        "with_subgraphs",
        [tensor_info("X"), tensor_info("cond", TensorProto.BOOL, [])],
        [tensor_info("Y"), tensor_info("Z")],
        initializer=[outer_w, trip],
    )
    return _model(graph)


def function_model() -> onnx.ModelProto:
    """A main graph that calls the local function ``local.fn:ScaledAdd`` twice."""
    nodes = [
        helper.make_node("ScaledAdd", ["X", "B"], ["T"], name="call1", domain=FN_DOMAIN),
        helper.make_node("ScaledAdd", ["T", "B"], ["Y"], name="call2", domain=FN_DOMAIN, alpha=3.0),
    ]
    bias = numpy_helper.from_array(np.ones((2, 3), dtype=np.float32), "B")
    graph = helper.make_graph(
        nodes, "calls_function", [tensor_info("X")], [tensor_info("Y")], initializer=[bias]
    )
    return _model(graph, [scaled_add_function()], [(FN_DOMAIN, 1)])


def chain_model(length: int = 3) -> onnx.ModelProto:
    """``X -> Relu -> Relu ... -> Y`` with one initializer ``W`` added at the end."""
    names = ["X", *(f"t{i}" for i in range(1, length)), "Y_pre"]
    nodes = [
        helper.make_node("Relu", [names[i]], [names[i + 1]], name=f"relu{i}") for i in range(length)
    ]
    nodes.append(helper.make_node("Add", ["Y_pre", "W"], ["Y"], name="add_w"))
    weight = numpy_helper.from_array(np.zeros((2, 3), dtype=np.float32), "W")
    graph = helper.make_graph(
        nodes, "chain", [tensor_info("X")], [tensor_info("Y")], initializer=[weight]
    )
    return _model(graph)


def weights_model(arrays: dict[str, np.ndarray]) -> onnx.ModelProto:
    """A model whose initializers are ``arrays``; each is passed to an output by Identity."""
    inits = [numpy_helper.from_array(a, n) for n, a in arrays.items()]
    nodes = []
    for i, name in enumerate(arrays):
        nodes.append(helper.make_node("Identity", [name], [f"{name}_id"], name=f"use_{i}"))
    nodes.append(helper.make_node("Identity", ["X"], ["Y"], name="out"))
    outputs = [tensor_info("Y", TensorProto.FLOAT, [1])]
    outputs.extend(
        helper.make_tensor_value_info(
            f"{n}_id", helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)
        )
        for n, a in arrays.items()
    )
    graph = helper.make_graph(
        nodes, "weights", [tensor_info("X", TensorProto.FLOAT, [1])], outputs, initializer=inits
    )
    return _model(graph)


# --- the onnx package's backend test models -------------------------------------------------
def backend_data_dir() -> Path:
    """``onnx/backend/test/data`` of the installed onnx package."""
    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data"


def backend_model_files() -> list[Path]:
    """Every ``model.onnx`` under the backend test data folder, sorted."""
    return sorted(backend_data_dir().glob("**/model.onnx"))


@functools.cache
def _node_cases() -> dict[str, onnx.ModelProto]:
    from onnx.backend.test.loader import load_node_model_tests

    return {case.name: case.model for case in load_node_model_tests() if case.model is not None}


def backend_node_models() -> dict[str, onnx.ModelProto]:
    """The ~1,900 node test models that onnx builds in memory, by test name (the first call
    costs ~5 s; later calls are free). Treat the models as read-only; copy before editing."""
    return _node_cases()


def backend_node_model(name: str) -> onnx.ModelProto:
    """A fresh copy of one backend node test model."""
    copy = onnx.ModelProto()
    copy.CopyFrom(_node_cases()[name])
    return copy
