"""What Sanitize Graph's log tells: each folded node group and the constant it became
(transitively across passes), every initializer added or removed with its bytes, unused
nodes by name, and why the size changed (a folded Expand that makes a 4 MB constant out of
two small inputs is named). Also the ``sanitize`` command: the affine_grid backend model
gives a valid file with exit 0, and the JSON carries the same details."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from helpers import sanitize_compare as sc
from onnx import TensorProto, helper, numpy_helper

from designer.core.transforms import SanitizeOptions

ROOT = Path(__file__).resolve().parents[2]


def expand_model() -> onnx.ModelProto:
    """x + Expand(one, [1024, 1024]) with the shape made by Shape→Gather→Unsqueeze→Concat of
    a static input, plus a dead Relu."""
    inits = [
        numpy_helper.from_array(np.array([1.5], np.float32), "one"),
        numpy_helper.from_array(np.array([1024], np.int64), "width"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "axes"),
        numpy_helper.from_array(np.zeros(8, np.float32), "never_used"),
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["x_shape"], name="shape"),
        helper.make_node("Gather", ["x_shape", "zero"], ["rows"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["rows", "axes"], ["rows_1d"], name="unsqueeze"),
        helper.make_node("Concat", ["rows_1d", "width"], ["big_shape"], name="concat", axis=0),
        helper.make_node("Expand", ["one", "big_shape"], ["big"], name="expand"),
        helper.make_node("Add", ["x", "big"], ["y"], name="add"),
        helper.make_node("Relu", ["x"], ["dead_out"], name="dead"),
    ]
    graph = helper.make_graph(
        nodes,
        "expand",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024, 1024])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_log_names_groups_initializers_unused_nodes_and_size_cause() -> None:
    model = expand_model()
    result = sc.ours(model)
    text = result.log.text()
    assert [n.name for n in result.model.graph.node] == ["add"]
    # the group: Expand and the shape chain behind it, folded into one 4 MB constant
    group = next(g for g in result.log.details["folded_groups"] if g["constant"] == "big")
    assert group["bytes"] == 1024 * 1024 * 4
    assert {"Expand 'expand'", "Concat 'concat'", "Unsqueeze 'unsqueeze'"} <= set(group["nodes"])
    assert "Gather 'gather'" in group["nodes"] or "Shape 'shape'" in group["nodes"]
    assert "added initializer 'big' float32[1024, 1024] (4,194,304 bytes) folded from" in text
    # every initializer removed, with its bytes and why
    removed = {r["name"]: r["bytes"] for r in result.log.details["initializers_removed"]}
    assert removed == {"one": 4, "width": 8, "zero": 8, "axes": 8, "never_used": 32}
    assert "removed initializer 'one' (4 bytes): folded into a constant" in text
    assert "removed initializer 'never_used' (32 bytes): no longer used" in text
    assert "removed 1 unused node(s): Relu 'dead'" in text
    # why the size changed
    assert "folded Expand produced a 4.0 MB constant 'big' replacing" in text
    net = result.log.counts["size_after"] - result.log.counts["size_before"]
    assert f"({net:+,})" in text and net > 4_000_000
    assert sc.max_output_difference(model, result.model) <= sc.TOLERANCE


def test_size_threshold_keeps_the_large_constant_and_says_so() -> None:
    result = sc.ours(expand_model(), SanitizeOptions(fold_size_threshold=1 << 20))
    assert "expand" in {n.name for n in result.model.graph.node}
    assert "1 foldable node(s) kept: result over 1,048,576 bytes" in result.log.text()
    assert "folded Expand produced" not in result.log.text()


def test_groups_follow_values_across_passes() -> None:
    """A constant made in a later pass names the nodes folded into it in earlier ones."""
    model = expand_model()
    result = sc.ours(model, SanitizeOptions(passes=None))
    big = next(g for g in result.log.details["folded_groups"] if g["constant"] == "big")
    assert len(big["nodes"]) >= 4


def test_cli_affine_grid_backend_model_is_valid_and_json_has_details(tmp_path: Path) -> None:
    src, out = tmp_path / "affine.onnx", tmp_path / "out.onnx"
    onnx.save(sc.backend_model("test_affine_grid_2d_align_corners_expanded"), src)
    done = subprocess.run(
        [sys.executable, "-m", "designer.cli", "sanitize", str(src), str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["counts"]["flattened_if"] >= 4
    assert payload["folded_groups"] and payload["initializers_removed"] is not None
    assert sc.check(onnx.load(out)) is None


def test_identity_of_a_weight_is_not_copied() -> None:
    """Tied weights read through Identity: readers read the weight, no second copy; an
    Identity that is a graph output keeps its own value."""
    w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4), "w")
    nodes = [
        helper.make_node("Identity", ["w"], ["w_tied"], name="tie"),
        helper.make_node("Identity", ["w_tied"], ["w_tied2"], name="tie2"),
        helper.make_node("MatMul", ["x", "w_tied2"], ["y"], name="mm"),
        helper.make_node("Identity", ["w"], ["w_out"], name="out"),
    ]
    graph = helper.make_graph(
        nodes,
        "tied",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4]),
            helper.make_tensor_value_info("w_out", TensorProto.FLOAT, [4, 4]),
        ],
        initializer=[w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    result = sc.ours(model)
    assert [n.name for n in result.model.graph.node] == ["mm"]
    assert list(result.model.graph.node[0].input) == ["x", "w"]
    assert sorted(t.name for t in result.model.graph.initializer) == ["w", "w_out"]
    assert result.log.counts["identity_aliased"] == 2
    assert "2 Identity node(s) of an initializer removed" in result.log.text()
    assert sc.max_output_difference(model, result.model) <= sc.TOLERANCE


def test_a_failing_shape_inferer_is_reported_and_changes_nothing() -> None:
    def broken(model: onnx.ModelProto) -> onnx.ModelProto:
        raise RuntimeError("unsupported op Foo")

    model = expand_model()
    result = sc.sanitize(model, evaluator=sc.ort_evaluator, shapes=broken)
    text = result.log.text()
    assert "warning: symbolic shape inference failed (unsupported op Foo)" in text
    assert text.count("symbolic shape inference failed") == 1  # once, not once per pass
    assert "shapes: onnx's inference only (the symbolic shape inferer failed)" in text
    assert [n.name for n in result.model.graph.node] == ["add"]


def test_cli_refuses_a_result_that_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from designer import cli

    module = importlib.import_module("designer.core.transforms.sanitize")
    real_summarize = module._summarize

    def breaking_summarize(*args: Any) -> None:
        real_summarize(*args)
        args[1].graph.node[-1].input[0] = "no_such_value"

    monkeypatch.setattr(module, "_summarize", breaking_summarize)
    src, out = tmp_path / "affine.onnx", tmp_path / "out.onnx"
    onnx.save(sc.backend_model("test_affine_grid_2d_expanded"), src)
    assert cli.main(["sanitize", str(src), str(out)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "fails the check" in lines[0] and "no_such_value" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["affine.onnx"]
