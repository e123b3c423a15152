"""Extract Model Subgraph on the forms exporters write: If/Loop bodies whose inputs and
outputs have an element type but no shape (a main graph needs one), and local functions
called only from other local functions. Every extracted model passes onnx's full check and
computes in onnxruntime what the original computes."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.core.document import Document
from designer.core.extract import ExtractError, extract_function, extract_subgraph

V = helper.make_tensor_value_info
W = np.arange(6, dtype=np.float32).reshape(2, 3)
RNG = np.random.default_rng(11)


def _model(
    graph: onnx.GraphProto, functions: list[onnx.FunctionProto] | None = None
) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", 17)]
    if functions:
        opsets.append(helper.make_opsetid("local", 1))
    model = helper.make_model(graph, opset_imports=opsets, functions=functions or [])
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)  # the original is valid
    return model


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, feeds))


def _shape(vi: onnx.ValueInfoProto) -> tuple[int | str, ...]:
    dims = vi.type.tensor_type.shape.dim
    return tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in dims)


def _checked(model: onnx.ModelProto) -> onnx.ModelProto:
    onnx.checker.check_model(model, full_check=True)
    return model


def _x() -> np.ndarray:
    return RNG.standard_normal((2, 3)).astype(np.float32)


# --- If / Loop bodies without shapes (QA finding 2) -------------------------------------------
def _if_unshaped() -> onnx.ModelProto:
    """An If whose branches declare their outputs as ``float`` without a shape."""
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["o1"], name="then_add")],
        "then_g",
        [],
        [V("o1", TensorProto.FLOAT, None)],
    )
    else_g = helper.make_graph(
        [helper.make_node("Sub", ["x", "w"], ["o2"], name="else_sub")],
        "else_g",
        [],
        [V("o2", TensorProto.FLOAT, None)],
    )
    node = helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)
    graph = helper.make_graph(
        [node],
        "IfU",
        [V("c", TensorProto.BOOL, []), V("x", TensorProto.FLOAT, [2, 3])],
        [V("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(W, "w")],
    )
    return _model(graph)


@pytest.mark.parametrize(("branch", "taken"), [("then_branch", True), ("else_branch", False)])
def test_unshaped_if_branch_output_gets_the_inferred_shape(branch: str, taken: bool) -> None:
    original = _if_unshaped()
    extracted = _checked(extract_subgraph(Document(original), "if0", branch))
    assert [_shape(v) for v in extracted.graph.output] == [(2, 3)]
    x = _x()
    expected = _run(original, {"c": np.array(taken), "x": x})[0]
    np.testing.assert_allclose(_run(extracted, {"x": x})[0], expected)


def _loop_unshaped(counters: list[int] | None) -> onnx.ModelProto:
    """A Loop whose body declares ``acc`` and its outputs without shapes, as torch.onnx
    exports Loop bodies; ``i`` and ``cond`` have shape ``counters`` (onnxruntime cannot run
    the Loop when they have none)."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["acc", "x"], ["acc_out"], name="body_add"),
            helper.make_node("Identity", ["cond"], ["cond_out"], name="body_id"),
        ],
        "body",
        [
            V("i", TensorProto.INT64, counters),
            V("cond", TensorProto.BOOL, counters),
            V("acc", TensorProto.FLOAT, None),
        ],
        [V("cond_out", TensorProto.BOOL, None), V("acc_out", TensorProto.FLOAT, None)],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "a0"], ["y"], name="loop0", body=body)],
        "LoopU",
        [
            V("n", TensorProto.INT64, []),
            V("a0", TensorProto.FLOAT, [2, 3]),
            V("x", TensorProto.FLOAT, [2, 3]),
        ],
        [V("y", TensorProto.FLOAT, [2, 3])],
    )
    return _model(graph)


@pytest.mark.parametrize("counters", [None, []])
def test_unshaped_loop_body_is_shaped_by_the_loop_signature(counters: list[int] | None) -> None:
    original = _loop_unshaped(counters)
    extracted = _checked(extract_subgraph(Document(original), "loop0", "body"))
    inputs = {v.name: (v.type.tensor_type.elem_type, _shape(v)) for v in extracted.graph.input}
    assert inputs == {
        "i": (TensorProto.INT64, ()),
        "cond": (TensorProto.BOOL, ()),
        "acc": (TensorProto.FLOAT, (2, 3)),  # the Loop's initial value a0
        "x": (TensorProto.FLOAT, (2, 3)),  # the outer value it reads
    }
    assert [_shape(v) for v in extracted.graph.output] == [(), (2, 3)]
    a0, x = _x(), _x()
    one_iteration = a0 + x
    if counters is not None:
        one_iteration = _run(original, {"n": np.array(1, np.int64), "a0": a0, "x": x})[0]
    feeds = {"i": np.array(0, np.int64), "cond": np.array(True), "acc": a0, "x": x}
    cond_out, acc_out = _run(extracted, feeds)
    assert bool(cond_out)
    np.testing.assert_allclose(acc_out, one_iteration)


def test_unshaped_if_inside_a_loop_body() -> None:
    """An If in a Loop body reading the loop's ``acc`` and a main-graph value ``z`` produced
    by a node; its then-branch output has no shape."""
    then_g = helper.make_graph(
        [helper.make_node("Add", ["acc", "z"], ["t1"], name="in_then_add")],
        "then_g",
        [],
        [V("t1", TensorProto.FLOAT, None)],
    )
    else_g = helper.make_graph(
        [helper.make_node("Sub", ["acc", "z"], ["t2"], name="in_else_sub")],
        "else_g",
        [],
        [V("t2", TensorProto.FLOAT, None)],
    )
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond"], ["c"], name="idc0"),
            helper.make_node(
                "If", ["c"], ["acc_out"], name="inner_if", then_branch=then_g, else_branch=else_g
            ),
            helper.make_node("Identity", ["cond"], ["cond_out"], name="idc"),
        ],
        "body",
        [
            V("i", TensorProto.INT64, []),
            V("cond", TensorProto.BOOL, []),
            V("acc", TensorProto.FLOAT, [2, 3]),
        ],
        [V("cond_out", TensorProto.BOOL, []), V("acc_out", TensorProto.FLOAT, [2, 3])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "two"], ["z"], name="mkz"),
            helper.make_node("Loop", ["n", "", "a0"], ["y"], name="loop0", body=body),
        ],
        "Nested",
        [
            V("n", TensorProto.INT64, []),
            V("a0", TensorProto.FLOAT, [2, 3]),
            V("x", TensorProto.FLOAT, [2, 3]),
        ],
        [V("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(2, np.float32), "two")],
    )
    original = _model(graph)
    extracted = _checked(extract_subgraph(Document(original), "inner_if", "then_branch"))
    assert {v.name: _shape(v) for v in extracted.graph.input} == {"acc": (2, 3), "z": (2, 3)}
    assert [_shape(v) for v in extracted.graph.output] == [(2, 3)]
    a0, x = _x(), _x()
    expected = _run(original, {"n": np.array(1, np.int64), "a0": a0, "x": x})[0]
    np.testing.assert_allclose(_run(extracted, {"acc": a0, "z": 2 * x})[0], expected)


def _rank_unknown(branch_nodes: list[onnx.NodeProto], out: str) -> onnx.ModelProto:
    """Main graph computing ``r = Reshape(x, s)`` with ``s`` of unknown length (so onnx
    knows no rank for ``r``) and an If whose then-branch is ``branch_nodes``."""
    then_g = helper.make_graph(branch_nodes, "then_g", [], [V(out, TensorProto.FLOAT, None)])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"], name="eid")],
        "else_g",
        [],
        [V("e", TensorProto.FLOAT, None)],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape"),
            helper.make_node(
                "If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g
            ),
        ],
        "RankU",
        [
            V("c", TensorProto.BOOL, []),
            V("x", TensorProto.FLOAT, [2, 3]),
            V("s", TensorProto.INT64, ["K"]),
        ],
        [V("y", TensorProto.FLOAT, [2, 3])],
    )
    return _model(graph)


def test_an_input_of_unknown_rank_is_named_with_what_to_do() -> None:
    branch = [helper.make_node("Identity", ["r"], ["o"], name="tid")]
    doc = Document(_rank_unknown(branch, "o"))
    with pytest.raises(ExtractError, match="shape of input 'r' is unknown") as info:
        extract_subgraph(doc, "if0", "then_branch")
    assert "declare its shape" in str(info.value)


def test_an_output_of_unknown_rank_is_named_with_what_to_do() -> None:
    branch = [helper.make_node("Reshape", ["x", "s"], ["o"], name="treshape")]
    doc = Document(_rank_unknown(branch, "o"))
    with pytest.raises(ExtractError, match="shape of output 'o' is unknown") as info:
        extract_subgraph(doc, "if0", "then_branch")
    assert "declare its shape" in str(info.value)


# --- a function called only from another function (QA finding 10) --------------------------
def _ref(name: str, refers_to: str) -> onnx.AttributeProto:
    """FLOAT attribute ``name`` given by the function attribute ``refers_to``."""
    attr = helper.make_attribute_ref(name, onnx.AttributeProto.FLOAT)
    attr.ref_attr_name = refers_to
    return attr


def _nested_functions(call_outer: bool = True) -> onnx.ModelProto:
    """``local:Scale`` (attribute ``k`` used by a Constant) is called only from
    ``local:AddLeaky``, which passes its own attribute ``gain`` as ``k``; the main graph calls
    AddLeaky with ``gain=2.5`` (``call_outer``) or not at all."""
    k_const = helper.make_node("Constant", [], ["k"])
    k_const.attribute.append(_ref("value_float", "k"))
    scale = helper.make_function(
        "local",
        "Scale",
        ["a"],
        ["b"],
        [k_const, helper.make_node("Mul", ["a", "k"], ["b"])],
        [helper.make_opsetid("", 17)],
        attributes=["k"],
    )
    call = helper.make_node("Scale", ["c0"], ["c"], domain="local")
    call.attribute.append(_ref("k", "gain"))
    leaky = helper.make_node("LeakyRelu", ["s"], ["c0"], alpha=0.1)
    outer = helper.make_function(
        "local",
        "AddLeaky",
        ["a", "b"],
        ["c"],
        [helper.make_node("Add", ["a", "b"], ["s"]), leaky, call],
        [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
        attributes=["gain"],
    )
    main = [helper.make_node("AddLeaky", ["x", "w"], ["y"], domain="local", name="call0", gain=2.5)]
    if not call_outer:
        main = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    graph = helper.make_graph(
        main,
        "FnA",
        [V("x", TensorProto.FLOAT, ["N", 3])],
        [V("y", TensorProto.FLOAT, ["N", 3])],
        [numpy_helper.from_array(np.arange(3, dtype=np.float32) - 1, "w")],
    )
    return _model(graph, [scale, outer])


def test_a_function_called_only_from_a_function_is_typed_through_the_call_chain() -> None:
    original = _nested_functions()
    extracted = _checked(extract_function(Document(original), "local", "Scale"))
    assert [(v.name, _shape(v)) for v in extracted.graph.input] == [("a", ("N", 3))]
    assert [(v.name, _shape(v)) for v in extracted.graph.output] == [("b", ("N", 3))]
    constant = extracted.graph.node[0]
    assert [(a.name, a.f, a.ref_attr_name) for a in constant.attribute] == [
        ("value_float", 2.5, "")
    ]
    assert {o.domain: o.version for o in extracted.opset_import} == {"": 17}
    assert not extracted.functions
    a = RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(_run(extracted, {"a": a})[0], a * 2.5, rtol=1e-6)
    # the same value as in the original, where Scale reads LeakyRelu(x + w)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    s = x + (np.arange(3, dtype=np.float32) - 1)
    c0 = np.where(s > 0, s, 0.1 * s).astype(np.float32)
    np.testing.assert_allclose(
        _run(extracted, {"a": c0})[0], _run(original, {"x": x})[0], rtol=1e-6
    )


def test_a_function_called_only_from_an_uncalled_function_says_why() -> None:
    doc = Document(_nested_functions(call_outer=False))
    with pytest.raises(ExtractError, match="input types of local function 'local:Scale'"):
        extract_function(doc, "local", "Scale")
