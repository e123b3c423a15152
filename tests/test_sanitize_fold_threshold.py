"""``sanitize --fold-size-threshold`` keeps only folds that would grow the model: an Identity
of an initializer (its readers read the initializer itself) and a Constant node (its value
becomes an initializer of the same size) are folded whatever their size; a fold that adds a
large value (an Expand, an Identity that is a graph output, i.e. a copy) is kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.cli import main
from designer.core.transforms import SanitizeOptions, sanitize
from designer.core.transforms.fold import reference_evaluator
from tests.helpers.shared import model

SQUEEZENET = "squeezenet1_0.torchscript.onnx"


def _identities(m: onnx.ModelProto) -> int:
    return sum(n.op_type == "Identity" for n in m.graph.node)


def test_the_threshold_keeps_no_identity_of_an_initializer_on_squeezenet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = model(SQUEEZENET)
    assert _identities(onnx.load(src)) == 17  # TorchScript reads weights through Identity
    small, default = tmp_path / "t100.onnx", tmp_path / "t.onnx"
    assert main(["sanitize", str(src), str(small), "--fold-size-threshold", "100"]) == 0
    log = capsys.readouterr().out
    assert "17 Identity node(s) of an initializer removed" in log, log
    assert "kept: result over" not in log
    assert main(["sanitize", str(src), str(default)]) == 0
    capsys.readouterr()
    result = onnx.load(small)
    assert _identities(result) == 0
    assert len(result.graph.node) == len(onnx.load(default).graph.node)
    assert small.stat().st_size <= src.stat().st_size  # nothing was copied
    x = np.random.default_rng(0).standard_normal((2, 3, 224, 224)).astype(np.float32)
    runs = [
        ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]).run(None, {"input": x})
        for p in (src, small)
    ]
    for before, after in zip(*runs, strict=True):
        np.testing.assert_array_equal(before, after)


def _mixed() -> onnx.ModelProto:
    """w (4 KiB) read through Identity → Identity; a 4 KiB Constant; an Expand of a scalar
    to 4 KiB; an Identity of w that is itself a graph output."""
    w = numpy_helper.from_array(np.arange(1024, dtype=np.float32).reshape(32, 32), "w")
    one = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")
    shape = numpy_helper.from_array(np.array([32, 32], dtype=np.int64), "shape")
    big = numpy_helper.from_array(np.full((32, 32), 2.0, dtype=np.float32), "big")
    nodes = [
        helper.make_node("Identity", ["w"], ["w1"], name="id1"),
        helper.make_node("Identity", ["w1"], ["w2"], name="id2"),
        helper.make_node("Constant", [], ["c"], name="const", value=big),
        helper.make_node("Expand", ["one", "shape"], ["e"], name="expand"),
        helper.make_node("Identity", ["w"], ["w_copy"], name="id_out"),
        helper.make_node("Add", ["x", "w2"], ["s1"], name="add1"),
        helper.make_node("Add", ["s1", "c"], ["s2"], name="add2"),
        helper.make_node("Add", ["s2", "e"], ["y"], name="add3"),
    ]
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes,
        "mixed",
        [helper.make_tensor_value_info("x", f32, [32, 32])],
        [
            helper.make_tensor_value_info("y", f32, [32, 32]),
            helper.make_tensor_value_info("w_copy", f32, [32, 32]),
        ],
        initializer=[w, one, shape],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_only_folds_that_add_bytes_are_kept_by_the_threshold() -> None:
    source = _mixed()
    result = sanitize(source, SanitizeOptions(fold_size_threshold=100), None, reference_evaluator)
    kept = {n.name for n in result.model.graph.node}
    assert kept == {"expand", "id_out", "add1", "add2", "add3"}, kept
    assert result.log.counts["not_folded_too_large"] == 2  # the Expand and the copy
    assert result.log.counts["identity_aliased"] == 2
    add1 = next(n for n in result.model.graph.node if n.name == "add1")
    assert list(add1.input) == ["x", "w"]  # reads the weight itself, no copy of it
    assert sorted(t.name for t in result.model.graph.initializer) == ["c", "one", "shape", "w"]
    # without a threshold everything folds, as before
    free = sanitize(source, SanitizeOptions(), None, reference_evaluator)
    assert {n.name for n in free.model.graph.node} == {"add1", "add2", "add3"}
    x = np.random.default_rng(1).standard_normal((32, 32)).astype(np.float32)
    expected = ort.InferenceSession(
        source.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, {"x": x})
    for m in (result.model, free.model):
        got = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        for a, b in zip(expected, got.run(None, {"x": x}), strict=True):
            np.testing.assert_array_equal(a, b)
