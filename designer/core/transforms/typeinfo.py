"""Types of every value of a scope (main graph, subgraph or function body).

onnx's shape inference fills ``value_info`` of the main graph only; subgraph and function
values stay untyped. :func:`infer_scope_types` runs it once per scope on a temporary graph
whose inputs are the scope's inputs, its initializers (as typed inputs when large) and the
names it reads from enclosing scopes, typed from there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

import onnx
from onnx import shape_inference

from designer.core.analysis.inference import data_prop_safe
from designer.core.tensor_sizes import tensor_nbytes
from designer.core.transforms.graphs import free_names
from designer.core.transforms.log import TransformError
from designer.core.transforms.toposort import sorted_nodes
from designer.core.walk import Container

logger = logging.getLogger(__name__)

#: Initializers at most this large are passed with their values (Reshape shapes, Slice
#: starts… help shape inference); larger ones only as typed inputs, so no weight is copied.
DATA_KEEP_BYTES = 4096
NON_TENSOR = -1

TypeMap = dict[str, onnx.TypeProto]


def elem_type(types: Mapping[str, onnx.TypeProto], name: str) -> int:
    """The tensor element type of ``name``; 0 when unknown, NON_TENSOR for a sequence, map or
    optional value."""
    tp = types.get(name)
    if tp is None:
        return 0
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        return int(tp.tensor_type.elem_type)
    if kind is None:
        return 0
    return NON_TENSOR


def static_shape(types: Mapping[str, onnx.TypeProto], name: str) -> list[int | None] | None:
    """The shape of tensor ``name`` with None for unknown dims; None when the rank is unknown."""
    tp = types.get(name)
    if tp is None or tp.WhichOneof("value") != "tensor_type":
        return None
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]


def tensor_type(elem: int, shape: Iterable[int] | None = None) -> onnx.TypeProto:
    tp = onnx.TypeProto()
    tp.tensor_type.elem_type = elem
    if shape is not None:
        tp.tensor_type.shape.SetInParent()
        for d in shape:
            tp.tensor_type.shape.dim.add(dim_value=d)
    return tp


def _declared(proto: Container) -> TypeMap:
    types: TypeMap = {}
    groups: list[Iterable[onnx.ValueInfoProto]] = [proto.value_info]
    if isinstance(proto, onnx.GraphProto):
        groups = [proto.input, proto.output, proto.value_info]
        for t in proto.initializer:
            types[t.name] = tensor_type(t.data_type, t.dims)
    for group in groups:
        for vi in group:
            if vi.type.WhichOneof("value") is not None:
                types.setdefault(vi.name, vi.type)
    return types


def infer_scope_types(
    proto: Container,
    outer: Mapping[str, onnx.TypeProto],
    model: onnx.ModelProto,
    input_types: Mapping[str, onnx.TypeProto] | None = None,
) -> TypeMap:
    """Types of the values of ``proto``: declared ones, then what shape inference finds.

    ``outer`` types the names read from enclosing scopes; ``input_types`` types a function
    body's inputs (from a call site). Cost: one copy of the scope's nodes (no large weights)
    and one shape-inference run; a scope onnx cannot infer keeps its declared types.
    """
    types = _declared(proto)
    temp = onnx.GraphProto(name=proto.name or "scope")
    known: set[str] = set()

    def add_input(name: str, tp: onnx.TypeProto) -> None:
        if name not in known:
            known.add(name)
            temp.input.add(name=name).type.CopyFrom(tp)

    if isinstance(proto, onnx.GraphProto):
        for vi in proto.input:
            add_input(vi.name, vi.type)
        for t in proto.initializer:
            if t.name in known:
                continue
            if t.data_location != onnx.TensorProto.EXTERNAL and tensor_nbytes(t) <= DATA_KEEP_BYTES:
                temp.initializer.append(t)
                known.add(t.name)
            else:
                add_input(t.name, tensor_type(t.data_type, t.dims))
        temp.output.extend(proto.output)
    else:
        for name in proto.input:
            tp = (input_types or {}).get(name)
            if tp is not None:
                add_input(name, tp)
        temp.output.extend(onnx.ValueInfoProto(name=n) for n in proto.output)
    for name in sorted(free_names(proto)):
        tp = outer.get(name)
        if tp is not None:
            add_input(name, tp)
    try:
        temp.node.extend(sorted_nodes(proto))  # onnx infers in list order
    except TransformError:
        temp.node.extend(proto.node)
    temp.value_info.extend(vi for vi in proto.value_info if vi.name not in known)
    for name, tp in (input_types or {}).items():
        types.setdefault(name, tp)
    model_copy = onnx.ModelProto(ir_version=model.ir_version, graph=temp)
    model_copy.opset_import.extend(model.opset_import)
    if isinstance(proto, onnx.FunctionProto):
        model_copy.opset_import.extend(
            op
            for op in proto.opset_import
            if op.domain not in {o.domain for o in model.opset_import}
        )
    model_copy.functions.extend(model.functions)
    try:
        inferred = shape_inference.infer_shapes(model_copy, strict_mode=False)
        if data_prop_safe(inferred):  # data propagation allocates per element of 1-D values
            inferred = shape_inference.infer_shapes(model_copy, strict_mode=False, data_prop=True)
    except Exception as error:  # onnx raises several types; the scope keeps what it has
        logger.debug("shape inference of a scope failed: %s", error)
        return types
    graph = inferred.graph
    for vi in [*graph.value_info, *graph.output, *graph.input]:
        if vi.type.WhichOneof("value") is not None:
            current = types.get(vi.name)
            if current is None or elem_type(types, vi.name) == 0 or _rank_unknown(current):
                types[vi.name] = vi.type
    return types


def _rank_unknown(tp: onnx.TypeProto) -> bool:
    return tp.WhichOneof("value") == "tensor_type" and not tp.tensor_type.HasField("shape")
