"""Edits of nodes: add, remove, connect, attributes, rename, move."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import onnx

from designer.core.document import ChangeKind, Document, DocumentEvent, Position
from designer.core.edits.base import Edit, Scopes
from designer.core.edits.lookup import (
    names_in_use,
    require_identifier,
    require_node,
    resolve_scope,
)
from designer.core.edits.order import Reorder, plan_read
from designer.core.errors import EditError
from designer.core.names import unique_name
from designer.core.scope import GRAPH_TYPES, ScopeId
from designer.core.walk import has_subgraphs


def _node_event(scope_id: ScopeId, *keys: int, kind: ChangeKind = ChangeKind.NODE) -> DocumentEvent:
    return DocumentEvent(kind, scope_id, frozenset(keys))


class AddNode(Edit):
    """Add a node. Its name is generated (unique, C90 identifier) when not given; outputs may
    be given as names or as a count of names to generate (``<node>_out<i>``)."""

    def __init__(
        self,
        scope_id: ScopeId,
        op_type: str,
        *,
        domain: str = "",
        inputs: Sequence[str] = (),
        outputs: Sequence[str] | int = 1,
        attributes: Iterable[onnx.AttributeProto] = (),
        name: str | None = None,
        position: Position | None = None,
        index: int | None = None,
    ) -> None:
        self.scope_id = scope_id
        self.op_type = op_type
        self.domain = domain
        self.inputs = list(inputs)
        self.outputs = outputs
        self.attributes = list(attributes)
        self.name = name
        self.position = position
        self.index = index
        self.key: int | None = None
        self._node: onnx.NodeProto | None = None
        self.label = f"Add {op_type}"

    def _build(self, doc: Document) -> onnx.NodeProto:
        scope = resolve_scope(doc, self.scope_id)
        if not self.op_type:
            raise EditError("a node needs an operator type")
        node_names = scope.node_names()
        if self.name is None:  # unique in the whole model, as tensor names are: a profile,
            # a TensorRT layer or a report names a node by its name alone (an If branch's
            # "Relu" was merged with the main graph's in the ORT report)
            everywhere = {n.name for other in doc.scopes() for n in other.proto.node}
            name = unique_name(self.op_type, everywhere)
        else:
            require_identifier(self.name, "node")
            if self.name in node_names:
                raise EditError(f"a node named '{self.name}' already exists in '{scope.name}'")
            name = self.name
        taken = names_in_use(doc, self.scope_id)
        if isinstance(self.outputs, int):
            outputs = []
            for i in range(self.outputs):
                out = unique_name(f"{name}_out{i}", taken)
                taken.add(out)
                outputs.append(out)
        else:
            outputs = list(self.outputs)
            for i, out in enumerate(outputs):
                if not out:
                    continue
                require_identifier(out, "tensor")
                if out in taken or out in outputs[:i]:
                    raise EditError(f"tensor '{out}' already exists; an output needs a new name")
        node = onnx.NodeProto(
            name=name, op_type=self.op_type, domain=self.domain, input=self.inputs, output=outputs
        )
        node.attribute.extend(self.attributes)
        return node

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        if self._node is None:  # first apply; redo re-inserts the identical node
            self._node = self._build(doc)
            self.key = doc.new_key()
        assert self.key is not None
        scope = resolve_scope(doc, self.scope_id)
        index = len(scope) if self.index is None else min(self.index, len(scope))
        scope.insert_node(index, self._node, self.key)
        if self.position is not None:
            doc.positions.setdefault(self.scope_id, {})[self.key] = self.position
        doc.notify(_node_event(self.scope_id, self.key, kind=ChangeKind.NODES))

    def revert(self, doc: Document) -> None:
        assert self.key is not None
        scope = doc.scope(self.scope_id)
        scope.remove_node(self.key)
        doc.invalidate_subscopes(self.scope_id, self.key)
        doc.positions.get(self.scope_id, {}).pop(self.key, None)
        doc.notify(_node_event(self.scope_id, self.key, kind=ChangeKind.NODES))


class RemoveNodes(Edit):
    """Remove nodes; they are kept (with their positions and subgraph keys) for undo.

    Consumers keep referring to the removed outputs; use :func:`remove_nodes_and_links` to
    disconnect them in the same undo step.
    """

    def __init__(self, scope_id: ScopeId, keys: Iterable[int]) -> None:
        self.scope_id = scope_id
        self.keys = list(dict.fromkeys(keys))
        self._removed: list[tuple[int, int, onnx.NodeProto]] = []
        self._positions: dict[int, Position] = {}
        self._subkeys: dict[ScopeId, list[int]] = {}
        self.label = f"Delete {len(self.keys)} node" + ("s" if len(self.keys) != 1 else "")

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        for key in self.keys:
            require_node(scope, key)
        order = sorted(self.keys, key=scope.index_of, reverse=True)
        self._subkeys = {}
        for key in order:
            if has_subgraphs(scope.node(key)):
                self._subkeys.update(doc.key_snapshot(self.scope_id, key))
        removed = []
        for key in order:
            index, node = scope.remove_node(key)
            removed.append((index, key, node))
            doc.invalidate_subscopes(self.scope_id, key)
        self._removed = sorted(removed)
        positions = doc.positions.get(self.scope_id, {})
        self._positions = {k: positions.pop(k) for k in self.keys if k in positions}
        doc.notify(_node_event(self.scope_id, *self.keys, kind=ChangeKind.NODES))

    def revert(self, doc: Document) -> None:
        scope = doc.scope(self.scope_id)
        for index, key, node in self._removed:
            scope.insert_node(index, node, key)
        doc.restore_keys(self._subkeys)
        if self._positions:
            doc.positions.setdefault(self.scope_id, {}).update(self._positions)
        doc.notify(_node_event(self.scope_id, *self.keys, kind=ChangeKind.NODES))


class _NodeListEdit(Edit):
    """Replace one repeated string field (inputs or outputs) of a node; revert restores it."""

    field_name = "input"

    def __init__(self, scope_id: ScopeId, key: int, slot: int, name: str) -> None:
        if slot < 0:
            raise EditError(f"terminal index must be ≥ 0, not {slot}")
        self.scope_id = scope_id
        self.key = key
        self.slot = slot
        self.name = name
        self._old: list[str] = []
        self._reorders: list[Reorder] = []

    def _validate(self, doc: Document, node: onnx.NodeProto) -> None:
        """Hook: raise EditError when the new name is not acceptable."""

    def _plan(self, doc: Document) -> list[Reorder]:
        """Hook: the node list moves that keep the scope sorted after the change."""
        return []

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        node = require_node(scope, self.key)
        self._validate(doc, node)
        reorders = self._plan(doc)
        field = getattr(node, self.field_name)
        self._old = list(field)
        new = list(self._old) + [""] * max(0, self.slot + 1 - len(self._old))
        new[self.slot] = self.name
        while new and not new[-1]:
            new.pop()  # trailing optional terminals left empty are dropped
        del field[:]
        field.extend(new)
        doc.notify(_node_event(self.scope_id, self.key))
        for reorder in reorders:
            reorder.apply(doc)
        self._reorders = reorders

    def revert(self, doc: Document) -> None:
        for reorder in reversed(self._reorders):
            reorder.revert(doc)
        field = getattr(doc.scope(self.scope_id).node(self.key), self.field_name)
        del field[:]
        field.extend(self._old)
        doc.notify(_node_event(self.scope_id, self.key))


class SetNodeInput(_NodeListEdit):
    """Connect input terminal ``slot`` to tensor ``name`` ('' disconnects it).

    The scope's node list stays topologically sorted: when ``name`` is produced by a later
    node, the same edit moves the fewest nodes needed (:func:`~.order.plan_read`) and revert
    restores the old order exactly. A connection that would close a cycle (also through an
    If/Loop body reading an enclosing value) is refused before anything changes. A value of
    an enclosing graph produced after the node holding this body is left to the enclosing
    scope's own edit (:class:`~.scopes.ReplaceScope` when a subgraph tab is confirmed).
    """

    field_name = "input"

    def __init__(self, scope_id: ScopeId, key: int, slot: int, name: str) -> None:
        super().__init__(scope_id, key, slot, name)
        self.label = f"Connect {name} to input {slot}" if name else f"Disconnect input {slot}"

    def _validate(self, doc: Document, node: onnx.NodeProto) -> None:
        """Name the node in the label, once it is known (History listed six identical
        "Connect input 0" steps)."""
        who = node.name or node.op_type
        what = f"Connect {self.name} to" if self.name else "Disconnect"
        self.label = f"{what} {who} input {self.slot}"

    def _plan(self, doc: Document) -> list[Reorder]:
        if not self.name:
            return []
        plans = plan_read(doc, self.scope_id, self.key, [self.name])
        return [p for p in plans if p.scope_id == self.scope_id]  # scopes() names only this


class SetNodeOutput(_NodeListEdit):
    """Name output terminal ``slot`` ``name`` (a new tensor) or '' to drop it."""

    field_name = "output"

    def __init__(self, scope_id: ScopeId, key: int, slot: int, name: str) -> None:
        super().__init__(scope_id, key, slot, name)
        self.label = f"Set output {slot}"

    def _validate(self, doc: Document, node: onnx.NodeProto) -> None:
        current = node.output[self.slot] if self.slot < len(node.output) else ""
        if not self.name or self.name == current:
            return
        require_identifier(self.name, "tensor")
        if self.name in names_in_use(doc, self.scope_id):
            raise EditError(f"tensor '{self.name}' already exists; an output needs a new name")


class SetAttribute(Edit):
    """Set (add or replace) one attribute of a node."""

    def __init__(self, scope_id: ScopeId, key: int, attribute: onnx.AttributeProto) -> None:
        if not attribute.name:
            raise EditError("an attribute needs a name")
        self.scope_id = scope_id
        self.key = key
        self.attribute = attribute
        self._old: tuple[int, onnx.AttributeProto] | None = None
        self._subkeys: dict[ScopeId, list[int]] = {}
        self._new_subkeys: dict[ScopeId, list[int]] = {}  # keys the new graphs had (redo)
        self.label = f"Set {attribute.name}"

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        node = require_node(resolve_scope(doc, self.scope_id), self.key)
        self._subkeys = doc.key_snapshot(self.scope_id, self.key)
        self._old = None
        for i, attr in enumerate(node.attribute):
            if attr.name == self.attribute.name:
                old = onnx.AttributeProto()
                old.CopyFrom(attr)
                self._old = (i, old)
                attr.CopyFrom(self.attribute)
                break
        else:
            node.attribute.append(self.attribute)
        self._subgraphs_changed(doc)
        doc.notify(_node_event(self.scope_id, self.key))

    def _subgraphs_changed(self, doc: Document) -> None:
        touches_graph = self.attribute.type in GRAPH_TYPES or (
            self._old is not None and self._old[1].type in GRAPH_TYPES
        )
        if touches_graph:
            doc.invalidate_subscopes(self.scope_id, self.key)
            doc.restore_keys({sid: [] for sid in self._subkeys})  # fresh keys for new graphs
            doc.restore_keys(self._new_subkeys)  # on redo, the keys they had the first time

    def revert(self, doc: Document) -> None:
        self._new_subkeys = doc.key_snapshot(self.scope_id, self.key)
        node = doc.scope(self.scope_id).node(self.key)
        if self._old is None:
            node.attribute.pop()
        else:
            index, old = self._old
            node.attribute[index].CopyFrom(old)
        doc.invalidate_subscopes(self.scope_id, self.key)
        doc.restore_keys(self._subkeys)
        doc.notify(_node_event(self.scope_id, self.key))

    def merge(self, other: Edit) -> bool:
        """Typing into a field: successive sets of the same attribute make one undo step."""
        if not (
            isinstance(other, SetAttribute)
            and (other.scope_id, other.key, other.attribute.name)
            == (self.scope_id, self.key, self.attribute.name)
            and self.attribute.type not in GRAPH_TYPES
        ):
            return False
        self.attribute = other.attribute
        return True


class ClearAttribute(Edit):
    """Remove one attribute from a node (it falls back to the schema default)."""

    def __init__(self, scope_id: ScopeId, key: int, name: str) -> None:
        self.scope_id = scope_id
        self.key = key
        self.name = name
        self._old: tuple[int, onnx.AttributeProto] | None = None
        self._subkeys: dict[ScopeId, list[int]] = {}
        self.label = f"Reset {name}"

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        node = require_node(resolve_scope(doc, self.scope_id), self.key)
        i = next((i for i, a in enumerate(node.attribute) if a.name == self.name), -1)
        if i < 0:
            raise EditError(f"node '{node.name}' has no attribute '{self.name}'")
        self._subkeys = doc.key_snapshot(self.scope_id, self.key)
        old = onnx.AttributeProto()
        old.CopyFrom(node.attribute[i])
        self._old = (i, old)
        del node.attribute[i]
        doc.invalidate_subscopes(self.scope_id, self.key)
        doc.notify(_node_event(self.scope_id, self.key))

    def revert(self, doc: Document) -> None:
        assert self._old is not None
        index, old = self._old
        doc.scope(self.scope_id).node(self.key).attribute.insert(index, old)
        doc.invalidate_subscopes(self.scope_id, self.key)
        doc.restore_keys(self._subkeys)
        doc.notify(_node_event(self.scope_id, self.key))


class RenameNode(Edit):
    """Rename a node; the new name must be a C90 identifier unique in its scope."""

    def __init__(self, scope_id: ScopeId, key: int, name: str) -> None:
        self.scope_id = scope_id
        self.key = key
        self.name = name
        self._old: str | None = None  # None: the node had no name field at all
        self.label = f"Rename node to {name}"

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        node = require_node(scope, self.key)
        require_identifier(self.name, "node")
        if self.name != node.name and self.name in scope.node_names():
            raise EditError(f"a node named '{self.name}' already exists in '{scope.name}'")
        self._old = node.name if node.HasField("name") else None
        node.name = self.name
        doc.notify(_node_event(self.scope_id, self.key))

    def revert(self, doc: Document) -> None:
        node = doc.scope(self.scope_id).node(self.key)
        if self._old is None:
            node.ClearField("name")  # an unset name serializes differently from ""
        else:
            node.name = self._old
        doc.notify(_node_event(self.scope_id, self.key))


class MoveNodes(Edit):
    """Set canvas positions of nodes (and of graph input/output keys from
    ``Document.io_key``). Positions are document state, not part of the model."""

    def __init__(
        self,
        scope_id: ScopeId,
        positions: Mapping[int, Position],
        *,
        merge_id: object | None = None,
    ) -> None:
        self.scope_id = scope_id
        self.merge_id = merge_id
        self.new = dict(positions)
        self._old: dict[int, Position | None] = {}
        self.label = f"Move {len(self.new)} node" + ("s" if len(self.new) != 1 else "")

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        for key in self.new:
            entry = doc.io_entry(key)
            if entry is None or entry[0] != self.scope_id:  # graph inputs/outputs move too
                require_node(scope, key)
        table = doc.positions.setdefault(self.scope_id, {})
        self._old = {k: table.get(k) for k in self.new}
        table.update(self.new)
        doc.notify(DocumentEvent(ChangeKind.POSITIONS, self.scope_id, frozenset(self.new)))

    def revert(self, doc: Document) -> None:
        table = doc.positions.setdefault(self.scope_id, {})
        for key, old in self._old.items():
            if old is None:
                table.pop(key, None)
            else:
                table[key] = old
        doc.notify(DocumentEvent(ChangeKind.POSITIONS, self.scope_id, frozenset(self.new)))

    def merge(self, other: Edit) -> bool:
        """Moves merge only when both carry the same ``merge_id`` (e.g. one continuous
        gesture); separate drags stay separate undo steps."""
        if (
            not isinstance(other, MoveNodes)
            or other.scope_id != self.scope_id
            or self.merge_id is None
            or other.merge_id != self.merge_id
        ):
            return False
        for key, old in other._old.items():
            self._old.setdefault(key, old)
        self.new.update(other.new)
        return True
