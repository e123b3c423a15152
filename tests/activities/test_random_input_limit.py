"""Random check inputs have a size limit: a huge declared dimension ended fp16 in "internal
error: array is too big" (and a merely large one would allocate until memory ran out)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from designer.activities.numerics import NumericsError, random_inputs


def relu_model(shape: list[int]) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("shape", [[2**62, 2**62, 3], [1, 3, 30000, 30000]])
def test_inputs_past_the_limit_are_refused_with_the_reason(shape: list[int]) -> None:
    with pytest.raises(NumericsError, match=r"input 'x' of shape .* \(the limit is 1 GiB\)"):
        random_inputs(relu_model(shape))


def test_inputs_within_the_limit_are_made() -> None:
    feeds = random_inputs(relu_model([1, 3, 224, 224]))
    assert feeds["x"].shape == (1, 3, 224, 224)


def test_fp16_on_a_huge_dimension_says_why_the_check_did_not_run(tmp_path: Path) -> None:
    source = tmp_path / "huge.onnx"
    onnx.save(relu_model([2**62, 2**62, 3]), source)
    run = subprocess.run(
        [sys.executable, "-m", "designer", "fp16", str(source), str(tmp_path / "out.onnx")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    assert "internal error" not in run.stderr
    assert "more than any memory holds" in run.stderr and "--check-dim" in run.stderr
