"""``onnx-designer compose``, run as a real subprocess: the composed model equals running A
then B under ONNX Runtime; bad maps, missing prefixes and usage errors give one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from test_cli import assert_one_line_error, run


def _scale(name: str, inp: str, out: str, factor: float, path: Path) -> Path:
    """inp[2,3] -> inp * factor + 1 (initializers 'f' and 'one')."""
    graph = helper.make_graph(
        [
            helper.make_node("Mul", [inp, "f"], ["t"], name="mul"),
            helper.make_node("Add", ["t", "one"], [out], name="add"),
        ],
        name,
        [helper.make_tensor_value_info(inp, TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [2, 3])],
        [
            numpy_helper.from_array(np.array(factor, np.float32), "f"),
            numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_compose_runs_a_then_b(tmp_path: Path) -> None:
    a = _scale("a", "x", "y", 2.0, tmp_path / "a.onnx")
    b = _scale("b", "z", "w", 3.0, tmp_path / "b.onnx")
    out = tmp_path / "ab.onnx"
    result = run("compose", a, b, out, "--map", "y:z", "--prefix-a", "A.", "--prefix-b", "B.")
    assert result.returncode == 0, result.stderr
    assert f"saved {out}" in result.stdout and "1 connection(s)" in result.stdout
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(["B.w"], {"A.x": x})[0], (x * 2 + 1) * 3 + 1)
    assert not list(tmp_path.glob(".*.tmp"))


def test_compose_json(tmp_path: Path) -> None:
    a = _scale("a", "x", "y", 2.0, tmp_path / "a.onnx")
    b = _scale("b", "z", "w", 3.0, tmp_path / "b.onnx")
    out = tmp_path / "ab.onnx"
    result = run(
        "compose", a, b, out, "--map", "y:z", "--prefix-a", "a_", "--prefix-b", "b_", "--json"
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["inputs"] == ["a_x"] and payload["outputs"] == ["b_w"]
    assert payload["nodes"] == 4


def test_compose_errors_are_one_line(tmp_path: Path) -> None:
    a = _scale("a", "x", "y", 2.0, tmp_path / "a.onnx")
    b = _scale("b", "z", "w", 3.0, tmp_path / "b.onnx")
    out = tmp_path / "ab.onnx"
    assert_one_line_error(run("compose", a, b, out, "--map", "y:z"), "give prefixes")
    assert_one_line_error(
        run("compose", a, b, out, "--map", "q:z", "--prefix-a", "a_", "--prefix-b", "b_"),
        "A has no output 'q'",
    )
    assert_one_line_error(
        run("compose", a, tmp_path / "missing.onnx", out, "--map", "y:z"), "file not found"
    )
    assert not out.exists()
    usage = run("compose", a, b, out)
    assert usage.returncode == 2 and "--map" in usage.stderr


def _if_model(path: Path) -> Path:
    """c, x -> If(c): x + w / x - w -> y; the branches read the outer ``x`` and ``w``."""
    then = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["o1"], name="then_add")],
        "then",
        [],
        [helper.make_tensor_value_info("o1", TensorProto.FLOAT, [2, 3])],
    )
    other = helper.make_graph(
        [helper.make_node("Sub", ["x", "w"], ["o2"], name="else_sub")],
        "else",
        [],
        [helper.make_tensor_value_info("o2", TensorProto.FLOAT, [2, 3])],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then, else_branch=other)],
        "IfM",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.full((2, 3), 0.5, np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_compose_if_models_with_prefixes(tmp_path: Path) -> None:
    """QA model-ops 8: the prefixes reach the If branches' reads of outer values."""
    a = _if_model(tmp_path / "if.onnx")
    out = tmp_path / "ifif.onnx"
    result = run("compose", a, a, out, "--map", "y:x", "--prefix-a", "a/", "--prefix-b", "b/")
    assert result.returncode == 0, result.stderr
    onnx.checker.check_model(str(out), full_check=True)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    feeds = {"a/c": np.array(True), "a/x": x, "b/c": np.array(True)}
    np.testing.assert_allclose(session.run(["b/y"], feeds)[0], x + 1.0)
