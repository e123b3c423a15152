"""Extract Model Subgraph: standalone models from subgraphs and function bodies that pass
onnx's full check and compute what the original computes (checked in onnxruntime)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers.models import (
    FN_DOMAIN,
    OPSET,
    backend_node_model,
    function_model,
    scaled_add_function,
    subgraph_model,
    tensor_info,
)
from onnx import TensorProto, helper, numpy_helper

from designer.core.document import Document
from designer.core.extract import (
    ExtractChoice,
    ExtractError,
    extract_choices,
    extract_function,
    extract_scope,
    extract_subgraph,
)
from designer.core.scope import MAIN_SCOPE, ScopeId

RNG = np.random.default_rng(7)
W = np.arange(6, dtype=np.float32).reshape(2, 3)


def _model(graph: onnx.GraphProto, functions: list[onnx.FunctionProto] = ()) -> onnx.ModelProto:  # type: ignore[assignment]
    opsets = [helper.make_opsetid("", OPSET)]
    if functions:
        opsets.append(helper.make_opsetid(FN_DOMAIN, 1))
    model = helper.make_model(graph, opset_imports=opsets, functions=list(functions))
    model.ir_version = 10
    return model


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray], outputs: list[str] | None = None):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(outputs, feeds)


def _with_outputs(model: onnx.ModelProto, *names: str) -> onnx.ModelProto:
    """A copy of ``model`` that also outputs the intermediate values ``names``."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    copy.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names)
    return copy


def _x() -> np.ndarray:
    return RNG.standard_normal((2, 3)).astype(np.float32)


def _choice(doc: Document, parent: str, subgraph: str) -> ScopeId:
    return next(
        c.scope_id for c in extract_choices(doc) if (c.parent, c.subgraph) == (parent, subgraph)
    )


def if_model() -> onnx.ModelProto:
    """``A = X + W``; If(cond): then = X * W + A (reads a graph input, an initializer and a
    node output of the main graph), else = A - X."""
    then_branch = helper.make_graph(
        [
            helper.make_node("Mul", ["X", "W"], ["t"], name="then_mul"),
            helper.make_node("Add", ["t", "A"], ["then_out"], name="then_add"),
        ],
        "then_branch",
        [],
        [tensor_info("then_out")],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Sub", ["A", "X"], ["else_out"], name="else_sub")],
        "else_branch",
        [],
        [tensor_info("else_out")],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["X", "W"], ["A"], name="pre_add"),
            helper.make_node(
                "If",
                ["cond"],
                ["Y"],
                name="branch",
                then_branch=then_branch,
                else_branch=else_branch,
            ),
        ],
        "if_main",
        [tensor_info("X"), tensor_info("cond", TensorProto.BOOL, [])],
        [tensor_info("Y")],
        initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(W, "unused")],
    )
    return _model(graph)


def test_if_branch_reading_outer_values() -> None:
    original = if_model()
    doc = Document(original)
    model = extract_subgraph(doc, "branch", "then_branch")
    onnx.checker.check_model(model, full_check=True)
    assert [v.name for v in model.graph.input] == ["X", "A"]
    assert [t.name for t in model.graph.initializer] == ["W"]  # only what the branch reads
    assert model.graph.input[1].type == original.graph.input[0].type  # A typed float[2,3]
    x = _x()
    expected, a = _run(_with_outputs(original, "A"), {"X": x, "cond": np.array(True)})
    (got,) = _run(model, {"X": x, "A": a})
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    other = extract_scope(doc, _choice(doc, "branch", "else_branch"))
    (got_else,) = _run(other, {"A": a, "X": x})
    (expected_else,) = _run(original, {"X": x, "cond": np.array(False)})
    np.testing.assert_allclose(got_else, expected_else, rtol=1e-6)


def test_loop_body_keeps_its_inputs_and_adds_outer_values() -> None:
    original = subgraph_model()
    doc = Document(original)
    model = extract_subgraph(doc, "loop", "body")
    onnx.checker.check_model(model, full_check=True)
    assert [v.name for v in model.graph.input] == ["iter_num", "cond_in", "v_in", "A"]
    assert [v.name for v in model.graph.output] == ["cond_out", "v_out"]
    x = _x()
    z, a = _run(_with_outputs(original, "A"), {"X": x, "cond": np.array(True)}, ["Z", "A"])
    v = a
    for i in range(2):  # the Loop runs its body trip = 2 times
        cond, v = _run(
            model, {"iter_num": np.array(i), "cond_in": np.array(True), "v_in": v, "A": a}
        )
        assert cond
    np.testing.assert_allclose(v, z, rtol=1e-6)


def nested_model() -> onnx.ModelProto:
    """If(cond) whose then branch computes ``B = A * X`` and runs a Loop whose body reads
    ``B`` (then-branch level), ``X`` (main input) and ``W`` (main initializer)."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
            helper.make_node("Add", ["v_in", "B"], ["s"], name="body_add"),
            helper.make_node("Mul", ["s", "W"], ["m"], name="body_mul"),
            helper.make_node("Sub", ["m", "X"], ["v_out"], name="body_sub"),
        ],
        "inner_body",
        [
            tensor_info("it", TensorProto.INT64, []),
            tensor_info("cond_in", TensorProto.BOOL, []),
            tensor_info("v_in"),
        ],
        [tensor_info("cond_out", TensorProto.BOOL, []), tensor_info("v_out")],
    )
    then_branch = helper.make_graph(
        [
            helper.make_node("Mul", ["A", "X"], ["B"], name="then_mul"),
            helper.make_node("Loop", ["trip", "", "X"], ["then_out"], name="inner_loop", body=body),
        ],
        "then_branch",
        [],
        [tensor_info("then_out")],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["else_out"], name="else_id")],
        "else_branch",
        [],
        [tensor_info("else_out")],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["X", "W"], ["A"], name="pre_add"),
            helper.make_node(
                "If",
                ["cond"],
                ["Y"],
                name="branch",
                then_branch=then_branch,
                else_branch=else_branch,
            ),
        ],
        "nested",
        [tensor_info("X"), tensor_info("cond", TensorProto.BOOL, [])],
        [tensor_info("Y")],
        initializer=[
            numpy_helper.from_array(W, "W"),
            numpy_helper.from_array(np.array(3, dtype=np.int64), "trip"),
        ],
    )
    return _model(graph)


def test_nested_loop_in_if_branch_gets_values_of_both_levels() -> None:
    original = nested_model()
    doc = Document(original)
    model = extract_subgraph(doc, "inner_loop", "body")
    onnx.checker.check_model(model, full_check=True)
    inputs = {v.name: v for v in model.graph.input}
    assert list(inputs) == ["it", "cond_in", "v_in", "B", "X"]
    assert inputs["B"].type.tensor_type.elem_type == TensorProto.FLOAT  # inferred in the branch
    assert [t.name for t in model.graph.initializer] == ["W"]
    x = _x()
    (y,) = _run(original, {"X": x, "cond": np.array(True)})
    b = (x + W) * x  # B lives inside the branch: computed here
    v = x
    for i in range(3):
        _cond, v = _run(
            model, {"it": np.array(i), "cond_in": np.array(True), "v_in": v, "B": b, "X": x}
        )
    np.testing.assert_allclose(v, y, rtol=1e-5)


def test_function_body_typed_from_call_site() -> None:
    original = function_model()
    doc = Document(original)
    model = extract_function(doc, FN_DOMAIN, "ScaledAdd")
    onnx.checker.check_model(model, full_check=True)
    assert [v.name for v in model.graph.input] == ["a", "b"]
    assert model.graph.input[0].type == original.graph.input[0].type
    constant = model.graph.node[0]
    assert [(a.name, a.f, a.ref_attr_name) for a in constant.attribute] == [
        ("value_float", 2.0, "")
    ]
    x = _x()
    (t,) = _run(_with_outputs(original, "T"), {"X": x}, ["T"])  # call1: the default alpha
    (got,) = _run(model, {"a": x, "b": np.ones((2, 3), np.float32)})
    np.testing.assert_allclose(got, t, rtol=1e-6)


def test_function_attribute_reference_takes_the_call_site_value() -> None:
    original = function_model()
    del original.graph.node[0]  # only call2 (alpha=3.0, reads T) is left; T becomes an input
    original.graph.node[0].input[0] = "X"
    doc = Document(original)
    model = extract_function(doc, FN_DOMAIN, "ScaledAdd")
    assert model.graph.node[0].attribute[0].f == 3.0
    x = _x()
    (expected,) = _run(original, {"X": x})
    (got,) = _run(model, {"a": x, "b": np.ones((2, 3), np.float32)})
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def functions_in_subgraph_model() -> onnx.ModelProto:
    """An If whose then branch calls ``local.fn:Twice``, which calls ``local.fn:ScaledAdd``;
    a function ``local.fn:Pick`` holds an If of its own and is called from the main graph."""
    twice = helper.make_function(
        FN_DOMAIN,
        "Twice",
        ["p"],
        ["q"],
        [helper.make_node("ScaledAdd", ["p", "p"], ["q"], domain=FN_DOMAIN, name="inner_call")],
        [helper.make_opsetid("", OPSET), helper.make_opsetid(FN_DOMAIN, 1)],
    )
    pick = helper.make_function(
        FN_DOMAIN,
        "Pick",
        ["c", "u"],
        ["r"],
        [
            helper.make_node(
                "If",
                ["c"],
                ["r"],
                name="pick_if",
                then_branch=helper.make_graph(
                    [helper.make_node("Neg", ["u"], ["neg"], name="neg")],
                    "pick_then",
                    [],
                    [onnx.ValueInfoProto(name="neg")],
                ),
                else_branch=helper.make_graph(
                    [helper.make_node("Identity", ["u"], ["same"], name="same")],
                    "pick_else",
                    [],
                    [onnx.ValueInfoProto(name="same")],
                ),
            )
        ],
        [helper.make_opsetid("", OPSET)],
    )
    then_branch = helper.make_graph(
        [helper.make_node("Twice", ["X"], ["then_out"], domain=FN_DOMAIN, name="twice_call")],
        "then_branch",
        [],
        [tensor_info("then_out")],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["else_out"], name="else_id")],
        "else_branch",
        [],
        [tensor_info("else_out")],
    )
    graph = helper.make_graph(
        [
            helper.make_node(
                "If",
                ["cond"],
                ["Y"],
                name="branch",
                then_branch=then_branch,
                else_branch=else_branch,
            ),
            helper.make_node("Pick", ["cond", "Y"], ["Z"], domain=FN_DOMAIN, name="pick_call"),
        ],
        "calls_in_subgraphs",
        [tensor_info("X"), tensor_info("cond", TensorProto.BOOL, [])],
        [tensor_info("Z")],
    )
    return _model(graph, [scaled_add_function(), twice, pick])


def test_local_functions_called_inside_are_carried() -> None:
    original = functions_in_subgraph_model()
    onnx.checker.check_model(original, full_check=True)
    doc = Document(original)
    model = extract_subgraph(doc, "branch", "then_branch")
    onnx.checker.check_model(model, full_check=True)
    assert [f.name for f in model.functions] == ["ScaledAdd", "Twice"]  # model order
    assert {(o.domain, o.version) for o in model.opset_import} == {("", OPSET), (FN_DOMAIN, 1)}
    x = _x()
    (expected,) = _run(_with_outputs(original, "Y"), {"X": x, "cond": np.array(True)}, ["Y"])
    (got,) = _run(model, {"X": x})
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    twice = extract_function(doc, FN_DOMAIN, "Twice")  # typed from the call inside the If
    assert [f.name for f in twice.functions] == ["ScaledAdd"]
    (got,) = _run(twice, {"p": x})
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_subgraph_inside_function_body() -> None:
    doc = Document(functions_in_subgraph_model())
    scope_id = _choice(doc, "pick_if", "then_branch")
    assert scope_id.function == (FN_DOMAIN, "Pick", "")
    model = extract_scope(doc, scope_id)
    onnx.checker.check_model(model, full_check=True)
    assert [v.name for v in model.graph.input] == ["u"]  # typed from pick_call's input Y
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    x = _x()
    (got,) = _run(model, {"u": x})
    np.testing.assert_allclose(got, -x)


def test_extract_choices_lists_exactly_the_documents_scopes() -> None:
    doc = Document(functions_in_subgraph_model())
    choices = extract_choices(doc)
    assert [(c.kind, c.parent, c.subgraph) for c in choices] == [
        ("operator", "branch", "else_branch"),
        ("operator", "branch", "then_branch"),
        ("function", f"{FN_DOMAIN}:ScaledAdd", "(body)"),
        ("function", f"{FN_DOMAIN}:Twice", "(body)"),
        ("function", f"{FN_DOMAIN}:Pick", "(body)"),
        ("function", "pick_if", "else_branch"),
        ("function", "pick_if", "then_branch"),
    ]
    for choice in choices:
        assert isinstance(choice, ExtractChoice)
        doc.scope(choice.scope_id)  # every choice resolves
    assert extract_choices(Document(_model(helper.make_graph([], "empty", [], [])))) == []


@pytest.mark.parametrize(
    "name",
    ["test_if", "test_if_seq", "test_loop11", "test_loop13_seq", "test_scan9_sum", "test_scan_sum"],
)
def test_every_backend_subgraph_extracts_to_a_valid_model(name: str) -> None:
    doc = Document(backend_node_model(name))
    choices = extract_choices(doc)
    assert choices
    for choice in choices:
        model = extract_scope(doc, choice.scope_id)
        onnx.checker.check_model(model, full_check=True)


def test_backend_loop_body_runs_like_one_iteration() -> None:
    original = backend_node_model("test_loop11")
    doc = Document(original)
    model = extract_subgraph(doc, doc.model.graph.node[0].name or "#0", "body")
    y = np.array([-2.0], dtype=np.float32)
    cond, y_out, scan = _run(
        model, {"iter_count": np.array(0), "cond_in": np.array(True), "y_in": y}
    )
    assert cond and y_out[0] == pytest.approx(-1.0) and scan[0] == pytest.approx(-1.0)
    (_res_y, res_scan) = _run(original, {"trip_count": np.array(1), "cond": np.array(True), "y": y})
    np.testing.assert_allclose(res_scan[0], scan)


def test_errors_name_what_is_wrong() -> None:
    doc = Document(subgraph_model())
    with pytest.raises(ExtractError, match="no node named 'nope'"):
        extract_subgraph(doc, "nope", "body")
    with pytest.raises(
        ExtractError, match=r"no graph attribute 'body' \(it has: else_branch, then_branch\)"
    ):
        extract_subgraph(doc, "branch", "body")
    with pytest.raises(ExtractError, match="no local function 'x:F'"):
        extract_function(doc, "x", "F")
    with pytest.raises(ExtractError, match="main graph"):
        extract_scope(doc, MAIN_SCOPE)
    with pytest.raises(ExtractError, match="not found"):
        extract_scope(doc, ScopeId(("x", "F", "")))


def test_function_without_call_site_says_what_to_do() -> None:
    model = function_model()
    del model.graph.node[:]
    model.graph.node.append(helper.make_node("Identity", ["X"], ["Y"], name="only"))
    doc = Document(model)
    with pytest.raises(
        ExtractError,
        match=r"input types of local function 'local.fn:ScaledAdd' are unknown.*call it once",
    ):
        extract_function(doc, FN_DOMAIN, "ScaledAdd")
