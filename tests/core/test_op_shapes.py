"""Operator shape rules onnx's inference leaves out (designer/core/analysis/op_shapes.py):
Conv / ConvTranspose bias, channels, group and kernel_shape against W, and Gemm's C against
the (M, N) result. Both sides against ONNX Runtime: each broken model is refused by ORT and
reported on its node; each fixed one runs in ORT and has no error. No such error on any
valid backend model or real export, none for unknown dimensions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.models import backend_model_files, backend_node_models
from helpers.shared import MODELS
from onnx import TensorProto, helper, numpy_helper

from designer.core.analysis import CheckResult, check_document
from designer.core.analysis.onnx_process import OnnxProcess
from designer.core.analysis.op_shapes import (
    BIAS_SHAPE,
    CHANNEL_MISMATCH,
    CODES,
    GROUP_MISMATCH,
    KERNEL_SHAPE_MISMATCH,
)
from designer.core.document import Document
from designer.core.scope import MAIN_SCOPE

ort = pytest.importorskip("onnxruntime")

Shape = Sequence[int | str]


def _model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, Shape],
    weights: dict[str, Shape],
    rank: int,
) -> onnx.ModelProto:
    """A float model: ``inputs`` as graph inputs, ``weights`` as initializers of ones, the
    output ``Y`` of ``rank`` unknown dimensions (inference fills them in)."""
    graph = helper.make_graph(
        nodes,
        "main",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None] * rank)],
        [
            numpy_helper.from_array(np.ones([int(d) for d in s], np.float32), n)
            for n, s in weights.items()
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def conv(
    x: Shape,
    w: Shape,
    b: Shape | None = None,
    op: str = "Conv",
    **attrs: object,
) -> onnx.ModelProto:
    weights = {"Conv_W": w} | ({"Conv_B": b} if b is not None else {})
    node = helper.make_node(op, ["image", *weights], ["Y"], name=op)
    node.attribute.extend(helper.make_attribute(k, v) for k, v in attrs.items())
    return _model([node], {"image": x}, weights, len(x))


def gemm(a: Shape, b: Shape, c: Shape | None, **attrs: object) -> onnx.ModelProto:
    weights = {"Gemm_B": b} | ({"Gemm_C": c} if c is not None else {})
    node = helper.make_node("Gemm", ["A", *weights], ["Y"], name="Gemm")
    node.attribute.extend(helper.make_attribute(k, v) for k, v in attrs.items())
    return _model([node], {"A": a}, weights, 2)


def ort_error(model: onnx.ModelProto) -> str:
    """What ONNX Runtime says creating a session for ``model`` and running it on zeros
    ("" when it runs)."""
    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        feeds = {
            i.name: np.zeros([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
            for i in session.get_inputs()
            if i.type == "tensor(float)"
        }
        feeds |= {i.name: np.array(True) for i in session.get_inputs() if i.type == "tensor(bool)"}
        session.run(None, feeds)
    except Exception as exc:  # ORT raises its own exception types
        return str(exc) or type(exc).__name__
    return ""


def check(model: onnx.ModelProto) -> tuple[Document, CheckResult]:
    doc = Document(model)
    return doc, check_document(doc)


def node_errors(doc: Document, result: CheckResult, index: int = 0) -> list[tuple[str, str]]:
    key = doc.scope(MAIN_SCOPE).keys[index]
    return [(d.code, d.message) for d in result.for_node(MAIN_SCOPE, key)]


# (id, broken model, the codes expected on its node, the fixed model)
CASES: list[tuple[str, onnx.ModelProto, set[str], onnx.ModelProto]] = [
    (
        "conv-bias-length",
        conv([1, 3, 8, 8], [8, 3, 3, 3], [4]),
        {BIAS_SHAPE},
        conv([1, 3, 8, 8], [8, 3, 3, 3], [8]),
    ),
    (
        "conv-bias-2d",
        conv([1, 3, 8, 8], [8, 3, 3, 3], [8, 1]),
        {BIAS_SHAPE},
        conv([1, 3, 8, 8], [8, 3, 3, 3], [8]),
    ),
    (
        "conv-bias-large-weight",  # W above DATA_KEEP_BYTES: checked as a graph input
        conv([1, 3, 8, 8], [64, 3, 3, 3], [32]),
        {BIAS_SHAPE},
        conv([1, 3, 8, 8], [64, 3, 3, 3], [64]),
    ),
    (
        "conv-input-channels",
        conv([1, 4, 8, 8], [8, 3, 3, 3], [8]),
        {CHANNEL_MISMATCH},
        conv([1, 4, 8, 8], [8, 4, 3, 3], [8]),
    ),
    (
        "conv-group-3-on-3-channels",
        conv([1, 3, 8, 8], [8, 3, 3, 3], [8], group=3),
        {CHANNEL_MISMATCH, GROUP_MISMATCH},
        conv([1, 3, 8, 8], [8, 3, 3, 3], [8], group=1),
    ),
    (
        "conv-group-not-dividing-filters",
        conv([1, 9, 8, 8], [8, 3, 3, 3], [8], group=3),
        {GROUP_MISMATCH},
        conv([1, 9, 8, 8], [6, 3, 3, 3], [6], group=3),
    ),
    (
        "conv-kernel-shape",
        conv([1, 3, 8, 8], [8, 3, 3, 3], [8], kernel_shape=[5, 5]),
        {KERNEL_SHAPE_MISMATCH},
        conv([1, 3, 8, 8], [8, 3, 3, 3], [8], kernel_shape=[3, 3]),
    ),
    (
        "convtranspose-bias-is-w1-times-group",
        conv([1, 4, 8, 8], [4, 3, 3, 3], [3], op="ConvTranspose", group=2),
        {BIAS_SHAPE},
        conv([1, 4, 8, 8], [4, 3, 3, 3], [6], op="ConvTranspose", group=2),
    ),
    (
        "convtranspose-input-channels",
        conv([1, 5, 8, 8], [3, 4, 3, 3], [4], op="ConvTranspose"),
        {CHANNEL_MISMATCH},
        conv([1, 3, 8, 8], [3, 4, 3, 3], [4], op="ConvTranspose"),
    ),
    (
        "convtranspose-kernel-shape",
        conv([1, 3, 8, 8], [3, 4, 3, 3], [4], op="ConvTranspose", kernel_shape=[5, 5]),
        {KERNEL_SHAPE_MISMATCH},
        conv([1, 3, 8, 8], [3, 4, 3, 3], [4], op="ConvTranspose", kernel_shape=[3, 3]),
    ),
    (
        "gemm-c-length",
        gemm([1, 4], [4, 10], [7]),
        {BIAS_SHAPE},
        gemm([1, 4], [4, 10], [10]),
    ),
    (
        "gemm-c-rows-for-m-1",
        gemm([1, 4], [4, 10], [2, 10]),
        {BIAS_SHAPE},
        gemm([1, 4], [4, 10], [1, 10]),
    ),
    (
        "gemm-c-3d",
        gemm([3, 4], [4, 10], [1, 3, 10]),
        {BIAS_SHAPE},
        gemm([3, 4], [4, 10], [3, 10]),
    ),
    (
        "gemm-transA",
        gemm([4, 3], [4, 10], [4, 10], transA=1),
        {BIAS_SHAPE},
        gemm([4, 3], [4, 10], [3, 10], transA=1),
    ),
    (
        "gemm-transB",
        gemm([3, 4], [10, 4], [4], transB=1),
        {BIAS_SHAPE},
        gemm([3, 4], [10, 4], [3, 1], transB=1),
    ),
]


@pytest.mark.parametrize(("name", "broken", "codes", "fixed"), CASES, ids=[c[0] for c in CASES])
def test_broken_wiring_ort_refuses_is_an_error_on_its_node(
    name: str, broken: onnx.ModelProto, codes: set[str], fixed: onnx.ModelProto
) -> None:
    assert ort_error(broken), f"{name}: ORT runs it, so the rule would lie"
    onnx.checker.check_model(broken, full_check=True)  # onnx itself finds nothing
    doc, result = check(broken)
    found = node_errors(doc, result)
    assert {code for code, _ in found} == codes, found
    assert all(d.node_name for d in result.errors)
    assert [d for d in result.errors if d.code not in CODES] == []


@pytest.mark.parametrize(("name", "broken", "codes", "fixed"), CASES, ids=[c[0] for c in CASES])
def test_fixed_wiring_runs_in_ort_and_has_no_error(
    name: str, broken: onnx.ModelProto, codes: set[str], fixed: onnx.ModelProto
) -> None:
    assert ort_error(fixed) == ""
    _, result = check(fixed)
    assert not result.has_errors, result.errors


def test_messages_say_what_is_wrong_and_what_to_do() -> None:
    doc, result = check(conv([1, 3, 8, 8], [8, 3, 3, 3], [4]))
    assert node_errors(doc, result) == [
        (
            BIAS_SHAPE,
            "bias 'Conv_B' has 4 values but W 'Conv_W' has 8 output channels: "
            "give the bias shape [8]",
        )
    ]
    doc, result = check(conv([1, 4, 8, 8], [8, 3, 3, 3], [8]))
    [(_, message)] = node_errors(doc, result)
    assert message.startswith("input 'image' has 4 channels but W 'Conv_W' [8, 3, 3, 3]")
    assert "give W the shape [8, 4, 3, 3]" in message and "feed 3 channels" in message
    doc, result = check(conv([1, 3, 8, 8], [8, 3, 3, 3], [8], group=3))
    messages = dict(node_errors(doc, result))
    assert "set group to 1" in messages[CHANNEL_MISMATCH]
    assert "group 3 does not divide the 8 output channels" in messages[GROUP_MISMATCH]
    doc, result = check(conv([1, 4, 8, 8], [4, 3, 3, 3], [3], op="ConvTranspose", group=2))
    assert node_errors(doc, result) == [
        (
            BIAS_SHAPE,
            "bias 'Conv_B' has 3 values but W 'Conv_W' [4, 3, 3, 3] with group 2 gives 6 "
            "output channels: give the bias shape [6]",
        )
    ]
    doc, result = check(gemm([1, 4], [4, 10], [7]))
    assert node_errors(doc, result) == [
        (
            BIAS_SHAPE,
            "C 'Gemm_C' of shape [7] does not broadcast to the Gemm result (M, N) = "
            "[1, 10]: give C the shape [10] or [1, 10]",
        )
    ]


def test_kernel_shape_is_blamed_on_the_conv_not_only_on_a_later_node() -> None:
    """QA's case: Conv kernel_shape [5, 5] with a 3×3 W, then Flatten and Gemm; onnx blames
    only the Gemm (its K no longer fits), the Conv is where the fix is."""
    nodes = [
        helper.make_node("Conv", ["image", "Conv_W"], ["c"], name="Conv", kernel_shape=[5, 5]),
        helper.make_node("Relu", ["c"], ["r"], name="Relu"),
        helper.make_node("Flatten", ["r"], ["f"], name="Flatten"),
        helper.make_node("Gemm", ["f", "Gemm_B"], ["Y"], name="Gemm", transB=1),
    ]
    weights: dict[str, Shape] = {"Conv_W": [2, 3, 3, 3], "Gemm_B": [10, 2 * 6 * 6]}
    broken = _model(nodes, {"image": [1, 3, 8, 8]}, weights, 2)
    assert ort_error(broken)
    doc, result = check(broken)
    assert [code for code, _ in node_errors(doc, result, 0)] == [KERNEL_SHAPE_MISMATCH]
    fixed = _model(nodes, {"image": [1, 3, 8, 8]}, weights, 2)
    fixed.graph.node[0].attribute[0].ints[:] = [3, 3]
    assert ort_error(fixed) == ""
    assert not check(fixed)[1].has_errors


def test_unknown_or_symbolic_dimensions_are_not_errors() -> None:
    # Channels symbolic: ORT decides at run time, the checker does not guess.
    _, result = check(conv(["N", "C", 8, 8], [8, 3, 3, 3], [8]))
    assert not result.has_errors
    _, result = check(conv(["N", "C", 8, 8], [8, 3, 3, 3], [8], group=1))
    assert not result.has_errors
    # M symbolic: a C of [5, 10] may fit (M = 5) or not; not an error.
    _, result = check(gemm(["M", 4], [4, 10], [5, 10]))
    assert not result.has_errors
    # A 1-row C broadcasts to any M.
    _, result = check(gemm(["M", 4], [4, 10], [1, 10]))
    assert not result.has_errors


def test_a_node_onnx_already_blames_is_not_blamed_again() -> None:
    """Gemm with a K mismatch (onnx's inference reports it) and a bad C: one error."""
    doc, result = check(gemm([3, 5], [4, 10], [7]))
    assert [code for code, _ in node_errors(doc, result)] == ["shape-inference"]


def test_conv_in_a_subgraph_using_outer_scope_weights() -> None:
    """The rule follows outer-scope names into the main graph's types."""

    def branch(bias: str) -> onnx.GraphProto:
        node = helper.make_node("Conv", ["image", "Conv_W", bias], ["y"], name=f"Conv_{bias}")
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * 4)
        return helper.make_graph([node], f"b_{bias}", [], [out])

    if_node = helper.make_node(
        "If", ["cond"], ["Y"], name="If", then_branch=branch("B4"), else_branch=branch("B8")
    )
    model = _model(
        [if_node], {"image": [1, 3, 8, 8]}, {"Conv_W": [8, 3, 3, 3], "B4": [4], "B8": [8]}, 4
    )
    model.graph.input.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    assert ort_error(model)  # the then branch runs (cond = True)
    _, result = check(model)
    bad = [d for d in result.errors if d.code in CODES]
    assert [(d.code, d.node_name) for d in bad] == [(BIAS_SHAPE, "Conv_B4")]
    assert bad[0].scope != MAIN_SCOPE and "then_branch" in bad[0].scope_name
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    then = next(a for a in fixed.graph.node[0].attribute if a.name == "then_branch")
    then.g.node[0].input[2] = "B8"
    assert ort_error(fixed) == ""
    assert not check(fixed)[1].has_errors


def test_the_helper_process_gives_the_same_errors() -> None:
    """Big models are inferred in a helper process (types only come back)."""
    process = OnnxProcess()
    try:
        for _, broken, codes, _ in CASES:
            doc = Document(broken)
            result = check_document(doc, calls=process)
            assert {d.code for d in result.errors} == codes
    finally:
        process.close()


def _op_errors(model: onnx.ModelProto) -> list[str]:
    return [str(d) for d in check(model)[1].diagnostics if d.code in CODES]


def test_no_such_error_on_any_valid_backend_model() -> None:
    """Every onnx backend model onnx accepts (78 of them hold a Conv, ConvTranspose or
    Gemm) gets none of these errors."""
    models = {f"node/{k}": v for k, v in backend_node_models().items()}
    models |= {f"file/{p.parent.name}": onnx.load(p) for p in backend_model_files()}
    checked, false_errors = 0, []
    for name, model in models.items():
        if not {n.op_type for n in model.graph.node} & {"Conv", "ConvTranspose", "Gemm"}:
            continue
        try:
            onnx.checker.check_model(model, full_check=True)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError):
            continue
        checked += 1
        false_errors += [f"{name}: {e}" for e in _op_errors(model)]
    assert checked > 60
    assert false_errors == []


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.onnx")), ids=lambda p: p.name)
def test_no_such_error_on_the_real_exports(path: Path) -> None:
    assert _op_errors(onnx.load(path)) == []
