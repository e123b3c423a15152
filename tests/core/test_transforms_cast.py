"""Batch Tensor Cast (M-3): candidates, warnings with counts, Cast nodes back where type
constraints need them, and undo restoring types and values bit for bit."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import transform_models as tm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import TensorProto, helper, numpy_helper

from designer.activities.numerics import random_inputs, run_model
from designer.core.document import Document
from designer.core.transforms import (
    TransformError,
    apply_cast,
    cast_tensors,
    list_cast_candidates,
    parse_type,
    preview_cast,
    select_candidates,
)
from designer.core.transforms.dtypes import convert_array, np_dtype

F16 = TensorProto.FLOAT16


def keys_for(model: onnx.ModelProto, inits: list[str] = [], attrs: list[str] = []) -> list[str]:  # noqa: B006
    return select_candidates(list_cast_candidates(model), inits, attrs)


def test_candidates_list_initializers_and_attributes() -> None:
    model = tm.if_loop_model()
    cands = list_cast_candidates(model)
    inits = {c.name for c in cands if c.kind == "initializer"}
    assert inits == {"w_shared", "bias", "trip"}
    attrs = [c for c in cands if c.kind == "attribute"]
    assert [(c.scope, c.node, c.name, c.tensor_name) for c in attrs] == [
        ("main/loop.body", "body_const", "value", "step")
    ]
    with pytest.raises(TransformError, match="no castable initializer"):
        keys_for(model, ["nope"])
    with pytest.raises(TransformError, match=r"NODE\.ATTRIBUTE"):
        keys_for(model, [], ["body_const"])


def test_cast_weight_inserts_cast_back_and_runs() -> None:
    model = tm.resnet_like(blocks=1)
    result = cast_tensors(model, keys_for(model, ["w0", "fc_w"]), F16)
    onnx.checker.check_model(result.model, full_check=True)
    assert result.log.counts["tensors_cast"] == 2
    assert result.log.counts["casts_inserted"] == 2
    assert sum("inserted Cast to float" in line for line in result.log.lines) == 2
    feeds = random_inputs(model)
    np.testing.assert_allclose(
        run_model(result.model, feeds)["logits"], run_model(model, feeds)["logits"], atol=2e-2
    )


def test_cast_in_subgraph_and_constant_attribute() -> None:
    model = tm.if_loop_model()
    result = cast_tensors(model, keys_for(model, ["w_shared"], ["body_const.value"]), F16)
    onnx.checker.check_model(result.model, full_check=True)
    body = next(n for n in result.model.graph.node if n.op_type == "Loop").attribute[0].g
    assert sum(n.op_type == "Cast" for n in body.node) == 2  # w_shared and step, in the body
    feeds = random_inputs(model)
    np.testing.assert_allclose(
        run_model(result.model, feeds)["out"], run_model(model, feeds)["out"], atol=1e-2
    )


def test_constant_list_attribute_becomes_tensor() -> None:
    node = helper.make_node("Constant", [], ["c"], name="k", value_floats=[1.5, 70000.0])
    graph = helper.make_graph(
        [node, helper.make_node("Identity", ["c"], ["y"], name="id")],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    preview = preview_cast(model, keys_for(model, [], ["k.value_floats"]), F16)
    assert preview[0].counts.clipped == 1
    result = cast_tensors(model, keys_for(model, [], ["k.value_floats"]), F16)
    const = result.model.graph.node[0]
    assert [a.name for a in const.attribute] == ["value"]
    assert numpy_helper.to_array(const.attribute[0].t).tolist() == [1.5, 65504.0]
    assert result.log.counts["values_clipped"] == 1 and result.log.warnings
    onnx.checker.check_model(result.model, full_check=True)


@pytest.mark.parametrize(
    ("values", "to", "clipped", "rounded"),
    [
        (np.array([1, 300, -200, 5], np.int64), TensorProto.INT8, 2, 0),
        (np.array([1.7, -2.2, 3.0, np.nan], np.float32), TensorProto.INT32, 1, 2),
        (np.array([0.1, 1.0, 1e6], np.float32), F16, 1, 1),
        (np.array([2**53 + 1, 3], np.int64), TensorProto.DOUBLE, 0, 1),
        (np.array([0, 2, 1], np.int32), TensorProto.BOOL, 0, 1),
    ],
)
def test_conversion_counts(values: np.ndarray, to: int, clipped: int, rounded: int) -> None:
    out, counts = convert_array(values, to)
    assert out.dtype == np_dtype(to)
    assert (counts.clipped, counts.rounded) == (clipped, rounded)


def test_bad_requests() -> None:
    model = tm.resnet_like(blocks=1)
    with pytest.raises(TransformError, match="at least one"):
        cast_tensors(model, [], F16)
    with pytest.raises(TransformError, match="nothing castable"):
        cast_tensors(model, ["init:main:missing"], F16)
    with pytest.raises(ValueError, match="unknown or unsupported"):
        parse_type("complex64")
    assert parse_type("fp16") == F16 and parse_type("int8") == TensorProto.INT8


DTYPES = [
    TensorProto.FLOAT,
    TensorProto.FLOAT16,
    TensorProto.BFLOAT16,
    TensorProto.DOUBLE,
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.INT32,
    TensorProto.INT64,
    TensorProto.BOOL,
]


def _array(draw: st.DrawFn, elem: int) -> np.ndarray:
    dtype = np_dtype(elem)
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4))
    if elem == TensorProto.BFLOAT16:
        raw = draw(hnp.arrays(np.uint16, shape))
        return raw.view(dtype)
    return draw(hnp.arrays(dtype, shape))


@st.composite
def cast_case(draw: st.DrawFn) -> tuple[np.ndarray, int, int]:
    src = draw(st.sampled_from(DTYPES))
    return _array(draw, src), src, draw(st.sampled_from(DTYPES))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cast_case())
def test_cast_undo_is_bit_exact(case: tuple[np.ndarray, int, int]) -> None:
    values, src, to = case
    tensor = onnx.TensorProto(name="t", data_type=src, dims=list(values.shape))
    tensor.raw_data = values.tobytes()
    graph = helper.make_graph(
        [helper.make_node("Identity", ["t"], ["y"], name="id")],
        "g",
        [],
        [helper.make_tensor_value_info("y", src, list(values.shape))],
        [tensor],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    doc = Document(model)
    before = doc.model.SerializeToString()
    if src == to:
        return
    apply_cast(doc, ["init:main:t"], to)
    cast = doc.model.graph.initializer[0]
    assert cast.data_type == to
    expected, _counts = convert_array(values, to)
    assert numpy_helper.to_array(cast).tobytes() == expected.tobytes()
    doc.undo_stack.undo()
    assert doc.model.SerializeToString() == before
    doc.undo_stack.redo()
    assert doc.model.graph.initializer[0].data_type == to
