"""Copy and paste of nodes: the clipboard holds a serialized ONNX ModelProto with the copied
nodes, the initializers they read, their opsets, and their relative positions in a metadata
property. Pasting renames nodes and outputs to unique names, keeps links among the pasted
nodes, keeps inputs whose tensor exists in the target graph, and adds missing initializers;
all as one undo step."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import onnx
from google.protobuf.message import DecodeError

from designer.core.document import Document, Position
from designer.core.edits import AddInitializer, AddNode, CompoundEdit, Edit
from designer.core.edits.lookup import names_in_use
from designer.core.errors import EditError
from designer.core.names import unique_name
from designer.core.scope import ScopeId

MIME_TYPE = "application/x-onnx-designer-nodes"
_POSITIONS = "onnx-designer.positions"


def copy_nodes(doc: Document, scope_id: ScopeId, keys: Iterable[int]) -> bytes:
    """Serialize operator nodes ``keys`` of ``scope_id`` (other keys are ignored)."""
    scope = doc.scope(scope_id)
    chosen = [k for k in keys if scope.has_node(k)]
    chosen.sort(key=scope.index_of)
    graph = onnx.GraphProto(name="clipboard")
    table = doc.positions.get(scope_id, {})
    points = [table.get(k, (0.0, 0.0)) for k in chosen]
    x0 = min((p[0] for p in points), default=0.0)
    y0 = min((p[1] for p in points), default=0.0)
    used: set[str] = set()
    for key in chosen:
        graph.node.append(scope.node(key))
        used.update(scope.node(key).input)
    for name in sorted(used):
        tensor = scope.initializer(name)
        if tensor is not None:
            graph.initializer.append(tensor)
    model = onnx.ModelProto(ir_version=doc.model.ir_version, graph=graph)
    model.opset_import.extend(doc.model.opset_import)
    rel = [[x - x0, y - y0] for x, y in points]
    model.metadata_props.add(key=_POSITIONS, value=json.dumps(rel))
    return bytes(model.SerializeToString())


def paste_edit(
    doc: Document, scope_id: ScopeId, data: bytes, origin: Position
) -> tuple[Edit, list[AddNode]]:
    """The edit that pastes ``data`` with its top-left node at ``origin``; also returns the
    AddNode edits (their ``key`` is set once applied, to select the pasted nodes)."""
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except DecodeError:
        raise EditError("the clipboard does not hold ONNX Designer nodes") from None
    if not model.graph.node:
        raise EditError("the clipboard holds no nodes")
    rel = _positions(model, len(model.graph.node))
    scope = doc.scope(scope_id)
    taken = names_in_use(doc, scope_id)
    node_names = scope.node_names()
    existing = taken | scope.defined_names()
    renamed: dict[str, str] = {}
    for node in model.graph.node:
        for out in node.output:
            if out:
                renamed[out] = unique_name(out, taken)
                taken.add(renamed[out])
    edits: list[Edit] = []
    inits = {t.name: t for t in model.graph.initializer}
    for name, tensor in inits.items():
        if name not in existing and name not in renamed:
            edits.append(AddInitializer(scope_id, tensor))
            existing.add(name)
    adds: list[AddNode] = []
    for node, (dx, dy) in zip(model.graph.node, rel, strict=True):
        name = unique_name(node.name or node.op_type, node_names)
        node_names.add(name)
        inputs = [renamed.get(i, i if i in existing else "") for i in node.input]
        add = AddNode(
            scope_id,
            node.op_type,
            domain=node.domain,
            inputs=inputs,
            outputs=[renamed.get(o, "") for o in node.output],
            attributes=list(node.attribute),
            name=name,
            position=(origin[0] + dx, origin[1] + dy),
        )
        adds.append(add)
        edits.append(add)
    n = len(adds)
    return CompoundEdit(f"Paste {n} node" + ("s" if n != 1 else ""), edits), adds


def _positions(model: onnx.ModelProto, count: int) -> list[tuple[float, float]]:
    for prop in model.metadata_props:
        if prop.key == _POSITIONS:
            try:
                rel = json.loads(prop.value)
                if len(rel) == count:
                    points = [(float(x), float(y)) for x, y in rel]
                    if all(abs(x) <= 1e9 and abs(y) <= 1e9 for x, y in points):  # NaN fails
                        return points
            except (ValueError, TypeError, RecursionError, OverflowError):
                pass
            break
    return [(i * 40.0, i * 40.0) for i in range(count)]


def bounds_origin(positions: Mapping[int, Position]) -> Position:
    if not positions:
        return (0.0, 0.0)
    return (min(p[0] for p in positions.values()), min(p[1] for p in positions.values()))
