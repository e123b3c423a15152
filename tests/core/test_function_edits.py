"""Edits of local functions on real models: group nodes into a function, inline a call, add
and remove functions and their attributes. Models are checked with onnx's full checker and
run with onnxruntime before and after; every edit reverts to the exact bytes."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers.models import (
    FN_DOMAIN,
    SUBGRAPH_NODE_MODELS,
    backend_node_model,
    function_model,
    rich_model,
    subgraph_model,
)
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from designer.core.analysis import check_document
from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.edits.base import Edit
from designer.core.edits.functions import (
    AddFunction,
    AddFunctionAttribute,
    GroupIntoFunction,
    InlineFunctionCall,
    RemoveFunction,
    RemoveFunctionAttribute,
)
from designer.core.errors import EditError
from designer.core.functions import call_counts, call_sites, called_function
from designer.core.scope import MAIN_SCOPE, ScopeId

OPSET = 17
RNG = np.random.default_rng(7)


# --- helpers ---------------------------------------------------------------------------------
def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    inits: Mapping[str, np.ndarray] = {},
    functions: list[onnx.FunctionProto] | None = None,
    extra_opsets: Mapping[str, int] = {},
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        inputs,
        outputs,
        [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )
    opsets = [helper.make_opsetid("", OPSET)]
    opsets.extend(helper.make_opsetid(d, v) for d, v in extra_opsets.items())
    model = helper.make_model(graph, opset_imports=opsets, functions=functions or [])
    model.ir_version = 10
    return model


def _f32(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def matmul_model() -> onnx.ModelProto:
    """X·W + B → Relu → Neg → Y, plus Sqrt(Relu) as a second output (two readers of r)."""
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["mm"], name="mm"),
        helper.make_node("Add", ["mm", "B"], ["biased"], name="add"),
        helper.make_node("Relu", ["biased"], ["r"], name="relu"),
        helper.make_node("Neg", ["r"], ["Y"], name="neg"),
        helper.make_node("Sqrt", ["r"], ["Z"], name="sqrt"),
    ]
    return _model(
        nodes,
        [_f32("X", [2, 4])],
        [_f32("Y", [2, 3]), _f32("Z", [2, 3])],
        {"W": _rand(4, 3), "B": _rand(3)},
    )


def if_model() -> onnx.ModelProto:
    """An If whose then branch has three nodes reading outer values ``pre``, ``W`` and ``X``."""
    then_branch = helper.make_graph(
        [
            helper.make_node("Mul", ["pre", "W"], ["t1"], name="t_mul"),
            helper.make_node("Relu", ["t1"], ["t2"], name="t_relu"),
            helper.make_node("Add", ["t2", "X"], ["then_out"], name="t_add"),
        ],
        "then_branch",
        [],
        [_f32("then_out", [2, 3])],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Sub", ["pre", "X"], ["else_out"], name="e_sub")],
        "else_branch",
        [],
        [_f32("else_out", [2, 3])],
    )
    nodes = [
        helper.make_node("Add", ["X", "W"], ["pre"], name="pre_add"),
        helper.make_node(
            "If", ["cond"], ["Y"], name="branch", then_branch=then_branch, else_branch=else_branch
        ),
    ]
    return _model(
        nodes,
        [_f32("X", [2, 3]), helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [_f32("Y", [2, 3])],
        {"W": _rand(2, 3)},
    )


def attr_function() -> onnx.FunctionProto:
    """``local:Act(x)``: LeakyRelu with ``alpha`` (default 0.3), then Softmax over the
    required attribute ``ax``. Internal tensor ``t`` and node ``n1`` are there to clash."""
    leaky = helper.make_node("LeakyRelu", ["x"], ["t"], name="n1")
    leaky.attribute.add(name="alpha", ref_attr_name="alpha", type=onnx.AttributeProto.FLOAT)
    soft = helper.make_node("Softmax", ["t"], ["y"], name="n2")
    soft.attribute.add(name="axis", ref_attr_name="ax", type=onnx.AttributeProto.INT)
    return helper.make_function(
        "local",
        "Act",
        ["x"],
        ["y"],
        [leaky, soft],
        [helper.make_opsetid("", OPSET)],
        attributes=["ax"],
        attribute_protos=[helper.make_attribute("alpha", 0.3)],
    )


def attr_model() -> onnx.ModelProto:
    """Two calls of ``local:Act`` (default alpha, then alpha=0.05), beside a tensor ``t`` and a
    node ``n1`` of the main graph whose names clash with the function body's."""
    nodes = [
        helper.make_node("Abs", ["X"], ["t"], name="n1"),
        helper.make_node("Act", ["t"], ["a1"], name="call1", domain="local", ax=0),
        helper.make_node("Act", ["a1"], ["Y"], name="call2", domain="local", ax=1, alpha=0.05),
    ]
    return _model(
        nodes,
        [_f32("X", [3, 4])],
        [_f32("Y", [3, 4])],
        functions=[attr_function()],
        extra_opsets={"local": 1},
    )


def run(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in session.run(None, dict(feeds))]


def assert_same_outputs(a: onnx.ModelProto, b: onnx.ModelProto, feeds: Mapping) -> None:
    for x, y in zip(run(a, feeds), run(b, feeds), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)


def apply_checked(doc: Document, edit: Edit) -> bytes:
    """Apply ``edit``; revert must give the bytes and positions of before, redo those of after."""
    before = doc.model.SerializeToString()
    positions = {s: dict(t) for s, t in doc.positions.items() if t}
    edit.apply(doc)
    after = doc.model.SerializeToString()
    after_positions = {s: dict(t) for s, t in doc.positions.items() if t}
    edit.revert(doc)
    assert doc.model.SerializeToString() == before
    assert {s: dict(t) for s, t in doc.positions.items() if t} == positions
    edit.apply(doc)
    assert doc.model.SerializeToString() == after
    assert {s: dict(t) for s, t in doc.positions.items() if t} == after_positions
    return after


def refused(doc: Document, edit: Edit, match: str) -> None:
    before = doc.model.SerializeToString()
    with pytest.raises(EditError, match=match):
        edit.apply(doc)
    assert doc.model.SerializeToString() == before


# --- group and inline ------------------------------------------------------------------------
def test_group_three_nodes_runs_the_same_and_inlines_back_identically() -> None:
    model = matmul_model()
    original = model.SerializeToString()
    doc = Document(model)
    keys = list(doc.scope().keys)
    doc.positions[MAIN_SCOPE] = {k: (10.0 * i, 5.0 * i) for i, k in enumerate(keys)}
    events: list[DocumentEvent] = []
    doc.subscribe(events.append)
    feeds = {"X": _rand(2, 4)}
    reference = onnx.ModelProto.FromString(original)

    group = GroupIntoFunction(MAIN_SCOPE, keys[:3], "Block")
    apply_checked(doc, group)
    assert events[-1].kind == ChangeKind.MODEL
    onnx.checker.check_model(doc.model, full_check=True)
    assert_same_outputs(reference, doc.model, feeds)
    assert group.fid == ("local", "Block", "")
    fn = doc.model.functions[0]
    assert list(fn.input) == ["X", "W", "B"] and list(fn.output) == ["r"]
    assert [n.op_type for n in doc.model.graph.node] == ["Block", "Neg", "Sqrt"]
    assert doc.scope().keys == [group.call_key, keys[3], keys[4]]
    fsid = ScopeId(group.fid)
    assert doc.scope(fsid).keys == keys[:3]  # the body keeps the grouped nodes' keys
    assert doc.positions[fsid] == {k: (10.0 * i, 5.0 * i) for i, k in enumerate(keys[:3])}
    assert doc.positions[MAIN_SCOPE][group.call_key] == (0.0, 0.0)
    assert {"", "local"} == {o.domain for o in doc.model.opset_import}
    assert not check_document(doc).has_errors

    inline = InlineFunctionCall(MAIN_SCOPE, group.call_key)
    apply_checked(doc, inline)
    assert doc.model.SerializeToString() == original  # nothing clashed: the same model
    assert doc.scope().keys == keys
    assert doc.positions[MAIN_SCOPE] == {k: (10.0 * i, 5.0 * i) for i, k in enumerate(keys)}
    inline.revert(doc)
    group.revert(doc)
    assert doc.model.SerializeToString() == original
    assert doc.scope().keys == keys


def test_group_inside_an_if_branch_takes_outer_values_as_inputs() -> None:
    model = if_model()
    original = model.SerializeToString()
    doc = Document(model)
    branch_key = doc.scope().keys[1]
    then_id = MAIN_SCOPE.child(branch_key, "then_branch")
    then_keys = list(doc.scope(then_id).keys)
    group = GroupIntoFunction(then_id, then_keys, "ThenBlock", domain="my.funcs")
    apply_checked(doc, group)
    onnx.checker.check_model(doc.model, full_check=True)
    fn = doc.model.functions[0]
    assert list(fn.input) == ["pre", "W", "X"] and list(fn.output) == ["then_out"]
    branch = doc.scope(then_id).proto
    assert [(n.op_type, n.domain) for n in branch.node] == [("ThenBlock", "my.funcs")]
    assert ("my.funcs", 1) in [(o.domain, o.version) for o in doc.model.opset_import]
    reference = onnx.ModelProto.FromString(original)
    for cond in (True, False):
        feeds = {"X": _rand(2, 3), "cond": np.array(cond)}
        assert_same_outputs(reference, doc.model, feeds)
    inline = InlineFunctionCall(then_id, group.call_key)
    apply_checked(doc, inline)
    assert doc.model.SerializeToString() == original
    inline.revert(doc)
    group.revert(doc)
    assert doc.model.SerializeToString() == original
    assert doc.scope(then_id).keys == then_keys


def test_group_of_scattered_nodes_moves_independent_nodes_before_the_call() -> None:
    nodes = [
        helper.make_node("Relu", ["X"], ["a"], name="first"),
        helper.make_node("Neg", ["X"], ["b"], name="independent"),
        helper.make_node("Add", ["a", "b"], ["c"], name="second"),
        helper.make_node("Abs", ["c"], ["Y"], name="after"),
    ]
    model = _model(nodes, [_f32("X", [2, 3])], [_f32("Y", [2, 3])])
    original = model.SerializeToString()
    doc = Document(model)
    keys = list(doc.scope().keys)
    group = GroupIntoFunction(MAIN_SCOPE, [keys[2], keys[0]], "Pair")
    apply_checked(doc, group)
    assert [n.name for n in doc.model.graph.node] == ["independent", "Pair", "after"]
    assert list(doc.model.functions[0].input) == ["X", "b"]
    onnx.checker.check_model(doc.model, full_check=True)
    assert_same_outputs(onnx.ModelProto.FromString(original), doc.model, {"X": _rand(2, 3)})
    group.revert(doc)
    assert doc.model.SerializeToString() == original


def test_group_refuses_empty_foreign_and_cyclic_selections() -> None:
    doc = Document(if_model())
    main_keys = list(doc.scope().keys)
    then_id = MAIN_SCOPE.child(main_keys[1], "then_branch")
    then_keys = list(doc.scope(then_id).keys)
    refused(doc, GroupIntoFunction(MAIN_SCOPE, [], "F"), "select at least one node")
    refused(doc, GroupIntoFunction(MAIN_SCOPE, [main_keys[0], then_keys[0]], "F"), "not in graph")
    refused(doc, GroupIntoFunction(then_id, then_keys, "int"), "C keyword")
    refused(doc, GroupIntoFunction(then_id, then_keys, "F", domain="ai.onnx"), "domain")
    # t_mul -> t_relu -> t_add: grouping the ends only would make t_relu both read the call
    # and feed it.
    refused(doc, GroupIntoFunction(then_id, [then_keys[0], then_keys[2]], "F"), "cycle.*t_relu")
    doc = Document(function_model())
    refused(
        doc, GroupIntoFunction(MAIN_SCOPE, doc.scope().keys[:1], "ScaledAdd", FN_DOMAIN), "already"
    )


def test_inline_substitutes_attribute_references_with_values_or_defaults() -> None:
    model = attr_model()
    reference = onnx.ModelProto.FromString(model.SerializeToString())
    doc = Document(model)
    feeds = {"X": _rand(3, 4)}
    call1, call2 = doc.scope().keys[1:]
    first = InlineFunctionCall(MAIN_SCOPE, call1)
    apply_checked(doc, first)
    assert len(doc.model.functions) == 1  # call2 still uses it
    second = InlineFunctionCall(MAIN_SCOPE, call2)
    apply_checked(doc, second)
    assert not doc.model.functions  # the last call site took the definition with it
    assert [o.domain for o in doc.model.opset_import] == [""]
    onnx.checker.check_model(doc.model, full_check=True)
    assert_same_outputs(reference, doc.model, feeds)
    values = {
        (n.op_type, a.name): helper.get_attribute_value(a)
        for n in doc.model.graph.node
        for a in n.attribute
        if n.op_type in ("LeakyRelu", "Softmax")
    }
    leaky = [n for n in doc.model.graph.node if n.op_type == "LeakyRelu"]
    assert [pytest.approx(helper.get_attribute_value(n.attribute[0])) for n in leaky] == [
        0.3,
        0.05,
    ]
    assert values[("Softmax", "axis")] in (0, 1)
    softmax_axes = [
        helper.get_attribute_value(n.attribute[0])
        for n in doc.model.graph.node
        if n.op_type == "Softmax"
    ]
    assert softmax_axes == [0, 1]
    assert not any(a.ref_attr_name for n in doc.model.graph.node for a in n.attribute)
    second.revert(doc)
    first.revert(doc)
    assert doc.model.SerializeToString() == reference.SerializeToString()


def test_inline_renames_internal_names_that_clash() -> None:
    doc = Document(attr_model())
    InlineFunctionCall(MAIN_SCOPE, doc.scope().keys[1]).apply(doc)
    graph = doc.model.graph
    names = [n.name for n in graph.node]
    assert len(set(names)) == len(names) and names[0] == "n1"
    outputs = [o for n in graph.node for o in n.output]
    assert len(set(outputs)) == len(outputs)  # the body's "t" got a new name
    assert graph.node[1].input[0] == "t" and graph.node[1].output[0] != "t"
    onnx.checker.check_model(doc.model, full_check=True)
    assert_same_outputs(attr_model(), doc.model, {"X": _rand(3, 4)})


def test_inline_refuses_a_call_missing_a_required_attribute() -> None:
    model = attr_model()
    del model.graph.node[1].attribute[:]
    doc = Document(model)
    refused(doc, InlineFunctionCall(MAIN_SCOPE, doc.scope().keys[1]), "required attribute 'ax'")
    refused(doc, InlineFunctionCall(MAIN_SCOPE, doc.scope().keys[0]), "does not call")


# --- add / remove functions and attributes ---------------------------------------------------
def _call_site_findings(doc: Document) -> list[str]:
    return [d.node_name for d in check_document(doc).diagnostics if "local function" in d.message]


def test_remove_function_keeps_call_sites_and_the_checker_flags_them() -> None:
    doc = Document(function_model())
    original = doc.model.SerializeToString()
    fid = (FN_DOMAIN, "ScaledAdd", "")
    fn_keys = list(doc.scope(ScopeId(fid)).keys)
    assert _call_site_findings(doc) == []
    remove = RemoveFunction(fid)
    apply_checked(doc, remove)
    assert not doc.model.functions and len(doc.model.graph.node) == 2
    assert FN_DOMAIN in doc.opset_imports  # the call sites still use the domain
    flagged = [
        d
        for d in check_document(doc).diagnostics
        if "no operator or local function 'local.fn:ScaledAdd'" in d.message
    ]
    assert sorted(d.node_name for d in flagged) == ["call1", "call2"]
    remove.revert(doc)
    assert doc.model.SerializeToString() == original
    assert doc.scope(ScopeId(fid)).keys == fn_keys
    assert _call_site_findings(doc) == []
    refused(doc, RemoveFunction(("local.fn", "Nope", "")), "no local function")


def test_add_function_imports_its_domain_and_refuses_bad_names() -> None:
    doc = Document(function_model())
    add = AddFunction("my.domain", "Fresh", {"": OPSET}, inputs=["a"], outputs=["b"])
    apply_checked(doc, add)
    assert add.fid == ("my.domain", "Fresh", "")
    fn = doc.function(*add.fid)
    assert list(fn.input) == ["a"] and list(fn.output) == ["b"]
    assert doc.opset_imports["my.domain"] == 1
    assert doc.scope(ScopeId(add.fid)).keys == []
    add.revert(doc)
    assert "my.domain" not in doc.opset_imports
    refused(doc, AddFunction(FN_DOMAIN, "ScaledAdd", {"": OPSET}), "already exists")
    refused(doc, AddFunction("local", "1bad", {"": OPSET}), "starts with a digit")
    refused(doc, AddFunction("local", "ok", {"": OPSET}, inputs=["x-y"]), "contains")
    refused(doc, AddFunction("bad domain", "ok", {"": OPSET}), "domain")
    refused(doc, AddFunction("local", "ok", {"": OPSET}, inputs=["a"], outputs=["a"]), "unique")
    same_domain = AddFunction(FN_DOMAIN, "Other", {"": OPSET})
    apply_checked(doc, same_domain)
    assert [o.domain for o in doc.model.opset_import].count(FN_DOMAIN) == 1


def test_function_attributes_add_remove_and_required_ones_are_checked() -> None:
    doc = Document(function_model())
    fid = (FN_DOMAIN, "ScaledAdd", "")
    required = AddFunctionAttribute(fid, "beta", None)
    apply_checked(doc, required)
    missing = [d for d in check_document(doc).errors if d.code == "missing-attribute"]
    assert sorted(d.node_name for d in missing) == ["call1", "call2"]
    assert "required attribute 'beta'" in missing[0].message
    refused(doc, AddFunctionAttribute(fid, "beta", None), "already has")
    refused(doc, AddFunctionAttribute(fid, "alpha", helper.make_attribute("alpha", 1.0)), "already")
    refused(doc, AddFunctionAttribute(fid, "gamma", onnx.AttributeProto(name="gamma")), "type")
    required.revert(doc)
    assert not [d for d in check_document(doc).errors if d.code == "missing-attribute"]

    defaulted = AddFunctionAttribute(fid, "gamma", helper.make_attribute("whatever", 3))
    apply_checked(doc, defaulted)
    assert doc.function(*fid).attribute_proto[-1].name == "gamma"
    refused(doc, RemoveFunctionAttribute(fid, "alpha"), "still used by 'fn_alpha'")
    apply_checked(doc, RemoveFunctionAttribute(fid, "gamma"))
    refused(doc, RemoveFunctionAttribute(fid, "gamma"), "has no attribute")
    doc.undo_stack.push(AddFunctionAttribute(fid, "delta", None))
    doc.undo_stack.push(AddFunctionAttribute(fid, "eps", None))
    before = doc.model.SerializeToString()
    remove = RemoveFunctionAttribute(fid, "delta")
    apply_checked(doc, remove)
    assert list(doc.function(*fid).attribute) == ["eps"]
    remove.revert(doc)
    assert doc.model.SerializeToString() == before


def test_edits_keep_call_sites_consistent_with_queries() -> None:
    doc = Document(matmul_model())
    group = GroupIntoFunction(MAIN_SCOPE, doc.scope().keys[:2], "Lin")
    doc.undo_stack.push(group)
    assert call_sites(doc, group.fid) == [(MAIN_SCOPE, group.call_key)]
    doc.undo_stack.undo()
    assert call_sites(doc, group.fid) == []


def test_group_inside_a_function_body_passes_attribute_references_through() -> None:
    model = function_model()
    original = model.SerializeToString()
    doc = Document(model)
    fsid = ScopeId((FN_DOMAIN, "ScaledAdd", ""))
    body_keys = list(doc.scope(fsid).keys)
    group = GroupIntoFunction(fsid, body_keys, "Inner")
    apply_checked(doc, group)
    inner = doc.function(*group.fid)
    assert list(inner.attribute) == ["alpha"]  # required: the caller always passes it on
    call = doc.scope(fsid).node(group.call_key)
    assert [(a.name, a.ref_attr_name) for a in call.attribute] == [("alpha", "alpha")]
    assert "local" in {o.domain for o in doc.function(FN_DOMAIN, "ScaledAdd").opset_import}
    onnx.checker.check_model(doc.model, full_check=True)
    feeds = {"X": _rand(2, 3)}
    assert_same_outputs(onnx.ModelProto.FromString(original), doc.model, feeds)
    apply_checked(doc, InlineFunctionCall(fsid, group.call_key))
    assert doc.model.SerializeToString() == original
    assert doc.scope(fsid).keys == body_keys


# --- property: any grouping undoes exactly and inlines back ----------------------------------
MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "matmul": matmul_model,
    "if": if_model,
    "attr": attr_model,
    "function": function_model,
    "rich": rich_model,
    "subgraphs": subgraph_model,
}
for _name in SUBGRAPH_NODE_MODELS:
    MODELS[_name] = functools.partial(backend_node_model, _name)


def _passes_full_check(model: onnx.ModelProto) -> bool:
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError):
        return False
    return True


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(model_name=st.sampled_from(sorted(MODELS)), draw=st.data())
def test_random_groups_undo_exactly_and_inline_back(model_name: str, draw: st.DataObject) -> None:
    doc = Document(MODELS[model_name]())
    original = doc.model.SerializeToString()
    valid = _passes_full_check(doc.model)
    scope = draw.draw(st.sampled_from([s for s in doc.scopes() if len(s)]))
    start = draw.draw(st.integers(0, len(scope) - 1))
    stop = draw.draw(st.integers(start + 1, len(scope)) | st.just(start))  # start: empty
    keys = list(scope.keys[start:stop])
    if draw.draw(st.booleans()) and len(keys) > 2:  # leave a middle node out
        keys.pop(len(keys) // 2)
    if draw.draw(st.integers(0, 9)) == 0:
        keys.append(10**9)  # a key from nowhere: refused
    contiguous = keys == list(scope.keys[start : start + len(keys)])
    scope_keys = list(scope.keys)
    name = draw.draw(st.sampled_from(["Grouped", "F", "Grouped", "F", "int", "9x"]))
    if (FN_DOMAIN, name) in {(f.domain, f.name) for f in doc.model.functions}:
        name = "Grouped"
    group = GroupIntoFunction(scope.id, keys, name)
    try:
        grouped = apply_checked(doc, group)
    except EditError as exc:
        event(f"refused: {str(exc).split(':')[0]}")
        assert doc.model.SerializeToString() == original
        return
    event("grouped")
    assert doc.node_scope_of(keys[0]) == ScopeId(group.fid)  # keys stay unique
    assert group.call_key is not None
    assert call_counts(doc)[group.fid] == 1
    if valid:
        onnx.checker.check_model(doc.model, full_check=True)
    inline = InlineFunctionCall(scope.id, group.call_key)
    apply_checked(doc, inline)
    if contiguous:
        assert doc.model.SerializeToString() == original
    inline.revert(doc)
    assert doc.model.SerializeToString() == grouped
    group.revert(doc)
    assert doc.model.SerializeToString() == original
    assert doc.scope(scope.id).keys == scope_keys
    assert doc.node_scope_of(keys[0]) == scope.id


@pytest.mark.parametrize("model_name", ["function", "rich", "attr"])
def test_every_call_site_inlines_and_undoes_exactly(model_name: str) -> None:
    doc = Document(MODELS[model_name]())
    for scope in list(doc.scopes()):
        for key, node in list(scope.nodes()):
            if called_function(doc, node) is None:
                continue
            before = doc.model.SerializeToString()
            try:
                apply_checked(doc, InlineFunctionCall(scope.id, key))
            except EditError:
                assert doc.model.SerializeToString() == before
                continue
            onnx.checker.check_model(doc.model, full_check=True)
            doc = Document(onnx.ModelProto.FromString(before))
