"""Replacing one whole scope (a subgraph or a local function body) as one undoable edit.

Subgraph and function tabs edit a working copy of the document; confirming writes the
scope back into the parent document with :class:`ReplaceScope`, so the parent's history
gets ONE step however many edits were made in the tab.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import onnx

from designer.core.document import ChangeKind, Document, DocumentEvent, Position
from designer.core.edits.base import Edit, Scopes
from designer.core.edits.order import Reorder, plan_read
from designer.core.errors import EditError
from designer.core.functions import outer_reads
from designer.core.scope import Container, ScopeId, SubgraphStep

_EVENT = DocumentEvent(ChangeKind.MODEL)

Keys = dict[ScopeId, list[int]]
Positions = dict[ScopeId, dict[int, Position]]


def scope_label(scope_id: ScopeId) -> str:
    """Short text for a scope in edit labels: ``then_branch``, ``body[0]`` or ``ƒ name``."""
    if scope_id.steps:
        step = scope_id.steps[-1]
        return step.attribute if step.index < 0 else f"{step.attribute}[{step.index}]"
    if scope_id.function is not None:
        return f"ƒ {scope_id.function[1]}"
    return "main graph"


class ReplaceScope(Edit):
    """Replace the GraphProto of subgraph ``scope_id`` (the ``g`` of a GRAPH attribute or
    ``graphs[i]``), or the FunctionProto of function scope ``scope_id`` in place at its
    index, with a copy of ``proto``.

    ``keys`` gives node keys for ``scope_id`` and scopes below it (ScopeIds in terms of
    those keys); a key the document already uses elsewhere is replaced by a fresh one (see
    ``remapped``), scopes left out get fresh keys. ``positions`` (same ScopeIds and keys)
    replaces the positions of those scopes; None keeps them. When the new subgraph reads
    a value of an enclosing graph that is produced after the node holding it, the same edit
    moves nodes of that graph so that it stays topologically sorted (and refuses a read
    that closes a cycle). Revert restores the old proto, keys, positions and node order
    exactly. Costs two copies of the scope.
    """

    def __init__(
        self,
        scope_id: ScopeId,
        proto: Container,
        keys: Mapping[ScopeId, list[int]] | None = None,
        positions: Mapping[ScopeId, Mapping[int, Position]] | None = None,
        label: str | None = None,
    ) -> None:
        if scope_id.is_main:
            raise EditError("the main graph is not a subgraph; replace the model instead")
        if scope_id.is_function != isinstance(proto, onnx.FunctionProto):
            kind = "function body" if scope_id.is_function else "subgraph"
            raise EditError(f"a {kind} cannot be replaced by a {type(proto).__name__}")
        if isinstance(proto, onnx.FunctionProto):
            fid = (proto.domain, proto.name, proto.overload)
            if fid != scope_id.function:
                raise EditError(
                    f"the new definition is '{fid[0]}:{fid[1]}', not the function it replaces"
                )
        self.scope_id = scope_id
        self.new: Container = type(proto)()
        self.new.CopyFrom(proto)
        self.keys: Keys | None = {s: list(k) for s, k in keys.items()} if keys else None
        self.positions: Positions | None = (
            {s: dict(p) for s, p in positions.items()} if positions is not None else None
        )
        self.label = label or f"Replace {scope_label(scope_id)}"
        #: keys of ``keys`` that were taken and got fresh ones (old → new), after apply
        self.remapped: dict[int, int] = {}
        self._old: Container | None = None
        self._old_keys: Keys = {}
        self._old_positions: Positions = {}
        self._reorders: list[Reorder] = []

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        try:
            target = doc.scope(self.scope_id).proto
        except KeyError:
            raise EditError(f"{scope_label(self.scope_id)} no longer exists") from None
        all_keys = doc.all_keys()
        taken = {k for sid, ks in all_keys.items() if not sid.is_within(self.scope_id) for k in ks}
        reorders = self._plan_order(doc, target)  # may refuse: before anything changes
        keys, positions = self._resolve(doc, taken)
        self._old = type(target)()
        self._old.CopyFrom(target)
        self._old_keys = {s: k for s, k in all_keys.items() if s.is_within(self.scope_id)}
        self._old_positions = _positions_within(doc, self.scope_id)
        target.CopyFrom(self.new)
        doc.set_scope_keys(self.scope_id, keys)
        if positions is not None:
            _set_positions_within(doc, self.scope_id, positions)
        doc.notify(_EVENT)
        for reorder in reorders:
            reorder.apply(doc)
        self._reorders = reorders

    def _plan_order(self, doc: Document, target: Container) -> list[Reorder]:
        """Moves in enclosing graphs for the values the new subgraph reads that the old one
        did not (a function body reads nothing from outside)."""
        parent = self.scope_id.parent
        if parent is None or not isinstance(self.new, onnx.GraphProto):
            return []
        assert isinstance(target, onnx.GraphProto)
        old = set(outer_reads(target))
        new = [name for name in outer_reads(self.new) if name not in old]
        return plan_read(doc, parent, self.scope_id.steps[-1].node_key, new)

    def revert(self, doc: Document) -> None:
        assert self._old is not None
        for reorder in reversed(self._reorders):
            reorder.revert(doc)
        target = doc.scope(self.scope_id).proto
        target.CopyFrom(self._old)
        doc.set_scope_keys(self.scope_id, self._old_keys)
        _set_positions_within(doc, self.scope_id, self._old_positions)
        doc.notify(_EVENT)

    def _resolve(self, doc: Document, taken: set[int]) -> tuple[Keys, Positions | None]:
        """Keys (and positions) with every key taken elsewhere replaced by a fresh one.

        Scopes are handled parents first, so a ScopeId whose steps name a renumbered node
        is renumbered too."""
        if self.keys is None:
            return {}, self.positions
        remap = dict(self.remapped)  # a redo reuses the choices of the first apply
        seen: set[int] = set()
        depth = len(self.scope_id.steps)

        def fix_id(sid: ScopeId) -> ScopeId:
            steps = list(sid.steps)
            for i in range(depth, len(steps)):
                s = steps[i]
                steps[i] = SubgraphStep(remap.get(s.node_key, s.node_key), s.attribute, s.index)
            return ScopeId(sid.function, tuple(steps))

        keys: Keys = {}
        for sid in sorted(self.keys, key=lambda s: len(s.steps)):
            if not sid.is_within(self.scope_id):
                raise EditError("keys were given for a scope outside the one replaced")
            fixed = []
            for key in self.keys[sid]:
                new = remap.get(key, key)
                if new in taken or new in seen or doc.io_entry(new) is not None:
                    new = remap[key] = doc.new_key()
                seen.add(new)
                fixed.append(new)
            keys[fix_id(sid)] = fixed
        self.remapped = {k: v for k, v in remap.items() if k != v}
        if self.positions is None:
            return keys, None
        positions = {
            fix_id(sid): {remap.get(k, k): p for k, p in table.items()}
            for sid, table in self.positions.items()
            if sid.is_within(self.scope_id)
        }
        return keys, positions


def _positions_within(doc: Document, scope_id: ScopeId) -> Positions:
    return {s: dict(t) for s, t in doc.positions.items() if s.is_within(scope_id)}


def _set_positions_within(doc: Document, scope_id: ScopeId, positions: Positions) -> None:
    for sid in [s for s in doc.positions if s.is_within(scope_id)]:
        del doc.positions[sid]
    for sid, table in positions.items():
        doc.positions[sid] = dict(table)


def outside_digest(doc: Document, scope_id: ScopeId) -> bytes:
    """A digest of the whole model except scope ``scope_id``: equal digests mean nothing
    outside that scope differs. Costs one serialisation of the model (external weights are
    references, so that is cheap for big models); the scope is restored byte for byte."""
    proto = doc.scope(scope_id).proto
    saved = type(proto)()
    saved.CopyFrom(proto)
    proto.Clear()
    try:
        data = doc.model.SerializeToString(deterministic=True)
    finally:
        proto.CopyFrom(saved)
    return hashlib.sha256(data).digest()
