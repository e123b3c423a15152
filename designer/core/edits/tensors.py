"""Edits of tensors: rename, value types, graph inputs/outputs, initializers."""

from __future__ import annotations

from typing import Any

import onnx

from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.edits.base import Edit, Scopes
from designer.core.edits.lookup import names_in_use, require_identifier, resolve_scope
from designer.core.errors import EditError
from designer.core.scope import Scope, ScopeId
from designer.core.trt.follow import (
    ProfilesUndo,
    drop_profile_input,
    rename_profile_input,
    restore_profiles,
)
from designer.core.walk import iter_graphs


def _event(kind: ChangeKind, scope_id: ScopeId, *names: str) -> DocumentEvent:
    return DocumentEvent(kind, scope_id, names=frozenset(names))


def _copy(message: Any) -> Any:
    clone = type(message)()
    clone.CopyFrom(message)
    return clone


def _graph(scope: Scope, what: str) -> onnx.GraphProto:
    if not isinstance(scope.proto, onnx.GraphProto):
        raise EditError(f"a local function body has no {what}")
    return scope.proto


# --- rename ------------------------------------------------------------------------------
def _rename_in(proto: onnx.GraphProto | onnx.FunctionProto, old: str, new: str) -> None:
    """Replace every reference to ``old`` in ``proto`` and its subgraphs (O(size))."""
    for walked in iter_graphs(proto):
        _rename_own(walked.graph, old, new)


def _rename_own(proto: onnx.GraphProto | onnx.FunctionProto, old: str, new: str) -> None:
    """Replace the references to ``old`` in ``proto``'s own fields and nodes (not nested)."""

    def swap(field: Any) -> None:
        for i, value in enumerate(field):
            if value == old:
                field[i] = new

    if isinstance(proto, onnx.GraphProto):
        for group in (proto.input, proto.output, proto.value_info):
            for vi in group:
                if vi.name == old:
                    vi.name = new
        for t in proto.initializer:
            if t.name == old:
                t.name = new
        for s in proto.sparse_initializer:
            if s.values.name == old:
                s.values.name = new
        for ann in proto.quantization_annotation:
            if ann.tensor_name == old:
                ann.tensor_name = new
            for param in ann.quant_parameter_tensor_names:
                if param.value == old:
                    param.value = new
    else:
        swap(proto.input)
        swap(proto.output)
        for vi in proto.value_info:
            if vi.name == old:
                vi.name = new
    for node in proto.node:
        swap(node.input)
        swap(node.output)


class RenameTensor(Edit):
    """Rename a tensor in the scope that defines it; every reference is updated, including
    those in nested subgraphs. The new name must be a C90 identifier not used anywhere the
    tensor is visible, which also makes the rename exactly reversible."""

    def __init__(self, scope_id: ScopeId, old: str, new: str) -> None:
        self.scope_id = scope_id
        self.old = old
        self.new = new
        self._trt: ProfilesUndo | None = None  # stored TensorRT profiles follow the input
        self.label = f"Rename {old} to {new}"

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        require_identifier(self.new, "tensor")
        if self.old == self.new:
            raise EditError(f"the tensor is already named '{self.new}'")
        if not self.old:
            raise EditError("an empty name marks a missing optional tensor; it cannot be renamed")
        if self.old in scope.outer_names() and self.old not in scope.defined_names():
            raise EditError(
                f"'{self.old}' is defined in an enclosing graph; rename it in that graph"
            )
        taken = names_in_use(doc, self.scope_id)
        if self.old not in taken:
            raise EditError(f"no tensor named '{self.old}' in '{scope.name}'")
        if self.new in taken:
            raise EditError(f"a tensor named '{self.new}' already exists")
        _rename_in(scope.proto, self.old, self.new)
        self._trt = None
        if self.scope_id.is_main:
            self._trt = rename_profile_input(doc.model, self.old, self.new)
        doc.notify(_event(ChangeKind.TENSORS, self.scope_id, self.old, self.new))

    def revert(self, doc: Document) -> None:
        _rename_in(doc.scope(self.scope_id).proto, self.new, self.old)
        restore_profiles(doc.model, self._trt)
        doc.notify(_event(ChangeKind.TENSORS, self.scope_id, self.old, self.new))


# --- value types -------------------------------------------------------------------------
class SetValueType(Edit):
    """Declare (or with None, clear) the type and shape of a value in a graph scope.

    The declaration lives where the value is declared: a graph input, output or value_info
    entry; a new value_info entry is added when there is none.
    """

    def __init__(self, scope_id: ScopeId, name: str, type_proto: onnx.TypeProto | None) -> None:
        self.scope_id = scope_id
        self.name = name
        self.type_proto = type_proto
        self._undo: tuple[str, int, onnx.ValueInfoProto | None] = ("", -1, None)
        self.label = f"Set type of {name}"

    def _groups(self, scope: Scope) -> list[tuple[str, Any]]:
        if isinstance(scope.proto, onnx.FunctionProto):
            return [("value_info", scope.proto.value_info)]
        p = scope.proto
        return [("input", p.input), ("output", p.output), ("value_info", p.value_info)]

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        for group_name, group in self._groups(scope):
            for i, vi in enumerate(group):
                if vi.name == self.name:
                    self._undo = (group_name, i, _copy(vi))
                    if self.type_proto is not None:
                        vi.type.CopyFrom(self.type_proto)
                    elif group_name == "value_info":
                        del group[i]
                    else:
                        vi.ClearField("type")
                    doc.notify(_event(ChangeKind.TENSORS, self.scope_id, self.name))
                    return
        if self.type_proto is None:
            raise EditError(f"'{self.name}' has no declared type to clear")
        if self.name not in names_in_use(doc, self.scope_id):
            raise EditError(f"no tensor named '{self.name}' in '{scope.name}'")
        scope.proto.value_info.append(onnx.ValueInfoProto(name=self.name, type=self.type_proto))
        self._undo = ("value_info", len(scope.proto.value_info) - 1, None)
        doc.notify(_event(ChangeKind.TENSORS, self.scope_id, self.name))

    def revert(self, doc: Document) -> None:
        scope = doc.scope(self.scope_id)
        group_name, index, old = self._undo
        group = dict(self._groups(scope))[group_name]
        if old is None:
            del group[index]
        elif self.type_proto is None and group_name == "value_info":
            group.insert(index, old)
        else:
            group[index].CopyFrom(old)
        doc.notify(_event(ChangeKind.TENSORS, self.scope_id, self.name))


# --- graph inputs and outputs -----------------------------------------------------------
class _GraphIOEdit(Edit):
    """Shared add/remove logic for the ``input`` or ``output`` list of a scope."""

    field_name = "input"

    def _field(self, scope: Scope) -> Any:
        return getattr(scope.proto, self.field_name)

    def _names(self, scope: Scope) -> list[str]:
        return scope.input_names() if self.field_name == "input" else scope.output_names()


class AddGraphIO(_GraphIOEdit):
    """Add a graph (or function) input or output ``value`` at ``index`` (end by default).

    A new input must have a fresh, valid name; an output names an existing tensor.
    """

    def __init__(
        self, scope_id: ScopeId, kind: str, value: onnx.ValueInfoProto, index: int | None = None
    ) -> None:
        if kind not in ("input", "output"):
            raise EditError(f"kind must be 'input' or 'output', not {kind!r}")
        self.field_name = kind
        self.scope_id = scope_id
        self.value = value
        self.index = index
        self._at = -1
        self.label = f"Add graph {kind} {value.name}"

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        name = self.value.name
        if name in self._names(scope):
            raise EditError(f"'{name}' is already a graph {self.field_name}")
        if self.field_name == "input":
            require_identifier(name, "input")
            if name in names_in_use(doc, self.scope_id):
                raise EditError(f"a tensor named '{name}' already exists")
        elif not name:
            raise EditError("a graph output needs the name of a tensor")
        field = self._field(scope)
        self._at = len(field) if self.index is None else min(self.index, len(field))
        item: Any = name if scope.is_function else self.value
        field.insert(self._at, item)
        doc.notify(_event(ChangeKind.TENSORS, self.scope_id, name))

    def revert(self, doc: Document) -> None:
        del self._field(doc.scope(self.scope_id))[self._at]
        doc.notify(_event(ChangeKind.TENSORS, self.scope_id, self.value.name))


class RemoveGraphIO(_GraphIOEdit):
    """Remove a graph (or function) input or output by name; kept for undo."""

    def __init__(self, scope_id: ScopeId, kind: str, name: str) -> None:
        if kind not in ("input", "output"):
            raise EditError(f"kind must be 'input' or 'output', not {kind!r}")
        self.field_name = kind
        self.scope_id = scope_id
        self.name = name
        self._removed: tuple[int, Any] = (-1, None)
        self._trt: ProfilesUndo | None = None  # a removed input leaves the stored profiles
        self.label = f"Remove graph {kind} {name}"

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        names = self._names(scope)
        if self.name not in names:
            raise EditError(f"'{self.name}' is not a graph {self.field_name}")
        index = names.index(self.name)
        field = self._field(scope)
        item = field[index] if scope.is_function else _copy(field[index])
        self._removed = (index, item)
        del field[index]
        self._trt = None
        if self.scope_id.is_main and self.field_name == "input":
            self._trt = drop_profile_input(doc.model, self.name)
        doc.notify(_event(ChangeKind.TENSORS, self.scope_id, self.name))

    def revert(self, doc: Document) -> None:
        index, item = self._removed
        self._field(doc.scope(self.scope_id)).insert(index, item)
        restore_profiles(doc.model, self._trt)
        doc.notify(_event(ChangeKind.TENSORS, self.scope_id, self.name))


# --- initializers ------------------------------------------------------------------------
class AddInitializer(Edit):
    """Add an initializer; its name must not be defined yet in the scope (users that already
    refer to that name become fed by it)."""

    def __init__(self, scope_id: ScopeId, tensor: onnx.TensorProto) -> None:
        self.scope_id = scope_id
        self.tensor = tensor
        self.label = f"Add initializer {tensor.name}"

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        graph = _graph(resolve_scope(doc, self.scope_id), "initializers")
        scope = doc.scope(self.scope_id)
        if not self.tensor.name:
            raise EditError("an initializer needs a name")
        require_identifier(self.tensor.name, "initializer")
        if self.tensor.name in scope.defined_names() | scope.outer_names():
            raise EditError(f"a tensor named '{self.tensor.name}' already exists")
        graph.initializer.append(self.tensor)
        doc.notify(_event(ChangeKind.INITIALIZERS, self.scope_id, self.tensor.name))

    def revert(self, doc: Document) -> None:
        _graph(doc.scope(self.scope_id), "initializers").initializer.pop()
        doc.notify(_event(ChangeKind.INITIALIZERS, self.scope_id, self.tensor.name))


def _initializer_index(graph: onnx.GraphProto, name: str) -> int:
    for i, tensor in enumerate(graph.initializer):
        if tensor.name == name:
            return i
    raise EditError(f"no initializer named '{name}'")


class RemoveInitializer(Edit):
    """Remove an initializer (kept for undo). Its users are not changed."""

    def __init__(self, scope_id: ScopeId, name: str) -> None:
        self.scope_id = scope_id
        self.name = name
        self._removed: tuple[int, onnx.TensorProto | None] = (-1, None)
        self.label = f"Delete initializer {name}"

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        graph = _graph(resolve_scope(doc, self.scope_id), "initializers")
        index = _initializer_index(graph, self.name)
        self._removed = (index, _copy(graph.initializer[index]))
        del graph.initializer[index]
        doc.notify(_event(ChangeKind.INITIALIZERS, self.scope_id, self.name))

    def revert(self, doc: Document) -> None:
        index, tensor = self._removed
        assert tensor is not None
        _graph(doc.scope(self.scope_id), "initializers").initializer.insert(index, tensor)
        doc.notify(_event(ChangeKind.INITIALIZERS, self.scope_id, self.name))


class ReplaceInitializer(Edit):
    """Replace the value (and type) of the initializer named like ``tensor``."""

    def __init__(self, scope_id: ScopeId, tensor: onnx.TensorProto) -> None:
        self.scope_id = scope_id
        self.tensor = tensor
        self._old: tuple[int, onnx.TensorProto | None] = (-1, None)
        self.label = f"Edit initializer {tensor.name}"

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        graph = _graph(resolve_scope(doc, self.scope_id), "initializers")
        index = _initializer_index(graph, self.tensor.name)
        self._old = (index, _copy(graph.initializer[index]))
        graph.initializer[index].CopyFrom(self.tensor)
        doc.notify(_event(ChangeKind.INITIALIZERS, self.scope_id, self.tensor.name))

    def revert(self, doc: Document) -> None:
        index, old = self._old
        assert old is not None
        _graph(doc.scope(self.scope_id), "initializers").initializer[index].CopyFrom(old)
        doc.notify(_event(ChangeKind.INITIALIZERS, self.scope_id, self.tensor.name))
