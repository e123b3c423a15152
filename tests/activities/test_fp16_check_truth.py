"""The FP16 check tells the truth about unnamed nodes and about a check that could not run.

- y = Log(Exp(12·x)) with unnamed nodes: the Exp that overflows runs in float16 and is
  blamed as such; with the labels the CLI gives unnamed nodes ('Exp #1 (unnamed)'),
  auto-block keeps Exp and Log in float32 and passes, exactly as for the named model, and
  the written model keeps its nodes unnamed.
- A check onnxruntime cannot run on the random inputs exits 1 with one line saying why and
  what to do; ORT's own log does not reach stderr, in the CLI or in process (the GUI): the
  sessions log fatal errors only and the exception's text, in one line, says why.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.activities.fp16_check import (
    ALREADY_FLOAT32,
    HalfRunError,
    _blame,
    _HalfValues,
    clear_labels,
    label_unnamed_nodes,
    run_half,
)
from designer.activities.fp16_emulate import Probe
from designer.activities.numerics import CheckOptions, convert_and_check, run_model
from designer.activities.ort_errors import MAX_CHARS, error_line, failed_on_inputs
from designer.core.transforms import convert_to_fp16

ROOT = Path(__file__).resolve().parents[2]
F = TensorProto.FLOAT


def exp_log(named: bool) -> onnx.ModelProto:
    """Log(Exp(12·x)), x of [4, 16] ~ N(0, 1): exp(12·3) is far beyond float16's 65504."""
    nodes = [
        helper.make_node("Mul", ["x", "k"], ["a"]),
        helper.make_node("Exp", ["a"], ["b"]),
        helper.make_node("Log", ["b"], ["y"]),
    ]
    if named:
        for index, node in enumerate(nodes):
            node.name = f"{node.op_type}_{index}"
    graph = helper.make_graph(
        nodes,
        "exp_log",
        [helper.make_tensor_value_info("x", F, [4, 16])],
        [helper.make_tensor_value_info("y", F, [4, 16])],
        [numpy_helper.from_array(np.array(12.0, np.float32), "k")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def skip_model() -> onnx.ModelProto:
    """x[batch, 6]·1000·1000 reshaped to [4, 3]: batch taken as 1 does not fit the Reshape."""
    k = numpy_helper.from_array(np.array(1000, np.float32), "k")
    shape = numpy_helper.from_array(np.array([4, 3], np.int64), "s")
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "k"], ["a"], name="mul1"),
            helper.make_node("Mul", ["a", "k"], ["b"], name="mul2"),
            helper.make_node("Reshape", ["b", "s"], ["y"], name="rs"),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, ["batch", 6])],
        [helper.make_tensor_value_info("y", F, [4, 3])],
        [k, shape],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "designer.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


# --- unnamed nodes -------------------------------------------------------------------------
def test_unnamed_exp_is_blamed_as_float16_not_float32() -> None:
    outcome = convert_and_check(exp_log(named=False), check=CheckOptions())
    culprit = outcome.report.first_nonfinite
    assert culprit is not None and culprit.op_type == "Exp" and culprit.tensor == "b"
    assert culprit.block is None  # nothing names it, so nothing can block it by name
    assert culprit.note != ALREADY_FLOAT32 and "already runs" not in culprit.note
    assert "runs in float16 but has no name" in culprit.note


def test_labels_name_unnamed_nodes_and_come_off_again() -> None:
    model = exp_log(named=False)
    model.graph.node[2].name = "Log #2 (unnamed)"  # a real name that looks like a label
    labels = label_unnamed_nodes(model)
    assert labels == {"Mul #0 (unnamed)": 0, "Exp #1 (unnamed)": 1}
    assert [n.name for n in model.graph.node] == [*labels, "Log #2 (unnamed)"]
    again = exp_log(named=False)
    again.graph.node[2].name = "Exp #1 (unnamed)"
    assert label_unnamed_nodes(again)["Exp #1 (unnamed).1"] == 1  # never a duplicate
    assert clear_labels(model, labels) == 2
    assert [n.name for n in model.graph.node] == ["", "", "Log #2 (unnamed)"]


@pytest.mark.parametrize(
    ("named", "kept"),
    [(False, ["Exp #1 (unnamed)", "Log #2 (unnamed)"]), (True, ["Exp_1", "Log_2"])],
)
def test_auto_block_keeps_the_same_nodes_named_or_not(named: bool, kept: list[str]) -> None:
    model = exp_log(named)
    labels = label_unnamed_nodes(model)
    assert bool(labels) is not named
    outcome = convert_and_check(model, check=CheckOptions(auto_block=True))
    assert outcome.report.passed, outcome.log_text()
    assert outcome.blocked == kept
    first = outcome.notes[0]
    assert f"kept '{kept[0]}' in float32" in first and "already runs" not in first
    clear_labels(outcome.result.model, labels)
    names = {n.name for n in outcome.result.model.graph.node if n.op_type != "Cast"}
    assert names == ({""} if not named else {"Mul_0", "Exp_1", "Log_2"})


def test_an_unnamed_cast_is_not_taken_for_an_inserted_one() -> None:
    """The conversion names every Cast it inserts; an unnamed Cast is the original's."""
    model = exp_log(named=False)
    model.graph.node[1].CopyFrom(helper.make_node("Cast", ["a"], ["b"], to=F))
    model16 = convert_to_fp16(model).model
    probe = Probe(1, "", "Cast", "b", ["a"], inserted=True)  # as the emulation marks it
    users = {"b": [n for n in model16.graph.node if "b" in n.input]}
    block, note = _blame(probe, users, set(), _HalfValues(model16))
    assert block is None and "has no name" in note and "inserted" not in note


def test_cli_auto_block_on_unnamed_nodes_passes_and_keeps_them_unnamed(tmp_path: Path) -> None:
    src, out = tmp_path / "exp_log.onnx", tmp_path / "exp_log16.onnx"
    onnx.save(exp_log(named=False), src)
    result = run("fp16", src, out, "--auto-block")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "auto-block: kept 'Exp #1 (unnamed)' in float32" in result.stdout
    assert "already runs in float32" not in result.stdout
    assert "even with every node in float32" not in result.stdout
    written = onnx.load(out)
    assert {n.name for n in written.graph.node if n.op_type != "Cast"} == {""}
    # the labels the messages show work as --block-node too
    by_label = run(
        "fp16", src, out, "--block-node", "Exp #1 (unnamed)", "--block-node", "Log #2 (unnamed)"
    )
    assert by_label.returncode == 0, by_label.stdout + by_label.stderr
    assert "numerical check vs the original (random (seed 0) inputs): passed" in by_label.stdout


# --- a check that could not run ----------------------------------------------------------
def test_cli_check_that_could_not_run_exits_1_with_what_to_do(tmp_path: Path) -> None:
    src, out = tmp_path / "skip.onnx", tmp_path / "skip16.onnx"
    onnx.save(skip_model(), src)
    result = run("fp16", src, out)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "onnxruntime:" not in lines[0].split("error:")[0], lines
    line = lines[0]
    assert line.startswith("onnx-designer: error: the numerical check could not run")
    assert "Reshape node 'rs'" in line and "Input shape:{1,6}, requested shape:{4,3}" in line
    assert "--check-dim batch=N" in line and "--inputs DIR" in line and "--no-check" in line
    assert f"written to {out}" in line and out.exists()
    assert "[E:onnxruntime" not in result.stderr and "\x1b[" not in result.stderr
    as_json = run("fp16", src, out, "--json")
    assert as_json.returncode == 1
    check = json.loads(as_json.stdout)["check"]
    assert check["passed"] is False and check["skipped"]
    assert run("fp16", src, out, "--no-check").returncode == 0  # skipped on purpose
    fitting = run("fp16", src, out, "--check-dim", "batch=2")
    assert fitting.returncode == 1 and "numerical check failed for y" in fitting.stderr


RESHAPE_LINE = (
    "Reshape node 'rs': input_shape_size == requested_shape_size was false. The input tensor "
    "cannot be reshaped to the requested shape. Input shape:{1,6}, requested shape:{4,3}"
)


def ort_error(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> Exception:
    """What onnxruntime raises loading or running ``model`` on ``feeds``."""
    with pytest.raises(Exception) as caught:
        run_model(model, feeds)
    assert "[ONNXRuntimeError]" in str(caught.value)
    return caught.value


def test_an_ort_exception_becomes_one_short_line() -> None:
    failed = ort_error(skip_model(), {"x": np.ones((1, 6), np.float32)})
    assert "reshape_helper.h:91" in str(failed)  # ORT says where in its C++ source
    assert error_line(failed) == RESHAPE_LINE and failed_on_inputs(RESHAPE_LINE)
    unnamed = skip_model()
    unnamed.graph.node[2].name = ""
    line = error_line(ort_error(unnamed, {"x": np.ones((1, 6), np.float32)}))
    assert line.startswith("Reshape node (unnamed): input_shape_size") and failed_on_inputs(line)
    # inputs that do not fit the declared shape: the code word stays, the lines are joined
    dims = error_line(ort_error(exp_log(named=True), {"x": np.ones((1, 16), np.float32)}))
    assert dims.startswith("INVALID_ARGUMENT: Got invalid dimensions for input: x")
    assert "index: 0 Got: 1 Expected: 4" in dims and "\n" not in dims and failed_on_inputs(dims)
    # a model ORT cannot load: no inputs would help
    custom = exp_log(named=True)
    custom.graph.node[1].op_type = "Frobnicate"
    load = error_line(ort_error(custom, {"x": np.ones((4, 16), np.float32)}))
    assert load.startswith("INVALID_GRAPH: This is an invalid model.") and "Frobnicate" in load
    assert not failed_on_inputs(load)
    long = error_line(RuntimeError("x" * 1000))
    assert len(long) == MAX_CHARS and long.endswith("…")
    assert error_line(RuntimeError()) == "RuntimeError"


def test_a_model_ort_cannot_run_writes_nothing_to_stderr_in_process(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """The GUI's path: the check runs in this process, and ORT's C++ log goes to file
    descriptor 2 past Python's sys.stderr; it must stay quiet."""
    outcome = convert_and_check(skip_model(), check=CheckOptions())
    assert outcome.report.skipped == f"onnxruntime cannot run the original model ({RESHAPE_LINE})"
    with pytest.raises(HalfRunError) as converted:  # the converted side's reason, alike
        run_half(skip_model(), {"x": np.ones((1, 6), np.float32)}, None, "ort", set())
    assert str(converted.value) == f"onnxruntime cannot run the converted model ({RESHAPE_LINE})"
    captured = capfd.readouterr()
    assert captured.err == "", captured.err
