"""Compose fixes (QA model-ops findings 6 and 8): prefixes reach If/Loop bodies that read
outer values, so control-flow models compose with prefixes (checked with onnx's full check
and with ONNX Runtime against running A and then B); graph ``metadata_props`` of both models
are kept (torch's export entries in the real llama model), A's value winning a conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.core.compose import compose_files, compose_models
from designer.core.compose_ports import collisions, prefix_model
from designer.core.walk import iter_nodes, nested_graphs

MODELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "models"
LLAMA = MODELS / "llama_24l_h64.dynamo.onnx"
RNG = np.random.default_rng(11)
F = TensorProto.FLOAT


def _run(model: onnx.ModelProto | Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


def _vi(name: str, elem: int = F, shape: list[int] | None = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, [2, 3] if shape is None else shape)


def _model(graph: onnx.GraphProto, functions: Sequence[onnx.FunctionProto] = ()) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", 17)]
    if functions:
        opsets.append(helper.make_opsetid("local", 1))
    model = helper.make_model(graph, opset_imports=opsets, functions=list(functions))
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def _if_model() -> onnx.ModelProto:
    """c, x -> If(c): then x + w, else x - w -> y; both branches read the outer input ``x``
    and the outer initializer ``w`` (the usual form of exported control flow)."""
    then = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["o1"], name="then_add")], "then", [], [_vi("o1")]
    )
    other = helper.make_graph(
        [helper.make_node("Sub", ["x", "w"], ["o2"], name="else_sub")], "else", [], [_vi("o2")]
    )
    w = numpy_helper.from_array(RNG.standard_normal((2, 3)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then, else_branch=other)],
        "IfM",
        [_vi("c", TensorProto.BOOL, []), _vi("x")],
        [_vi("y")],
        [w],
    )
    return _model(graph)


def _loop_model() -> onnx.ModelProto:
    """n, a0, x -> Loop(n) whose body adds ``x`` (outer input) and holds an If that reads the
    outer-outer initializer ``w`` and the body's own ``acc`` -> y."""
    inner_then = helper.make_graph(
        [helper.make_node("Mul", ["acc", "w"], ["m"], name="inner_mul")], "it", [], [_vi("m")]
    )
    inner_else = helper.make_graph(
        [helper.make_node("Add", ["acc", "w"], ["s"], name="inner_add")], "ie", [], [_vi("s")]
    )
    body = helper.make_graph(
        [
            helper.make_node("Add", ["acc_in", "x"], ["acc"], name="body_add"),
            helper.make_node(
                "If",
                ["cond"],
                ["acc_out"],
                name="body_if",
                then_branch=inner_then,
                else_branch=inner_else,
            ),
            helper.make_node("Identity", ["cond"], ["cond_out"], name="body_id"),
        ],
        "body",
        [_vi("i", TensorProto.INT64, []), _vi("cond", TensorProto.BOOL, []), _vi("acc_in")],
        [_vi("cond_out", TensorProto.BOOL, []), _vi("acc_out")],
    )
    w = numpy_helper.from_array(np.full((2, 3), 0.5, np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "a0"], ["y"], name="loop0", body=body)],
        "LoopM",
        [_vi("n", TensorProto.INT64, []), _vi("a0"), _vi("x")],
        [_vi("y")],
        [w],
    )
    return _model(graph)


def _scale(inp: str, out: str, factor: float) -> onnx.ModelProto:
    """inp -> inp * f -> out (initializer ``f``)."""
    graph = helper.make_graph(
        [helper.make_node("Mul", [inp, "f"], [out], name="mul")],
        "Scale",
        [_vi(inp)],
        [_vi(out)],
        [numpy_helper.from_array(np.array(factor, np.float32), "f")],
    )
    return _model(graph)


def _function_in_if_model() -> onnx.ModelProto:
    """An If whose then-branch calls the local function ``local:Twice`` on the outer ``x``."""
    twice = helper.make_function(
        "local",
        "Twice",
        ["a"],
        ["b"],
        [helper.make_node("Add", ["a", "a"], ["b"])],
        [helper.make_opsetid("", 17)],
    )
    then = helper.make_graph(
        [helper.make_node("Twice", ["x"], ["o1"], name="call", domain="local")],
        "then",
        [],
        [_vi("o1")],
    )
    other = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["o2"], name="neg")], "else", [], [_vi("o2")]
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then, else_branch=other)],
        "FnIf",
        [_vi("c", TensorProto.BOOL, []), _vi("x")],
        [_vi("y")],
    )
    return _model(graph, [twice])


def _check(model: onnx.ModelProto) -> None:
    onnx.checker.check_model(model, full_check=True)


def _all_names(model: onnx.ModelProto) -> set[str]:
    names: set[str] = set()
    for graph in nested_graphs(model.graph):
        for node in graph.node:
            names.update(x for x in (*node.input, *node.output, node.name) if x)
        names.update(v.name for v in (*graph.input, *graph.output, *graph.initializer))
    return names


@pytest.mark.parametrize("cond", [True, False])
def test_prefix_a_reaches_outer_references_in_if_branches(cond: bool) -> None:
    a, b = _if_model(), _scale("p", "q", 3.0)
    result = compose_models(a, b, [("y", "p")], prefix_a="a/")
    _check(result.model)
    assert _all_names(result.model) - _all_names(b) == {"a/" + n for n in _all_names(a)}
    feeds = {"c": np.array(cond), "x": RNG.standard_normal((2, 3)).astype(np.float32)}
    y = _run(a, feeds)["y"]
    expected = _run(b, {"p": y})["q"]
    got = _run(result.model, {"a/c": feeds["c"], "a/x": feeds["x"]})["q"]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_prefix_b_with_a_branch_reading_the_wired_input() -> None:
    a, b = _scale("x0", "q", 2.0), _if_model()  # B's branches read its input x, fed by A
    result = compose_models(a, b, [("q", "x")], prefix_b="b/")
    _check(result.model)
    x0 = RNG.standard_normal((2, 3)).astype(np.float32)
    for cond in (True, False):
        q = _run(a, {"x0": x0})["q"]
        expected = _run(b, {"c": np.array(cond), "x": q})["y"]
        got = _run(result.model, {"x0": x0, "b/c": np.array(cond)})["b/y"]
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_the_same_if_model_twice_with_both_prefixes() -> None:
    a = b = _if_model()
    assert collisions(a, b, [("y", "x")])  # prefixes are required
    result = compose_models(a, b, [("y", "x")], prefix_a="a/", prefix_b="b/")
    _check(result.model)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    for ca, cb in ((True, False), (False, True)):
        y = _run(a, {"c": np.array(ca), "x": x})["y"]
        expected = _run(b, {"c": np.array(cb), "x": y})["y"]
        got = _run(result.model, {"a/c": np.array(ca), "a/x": x, "b/c": np.array(cb)})["b/y"]
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_nested_loop_and_if_read_outer_values_at_two_depths() -> None:
    a = b = _loop_model()
    result = compose_models(a, b, [("y", "a0")], prefix_a="a/", prefix_b="b/")
    _check(result.model)
    n = np.array(3, np.int64)
    a0 = RNG.standard_normal((2, 3)).astype(np.float32)
    xa = RNG.standard_normal((2, 3)).astype(np.float32)
    xb = RNG.standard_normal((2, 3)).astype(np.float32)
    y = _run(a, {"n": n, "a0": a0, "x": xa})["y"]
    expected = _run(b, {"n": n, "a0": y, "x": xb})["y"]
    got = _run(result.model, {"a/n": n, "a/a0": a0, "a/x": xa, "b/n": n, "b/x": xb})["b/y"]
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_function_calls_inside_subgraphs_follow_the_renamed_function() -> None:
    a = _function_in_if_model()
    b = _scale("p", "q", 3.0)
    result = compose_models(a, b, [("y", "p")], prefix_a="a/")
    _check(result.model)
    assert [f.name for f in result.model.functions] == ["a/Twice"]
    calls = [n.op_type for n in iter_nodes(result.model) if n.domain == "local"]
    assert calls == ["a/Twice"]
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    y = _run(a, {"c": np.array(True), "x": x})["y"]
    got = _run(result.model, {"a/c": np.array(True), "a/x": x})["q"]
    np.testing.assert_allclose(got, _run(b, {"p": y})["q"], rtol=1e-6)


def test_prefix_model_leaves_function_bodies_and_empty_names() -> None:
    model = _loop_model()
    prefix_model(model, "p.")
    loop = model.graph.node[0]
    assert list(loop.input) == ["p.n", "", "p.a0"]  # the optional input stays empty
    body = loop.attribute[0].g
    assert [v.name for v in body.input] == ["p.i", "p.cond", "p.acc_in"]
    fn = _function_in_if_model()
    prefix_model(fn, "p.")
    assert list(fn.functions[0].input) == ["a"] and list(fn.functions[0].node[0].input) == [
        "a",
        "a",
    ]


def test_cli_style_files_with_prefix_are_written(tmp_path: Path) -> None:
    onnx.save(_if_model(), tmp_path / "if.onnx")
    onnx.save(_loop_model(), tmp_path / "loop.onnx")
    out = tmp_path / "out.onnx"
    compose_files(
        tmp_path / "if.onnx", tmp_path / "loop.onnx", out, ["y:a0"], prefix_a="a/", prefix_b="b/"
    )
    onnx.checker.check_model(str(out), full_check=True)


def _argmax(opset: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("ArgMax", ["logits"], ["ids"], name="argmax", axis=-1, keepdims=0)],
        "post",
        [helper.make_tensor_value_info("logits", F, ["batch", "seq", 1000])],
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_graph_metadata_of_a_real_export_is_kept(tmp_path: Path) -> None:
    llama = onnx.load(LLAMA)
    assert len(llama.graph.metadata_props) == 2  # pkg.torch.export.* (about 23 KB)
    opset = next(o.version for o in llama.opset_import if o.domain in ("", "ai.onnx"))
    post = tmp_path / "post.onnx"
    onnx.save(_argmax(opset), post)
    out = tmp_path / "out.onnx"
    result, _files = compose_files(LLAMA, post, out, ["logits:logits"])
    written = onnx.load(out)
    for model in (result.model, written):
        assert [(p.key, p.value) for p in model.graph.metadata_props] == [
            (p.key, p.value) for p in llama.graph.metadata_props
        ]
    assert not any("graph metadata" in note for note in result.notes)


def test_graph_metadata_of_both_is_merged_a_wins() -> None:
    a, b = _scale("x", "y", 2.0), _scale("p", "q", 3.0)
    a.graph.metadata_props.add(key="shared", value="from A")
    a.graph.metadata_props.add(key="only_a", value="1")
    b.graph.metadata_props.add(key="shared", value="from B")
    b.graph.metadata_props.add(key="only_b", value="2")
    b.graph.metadata_props.add(key="same", value="3")
    a.graph.metadata_props.add(key="same", value="3")
    helper.set_model_props(a, {"m": "A"})
    helper.set_model_props(b, {"m": "B", "mb": "b"})
    result = compose_models(a, b, [("y", "p")], prefix_a="a/", prefix_b="b/")
    props = {p.key: p.value for p in result.model.graph.metadata_props}
    assert props == {"shared": "from A", "only_a": "1", "only_b": "2", "same": "3"}
    assert {p.key: p.value for p in result.model.metadata_props} == {"m": "A", "mb": "b"}
    assert "graph metadata 'shared' differs in A and B; A's value kept" in result.notes
    assert "metadata 'm' differs in A and B; A's value kept" in result.notes
    assert not any("'same'" in note for note in result.notes)
    _check(result.model)
