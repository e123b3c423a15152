"""Small helpers shared by the transforms: names, scopes, uses, model copies.

Everything here reads protobuf only; costs are linear in the size of the graph (not of the
weights) unless said otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import onnx

from designer.core.names import unique_name
from designer.core.scope import graph_attributes

Container = onnx.GraphProto | onnx.FunctionProto


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for _attr, _index, graph in graph_attributes(node):
        yield graph


def defined_names(proto: Container) -> set[str]:
    """Names defined by ``proto`` itself (inputs, initializers, node outputs), not nested."""
    if isinstance(proto, onnx.FunctionProto):
        names = set(proto.input)
    else:
        names = {v.name for v in proto.input}
        names.update(t.name for t in proto.initializer)
        names.update(s.values.name for s in proto.sparse_initializer)
    for node in proto.node:
        names.update(o for o in node.output if o)
    return names


def node_uses(node: onnx.NodeProto) -> set[str]:
    """Names a node reads: its inputs and the free names of its subgraphs."""
    used = {i for i in node.input if i}
    for graph in subgraphs(node):
        used |= free_names(graph)
    return used


def free_names(proto: Container) -> set[str]:
    """Names ``proto`` (or a graph nested in it) reads from an enclosing scope."""
    defined = defined_names(proto)
    used: set[str] = set()
    for node in proto.node:
        used |= node_uses(node)
    if isinstance(proto, onnx.GraphProto):
        used.update(v.name for v in proto.output)
    else:
        used.update(proto.output)
    return used - defined


def all_names(model: onnx.ModelProto) -> set[str]:
    """Every value and node name in the model, subgraphs and functions included (for making
    new names that collide with nothing)."""
    names: set[str] = set()

    def visit(proto: Container) -> None:
        names.update(defined_names(proto))
        names.update(n.name for n in proto.node if n.name)
        for node in proto.node:
            names.update(node.input)
            for graph in subgraphs(node):
                visit(graph)

    visit(model.graph)
    for fn in model.functions:
        visit(fn)
    return names


class Names:
    """Hands out new names that collide with no name of the model."""

    def __init__(self, taken: Iterable[str]) -> None:
        self.taken = set(taken)

    def new(self, base: str) -> str:
        name = unique_name(base, self.taken)
        self.taken.add(name)
        return name


def copy_message(message: Any) -> Any:
    clone = type(message)()
    clone.CopyFrom(message)
    return clone


def _copy_fields(src: Any, dst: Any, skip: str) -> None:
    for field_desc, value in src.ListFields():
        if field_desc.name == skip:
            continue
        target = getattr(dst, field_desc.name)
        if isinstance(value, (str, bytes, int, float)):
            setattr(dst, field_desc.name, value)
        elif hasattr(target, "extend"):
            target.extend(value)
        else:
            target.CopyFrom(value)


def copy_without_initializers(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose main graph has no initializers (the caller adds them back,
    converted or copied one by one). Cost: the graph structure is copied once; no weights of
    the main graph are copied."""
    copy = onnx.ModelProto()
    _copy_fields(model, copy, skip="graph")
    _copy_fields(model.graph, copy.graph, skip="initializer")
    return copy


def graph_output_names(proto: Container) -> list[str]:
    if isinstance(proto, onnx.FunctionProto):
        return list(proto.output)
    return [v.name for v in proto.output]


def tensor_nbytes(tensor: onnx.TensorProto) -> int:
    """Bytes of a tensor's payload, inline or external, without reading it."""
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in tensor.external_data}
        if info.get("length"):
            return int(info["length"])
    count = 1
    for d in tensor.dims:
        count *= d
    if tensor.data_type == onnx.TensorProto.STRING:
        return sum(len(s) for s in tensor.string_data)
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, TypeError, ValueError):
        itemsize = 1
    return count * itemsize
