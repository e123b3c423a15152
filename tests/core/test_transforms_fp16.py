"""Convert to FP16 (M-1): valid, sorted, runnable models about half the size, and the
known failure cases of other converters (Resize scales, Cast(to=float), keep-IO-types
ordering, If/Loop, external data, local functions)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import transform_models as tm
from helpers.models import function_model
from onnx import TensorProto

from designer.activities.numerics import CheckOptions, convert_and_check, run_model
from designer.core.document import Document
from designer.core.io import read_model, write_model
from designer.core.transforms import (
    FP16Options,
    TransformCancelled,
    apply_fp16,
    convert_to_fp16,
    is_sorted,
)
from designer.core.walk import iter_graphs

F16 = TensorProto.FLOAT16
REAL_MODELS = {
    "resnet": tm.resnet_like,
    "mobilenet": tm.mobilenet_like,
    "transformer": tm.tiny_transformer,
}


def all_sorted(model: onnx.ModelProto) -> bool:
    return all(is_sorted(walked.graph) for walked in iter_graphs(model))


def io_types(model: onnx.ModelProto) -> list[int]:
    return [v.type.tensor_type.elem_type for v in [*model.graph.input, *model.graph.output]]


@pytest.mark.parametrize("keep_io", [False, True])
@pytest.mark.parametrize("name", sorted(REAL_MODELS))
def test_real_models_convert_check_and_halve(name: str, keep_io: bool) -> None:
    model = REAL_MODELS[name]()
    before = model.SerializeToString()
    outcome = convert_and_check(
        model, FP16Options(keep_io_types=keep_io), check=CheckOptions(rtol=2e-2, atol=2e-2)
    )
    converted = outcome.result.model
    assert model.SerializeToString() == before  # the input is never changed
    onnx.checker.check_model(converted, full_check=True)
    assert all_sorted(converted)
    assert outcome.report.skipped is None and outcome.report.passed, outcome.report.lines()
    assert 0.45 < converted.ByteSize() / model.ByteSize() < 0.6
    float_io = [t for t in io_types(converted) if t in (TensorProto.FLOAT, F16)]
    assert set(float_io) == ({TensorProto.FLOAT} if keep_io else {F16})
    assert "numerical check" in outcome.result.log.text()


def test_resize_scales_stay_float32() -> None:
    result = convert_to_fp16(tm.resize_scales_model())
    model = result.model
    onnx.checker.check_model(model, full_check=True)
    resize = next(n for n in model.graph.node if n.op_type == "Resize")
    scales = next(t for t in model.graph.initializer if t.name == resize.input[2])
    assert scales.data_type == TensorProto.FLOAT
    assert next(t for t in model.graph.initializer if t.name == "w_a").data_type == F16
    feeds = {"input": np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float16)}
    assert run_model(model, feeds)["out"].shape == (1, 2, 16, 16)


@pytest.mark.parametrize("keep_io", [False, True])
def test_cast_to_float_nodes_match_their_consumers(keep_io: bool) -> None:
    model = tm.cast_to_float_model()
    outcome = convert_and_check(model, FP16Options(keep_io_types=keep_io))
    converted = outcome.result.model
    onnx.checker.check_model(converted, full_check=True)
    assert outcome.report.passed, outcome.report.lines()
    inferred = onnx.shape_inference.infer_shapes(converted, strict_mode=True)
    types = {
        v.name: v.type.tensor_type.elem_type
        for v in [*inferred.graph.value_info, *inferred.graph.output]
    }
    original_casts = {n.name for n in model.graph.node if n.op_type == "Cast"}
    for node in converted.graph.node:
        if node.op_type == "Cast" and node.name in original_casts:
            to = next(a.i for a in node.attribute if a.name == "to")
            if node.name == "back" and keep_io:
                continue  # its output is a graph output kept float32 by a Cast after it
            assert to in (F16, TensorProto.INT32), node.name
            assert types.get(node.output[0], to) == to


def test_keep_io_types_on_unsorted_model_gives_sorted_model() -> None:
    model = tm.unsorted(tm.resnet_like(blocks=1))
    assert not is_sorted(model.graph)
    result = convert_to_fp16(model, FP16Options(keep_io_types=True))
    assert all_sorted(result.model)
    assert set(io_types(result.model)) == {TensorProto.FLOAT}
    onnx.checker.check_model(result.model, full_check=True)
    casts = [n for n in result.model.graph.node if n.op_type == "Cast"]
    assert casts[0].input[0] == "input"  # the input cast runs first, not last
    assert result.model.graph.node[-1].op_type == "Cast"


@pytest.mark.parametrize("keep_io", [False, True])
def test_if_loop_subgraphs(keep_io: bool) -> None:
    model = tm.if_loop_model()
    outcome = convert_and_check(model, FP16Options(keep_io_types=keep_io))
    converted = outcome.result.model
    onnx.checker.check_model(converted, full_check=True)
    assert outcome.report.passed, outcome.report.lines()
    assert all_sorted(converted)
    loop = next(n for n in converted.graph.node if n.op_type == "Loop")
    body = loop.attribute[0].g
    assert any(n.op_type == "Cast" for n in body.node)  # casts stay inside the body
    mm = next(n for n in body.node if n.name == "body_mm")
    assert mm.input[1] == "w_shared"  # reads the converted weight directly
    assert next(t for t in converted.graph.initializer if t.name == "w_shared").data_type == F16
    assert outcome.result.log.counts["converted.MatMul"] == 2


def test_external_data_model(tmp_path: Path) -> None:
    source = tmp_path / "src" / "model.onnx"
    source.parent.mkdir()
    tm.save_external(tm.resnet_like(channels=64, blocks=1, size=16), str(source))
    model = read_model(source)
    outcome = convert_and_check(
        model, FP16Options(), source.parent, CheckOptions(rtol=2e-2, atol=2e-2)
    )
    assert outcome.report.passed, outcome.report.lines()
    out = tmp_path / "out" / "model16.onnx"
    out.parent.mkdir()
    report = write_model(outcome.result.model, out, source.parent, limit=0)
    assert [p.name for p in report.data_files] == ["model16.onnx.data"]
    ratio = (out.stat().st_size + report.data_files[0].stat().st_size) / (
        source.stat().st_size + (source.parent / "model.onnx.data").stat().st_size
    )
    assert 0.4 < ratio < 0.65
    reread = read_model(out)
    onnx.checker.check_model(str(out), full_check=True)
    feeds = {"input": np.zeros((1, 3, 16, 16), np.float16)}
    assert run_model(reread, feeds, out.parent)["logits"].dtype == np.float16


def test_local_function_body_converted_boundary_kept() -> None:
    result = convert_to_fp16(function_model())
    onnx.checker.check_model(result.model, full_check=True)
    assert result.log.counts.get("functions_converted") == 1
    feeds = {"X": np.ones((2, 3), np.float16)}
    expected = run_model(function_model(), {"X": np.ones((2, 3), np.float32)})["Y"]
    np.testing.assert_allclose(run_model(result.model, feeds)["Y"], expected, rtol=1e-2)


def test_block_lists_keep_nodes_float32() -> None:
    model = tm.resnet_like(blocks=1)
    result = convert_to_fp16(
        model, FP16Options(block_ops=frozenset({"Gemm"}), block_nodes=frozenset({"relu_3"}))
    )
    assert result.log.counts["kept_float32.Gemm"] == 1
    assert result.log.counts["kept_float32.Relu"] == 1
    assert "fc" not in result.converted_nodes and "relu_3" not in result.converted_nodes
    assert (
        next(t for t in result.model.graph.initializer if t.name == "fc_w").data_type
        == TensorProto.FLOAT
    )
    onnx.checker.check_model(result.model, full_check=True)


@pytest.mark.parametrize("clip", [True, False])
def test_out_of_range_constants_are_counted(clip: bool) -> None:
    result = convert_to_fp16(tm.overflow_model(), FP16Options(clip_constants=clip))
    assert result.log.counts["values_clipped"] == 1
    k_up = next(t for t in result.model.graph.initializer if t.name == "k_up")
    value = onnx.numpy_helper.to_array(k_up)
    assert (value == 65504) if clip else np.isinf(value)
    assert any("k_up" in w for w in result.log.warnings)


def test_bfloat16_respects_schemas() -> None:
    model = tm.tiny_transformer()
    result = convert_to_fp16(model, FP16Options(bfloat16=True))
    onnx.checker.check_model(result.model, full_check=True)
    assert TensorProto.BFLOAT16 in {t.data_type for t in result.model.graph.initializer}
    conv = convert_to_fp16(tm.resnet_like(blocks=1), FP16Options(bfloat16=True))
    assert conv.log.counts.get("kept_float32.Conv", 0) > 0  # opset 17 Conv has no bfloat16
    onnx.checker.check_model(conv.model, full_check=True)


def test_cancel_and_progress() -> None:
    seen: list[float] = []
    convert_to_fp16(tm.resnet_like(blocks=1), progress=lambda f, m: seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    with pytest.raises(TransformCancelled):
        convert_to_fp16(tm.resnet_like(blocks=1), cancel=lambda: True)


def test_apply_to_document_is_one_undo_step() -> None:
    doc = Document(tm.mobilenet_like())
    before = doc.model.SerializeToString()
    apply_fp16(doc)
    assert len(doc.undo_stack) == 1 and doc.modified
    assert doc.model.graph.initializer[0].data_type == F16
    doc.undo_stack.undo()
    assert doc.model.SerializeToString() == before
    doc.undo_stack.redo()
    assert doc.model.graph.initializer[0].data_type == F16
