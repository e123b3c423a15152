"""``onnx-designer fp16 --check-…``: the check's limits and backend on the command line, the
overflow failing with the node named, auto-block fixing it, bad values refused (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer import cli


def _overflow(path: Path) -> Path:
    k = numpy_helper.from_array(np.array(1000.0, np.float32), "k")
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "k"], ["a"], name="mul_a"),
            helper.make_node("Mul", ["a", "k"], ["y"], name="mul_b"),
        ],
        "overflow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])],
        [k],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_overflow_fails_naming_the_node_and_auto_block_fixes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _overflow(tmp_path / "overflow.onnx")
    assert cli.main(["fp16", str(src), str(tmp_path / "a.onnx"), "--keep-io-types"]) == 1
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert "numerical check failed for y (" in line and "new NaN/Inf" in line
    assert "first Inf/NaN: node 'mul_b' (Mul)" in line
    assert "emulated float16" in captured.out
    args = ["fp16", str(src), str(tmp_path / "b.onnx"), "--keep-io-types", "--auto-block"]
    assert cli.main([*args, "--json", "--check-dim", "n=3"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["check"]["passed"] and payload["auto_blocked"] == ["mul_b"]
    assert payload["check"]["backend"] == "emulate"
    assert len(payload["check"]["outputs"]) == 1
    assert cli.main(["fp16", str(src), str(tmp_path / "c.onnx"), "--keep-io-types",
                     "--check-backend", "ort"]) == 0  # fmt: skip
    assert "NOT float16-faithful" in capsys.readouterr().out


def test_limits_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "small.onnx"
    k = numpy_helper.from_array(np.array(0.3, np.float32), "k")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "k"], ["y"], name="m")],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])],
        [k],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, src)
    out = str(tmp_path / "o.onnx")
    assert cli.main(["fp16", str(src), out]) == 0
    text = capsys.readouterr().out
    assert "rel L2 <= 0.01, cosine >= 0.9999, max abs <= 0.02 of range, top-5 >= 80%" in text
    assert "top-1" in text  # [2, 16] is classifier-like
    strict = ["--check-max-rel-l2", "1e-9", "--check-min-cosine", "0.5"]
    assert cli.main(["fp16", str(src), out, *strict, "--check-top-k", "3"]) == 1
    captured = capsys.readouterr()
    assert "rel L2 <= 1e-09, cosine >= 0.5" in captured.out and "top-3" in captured.out
    assert "y (rel L2 > 1e-09)" in captured.err
    assert cli.main(["fp16", str(src), out, "--rtol", "1e-9", "--atol", "0"]) == 1
    assert "|a-e| > 0 + 1e-09*|e|" in capsys.readouterr().err
    for bad in (
        ["--check-min-cosine", "2"],
        ["--check-top-k", "0"],
        ["--check-min-topk", "x"],
        ["--check-dim", "seq"],
        ["--check-backend", "gpu"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["fp16", str(src), out, *bad])
        assert exit_info.value.code == 2
        capsys.readouterr()
