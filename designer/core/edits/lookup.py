"""Name look-ups shared by edits: which names are taken where. Each walk is O(size of scope)."""

from __future__ import annotations

from collections.abc import Iterator

import onnx

from designer.core.document import Document
from designer.core.errors import EditError
from designer.core.names import identifier_problem
from designer.core.scope import Scope, ScopeId
from designer.core.walk import iter_graphs


def walk_graph_names(proto: onnx.GraphProto | onnx.FunctionProto) -> Iterator[str]:
    """Every tensor name mentioned in ``proto`` and its nested subgraphs."""
    for walked in iter_graphs(proto):
        yield from _own_names(walked.graph)


def _own_names(proto: onnx.GraphProto | onnx.FunctionProto) -> Iterator[str]:
    """The tensor names ``proto`` itself and its nodes mention (not nested subgraphs)."""
    if isinstance(proto, onnx.GraphProto):
        for group in (proto.input, proto.output, proto.value_info):
            for vi in group:
                yield vi.name
        for t in proto.initializer:
            yield t.name
        for s in proto.sparse_initializer:
            yield s.values.name
        for ann in proto.quantization_annotation:
            yield ann.tensor_name
            for param in ann.quant_parameter_tensor_names:
                yield param.value
    else:
        yield from proto.input
        yield from proto.output
        for vi in proto.value_info:
            yield vi.name
    for node in proto.node:
        yield from node.input
        yield from node.output


def names_in_use(doc: Document, scope_id: ScopeId) -> set[str]:
    """Names a new tensor in ``scope_id`` must avoid: all names of the scope and its
    subgraphs plus the names defined by enclosing scopes."""
    scope = doc.scope(scope_id)
    names = set(walk_graph_names(scope.proto))
    names |= scope.outer_names()
    names.discard("")
    return names


def require_identifier(name: str, what: str) -> None:
    problem = identifier_problem(name)
    if problem is not None:
        raise EditError(f"invalid {what} name: {problem}")


def require_node(scope: Scope, key: int) -> onnx.NodeProto:
    if not scope.has_node(key):
        raise EditError(f"the node (key {key}) is not in graph '{scope.name}' any more")
    return scope.node(key)


def resolve_scope(doc: Document, scope_id: ScopeId) -> Scope:
    try:
        return doc.scope(scope_id)
    except KeyError as exc:
        raise EditError(f"graph scope not found: {exc.args[0]}") from None
