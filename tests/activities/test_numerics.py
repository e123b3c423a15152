"""The FP16 numerical check in onnxruntime: inputs (random with a seed, or .pb files), per
output errors with NaN/Inf, a model ORT cannot run, auto-block, the constant evaluator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import transform_models as tm
from onnx import numpy_helper

from designer.activities.numerics import (
    CheckOptions,
    NumericsError,
    compare_outputs,
    convert_and_check,
    load_input_dir,
    ort_evaluator,
    random_inputs,
)
from designer.core.transforms import FP16Options

REPO = Path(__file__).resolve().parents[2]


def test_compare_outputs_errors_nan_inf() -> None:
    ref = {"y": np.array([1.0, 2.0, 0.0, 4.0], np.float32)}
    got = {"y": np.array([1.01, 2.0, np.nan, np.inf], np.float32)}
    (err,) = compare_outputs(ref, got, rtol=1e-2, atol=1e-3)
    assert err.nan == 1 and err.inf == 1 and not err.passed
    assert err.max_abs == pytest.approx(0.01, rel=1e-3)
    assert err.max_rel == pytest.approx(0.01, rel=1e-3)
    (ok,) = compare_outputs(ref, {"y": ref["y"] + 1e-4}, rtol=1e-2, atol=1e-3)
    assert ok.passed
    (shape,) = compare_outputs(ref, {"y": np.zeros(3, np.float32)}, 1e-2, 1e-3)
    assert not shape.passed and "shape" in shape.note


def test_random_inputs_are_seeded() -> None:
    model = tm.tiny_transformer()
    a, b = random_inputs(model, seed=3), random_inputs(model, seed=3)
    assert a["x"].shape == (1, 8, 32)
    np.testing.assert_array_equal(a["x"], b["x"])
    assert not np.array_equal(a["x"], random_inputs(model, seed=4)["x"])
    assert random_inputs(model, dims={"batch": 3})["x"].shape == (3, 8, 32)


def test_input_folder_of_pb_files(tmp_path: Path) -> None:
    model = tm.resnet_like(blocks=1, size=8)
    value = np.full((2, 3, 8, 8), 0.5, np.float32)
    (tmp_path / "input_0.pb").write_bytes(
        numpy_helper.from_array(value, "input").SerializeToString()
    )
    feeds = load_input_dir(model, tmp_path)
    np.testing.assert_array_equal(feeds["input"], value)
    outcome = convert_and_check(model, check=CheckOptions(input_dir=tmp_path, rtol=2e-2, atol=2e-2))
    assert outcome.report.passed and "folder" in outcome.report.inputs
    (tmp_path / "junk.pb").write_bytes(b"\x08\xff\xff")
    with pytest.raises(NumericsError):
        load_input_dir(model, tmp_path)
    with pytest.raises(NumericsError, match="not found"):
        load_input_dir(model, tmp_path / "missing")


def test_model_ort_cannot_run_still_converts() -> None:
    outcome = convert_and_check(tm.custom_op_model())
    onnx.checker.check_model(outcome.result.model)
    assert outcome.report.skipped is not None
    assert "cannot run the original" in outcome.report.skipped
    assert not outcome.report.passed
    assert "numerical check skipped" in outcome.result.log.text()


def test_auto_block_finds_the_breaking_node() -> None:
    model = tm.overflow_model()
    plain = convert_and_check(model)
    assert not plain.report.passed
    assert any(not o.passed for o in plain.report.outputs)
    outcome = convert_and_check(model, check=CheckOptions(auto_block=True))
    assert outcome.report.passed, outcome.report.lines()
    # in float16 semantics x*65504 overflows in mul_1; kept float32, its output (up to
    # ~4e5) overflows again in the Cast to float16 before mul_2, so mul_2 is kept too
    assert outcome.blocked == ["mul_1", "mul_2"]
    assert "auto-block kept 2 node(s)" in outcome.result.log.text()
    assert outcome.result.log.details["auto_blocked"] == ["mul_1", "mul_2"]
    onnx.checker.check_model(outcome.result.model, full_check=True)


def test_check_can_be_disabled_and_bf16_reports() -> None:
    off = convert_and_check(tm.mobilenet_like(), check=CheckOptions(enabled=False))
    assert off.report.skipped == "not requested"
    bf16 = convert_and_check(tm.mobilenet_like(), FP16Options(bfloat16=True))
    assert bf16.report.skipped is not None or bf16.report.outputs


def test_ort_evaluator() -> None:
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["a", "a"], ["b"])],
        "g",
        [onnx.helper.make_tensor_value_info("a", onnx.TensorProto.INT64, [2])],
        [onnx.ValueInfoProto(name="b")],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    out = ort_evaluator(model, {"a": np.array([1, 2], np.int64)})
    assert out["b"].tolist() == [2, 4]


def test_core_transforms_do_not_import_onnxruntime() -> None:
    code = (
        "import sys\n"
        "import designer.core.transforms\n"
        "import designer.commands.transform_commands\n"
        "heavy = ('onnxruntime', 'PySide6', 'tensorrt', 'paramiko')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
