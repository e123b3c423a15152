"""A cheap structural copy of a model for showing it beside another (a diff view): every
field is copied except the values of large initializers, which keep their name, type and
shape only. The live model can then go on being edited without touching the copy."""

from __future__ import annotations

from typing import Any

import onnx

#: initializers with more bytes of data than this are copied without their values
KEEP_VALUES_BYTES = 4096


def _repeated(desc: Any) -> bool:
    """Protobuf ≥ 5.28 has ``is_repeated`` (and drops ``label`` in 7); older ones ``label``."""
    flag = getattr(desc, "is_repeated", None)
    if flag is not None:
        return bool(flag)
    return bool(desc.label == desc.LABEL_REPEATED)


def _data_bytes(tensor: onnx.TensorProto) -> int:
    return int(tensor.ByteSize()) - len(tensor.name)


def _copy_graph(source: onnx.GraphProto, target: onnx.GraphProto) -> None:
    for desc, value in source.ListFields():
        if desc.name == "initializer":
            continue
        field = getattr(target, desc.name)
        if _repeated(desc):
            field.extend(value)
        elif desc.message_type is not None:
            field.CopyFrom(value)
        else:
            setattr(target, desc.name, value)
    for tensor in source.initializer:
        copy = target.initializer.add()
        if _data_bytes(tensor) <= KEEP_VALUES_BYTES:
            copy.CopyFrom(tensor)
            continue
        copy.name = tensor.name
        copy.data_type = tensor.data_type
        copy.dims.extend(tensor.dims)
        copy.doc_string = tensor.doc_string


def skeleton(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model without the values of its large main-graph initializers (see the module
    docstring). Cost: the node list and small tensors are copied; weights are not."""
    out = onnx.ModelProto()
    for desc, value in model.ListFields():
        if desc.name == "graph":
            continue
        field = getattr(out, desc.name)
        if _repeated(desc):
            field.extend(value)
        elif desc.message_type is not None:
            field.CopyFrom(value)
        else:
            setattr(out, desc.name, value)
    _copy_graph(model.graph, out.graph)
    return out


def scope_skeleton(
    model: onnx.ModelProto, graph: onnx.GraphProto | onnx.FunctionProto
) -> onnx.ModelProto:
    """A subgraph or function body of ``model`` as it sits there, wrapped as a model (the
    model's opsets and local functions; a function body's inputs and outputs untyped, by
    name) and structurally copied like :func:`skeleton`: the "before" of an extraction,
    which turns outer-scope values into inputs and types what the body left untyped."""
    out = onnx.ModelProto()
    out.ir_version = model.ir_version
    out.opset_import.extend(model.opset_import)
    out.functions.extend(model.functions)
    if isinstance(graph, onnx.GraphProto):
        _copy_graph(graph, out.graph)
        return out
    out.graph.name = graph.name
    out.graph.node.extend(graph.node)
    out.graph.input.extend(onnx.ValueInfoProto(name=name) for name in graph.input)
    out.graph.output.extend(onnx.ValueInfoProto(name=name) for name in graph.output)
    return out
