"""Compose two models (issue 17, point 5): the composed model computes B(A(x)), checked.

Real models: SqueezeNet from ../shared/models feeding a handmade post-processing model
(Softmax, TopK); handmade pairs for opsets, prefixes, external data and every refusal.
Outputs are compared with ONNX Runtime running A and then B.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.core.compose import ComposeError, compose_files, compose_models, parse_pair
from designer.core.compose_ports import Port, collisions, graph_inputs, pair_problem, suggest_map

MODELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "models"
RNG = np.random.default_rng(7)


def _run(model: onnx.ModelProto | Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


def _linear(
    name: str,
    inp: str,
    out: str,
    n_in: int,
    n_out: int,
    opset: int = 17,
    ir: int = 8,
    act: str = "Relu",
) -> onnx.ModelProto:
    """x[1,n_in] -> act(x @ W + b) -> y[1,n_out] with random weights (names W, b, mm, add)."""
    w = numpy_helper.from_array(RNG.standard_normal((n_in, n_out)).astype(np.float32), "W")
    bias = numpy_helper.from_array(RNG.standard_normal(n_out).astype(np.float32), "b")
    nodes = [
        helper.make_node("MatMul", [inp, "W"], ["mm"], name="mm"),
        helper.make_node("Add", ["mm", "b"], ["add"], name="add"),
        helper.make_node(act, ["add"], [out], name="act"),
    ]
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info(inp, TensorProto.FLOAT, [1, n_in])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, n_out])],
        [w, bias],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    return model


def _post(n: int = 1000, k: int = 5) -> onnx.ModelProto:
    """logits[batch, n] -> softmax probabilities and the top-k indices."""
    nodes = [
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
        helper.make_node(
            "Constant", [], ["k"], name="k", value=helper.make_tensor("k", 7, [1], [k])
        ),
        helper.make_node("TopK", ["probs", "k"], ["top_p", "top_i"], name="topk", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "post",
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", n])],
        [
            helper.make_tensor_value_info("top_p", TensorProto.FLOAT, ["batch", k]),
            helper.make_tensor_value_info("top_i", TensorProto.INT64, ["batch", k]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_squeezenet_then_postprocessing_equals_running_both(tmp_path: Path) -> None:
    a_path = MODELS / "squeezenet1_0.torchscript.onnx"
    b_path = tmp_path / "post.onnx"
    onnx.save(_post(), b_path)
    out = tmp_path / "composed.onnx"
    result, data_files = compose_files(a_path, b_path, out, ["output:logits"])
    assert data_files == []
    x = RNG.standard_normal((2, 3, 224, 224)).astype(np.float32)
    logits = _run(a_path, {"input": x})["output"]
    expected = _run(b_path, {"logits": logits})
    actual = _run(out, {"input": x})
    assert set(actual) == {"top_p", "top_i"}
    np.testing.assert_array_equal(actual["top_i"], expected["top_i"])
    np.testing.assert_allclose(actual["top_p"], expected["top_p"], rtol=1e-5, atol=1e-7)
    assert "1 connection(s)" in result.notes[0]
    onnx.checker.check_model(str(out), full_check=True)


def test_prefixes_are_required_then_applied(tmp_path: Path) -> None:
    a = _linear("a", "x", "y", 4, 3)
    b = _linear("b", "z", "out", 3, 2, act="Sigmoid")  # same names W, b, mm, add, act
    with pytest.raises(ComposeError, match="give prefixes") as caught:
        compose_models(a, b, [("y", "z")])
    assert "\n" not in str(caught.value)
    result = compose_models(a, b, [("y", "z")], prefix_a="a/", prefix_b="b/")
    names = {t.name for t in result.model.graph.initializer}
    assert names == {"a/W", "a/b", "b/W", "b/b"}
    assert [v.name for v in result.model.graph.input] == ["a/x"]
    assert [v.name for v in result.model.graph.output] == ["b/out"]
    x = RNG.standard_normal((1, 4)).astype(np.float32)
    y = _run(a, {"x": x})["y"]
    expected = _run(b, {"z": y})["out"]
    np.testing.assert_allclose(_run(result.model, {"a/x": x})["b/out"], expected, rtol=1e-6)


def test_opsets_are_reconciled(tmp_path: Path) -> None:
    a = _linear("a", "x", "y", 4, 3, opset=11, ir=6)
    b = _linear("b", "z", "out", 3, 2, opset=17, ir=8, act="Sigmoid")
    result = compose_models(a, b, [("y", "z")], prefix_a="a_", prefix_b="b_")
    assert {o.domain: o.version for o in result.model.opset_import} == {"": 17}
    assert result.model.ir_version == 8
    assert any("A converted from opset 11 to 17" in n for n in result.notes)
    x = RNG.standard_normal((1, 4)).astype(np.float32)
    expected = _run(b, {"z": _run(a, {"x": x})["y"]})["out"]
    np.testing.assert_allclose(_run(result.model, {"a_x": x})["b_out"], expected, rtol=1e-6)


def test_other_domains_that_differ_are_refused() -> None:
    a = _linear("a", "x", "y", 4, 3)
    b = _linear("b", "z", "out", 3, 2)
    a.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    b.opset_import.append(helper.make_opsetid("com.microsoft", 2))
    with pytest.raises(ComposeError, match=r"com\.microsoft opset 1 and B com\.microsoft opset 2"):
        compose_models(a, b, [("y", "z")], prefix_a="a_", prefix_b="b_")


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([], "map at least one output"),
        ([("nope", "z")], "A has no output 'nope' .*its outputs: y"),
        ([("y", "nope")], "B has no input 'nope' .*its inputs: z"),
        ([("y", "z"), ("y", "z")], "mapped more than once"),
    ],
)
def test_bad_maps_are_refused(pairs: list[tuple[str, str]], message: str) -> None:
    a = _linear("a", "x", "y", 4, 3)
    b = _linear("b", "z", "out", 3, 2)
    with pytest.raises(ComposeError, match=message):
        compose_models(a, b, pairs, prefix_a="a_", prefix_b="b_")


def test_type_and_shape_mismatches_are_refused() -> None:
    a = _linear("a", "x", "y", 4, 3)
    wrong_size = _linear("b", "z", "out", 5, 2)
    with pytest.raises(ComposeError, match=r"'y' cannot feed B's input 'z': dimension 1: 3 ≠ 5"):
        compose_models(a, wrong_size, [("y", "z")], prefix_a="a_", prefix_b="b_")
    wrong_type = _linear("b", "z", "out", 3, 2)
    wrong_type.graph.input[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    with pytest.raises(ComposeError, match="element type float32\\[1,3\\] ≠ double\\[1,3\\]"):
        compose_models(a, wrong_type, [("y", "z")], prefix_a="a_", prefix_b="b_")


def test_pair_problem_and_ports() -> None:
    def port(elem: int, shape: list[int | str] | None) -> Port:
        return Port("v", helper.make_tensor_type_proto(elem, shape))

    f = TensorProto.FLOAT
    assert pair_problem(port(f, [1, "n"]), port(f, ["b", 7])) is None  # symbolic passes
    assert pair_problem(port(f, None), port(f, [1, 2])) is None  # unknown rank passes
    assert (
        pair_problem(port(f, [1, 2]), port(f, [1, 2, 1]))
        == "rank 2 ≠ 3 (float32[1,2] → float32[1,2,1])"
    )
    assert port(f, [1, "n"]).text == "float32[1,n]"
    assert port(TensorProto.INT64, None).text == "int64[...]"


def test_suggest_map_and_collisions() -> None:
    a = _linear("a", "x", "y", 4, 3)
    b = _linear("b", "y", "out", 3, 2)
    assert suggest_map(a, b) == [("y", "y")]
    renamed = _linear("b", "z", "out", 3, 2)
    assert suggest_map(a, renamed) == [("y", "z")]  # by position, types fit
    found = collisions(a, renamed, [("y", "z")])
    assert any(f.startswith("initializer") for f in found)
    assert any(f.startswith("node") for f in found)
    assert collisions(a, renamed, [("y", "z")], "a/", "b/") == []


def test_parse_pair_with_colons_in_names() -> None:
    a = _linear("a", "x", "y:0", 4, 3)
    b = _linear("b", "in:0", "out", 3, 2)
    assert parse_pair("y:0:in:0", a, b) == ("y:0", "in:0")
    with pytest.raises(ComposeError, match="B has no input 'zz'"):
        parse_pair("y:0:zz", a, b)
    with pytest.raises(ComposeError, match="expected OUTPUT_OF_A:INPUT_OF_B"):
        parse_pair("nocolon", a, b)


def _external(model: onnx.ModelProto, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    onnx.save(model, path, save_as_external_data=True, location=f"{name}.bin", size_threshold=0)
    return path


def test_external_weights_stay_external_or_are_read_in(tmp_path: Path) -> None:
    a = _linear("a", "x", "y", 64, 32)
    b = _linear("b", "z", "out", 32, 8, act="Sigmoid")
    a_path = _external(a, tmp_path / "A", "a.onnx")
    b_path = _external(b, tmp_path / "B", "b.onnx")
    out = tmp_path / "out" / "c.onnx"
    out.parent.mkdir()
    result, data_files = compose_files(a_path, b_path, out, ["y:z"], prefix_a="a/", prefix_b="b/")
    assert [p.name for p in data_files] == ["a.onnx.bin"]  # A's file copied beside the result
    assert any("external tensor(s) of B read into the result" in n for n in result.notes)
    written = onnx.load(str(out), load_external_data=False)
    external = {
        t.name for t in written.graph.initializer if t.data_location == TensorProto.EXTERNAL
    }
    assert external == {"a/W", "a/b"}
    x = RNG.standard_normal((1, 64)).astype(np.float32)
    expected = _run(b_path, {"z": _run(a_path, {"x": x})["y"]})["out"]
    np.testing.assert_allclose(_run(out, {"a/x": x})["b/out"], expected, rtol=1e-6)


def test_an_invalid_result_is_not_written(tmp_path: Path) -> None:
    a = _linear("a", "x", "y", 4, 3)
    b = _linear("b", "z", "out", 3, 2)
    b.graph.node[1].op_type = "NoSuchOp"  # B itself is invalid: the result would be too
    a_path, b_path = tmp_path / "a.onnx", tmp_path / "b.onnx"
    onnx.save(a, a_path)
    onnx.save(b, b_path)
    out = tmp_path / "c.onnx"
    with pytest.raises(ComposeError, match=r"not valid .*nothing was written"):
        compose_files(a_path, b_path, out, [("y", "z")], prefix_a="a_", prefix_b="b_")
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.onnx", "b.onnx"]


def test_output_may_not_be_an_input_model(tmp_path: Path) -> None:
    a_path, b_path = tmp_path / "a.onnx", tmp_path / "b.onnx"
    onnx.save(_linear("a", "x", "y", 4, 3), a_path)
    onnx.save(_linear("b", "z", "out", 3, 2), b_path)
    with pytest.raises(ComposeError, match="the output is model B"):
        compose_files(a_path, b_path, b_path, [("y", "z")], prefix_a="a_", prefix_b="b_")


def test_graph_inputs_skip_initializers() -> None:
    model = _linear("a", "x", "y", 4, 3)
    model.graph.input.append(helper.make_tensor_value_info("W", TensorProto.FLOAT, [4, 3]))
    assert [p.name for p in graph_inputs(model)] == ["x"]
