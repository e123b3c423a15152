"""Copy and paste of nodes: the clipboard holds a serialized ONNX ModelProto with the copied
nodes, the initializers they read, their opsets, and their relative positions in a metadata
property, and the folder of the model's external data (to read the weights that live there).
Pasting renames nodes and outputs to unique names, keeps links among the pasted nodes and
keeps inputs whose tensor exists in the target graph. A copied initializer is reused when the
target already has an identical one of that name; otherwise it is added, under a fresh name
when its name is taken by a different tensor (the pasted nodes read it under that name), so a
pasted node never computes with the target's weights by accident. All as one undo step."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError

from designer.core.document import Document, Position
from designer.core.edits import AddInitializer, AddNode, CompoundEdit, Edit
from designer.core.edits.lookup import names_in_use
from designer.core.errors import DesignerError, EditError
from designer.core.io.external import (
    ExternalDataError,
    external_range,
    is_external,
    read_external_bytes,
    tensor_array,
)
from designer.core.names import is_c90_identifier, sanitize_identifier, unique_name
from designer.core.scope import Scope, ScopeId

MIME_TYPE = "application/x-onnx-designer-nodes"
_POSITIONS = "onnx-designer.positions"
_BASE_DIR = "onnx-designer.base-dir"  # where the copied external tensors' files are
_CHUNK = 1 << 24  # bytes compared at a time (bounded memory for memory-mapped weights)


def copy_nodes(
    doc: Document, scope_id: ScopeId, keys: Iterable[int], along: Iterable[int] = ()
) -> bytes:
    """Serialize operator nodes ``keys`` of ``scope_id`` (other keys are ignored), and the
    undrawn nodes ``along`` (hidden Constants they read, :func:`constants_read_by`), which
    take the position of the first copied node."""
    scope = doc.scope(scope_id)
    chosen = [k for k in keys if scope.has_node(k)]
    hidden = {k for k in along if scope.has_node(k)} - set(chosen)
    table = doc.positions.get(scope_id, {})
    drawn = [table.get(k, (0.0, 0.0)) for k in chosen]
    x0 = min((p[0] for p in drawn), default=0.0)
    y0 = min((p[1] for p in drawn), default=0.0)
    chosen.extend(hidden)
    chosen.sort(key=scope.index_of)
    points = [(x0, y0) if k in hidden else table.get(k, (0.0, 0.0)) for k in chosen]
    graph = onnx.GraphProto(name="clipboard")
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
    if doc.base_dir is not None:
        model.metadata_props.add(key=_BASE_DIR, value=str(doc.base_dir))
    return bytes(model.SerializeToString())


def constants_read_by(doc: Document, scope_id: ScopeId, keys: Iterable[int]) -> list[int]:
    """The Constant nodes of the scope, not among ``keys``, whose outputs nodes ``keys``
    read: what a copy of them takes along while Constants are not drawn (without them a
    pasted node would read the target's value of that name, or nothing)."""
    scope = doc.scope(scope_id)
    chosen = [k for k in keys if scope.has_node(k)]
    read = {name for k in chosen for name in scope.node(k).input if name}
    skip = set(chosen)
    return [
        key
        for key, node in scope.nodes()
        if key not in skip
        and node.op_type == "Constant"
        and node.domain in ("", "ai.onnx")
        and not read.isdisjoint(node.output)
    ]


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
    bound, edits = _initializer_edits(
        doc, scope, model.graph.initializer, _base_dir(model), taken | existing, renamed
    )
    adds: list[AddNode] = []
    for node, (dx, dy) in zip(model.graph.node, rel, strict=True):
        name = unique_name(node.name or node.op_type, node_names)
        node_names.add(name)
        inputs = [_bound_input(i, renamed, bound, existing) for i in node.input]
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


def _bound_input(
    name: str, renamed: Mapping[str, str], bound: Mapping[str, str], existing: set[str]
) -> str:
    """What a pasted node's input ``name`` reads: a pasted output, a pasted (or reused)
    initializer, a tensor of the target of that name, or nothing."""
    if name in renamed:
        return renamed[name]
    if name in bound:
        return bound[name]
    return name if name in existing else ""


def _initializer_edits(
    doc: Document,
    scope: Scope,
    tensors: Iterable[onnx.TensorProto],
    src_dir: Path | None,
    avoid: set[str],
    renamed: Mapping[str, str],
) -> tuple[dict[str, str], list[Edit]]:
    """For each copied initializer: the name the pasted nodes read it by, and the
    AddInitializer edits for those the target lacks. An initializer visible in the target
    under the copied name (or its identifier form) with the same type, shape and bytes is
    reused; any other is added under its own name when that is an identifier not in
    ``avoid``, else under a fresh one (``avoid`` gains the names taken). A name that a pasted
    node outputs is left to that output. External data copied from another folder is read
    into the pasted tensor (its file is relative to the source model)."""
    bound: dict[str, str] = {}
    edits: list[Edit] = []
    for name, tensor in {t.name: t for t in tensors}.items():
        if not name or name in renamed:
            continue
        reuse = _identical_in(doc, scope, tensor, src_dir, (name, sanitize_identifier(name)))
        if reuse is not None:
            bound[name] = reuse
            continue
        new = name if name not in avoid and is_c90_identifier(name) else unique_name(name, avoid)
        avoid.add(new)
        pasted = _portable(tensor, src_dir, doc.base_dir)
        if new != name:
            pasted = _copy_of(pasted) if pasted is tensor else pasted
            pasted.name = new
        edits.append(AddInitializer(scope.id, pasted))
        bound[name] = new
    return bound, edits


def _identical_in(
    doc: Document,
    scope: Scope,
    tensor: onnx.TensorProto,
    src_dir: Path | None,
    names: Iterable[str],
) -> str | None:
    """The first of ``names`` that is an initializer visible in ``scope`` (its own or an
    enclosing graph's) equal to ``tensor``, or None."""
    for name in dict.fromkeys(names):
        current: Scope | None = scope
        while current is not None:
            target = current.initializer(name)
            if target is not None:
                if same_tensor(tensor, src_dir, target, doc.base_dir):
                    return name
                break
            current = current.parent
    return None


def same_tensor(
    a: onnx.TensorProto, a_dir: Path | None, b: onnx.TensorProto, b_dir: Path | None
) -> bool:
    """True when ``a`` and ``b`` (external data relative to ``a_dir`` / ``b_dir``) have the
    same data type, dims and bytes; names are not compared. Two external tensors in the same
    range of the same file are equal without reading it; otherwise the values are compared
    (external ones memory-mapped, a chunk at a time). A tensor whose data cannot be read
    equals nothing."""
    if a.data_type != b.data_type or list(a.dims) != list(b.dims):
        return False
    try:
        if _same_range(a, a_dir, b, b_dir):
            return True
        if not is_external(a) and not is_external(b) and a.raw_data and b.raw_data:
            return a.raw_data == b.raw_data
        x, y = tensor_array(a, a_dir), tensor_array(b, b_dir)
    except (DesignerError, ValueError, TypeError):
        return False
    return _same_values(x, y)


def _same_range(
    a: onnx.TensorProto, a_dir: Path | None, b: onnx.TensorProto, b_dir: Path | None
) -> bool:
    """Both external, in the same range of the same file (real paths): the same bytes,
    known without reading them. Raises ExternalDataError for an unreadable reference."""
    if not (is_external(a) and is_external(b)) or a_dir is None or b_dir is None:
        return False
    return external_range(a, a_dir) == external_range(b, b_dir)


def _same_values(x: np.ndarray, y: np.ndarray) -> bool:
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if x.dtype == object:  # strings
        return bool(x.ravel().tolist() == y.ravel().tolist())
    xb = np.ascontiguousarray(x).reshape(-1).view(np.uint8)
    yb = np.ascontiguousarray(y).reshape(-1).view(np.uint8)
    for start in range(0, xb.size, _CHUNK):
        if not np.array_equal(xb[start : start + _CHUNK], yb[start : start + _CHUNK]):
            return False
    return True


def _portable(
    tensor: onnx.TensorProto, src_dir: Path | None, dst_dir: Path | None
) -> onnx.TensorProto:
    """``tensor`` as the target model can read it: external data from another folder than
    the target's is read into the tensor. Raises EditError when it cannot be read, or when
    the clipboard does not say which folder it is relative to."""
    if not is_external(tensor):
        return tensor
    if src_dir is None:
        raise EditError(
            f"the copied initializer '{tensor.name}' keeps its data in an external file, and"
            " the clipboard does not say in which folder; save the source model and copy again"
        )
    if dst_dir is not None and os.path.realpath(src_dir) == os.path.realpath(dst_dir):
        return tensor
    try:
        data = read_external_bytes(tensor, src_dir)
    except ExternalDataError as exc:
        raise EditError(f"the copied weights cannot be read: {exc}") from None
    inline = _copy_of(tensor)
    del inline.external_data[:]
    inline.data_location = onnx.TensorProto.DEFAULT
    inline.raw_data = data
    return inline


def _copy_of(tensor: onnx.TensorProto) -> onnx.TensorProto:
    out = onnx.TensorProto()
    out.CopyFrom(tensor)
    return out


def _base_dir(model: onnx.ModelProto) -> Path | None:
    for prop in model.metadata_props:
        if prop.key == _BASE_DIR and prop.value and "\0" not in prop.value:
            return Path(prop.value)
    return None


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
