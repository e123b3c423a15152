"""onnx's checker and shape inference in the helper process (what the window uses for big
models): the same diagnostics and the same inferred types as in this process, on real
exports, on subgraphs and functions and on broken models; a helper that crashes is a
problem on the model, not an exception, and the next check starts a new helper."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest
from helpers.models import backend_node_models, function_model, subgraph_model
from onnx import TensorProto, helper

from designer.core.analysis import CheckResult, check_document
from designer.core.analysis.onnx_process import HELPER_COMMAND, OnnxProcess, types_only
from designer.core.document import Document

MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"


@pytest.fixture(scope="module")
def helper_process() -> Iterator[OnnxProcess]:
    process = OnnxProcess()
    yield process
    process.close()


def answers(result: CheckResult) -> tuple[list[tuple[object, ...]], dict[str, list[str]]]:
    """Every diagnostic, and every scope's inferred types (as text), of a check."""
    diagnostics: list[tuple[object, ...]] = [
        (d.severity, d.code, d.message, d.scope, d.node_key, d.tensor) for d in result.diagnostics
    ]
    types = {
        str(scope): sorted(f"{name}: {t}" for name, t in result.types(scope).items())
        for scope in result.keys
    }
    return diagnostics, types


def mismatched_matmul() -> onnx.ModelProto:
    """Valid for onnx's checker, rejected by strict shape inference (2x3 @ 4x5)."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["C"], name="mm")],
        "g",
        [
            helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("B", TensorProto.FLOAT, [4, 5]),
        ],
        [helper.make_tensor_value_info("C", TensorProto.FLOAT, [2, 5])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def unknown_op() -> onnx.ModelProto:
    """Rejected by onnx's checker (no such operator), with a valid node beside it."""
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["X"], ["Y"], name="fine"),
            helper.make_node("NoSuchOp", ["Y"], ["Z"], name="bad"),
        ],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def sample_models() -> dict[str, onnx.ModelProto]:
    models = {
        "subgraphs": subgraph_model(),
        "functions": function_model(),
        "mismatched matmul": mismatched_matmul(),
        "unknown op": unknown_op(),
    }
    for name in ("bert_4l_h64.torchscript", "llama_24l_h64.dynamo", "squeezenet1_0.torchscript"):
        models[name] = onnx.load(MODELS / f"{name}.onnx")
    backend = backend_node_models()
    for name in random.Random(16).sample(sorted(backend), 60):
        models[f"node/{name}"] = backend[name]
    return models


def test_the_helper_answers_as_this_process_does(helper_process: OnnxProcess) -> None:
    models = sample_models()
    differ = []
    for name, model in models.items():
        here = answers(check_document(Document(model)))
        there = answers(check_document(Document(model), calls=helper_process))
        if here != there:
            differ.append(name)
    assert not differ, differ
    # both sides of the check are in the sample: models with errors and without
    results = [check_document(Document(m), calls=helper_process) for m in models.values()]
    assert any(r.has_errors for r in results) and any(not r.has_errors for r in results)
    inferred = check_document(Document(mismatched_matmul()), calls=helper_process)
    assert any(d.code == "shape-inference" and d.node_name == "mm" for d in inferred.errors)


def test_types_only_keeps_the_types_of_every_scope() -> None:
    model = subgraph_model()
    full = check_document(Document(model))
    assert full.inferred is not None
    stripped = CheckResult(
        full.diagnostics,
        types_only(onnx.ModelProto.FromString(full.inferred.SerializeToString())),
        full.keys,
    )
    assert len(full.keys) > 2  # main graph and nested bodies
    assert answers(stripped) == answers(full)
    assert any(stripped.types(scope) for scope in full.keys if scope.steps)
    assert stripped.inferred is not None
    assert not any(n.op_type or n.input for n in stripped.inferred.graph.node)


def test_a_crashed_helper_is_a_problem_and_the_next_check_starts_a_new_one() -> None:
    segfault = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
    process = OnnxProcess(segfault)  # a real process that really dies on its first request
    try:
        result = check_document(Document(mismatched_matmul()), calls=process)
        crashed = [d for d in result.errors if "crashed" in d.message]
        assert crashed and "onnx's checker crashed on this model (signal 11)" in crashed[0].message
        assert result.inferred is None  # nothing inferred from a model the checker died on
        process.command = list(HELPER_COMMAND)
        again = check_document(Document(subgraph_model()), calls=process)
        assert not again.has_errors and again.inferred is not None
    finally:
        process.close()
