"""Sanitize Graph (M-2): folding (shapes too), passes, size threshold, subgraphs, functions,
graph outputs kept, unused parts removed; outputs equal, node counts vs Polygraphy."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import transform_models as tm

from designer.activities.numerics import ort_evaluator, random_inputs, run_model
from designer.core.document import Document
from designer.core.transforms import (
    SanitizeOptions,
    TransformError,
    apply_sanitize,
    reference_evaluator,
    sanitize,
)

HAS_POLYGRAPHY = (
    importlib.util.find_spec("polygraphy") is not None
    and (Path(sys.executable).parent / "polygraphy").exists()
)


def same_outputs(
    a: onnx.ModelProto, b: onnx.ModelProto, dims: dict[str, int] | None = None
) -> None:
    feeds = random_inputs(a, seed=1, dims=dims or {})
    expected, actual = run_model(a, feeds), run_model(b, feeds)
    assert expected.keys() == actual.keys()
    for name, value in expected.items():
        np.testing.assert_array_equal(actual[name], value)


def polygraphy_nodes(model: onnx.ModelProto, tmp_path: Path) -> int:
    src, dst = tmp_path / "poly_in.onnx", tmp_path / "poly_out.onnx"
    onnx.save(model, src)
    cmd = [
        str(Path(sys.executable).parent / "polygraphy"),
        "surgeon",
        "sanitize",
        str(src),
        "--fold-constants",
        "-o",
        str(dst),
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return len(onnx.load(dst).graph.node)


@pytest.mark.parametrize("dynamic", [False, True])
def test_folds_shape_subgraph_and_keeps_outputs(dynamic: bool, tmp_path: Path) -> None:
    model = tm.shape_subgraph_model(dynamic_batch=dynamic)
    before = model.SerializeToString()
    result = sanitize(model, evaluator=ort_evaluator)
    assert model.SerializeToString() == before
    onnx.checker.check_model(result.model, full_check=True)
    same_outputs(model, result.model, {"B": 3})
    folded = result.log.counts_with("folded")
    assert folded["Gather"] >= 2 and folded["ConstantOfShape"] == 1
    nodes = len(result.model.graph.node)
    assert nodes == (4 if not dynamic else 8)
    assert "Shape" not in {n.op_type for n in result.model.graph.node} or dynamic
    text = result.log.text()
    assert "folded" in text and "size" in text and "->" in text
    if HAS_POLYGRAPHY:
        assert nodes <= polygraphy_nodes(model, tmp_path)


@pytest.mark.skipif(not HAS_POLYGRAPHY, reason="polygraphy (bench extra) not installed")
@pytest.mark.parametrize("build", [tm.tiny_transformer, tm.if_loop_model, tm.two_pass_model])
def test_node_count_at_most_polygraphy(build: object, tmp_path: Path) -> None:
    model = build()  # type: ignore[operator]
    result = sanitize(model, evaluator=ort_evaluator)
    assert len(result.model.graph.node) <= polygraphy_nodes(model, tmp_path)
    same_outputs(model, result.model, {"batch": 2})


def test_passes_option() -> None:
    model = tm.two_pass_model()
    one = sanitize(model, SanitizeOptions(passes=1), evaluator=ort_evaluator)
    auto = sanitize(model, evaluator=ort_evaluator)
    assert one.log.counts["passes"] == 1
    assert "Shape" in {n.op_type for n in one.model.graph.node}
    assert "Shape" not in {n.op_type for n in auto.model.graph.node}
    assert auto.log.counts["passes"] >= 2
    zero = sanitize(model, SanitizeOptions(passes=0), evaluator=ort_evaluator)
    assert zero.log.counts["passes"] == 0 and not zero.log.counts_with("folded")
    for result in (one, auto, zero):
        same_outputs(model, result.model)


def test_fold_size_threshold() -> None:
    model = tm.shape_subgraph_model()
    small = sanitize(model, SanitizeOptions(fold_size_threshold=16), evaluator=ort_evaluator)
    # the float vectors of 5 elements (20 bytes) stay computed; the int64 shape math folds
    assert small.log.counts["not_folded_too_large"] > 0
    assert "ConstantOfShape" in {n.op_type for n in small.model.graph.node}
    assert small.log.counts_with("folded").get("Concat") == 1
    same_outputs(model, small.model)
    assert "over 16 bytes" in small.log.text()


def test_subgraph_and_function_folding() -> None:
    model = tm.if_loop_model()
    result = sanitize(model, evaluator=ort_evaluator)
    loop = next(n for n in result.model.graph.node if n.op_type == "Loop")
    body = loop.attribute[0].g
    assert "Constant" not in {n.op_type for n in body.node}
    assert [t.name for t in body.initializer] == ["step"]
    onnx.checker.check_model(result.model, full_check=True)
    same_outputs(model, result.model)

    model = tm.function_fold_model()
    result = sanitize(model, evaluator=ort_evaluator)
    fn = result.model.functions[0]
    assert [n.op_type for n in fn.node] == ["Constant", "Add"]
    assert [v.name for v in result.model.graph.output] == ["out", "const_out"]
    assert [t.name for t in result.model.graph.initializer] == ["const_out"]
    onnx.checker.check_model(result.model, full_check=True)
    same_outputs(model, result.model)


def test_reference_evaluator_without_onnxruntime() -> None:
    model = tm.shape_subgraph_model()
    a = sanitize(model, evaluator=reference_evaluator)
    b = sanitize(model, evaluator=ort_evaluator)
    assert len(a.model.graph.node) == len(b.model.graph.node) == 4
    no_eval = sanitize(model)
    assert "only shape computations" in no_eval.log.text()
    assert no_eval.log.counts_with("folded").get("Shape") == 1


def test_removes_unused_initializers_and_value_info() -> None:
    model = tm.resnet_like(blocks=1)
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.ones(3, np.float32), "orphan"))
    model.graph.value_info.append(onnx.helper.make_tensor_value_info("ghost", 1, [1]))
    result = sanitize(model, evaluator=ort_evaluator)
    assert "orphan" not in {t.name for t in result.model.graph.initializer}
    assert "ghost" not in {v.name for v in result.model.graph.value_info}
    assert result.log.counts["removed_initializers"] == 1
    assert result.log.counts["removed_value_info"] == 1


def test_bad_options_and_cancel() -> None:
    with pytest.raises(TransformError):
        sanitize(tm.two_pass_model(), SanitizeOptions(passes=-1))
    with pytest.raises(TransformError):
        sanitize(tm.two_pass_model(), SanitizeOptions(fold_size_threshold=-5))
    from designer.core.transforms import TransformCancelled

    with pytest.raises(TransformCancelled):
        sanitize(tm.two_pass_model(), cancel=lambda: True)


def test_apply_to_document_one_undo_step() -> None:
    doc = Document(tm.shape_subgraph_model())
    before = doc.model.SerializeToString()
    apply_sanitize(doc, evaluator=ort_evaluator)
    assert len(doc.model.graph.node) == 4 and len(doc.undo_stack) == 1
    doc.undo_stack.undo()
    assert doc.model.SerializeToString() == before
