"""onnx's own checker and shape inference, run on a weightless copy of the model, with their
messages turned into per-node diagnostics."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import onnx
from onnx import shape_inference

from designer.core.protocopy import copy_message, copy_without_initializers
from designer.core.tensor_sizes import tensor_nbytes

#: Initializers at most this large keep their values for shape inference (Reshape shapes,
#: Slice starts…); larger ones are passed without data, so a check never copies the weights.
DATA_KEEP_BYTES = 4096

_NODE_REF = re.compile(r"\(op_type:([^,]*), node name: ([^)]*)\):\s*(.*)")
_CHECKER_NODE = re.compile(
    r"Node \(([^)]*)\)|node name: ([^)\s,]*)|of node:\s*name: ([^\n]*?) OpType:"
)


@dataclass(frozen=True)
class InferenceProblem:
    """One message from onnx: ``node_name`` may be empty when onnx did not name a node."""

    node_name: str
    op_type: str
    message: str
    source: str  # "checker" or "inference"


def weightless_copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` without its large weights and without any external reference.

    Cost: the graph is copied once in C++; initializer payloads over DATA_KEEP_BYTES are
    never copied: those initializers become graph inputs of the same type and shape, which is
    all the checker and shape inference need of them. External tensors never stay external
    (onnx would resolve their files against the working directory and read them): main
    graph initializers become inputs, initializers of subgraphs become inputs of the main
    graph (an outer-scope value of the same type), other tensors (attribute values) get
    zeros of their size. ``model`` itself is only read.
    """
    copy = copy_without_initializers(model)
    inputs = {v.name for v in model.graph.input}
    for tensor in model.graph.initializer:
        if not _is_external(tensor) and tensor_nbytes(tensor) <= DATA_KEEP_BYTES:
            copy.graph.initializer.append(tensor)
        elif tensor.name not in inputs:
            _add_input(copy.graph, tensor)
            inputs.add(tensor.name)
    if _has_external(model):
        _inline_external(copy, inputs)
    return copy


def _is_external(tensor: onnx.TensorProto) -> bool:
    return tensor.data_location == onnx.TensorProto.EXTERNAL


def _has_external(model: onnx.ModelProto) -> bool:
    from designer.core.io.external import iter_model_tensors

    return any(_is_external(t) for t in iter_model_tensors(model))


def _add_input(graph: onnx.GraphProto, tensor: onnx.TensorProto) -> None:
    value = graph.input.add(name=tensor.name)
    value.type.tensor_type.elem_type = tensor.data_type
    for dim in tensor.dims:
        value.type.tensor_type.shape.dim.add(dim_value=dim)


def _inline_external(copy: onnx.ModelProto, main_inputs: set[str]) -> None:
    """Replace the remaining external tensors of ``copy`` (see :func:`weightless_copy`)."""
    from designer.core.io.external import iter_model_tensors
    from designer.core.walk import nested_graphs

    def lift(graph: onnx.GraphProto) -> None:
        kept = [t for t in graph.initializer if not _is_external(t)]
        if len(kept) != len(graph.initializer):
            for tensor in graph.initializer:
                if _is_external(tensor) and tensor.name not in main_inputs:
                    _add_input(copy.graph, tensor)
                    main_inputs.add(tensor.name)
            kept = [copy_message(t) for t in kept]
            del graph.initializer[:]
            graph.initializer.extend(kept)

    for graph in nested_graphs(copy.graph, include_root=False):  # the caller did the main's
        lift(graph)
    for tensor in iter_model_tensors(copy):
        if _is_external(tensor):
            from designer.core.tensor_sizes import tensor_bytes_needed

            size = tensor_bytes_needed(tensor) or 0
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT
            if tensor.data_type == onnx.TensorProto.STRING:
                count = 1
                for dim in tensor.dims:
                    count *= dim
                tensor.string_data.extend([b""] * count)
            else:
                tensor.raw_data = bytes(size)


#: What onnx's C++ side says when it cannot parse what it was given (protobuf's nesting
#: limit of 100 levels there: about 33 nested If levels).
_UNPARSABLE = "Unable to parse proto"
SKIPPED = "skipped"


def _skipped(exc: Exception) -> InferenceProblem | None:
    if _UNPARSABLE not in str(exc):
        return None
    return InferenceProblem(
        "",
        "",
        "onnx's checker and shape inference were not run: the model is nested deeper than "
        "onnx's protobuf recursion limit of 100 message levels (about 33 nested subgraphs)",
        SKIPPED,
    )


class OnnxCalls(Protocol):
    """Where onnx's checker and shape inference run: in this process (:data:`IN_PROCESS`)
    or in a helper process (:class:`designer.core.analysis.onnx_process.OnnxProcess`, the
    window's choice for big models). Same answers either way, for the same model."""

    def check(self, model: onnx.ModelProto) -> list[InferenceProblem]:
        """:func:`run_checker`."""
        ...

    def infer(self, model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[InferenceProblem]]:
        """:func:`run_inference`; the model returned may hold only what types are read
        from (see :func:`designer.core.analysis.onnx_process.types_only`)."""
        ...

    def infer_lenient(self, model: onnx.ModelProto) -> onnx.ModelProto:
        """:func:`lenient_inference`, with the same freedom."""
        ...


class InProcess:
    """onnx called here, on the calling thread."""

    def check(self, model: onnx.ModelProto) -> list[InferenceProblem]:
        return run_checker(model)

    def infer(self, model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[InferenceProblem]]:
        return run_inference(model)

    def infer_lenient(self, model: onnx.ModelProto) -> onnx.ModelProto:
        return lenient_inference(model)


IN_PROCESS = InProcess()


def run_checker(model: onnx.ModelProto) -> list[InferenceProblem]:
    """onnx.checker.check_model (no shape inference): at most one problem (it stops at one).
    A model onnx cannot parse gives one problem with source ``skipped``."""
    try:
        onnx.checker.check_model(model, full_check=False)
    except ValueError as exc:
        skipped = _skipped(exc)
        if skipped is None:
            raise
        return [skipped]
    except onnx.checker.ValidationError as exc:
        message = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        message = message or "invalid model"
        match = _CHECKER_NODE.search(str(exc))
        node = (match.group(1) or match.group(2) or match.group(3) or "") if match else ""
        return [InferenceProblem(node, "", message, "checker")]
    return []


#: onnx's data propagation turns a 1-D tensor of length N into a shape of N dimensions
#: (gigabytes for a declared length of 10**8); it only runs where no 1-D value is longer.
DATA_PROP_MAX_LENGTH = 1 << 16

_ONNX_ERRORS = (
    shape_inference.InferenceError,
    onnx.checker.ValidationError,
    RuntimeError,
    ValueError,
)


def run_inference(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[InferenceProblem]]:
    """Strict shape and type inference of a model that passed onnx's checker and the
    structural checks (onnx's inference can crash the process on malformed nodes, e.g. a
    TreeEnsemble without its input, so never call it on an unchecked model).

    Returns the model with inferred value_info and the problems onnx reported, one per node
    it named. When strict inference fails, a lenient pass still provides inferred types.
    Cost: two inference passes (without, then with data propagation: see
    :data:`DATA_PROP_MAX_LENGTH`); memory proportional to the graph, not to declared dims.
    """
    try:
        inferred = shape_inference.infer_shapes(
            model, check_type=True, strict_mode=True, data_prop=False
        )
        if not data_prop_safe(inferred):
            return inferred, []
        inferred = shape_inference.infer_shapes(
            model, check_type=True, strict_mode=True, data_prop=True
        )
        return inferred, []
    except _ONNX_ERRORS as exc:
        problems = list(_parse_inference_error(str(exc)))
    return lenient_inference(model), problems


def lenient_inference(model: onnx.ModelProto) -> onnx.ModelProto:
    """Best-effort types: inference that skips what it cannot infer (same precondition)."""
    try:
        inferred = shape_inference.infer_shapes(
            model, check_type=False, strict_mode=False, data_prop=False
        )
        if not data_prop_safe(inferred):
            return inferred
        return shape_inference.infer_shapes(
            model, check_type=False, strict_mode=False, data_prop=True
        )
    except _ONNX_ERRORS:
        return model


def data_prop_safe(inferred: onnx.ModelProto) -> bool:
    """Whether no 1-D value of ``inferred`` (types as inferred without data propagation)
    is longer than :data:`DATA_PROP_MAX_LENGTH`. O(values)."""
    from designer.core.walk import nested_graphs

    def short(graph: onnx.GraphProto) -> bool:
        for group in (graph.input, graph.output, graph.value_info):
            for value in group:
                dims = value.type.tensor_type.shape.dim
                if len(dims) == 1 and dims[0].dim_value > DATA_PROP_MAX_LENGTH:
                    return False
        for tensor in graph.initializer:
            if len(tensor.dims) == 1 and tensor.dims[0] > DATA_PROP_MAX_LENGTH:
                return False
        return True

    return all(short(graph) for graph in nested_graphs(inferred.graph))


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
