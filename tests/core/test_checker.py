"""The type checker: agreement with onnx.checker on every backend model (and on broken
copies of them), each diagnostic kind located on its node and scope, inferred types."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import onnx
import pytest
from helpers.models import (
    backend_model_files,
    backend_node_models,
    function_model,
    subgraph_model,
)
from onnx import TensorProto, helper, numpy_helper

from designer.core.analysis import CheckResult, Severity, check_document
from designer.core.document import Document
from designer.core.scope import MAIN_SCOPE


def onnx_accepts(model: onnx.ModelProto) -> bool:
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError):
        return False
    return True


def check(model: onnx.ModelProto) -> CheckResult:
    return check_document(Document(model))


def all_backend_models() -> dict[str, onnx.ModelProto]:
    models = {f"node/{k}": v for k, v in backend_node_models().items()}
    for path in backend_model_files():
        models[f"file/{path.parent.parent.name}/{path.parent.name}"] = onnx.load(path)
    return models


def test_agrees_with_onnx_checker_on_every_backend_model() -> None:
    """No error where onnx.checker(full_check=True) accepts; an error where it rejects."""
    disagreements = []
    models = all_backend_models()
    assert len(models) > 1900
    for name, model in models.items():
        accepted = onnx_accepts(model)
        result = check(model)
        if accepted and result.has_errors:
            disagreements.append(f"{name}: false error {result.errors[0]}")
        elif not accepted and not result.has_errors:
            disagreements.append(f"{name}: onnx rejects it, we found no error")
    assert not disagreements, "\n".join(disagreements[:20])


def _drop_required_input(model: onnx.ModelProto, rng: random.Random) -> bool:
    nodes = [n for n in model.graph.node if n.input and n.input[0]]
    if not nodes:
        return False
    rng.choice(nodes).input[0] = ""
    return True


def _unknown_op(model: onnx.ModelProto, rng: random.Random) -> bool:
    rng.choice(list(model.graph.node)).op_type = "NoSuchOperator"
    return True


def _delete_producer(model: onnx.ModelProto, rng: random.Random) -> bool:
    used = {i for n in model.graph.node for i in n.input}
    candidates = [i for i, n in enumerate(model.graph.node) if set(n.output) & used]
    if not candidates:
        return False
    del model.graph.node[rng.choice(candidates)]
    return True


def _bogus_attribute(model: onnx.ModelProto, rng: random.Random) -> bool:
    rng.choice(list(model.graph.node)).attribute.append(helper.make_attribute("bogus_attr", 1))
    return True


def _duplicate_output(model: onnx.ModelProto, rng: random.Random) -> bool:
    if len(model.graph.node) < 2 or not model.graph.node[0].output:
        return False
    model.graph.node[-1].output[0] = model.graph.node[0].output[0]
    return True


def _unimported_domain(model: onnx.ModelProto, rng: random.Random) -> bool:
    rng.choice(list(model.graph.node)).domain = "com.example.unimported"
    return True


def _wrong_output_type(model: onnx.ModelProto, rng: random.Random) -> bool:
    outputs = [o for o in model.graph.output if o.type.tensor_type.elem_type == TensorProto.FLOAT]
    if not outputs:
        return False
    outputs[0].type.tensor_type.elem_type = TensorProto.INT8
    return True


#: Errors we report where onnx.checker does not: onnx skips the attribute check for operators
#: defined as functions (e.g. LayerNormalization), but an unknown attribute is still wrong.
STRICTER_THAN_ONNX = {"unknown-attribute"}

MUTATIONS: list[Callable[[onnx.ModelProto, random.Random], bool]] = [
    _drop_required_input,
    _unknown_op,
    _delete_producer,
    _bogus_attribute,
    _duplicate_output,
    _unimported_domain,
    _wrong_output_type,
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.__name__.strip("_"))
def test_broken_models_are_reported_like_onnx_does(
    mutation: Callable[[onnx.ModelProto, random.Random], bool],
) -> None:
    rng = random.Random(1234)
    names = sorted(backend_node_models())
    rejected = 0
    disagreements = []
    for name in rng.sample(names, 150):
        model = onnx.ModelProto()
        model.CopyFrom(backend_node_models()[name])
        if not model.graph.node or not onnx_accepts(model) or not mutation(model, rng):
            continue
        accepted = onnx_accepts(model)
        rejected += not accepted
        result = check(model)
        if not accepted and not result.has_errors:
            disagreements.append(f"{name}: onnx rejects it, we found no error")
        stricter = [e for e in result.errors if e.code not in STRICTER_THAN_ONNX]
        if accepted and stricter:
            disagreements.append(f"{name}: onnx accepts it, we found {stricter[0]}")
    assert rejected > 0, "the mutation never broke a model"
    assert not disagreements, "\n".join(disagreements[:10])


# --- each kind of diagnostic on a hand-made model -------------------------------------------
def _graph_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto] | None = None,
    outputs: list[onnx.ValueInfoProto] | None = None,
    initializers: list[onnx.TensorProto] | None = None,
    opsets: dict[str, int] | None = None,
) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph(
        nodes, "g", inputs if inputs is not None else [x], outputs or [y], initializers or []
    )
    imports = [helper.make_opsetid(d, v) for d, v in (opsets or {"": 17}).items()]
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 8
    return model


def codes(result: CheckResult) -> dict[str, str]:
    """code → node name of each diagnostic."""
    return {d.code: d.node_name for d in result.diagnostics}


CASES: dict[str, tuple[onnx.ModelProto, str, str, Severity]] = {
    "dangling": (
        _graph_model([helper.make_node("Add", ["X", "nowhere"], ["Y"], name="add")]),
        "dangling-input",
        "add",
        Severity.ERROR,
    ),
    "order": (
        _graph_model(
            [
                helper.make_node("Relu", ["T"], ["Y"], name="late"),
                helper.make_node("Relu", ["X"], ["T"], name="early"),
            ]
        ),
        "not-topological",
        "late",
        Severity.ERROR,
    ),
    "duplicate": (
        _graph_model(
            [
                helper.make_node("Relu", ["X"], ["Y"], name="r1"),
                helper.make_node("Relu", ["X"], ["Y"], name="r2"),
            ]
        ),
        "duplicate-tensor",
        "r2",
        Severity.ERROR,
    ),
    "unknown_op": (
        _graph_model([helper.make_node("Frobnicate", ["X"], ["Y"], name="f")]),
        "unknown-operator",
        "f",
        Severity.ERROR,
    ),
    "newer_than_opset": (
        _graph_model([helper.make_node("Gelu", ["X"], ["Y"], name="gelu")]),
        "unknown-operator",
        "gelu",
        Severity.ERROR,
    ),
    "domain": (
        _graph_model([helper.make_node("Relu", ["X"], ["Y"], name="r", domain="org.nowhere")]),
        "domain-not-imported",
        "r",
        Severity.ERROR,
    ),
    "custom": (
        _graph_model(
            [helper.make_node("MyOp", ["X"], ["Y"], name="mine", domain="org.custom")],
            opsets={"": 17, "org.custom": 1},
        ),
        "custom-operator",
        "mine",
        Severity.WARNING,
    ),
    "missing_input": (
        _graph_model([helper.make_node("Add", ["X", ""], ["Y"], name="add")]),
        "missing-input",
        "add",
        Severity.ERROR,
    ),
    "too_many": (
        _graph_model([helper.make_node("Relu", ["X", "X"], ["Y"], name="r")]),
        "too-many-inputs",
        "r",
        Severity.ERROR,
    ),
    "unknown_attr": (
        _graph_model([helper.make_node("Relu", ["X"], ["Y"], name="r", colour="red")]),
        "unknown-attribute",
        "r",
        Severity.ERROR,
    ),
    "attr_type": (
        _graph_model([helper.make_node("Softmax", ["X"], ["Y"], name="s", axis=1.5)]),
        "attribute-type",
        "s",
        Severity.ERROR,
    ),
    "missing_attr": (
        _graph_model(
            [helper.make_node("Cast", ["X"], ["Y"], name="c")],
        ),
        "missing-attribute",
        "c",
        Severity.ERROR,
    ),
    "unused_init": (
        _graph_model(
            [helper.make_node("Relu", ["X"], ["Y"], name="r")],
            initializers=[numpy_helper.from_array(np.zeros(3, np.float32), "spare")],
        ),
        "unused-initializer",
        "",
        Severity.WARNING,
    ),
    "dangling_output": (
        _graph_model(
            [helper.make_node("Relu", ["X"], ["T"], name="r")],
        ),
        "dangling-output",
        "",
        Severity.ERROR,
    ),
    "duplicate_name": (
        _graph_model(
            [
                helper.make_node("Relu", ["X"], ["T"], name="same"),
                helper.make_node("Relu", ["T"], ["Y"], name="same"),
            ]
        ),
        "duplicate-node-name",
        "same",
        Severity.ERROR,  # SPEC C-2; ONNX Runtime refuses to load it
    ),
    "inference_conflict": (
        _graph_model(
            [helper.make_node("Relu", ["X"], ["Y"], name="relu")],
            outputs=[helper.make_tensor_value_info("Y", TensorProto.INT64, [2, 3])],
        ),
        "shape-inference",
        "relu",
        Severity.ERROR,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_problem_is_reported_on_its_node(case: str) -> None:
    model, code, node_name, severity = CASES[case]
    doc = Document(model)
    result = check_document(doc)
    found = [d for d in result.diagnostics if d.code == code]
    assert found, f"expected {code}, got {[str(d) for d in result.diagnostics]}"
    diagnostic = found[0]
    assert diagnostic.severity == severity
    assert diagnostic.node_name == node_name
    assert diagnostic.scope == MAIN_SCOPE
    if node_name:
        scope = doc.scope(MAIN_SCOPE)
        assert diagnostic.node_key is not None
        assert scope.node(diagnostic.node_key).name == node_name


def test_valid_models_have_no_findings_above_notes() -> None:
    for model in (subgraph_model(), function_model()):
        result = check(model)
        assert [d for d in result.diagnostics if d.severity > Severity.INFO] == []


def test_problem_inside_a_subgraph_is_located_in_that_scope() -> None:
    model = subgraph_model()
    loop = next(n for n in model.graph.node if n.op_type == "Loop")
    body = loop.attribute[0].g
    inner_if = next(n for n in body.node if n.op_type == "If")
    then_branch = next(a.g for a in inner_if.attribute if a.name == "then_branch")
    then_branch.node[0].input[1] = "no_such_value"
    doc = Document(model)
    result = check_document(doc)
    dangling = [d for d in result.diagnostics if d.code == "dangling-input"]
    assert len(dangling) == 1
    diagnostic = dangling[0]
    assert len(diagnostic.scope.steps) == 2  # Loop body ▸ If then_branch
    assert doc.scope(diagnostic.scope).node(diagnostic.node_key or -1).name == "inner_add"
    assert "loop ▸ body" in diagnostic.scope_name and "then_branch" in diagnostic.scope_name


def test_outer_scope_references_are_not_dangling() -> None:
    result = check(subgraph_model())
    assert not [d for d in result.diagnostics if d.code == "dangling-input"]


def test_function_body_is_checked_with_its_own_opsets() -> None:
    model = function_model()
    model.functions[0].node[1].op_type = "NoSuchOp"
    result = check(model)
    unknown = [d for d in result.diagnostics if d.code == "unknown-operator"]
    assert unknown and unknown[0].scope.function == ("local.fn", "ScaledAdd", "")


def test_inferred_types_of_every_value() -> None:
    doc = Document(subgraph_model())
    result = check_document(doc)
    a_type = result.type_of(MAIN_SCOPE, "A")
    assert a_type is not None
    assert a_type.tensor_type.elem_type == TensorProto.FLOAT
    assert [d.dim_value for d in a_type.tensor_type.shape.dim] == [2, 3]
    assert result.type_of(MAIN_SCOPE, "outer_w") is not None  # initializer
    then_scope = next(s for s in doc.scopes() if s.name == "then_branch")
    then_type = result.type_of(then_scope.id, "then_out")
    assert then_type is not None and then_type.tensor_type.elem_type == TensorProto.FLOAT


def test_big_weights_are_not_copied_for_checking() -> None:
    from designer.core.analysis.inference import DATA_KEEP_BYTES, weightless_copy

    weights = numpy_helper.from_array(np.ones((64, 64), np.float32), "W")
    model = _graph_model(
        [helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")],
        inputs=[helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 64])],
        outputs=[helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 64])],
        initializers=[weights],
    )
    before = model.SerializeToString()
    copy = weightless_copy(model)
    assert model.SerializeToString() == before
    assert copy.ByteSize() < DATA_KEEP_BYTES
    assert "W" in {v.name for v in copy.graph.input}
    assert check(model).diagnostics == []


def test_skipped_inference_names_the_real_reason() -> None:
    """A model with neither subgraphs nor functions is not told to fix errors inside them."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r")],
        "",  # onnx's checker: the graph needs a name (an error on no node)
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    notes = [d.message for d in check_document(Document(model, None)).diagnostics]
    skipped = [n for n in notes if "inferred again" in n]
    assert skipped and "subgraphs" not in skipped[0] and "model as a whole" in skipped[0]


def _duplicate_names_model() -> onnx.ModelProto:
    return _graph_model(
        [
            helper.make_node("Relu", ["X"], ["T"], name="same"),
            helper.make_node("Relu", ["T"], ["Y"], name="same"),
        ]
    )


def test_duplicate_node_names_are_an_error_like_onnx_runtime_says() -> None:
    """onnx.checker accepts duplicate node names, ONNX Runtime does not: an error, yet the
    model's types are still inferred (names do not matter to inference)."""
    import onnxruntime as ort

    model = _duplicate_names_model()
    assert onnx_accepts(model)
    with pytest.raises(Exception, match="same node name"):
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    result = check(model)
    assert [d.code for d in result.errors] == ["duplicate-node-name"] * 2
    assert "unique" in result.errors[0].message
    assert not [d for d in result.diagnostics if d.code == "inference-skipped"]
    t_type = result.type_of(MAIN_SCOPE, "T")
    assert t_type is not None and [d.dim_value for d in t_type.tensor_type.shape.dim] == [2, 3]


def test_onnx_checker_message_is_kept_whole_on_one_line() -> None:
    """onnx breaks its topological-order message over three lines; all of it is kept, with
    the lines joined, and the node it names is located."""
    model = _graph_model(
        [
            helper.make_node("Relu", ["T"], ["Y"], name="late_reader"),
            helper.make_node("Relu", ["X"], ["T"], name="producer"),
        ]
    )
    with pytest.raises(onnx.checker.ValidationError) as raised:
        onnx.checker.check_model(model)
    assert "\n" in str(raised.value)  # what onnx gives
    found = [d for d in check(model).diagnostics if d.code == "onnx-checker"]
    assert len(found) == 1
    message = found[0].message
    assert "\n" not in message
    assert "of node: name: late_reader OpType: Relu is not output of any previous nodes" in message
    assert found[0].node_name == "late_reader"
