"""onnx's own checker and shape inference, run on a weightless copy of the model, with their
messages turned into per-node diagnostics."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import onnx
from onnx import shape_inference

#: Initializers at most this large keep their values for shape inference (Reshape shapes,
#: Slice starts…); larger ones are passed without data, so a check never copies the weights.
DATA_KEEP_BYTES = 4096

_NODE_REF = re.compile(r"\(op_type:([^,]*), node name: ([^)]*)\):\s*(.*)")
_CHECKER_NODE = re.compile(r"Node \(([^)]*)\)|node name: ([^)\s,]*)")


@dataclass(frozen=True)
class InferenceProblem:
    """One message from onnx: ``node_name`` may be empty when onnx did not name a node."""

    node_name: str
    op_type: str
    message: str
    source: str  # "checker" or "inference"


def weightless_copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose large initializers carry no data (types and shapes only).

    Cost: the graph is copied once in C++; initializer payloads over DATA_KEEP_BYTES are
    never copied: those initializers become graph inputs of the same type and shape, which is
    all the checker and shape inference need of them. ``model`` itself is only read.
    """
    copy = onnx.ModelProto()
    _copy_fields(model, copy, skip="graph")
    _copy_fields(model.graph, copy.graph, skip="initializer")
    inputs = {v.name for v in model.graph.input}
    for tensor in model.graph.initializer:
        if _payload_bytes(tensor) <= DATA_KEEP_BYTES:
            copy.graph.initializer.append(tensor)
        elif tensor.name not in inputs:
            value = copy.graph.input.add(name=tensor.name)
            value.type.tensor_type.elem_type = tensor.data_type
            for dim in tensor.dims:
                value.type.tensor_type.shape.dim.add(dim_value=dim)
    return copy


def _copy_fields(src: Any, dst: Any, skip: str) -> None:
    for descriptor, value in src.ListFields():
        if descriptor.name == skip:
            continue
        target = getattr(dst, descriptor.name)
        if isinstance(value, (str, bytes, int, float)):
            setattr(dst, descriptor.name, value)
        elif hasattr(target, "extend"):
            target.extend(value)
        else:
            target.CopyFrom(value)


def _payload_bytes(tensor: onnx.TensorProto) -> int:
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        return 0
    return len(tensor.raw_data) or tensor.ByteSize()


def run_checker(model: onnx.ModelProto) -> list[InferenceProblem]:
    """onnx.checker.check_model (no shape inference): at most one problem (it stops at one)."""
    try:
        onnx.checker.check_model(model, full_check=False)
    except onnx.checker.ValidationError as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid model"
        match = _CHECKER_NODE.search(str(exc))
        node = (match.group(1) or match.group(2) or "") if match else ""
        return [InferenceProblem(node, "", message, "checker")]
    return []


def run_inference(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[InferenceProblem]]:
    """Strict shape and type inference of a model that passed onnx's checker and the
    structural checks (onnx's inference can crash the process on malformed nodes, e.g. a
    TreeEnsemble without its input, so never call it on an unchecked model).

    Returns the model with inferred value_info and the problems onnx reported, one per node
    it named. When strict inference fails, a lenient pass still provides inferred types.
    """
    try:
        inferred = shape_inference.infer_shapes(
            model, check_type=True, strict_mode=True, data_prop=True
        )
        return inferred, []
    except (shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError) as exc:
        problems = list(_parse_inference_error(str(exc)))
    return lenient_inference(model), problems


def lenient_inference(model: onnx.ModelProto) -> onnx.ModelProto:
    """Best-effort types: inference that skips what it cannot infer (same precondition)."""
    try:
        return shape_inference.infer_shapes(
            model, check_type=False, strict_mode=False, data_prop=True
        )
    except (shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError):
        return model


def _parse_inference_error(text: str) -> Iterator[InferenceProblem]:
    found = False
    for line in text.splitlines():
        match = _NODE_REF.search(line)
        if match:
            found = True
            message = re.sub(r"^\[\w+\]\s*", "", match.group(3).strip())
            yield InferenceProblem(match.group(2), match.group(1), message, "inference")
    if not found:
        first = next((line for line in text.splitlines() if line.strip()), text)
        yield InferenceProblem("", "", first.strip(), "inference")
