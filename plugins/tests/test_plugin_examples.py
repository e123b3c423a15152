"""The example tools in plugins/ run as real processes, as the designer runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PLUGINS = Path(__file__).resolve().parents[1]


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def gelu_model() -> onnx.ModelProto:
    """MatMul followed by GELU written out with Erf (which the optimizer fuses), inside an If
    branch too so the histogram has a subgraph to count."""

    def const(name: str, value: object) -> onnx.TensorProto:
        return numpy_helper.from_array(np.array(value, np.float32), name)

    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Div", ["h", "sqrt2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["a"]),
        helper.make_node("Mul", ["h", "a"], ["m"]),
        helper.make_node("Mul", ["m", "half"], ["y"]),
    ]
    inits = [
        const("sqrt2", 1.4142135),
        const("one", 1.0),
        const("half", 0.5),
        numpy_helper.from_array(np.ones((8, 8), np.float32), "w"),
    ]
    graph = helper.make_graph(
        nodes,
        "gelu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_op_histogram_counts_subgraphs(tmp_path: Path) -> None:
    branch = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Relu", ["r"], ["z"])],
        "branch",
        [],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["y0"]),
            helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch),
        ],
        "main",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    path = tmp_path / "with if.onnx"
    onnx.save(helper.make_model(graph), str(path))

    text = run(PLUGINS / "op_histogram.py", path)
    assert text.returncode == 0, text.stderr
    assert "6 node(s), 2 operator type(s)" in text.stdout
    as_json = run(PLUGINS / "op_histogram.py", path, "--json")
    assert json.loads(as_json.stdout) == {"Relu": 5, "If": 1}


def test_op_histogram_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\xff not a model")
    result = run(PLUGINS / "op_histogram.py", bad)
    assert result.returncode == 2
    assert "cannot read" in result.stderr and "Traceback" not in result.stderr


def test_transformer_optimizer_fuses_gelu(tmp_path: Path) -> None:
    model = tmp_path / "gelu.onnx"
    onnx.save(gelu_model(), str(model))
    output = tmp_path / "gelu optimized.onnx"
    result = run(PLUGINS / "ort_transformer_optimizer.py", model, output)
    assert result.returncode == 0, result.stderr
    assert "nodes: 6 -> 2" in result.stdout
    ops = sorted(n.op_type for n in onnx.load(str(output)).graph.node)
    assert ops == ["Gelu", "MatMul"]


def test_transformer_optimizer_without_onnxruntime(tmp_path: Path) -> None:
    blocker = tmp_path / "site" / "onnxruntime"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('blocked for the test')\n")
    model = tmp_path / "gelu.onnx"
    onnx.save(gelu_model(), str(model))
    env = {"PYTHONPATH": str(blocker.parent), "PATH": "/usr/bin:/bin"}
    result = run(PLUGINS / "ort_transformer_optimizer.py", model, tmp_path / "o.onnx", env=env)
    assert result.returncode == 3
    assert "onnxruntime" in result.stderr and "is not installed" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "o.onnx").exists()
