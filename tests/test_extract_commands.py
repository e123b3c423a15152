"""``onnx-designer extract``, run as a real subprocess: subgraphs and functions written as
standalone models, usage and user errors as one line on stderr."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from helpers.models import FN_DOMAIN, function_model, subgraph_model, tensor_info
from onnx import TensorProto, helper, numpy_helper
from test_cli import assert_one_line_error, run


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, path)
    return path


def test_extract_subgraph_to_a_valid_model(tmp_path: Path) -> None:
    source = _save(subgraph_model(), tmp_path / "sub.onnx")
    out = tmp_path / "then.onnx"
    result = run("extract", source, out, "--node", "branch", "--attribute", "then_branch")
    assert result.returncode == 0, result.stderr
    assert f"saved {out}" in result.stdout and "2 input(s)" not in result.stdout
    assert not result.stderr  # the saved line is no message: stdout, like fp16's
    onnx.checker.check_model(str(out), full_check=True)
    model = onnx.load(out)
    assert [v.name for v in model.graph.input] == ["A"]
    assert [t.name for t in model.graph.initializer] == ["outer_w"]
    a = np.full((2, 3), 2.0, dtype=np.float32)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"A": a})[0], a * 3.0)
    assert not list(tmp_path.glob("*.tmp*"))  # written through a temporary file


def test_extract_function(tmp_path: Path) -> None:
    source = _save(function_model(), tmp_path / "fn.onnx")
    out = tmp_path / "fn_body.onnx"
    result = run("extract", source, out, "--function", f"{FN_DOMAIN}:ScaledAdd")
    assert result.returncode == 0, result.stderr
    onnx.checker.check_model(str(out), full_check=True)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    ones = np.ones((2, 3), dtype=np.float32)
    np.testing.assert_allclose(session.run(None, {"a": ones, "b": ones})[0], ones * 4.0)
    bare = run("extract", source, tmp_path / "bare.onnx", "--function", "ScaledAdd")
    assert bare.returncode == 0, bare.stderr  # a name only one domain has


def test_extract_keeps_external_weights_beside_the_new_file(tmp_path: Path) -> None:
    """A branch reading an initializer stored as external data: the copy refers to a data
    file written beside the output."""
    weight = np.arange(4096, dtype=np.float32).reshape(64, 64)
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["X", "big"], ["t_out"], name="t_add")],
        "then_branch",
        [],
        [tensor_info("t_out", shape=(64, 64))],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["e_out"], name="e_id")],
        "else_branch",
        [],
        [tensor_info("e_out", shape=(64, 64))],
    )
    graph = helper.make_graph(
        [
            helper.make_node(
                "If", ["c"], ["Y"], name="br", then_branch=then_branch, else_branch=else_branch
            )
        ],
        "ext",
        [tensor_info("X", shape=(64, 64)), tensor_info("c", TensorProto.BOOL, [])],
        [tensor_info("Y", shape=(64, 64))],
        initializer=[numpy_helper.from_array(weight, "big")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    onnx.save(
        model,
        src_dir / "ext.onnx",
        save_as_external_data=True,
        location="ext.bin",
        size_threshold=0,
    )
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "branch.onnx"
    result = run("extract", src_dir / "ext.onnx", out, "--node", "br", "--attribute", "then_branch")
    assert result.returncode == 0, result.stderr
    onnx.checker.check_model(str(out), full_check=True)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    x = np.ones((64, 64), dtype=np.float32)
    np.testing.assert_allclose(session.run(None, {"X": x})[0], x + weight)


def test_user_errors_are_one_line(tmp_path: Path) -> None:
    source = _save(subgraph_model(), tmp_path / "sub.onnx")
    out = tmp_path / "out.onnx"
    unknown = run("extract", source, out, "--node", "nope", "--attribute", "body")
    assert_one_line_error(unknown, "no node named 'nope'")
    wrong_attr = run("extract", source, out, "--node", "loop", "--attribute", "then_branch")
    assert_one_line_error(wrong_attr, "no graph attribute 'then_branch'", "it has: body")
    no_fn = run("extract", source, out, "--function", "x:F")
    assert_one_line_error(no_fn, "no local function 'x:F'")
    fn_source = _save(function_model(), tmp_path / "fn.onnx")
    model = onnx.load(fn_source)
    del model.graph.node[:]
    model.graph.node.append(helper.make_node("Identity", ["X"], ["Y"], name="only"))
    uncalled = _save(model, tmp_path / "uncalled.onnx")
    no_site = run("extract", uncalled, out, "--function", f"{FN_DOMAIN}:ScaledAdd")
    assert_one_line_error(no_site, "input types", "call it once from the main graph")
    missing = run("extract", tmp_path / "missing.onnx", out, "--node", "x", "--attribute", "y")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert not out.exists()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    source = _save(subgraph_model(), tmp_path / "sub.onnx")
    out = tmp_path / "out.onnx"
    assert run("extract", source, out).returncode == 2  # neither --node nor --function
    assert run("extract", source, out, "--node", "loop").returncode == 2  # no --attribute
    both = run("extract", source, out, "--node", "loop", "--function", "a:b")
    assert both.returncode == 2
    help_text = run("extract", "--help")
    assert help_text.returncode == 0 and "onnx-designer extract" in help_text.stdout


def test_index_with_function_is_a_usage_error(tmp_path: Path) -> None:
    """``--index`` selects an element of a node's GRAPHS attribute; with ``--function`` it
    was silently ignored."""
    source = _save(function_model(), tmp_path / "fn.onnx")
    out = tmp_path / "out.onnx"
    for index in ("3", "-1"):
        result = run(
            "extract", source, out, "--function", f"{FN_DOMAIN}:ScaledAdd", "--index", index
        )
        assert result.returncode == 2
        assert "--index goes with --node and --attribute, not --function" in result.stderr
    assert not out.exists()


def test_extract_an_unshaped_loop_body(tmp_path: Path) -> None:
    """A Loop body declaring its inputs and outputs without shapes (torch's form) becomes a
    valid model: inputs shaped by the Loop's signature, outputs by inference."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["acc", "X"], ["acc_out"], name="body_add"),
            helper.make_node("Identity", ["cond"], ["cond_out"], name="body_id"),
        ],
        "body",
        [
            tensor_info("i", TensorProto.INT64, None),
            tensor_info("cond", TensorProto.BOOL, None),
            tensor_info("acc", shape=None),
        ],
        [tensor_info("cond_out", TensorProto.BOOL, None), tensor_info("acc_out", shape=None)],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "A"], ["Y"], name="loop0", body=body)],
        "LoopU",
        [tensor_info("n", TensorProto.INT64, []), tensor_info("A"), tensor_info("X")],
        [tensor_info("Y")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    source = _save(model, tmp_path / "loop.onnx")
    out = tmp_path / "body.onnx"
    result = run("extract", source, out, "--node", "loop0", "--attribute", "body")
    assert result.returncode == 0, result.stderr
    onnx.checker.check_model(str(out), full_check=True)
    a = np.full((2, 3), 2.0, dtype=np.float32)
    feeds = {"i": np.array(0, np.int64), "cond": np.array(True), "acc": a, "X": a}
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(["acc_out"], feeds)[0], a * 2)
