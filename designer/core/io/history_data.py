"""The external tensors a document's undo history holds: what an undo or redo may put back
into the model. A save into another folder copies their data beside the new model with the
model's own (:func:`designer.core.io.save.save_document`), so that an edit undone after
Save As finds its weights there, not a stranger's file of the same name or a hole.

Edits keep the protos they replace in attributes of their own (``ReplaceInitializer._old``,
the nodes a deletion removed, a whole model a transform replaced, the children of a
``CompoundEdit``); they are found by walking the edits' attributes: edits, lists, tuples,
sets and dict values are followed, protobuf messages are searched for tensors, anything
else is left alone. Qt-free.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import onnx
from google.protobuf.message import Message

from designer.core.edits.base import Edit
from designer.core.io.external import is_external, iter_root_tensors

#: Messages :func:`designer.core.io.external.iter_root_tensors` searches.
_ROOTS = (onnx.ModelProto, onnx.GraphProto, onnx.FunctionProto, onnx.NodeProto)


def history_tensors(edits: Iterable[Edit]) -> list[onnx.TensorProto]:
    """The external tensors ``edits`` hold, each once (by identity)."""
    seen: set[int] = set()
    out: list[onnx.TensorProto] = []
    for tensor in _walk(list(edits), set()):
        if id(tensor) not in seen and is_external(tensor):
            seen.add(id(tensor))
            out.append(tensor)
    return out


def _walk(value: object, visited: set[int]) -> Iterator[onnx.TensorProto]:
    if isinstance(value, Message):
        yield from message_tensors(value)
        return
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return
    if id(value) in visited:
        return
    visited.add(id(value))
    if isinstance(value, Edit):
        for item in vars(value).values():
            yield from _walk(item, visited)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _walk(item, visited)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _walk(item, visited)


def message_tensors(message: Message) -> Iterator[onnx.TensorProto]:
    """Every TensorProto in ``message`` (a model, graph, function, node, attribute, sparse
    tensor or tensor); nothing for other messages."""
    if isinstance(message, onnx.TensorProto):
        yield message
    elif isinstance(message, _ROOTS):
        yield from iter_root_tensors(message)
    elif isinstance(message, onnx.AttributeProto):
        if message.HasField("t"):
            yield message.t
        yield from message.tensors
        if message.HasField("sparse_tensor"):
            yield from message_tensors(message.sparse_tensor)
        if message.HasField("g"):
            yield from iter_root_tensors(message.g)
        for graph in message.graphs:
            yield from iter_root_tensors(graph)
    elif isinstance(message, onnx.SparseTensorProto):
        yield message.values
        yield message.indices
