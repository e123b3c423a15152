"""Group nodes into a local function call, and inline a call back into its graph.

Both plan with the proto helpers of :mod:`designer.core.functions`; node keys and positions
move with the nodes, so group then inline gives back the same document."""

from __future__ import annotations

from collections.abc import Iterable

import onnx

from designer.core.document import Document
from designer.core.edits.base import Edit, Scopes
from designer.core.edits.function_support import (
    MODEL_EVENT,
    KeptPositions,
    Removed,
    TakenFunction,
    add_opset,
    drop_opset,
    drop_unused_opset,
    forget_scopes,
    function_scope_ids,
    put_function,
    require_function,
    require_new_function,
    restore_opset,
    take_function,
)
from designer.core.edits.lookup import require_node, resolve_scope
from designer.core.errors import EditError
from designer.core.functions import (
    FunctionId,
    attribute_refs,
    call_sites,
    called_function,
    function_title,
    inline_nodes,
    plan_group,
    used_domains,
    used_names,
)
from designer.core.names import unique_name
from designer.core.scope import Scope, ScopeId


def _scope_opsets(doc: Document, scope_id: ScopeId) -> dict[str, int]:
    """Opset versions in force in ``scope_id`` (its function's imports inside a function)."""
    imports = (
        require_function(doc, scope_id.function)[1].opset_import
        if scope_id.function is not None
        else doc.model.opset_import
    )
    return {("" if o.domain == "ai.onnx" else o.domain): o.version for o in imports}


def _below(sid: ScopeId, scope_id: ScopeId, keys: set[int]) -> bool:
    """True when ``sid`` lies inside a subgraph of one of the nodes ``keys`` of ``scope_id``."""
    depth = len(scope_id.steps)
    return len(sid.steps) > depth and sid.is_within(scope_id) and sid.steps[depth].node_key in keys


def _moved(sid: ScopeId, scope_id: ScopeId, target: ScopeId) -> ScopeId:
    """``sid`` (below ``scope_id``) re-rooted below ``target``."""
    return ScopeId(target.function, target.steps + sid.steps[len(scope_id.steps) :])


class GroupIntoFunction(Edit):
    """Replace selected nodes of one scope by one call of a new local function whose body
    they become. The call takes the first grouped node's place; other nodes between the
    grouped ones go before it when they do not depend on the group, after it otherwise."""

    def __init__(
        self, scope_id: ScopeId, keys: Iterable[int], name: str, domain: str = "local"
    ) -> None:
        self.scope_id = scope_id
        self.keys = list(dict.fromkeys(keys))
        self.name = name
        self.domain = domain
        self.fid: FunctionId = (domain, name, "")
        self.call_key: int | None = None
        self._removed: list[tuple[int, int, onnx.NodeProto]] = []
        self._moved_keys: list[int] = []
        self._subkeys: dict[ScopeId, list[int]] = {}
        self._positions: KeptPositions | None = None
        self._added_opset = False
        self._caller_opset = False  # the domain imported into an enclosing function
        self.label = f"Group {len(self.keys)} node(s) into {domain}:{name}"

    def _build(self, doc: Document, scope: Scope) -> tuple[onnx.FunctionProto, onnx.NodeProto]:
        plan = plan_group(
            scope.proto.node, [scope.index_of(k) for k in self.keys], scope.output_names()
        )
        self._moved_keys = [scope.keys[i] for i in plan.before]
        fn = onnx.FunctionProto(
            domain=self.domain, name=self.name, input=plan.inputs, output=plan.outputs
        )
        fn.node.extend(scope.proto.node[i] for i in plan.indices)
        refs = attribute_refs(fn.node)
        fn.attribute.extend(refs)
        used = used_domains(fn.node)
        for domain, version in _scope_opsets(doc, self.scope_id).items():
            if domain in used:
                fn.opset_import.add(domain=domain, version=version)
        call = onnx.NodeProto(
            name=unique_name(self.name, scope.node_names()),
            op_type=self.name,
            domain=self.domain,
            input=plan.inputs,
            output=plan.outputs,
        )
        for ref, kind in refs.items():  # attributes of an enclosing function pass through
            call.attribute.add(name=ref, ref_attr_name=ref, type=kind)
        return fn, call

    def scopes(self) -> Scopes:
        return None  # adds a local function

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        for key in self.keys:
            require_node(scope, key)
        require_new_function(doc, self.domain, self.name)
        fn, call = self._build(doc, scope)  # validates; nothing changed before this returns
        if self.call_key is None:
            self.call_key = doc.new_key()
        fsid = ScopeId(self.fid)
        inside = set(self.keys)
        grouped = [k for k in scope.keys if k in inside]
        below_moved = inside | set(self._moved_keys)
        snapshot = doc.key_snapshot(self.scope_id).items()
        self._subkeys = {s: k for s, k in snapshot if _below(s, self.scope_id, below_moved)}
        into_body = {s: k for s, k in self._subkeys.items() if _below(s, self.scope_id, inside)}
        moved_pos = [s for s in doc.positions if _below(s, self.scope_id, inside)]
        self._positions = KeptPositions(
            doc,
            [self.scope_id, fsid, *moved_pos, *(_moved(s, self.scope_id, fsid) for s in moved_pos)],
        )
        taken = sorted((scope.index_of(k) for k in [*grouped, *self._moved_keys]), reverse=True)
        removed = []
        for index in taken:
            key = scope.keys[index]
            removed.append((*scope.remove_node(key), key))
            doc.invalidate_subscopes(self.scope_id, key)
        self._removed = sorted((i, k, n) for i, n, k in removed)
        first = min(i for i, k, _n in self._removed if k in inside)
        copies = {k: n for _i, k, n in self._removed}
        for offset, key in enumerate(self._moved_keys):
            scope.insert_node(first + offset, copies[key], key)
        scope.insert_node(first + len(self._moved_keys), call, self.call_key)
        doc.model.functions.append(fn)
        doc.restore_keys({s: k for s, k in self._subkeys.items() if s not in into_body})
        forget_scopes(doc, into_body)  # the grouped nodes' subgraphs now live in the body
        doc.restore_keys({fsid: grouped})
        doc.restore_keys({_moved(s, self.scope_id, fsid): k for s, k in into_body.items()})
        self._added_opset = add_opset(doc.model.opset_import, self.domain)
        self._caller_opset = self.scope_id.function is not None and add_opset(
            require_function(doc, self.scope_id.function)[1].opset_import, self.domain
        )
        table = doc.positions.get(self.scope_id, {})
        body = {k: table.pop(k) for k in grouped if k in table}
        if body:
            doc.positions[fsid] = body
            first_pos = next((body[k] for k in grouped if k in body), None)
            if first_pos is not None:
                table[self.call_key] = first_pos
        for sid in moved_pos:
            doc.positions[_moved(sid, self.scope_id, fsid)] = doc.positions.pop(sid)
        doc.notify(MODEL_EVENT)

    def revert(self, doc: Document) -> None:
        assert self.call_key is not None and self._positions is not None
        forget_scopes(doc, function_scope_ids(doc, self.fid))
        doc.model.functions.pop()
        if self._added_opset:
            doc.model.opset_import.pop()
        if self._caller_opset and self.scope_id.function is not None:
            require_function(doc, self.scope_id.function)[1].opset_import.pop()
        scope = doc.scope(self.scope_id)
        for key in [self.call_key, *self._moved_keys]:
            scope.remove_node(key)
            doc.invalidate_subscopes(self.scope_id, key)
        for index, key, node in self._removed:
            scope.insert_node(index, node, key)
        doc.restore_keys(self._subkeys)
        self._positions.restore(doc)
        doc.notify(MODEL_EVENT)


class InlineFunctionCall(Edit):
    """Replace a call node by a copy of the function body. When that was the function's last
    call site the definition goes too (and the model's import of its domain, if unused)."""

    def __init__(self, scope_id: ScopeId, key: int) -> None:
        self.scope_id = scope_id
        self.key = key
        self.new_keys: list[int] | None = None
        self._call: tuple[int, onnx.NodeProto] | None = None
        self._call_subkeys: dict[ScopeId, list[int]] = {}
        self._taken: TakenFunction | None = None
        self._opset: Removed = None
        self._caller_opset: Removed = None  # the domain's import in an enclosing function
        self._positions: KeptPositions | None = None
        self.label = "Inline function call"

    def scopes(self) -> Scopes:
        return None  # may remove a local function

    def apply(self, doc: Document) -> None:
        scope = resolve_scope(doc, self.scope_id)
        call = require_node(scope, self.key)
        fid = called_function(doc, call)
        if fid is None:
            raise EditError(f"node '{call.name or call.op_type}' does not call a local function")
        if self.scope_id.function == fid:
            raise EditError(f"{function_title(fid)} cannot be inlined into its own body")
        _index, fn = require_function(doc, fid)
        taken = used_names(scope.proto) | scope.outer_names()
        nodes = inline_nodes(fn, call, taken, scope.node_names() - {call.name})
        fsid = ScopeId(fid)
        last = len(call_sites(doc, fid)) == 1
        body_keys = list(doc.scope(fsid).keys)
        if self.new_keys is None:
            self.new_keys = body_keys if last else []
            self.new_keys += [doc.new_key() for _ in range(len(nodes) - len(self.new_keys))]
        new_keys = self.new_keys
        body_pos = dict(doc.positions.get(fsid, {}))
        sub_pos = {s: dict(t) for s, t in doc.positions.items() if s.function == fid and s.steps}
        self._positions = KeptPositions(
            doc, [self.scope_id, *(_moved(s, fsid, self.scope_id) for s in sub_pos)]
        )
        self._call_subkeys = doc.key_snapshot(self.scope_id, self.key)
        index, removed = scope.remove_node(self.key)
        self._call = (index, removed)
        doc.invalidate_subscopes(self.scope_id, self.key)
        for offset, (node, key) in enumerate(zip(nodes, new_keys, strict=True)):
            scope.insert_node(index + offset, node, key)
        self._taken = None
        self._opset = self._caller_opset = None
        if self.scope_id.function is not None:
            caller = require_function(doc, self.scope_id.function)[1]
            if fid[0] not in used_domains(caller.node):
                self._caller_opset = drop_opset(caller.opset_import, fid[0])
        if last:
            self._taken = take_function(doc, fid)
            self._opset = drop_unused_opset(doc, fid[0])
            moved = {s: k for s, k in self._taken.keys.items() if s.steps}
            doc.restore_keys({_moved(s, fsid, self.scope_id): k for s, k in moved.items()})
            for sid, table in sub_pos.items():
                doc.positions[_moved(sid, fsid, self.scope_id)] = table
        positions = doc.positions.setdefault(self.scope_id, {})
        anchor = positions.pop(self.key, None)
        origin = next((body_pos[k] for k in body_keys if k in body_pos), None)
        if anchor is not None and origin is not None:
            dx, dy = anchor[0] - origin[0], anchor[1] - origin[1]
            for old, new in zip(body_keys, new_keys, strict=False):
                if old in body_pos:
                    positions[new] = (body_pos[old][0] + dx, body_pos[old][1] + dy)
        doc.notify(MODEL_EVENT)

    def revert(self, doc: Document) -> None:
        assert self._call is not None and self.new_keys is not None and self._positions
        if self._taken is not None:
            restore_opset(doc.model.opset_import, self._opset)
            put_function(doc, self._taken)
        if self.scope_id.function is not None:
            caller = require_function(doc, self.scope_id.function)[1]
            restore_opset(caller.opset_import, self._caller_opset)
        scope = doc.scope(self.scope_id)
        inlined = set(self.new_keys)
        forget_scopes(
            doc, [s for s in doc.key_snapshot(self.scope_id) if _below(s, self.scope_id, inlined)]
        )
        for key in self.new_keys:
            scope.remove_node(key)
            doc.invalidate_subscopes(self.scope_id, key)
        scope.insert_node(self._call[0], self._call[1], self.key)
        doc.restore_keys(self._call_subkeys)
        self._positions.restore(doc)
        doc.notify(MODEL_EVENT)
