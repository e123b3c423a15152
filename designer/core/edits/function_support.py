"""Helpers shared by the local-function edits: finding, taking out and putting back a
function with its keys and positions, and opset-import bookkeeping."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import onnx

from designer.core.document import ChangeKind, Document, DocumentEvent, Position
from designer.core.edits.lookup import require_identifier
from designer.core.errors import EditError
from designer.core.functions import (
    FunctionId,
    function_title,
    used_domains,
)
from designer.core.scope import ScopeId

MODEL_EVENT = DocumentEvent(ChangeKind.MODEL)
DOMAIN_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


# --- shared bookkeeping ------------------------------------------------------------------------
def require_function(doc: Document, fid: FunctionId) -> tuple[int, onnx.FunctionProto]:
    """Index and proto of local function ``fid``; EditError when the model has none."""
    for index, fn in enumerate(doc.model.functions):
        if (fn.domain, fn.name, fn.overload) == tuple(fid):
            return index, fn
    raise EditError(f"the model has no local function {function_title(fid)}")


def require_new_function(doc: Document, domain: str, name: str) -> None:
    """EditError unless ``domain:name`` is a valid, unused function name."""
    require_identifier(name, "function")
    if not DOMAIN_PATTERN.match(domain) or domain == "ai.onnx" or domain.startswith("ai.onnx."):
        raise EditError(
            f"invalid function domain '{domain}': use dot-separated identifiers such as "
            "'local' or 'com.example', not an ONNX standard domain"
        )
    if any(fn.domain == domain and fn.name == name for fn in doc.model.functions):
        raise EditError(f"a local function {domain}:{name} already exists")


def function_scope_ids(doc: Document, fid: FunctionId) -> list[ScopeId]:
    """The function body's scope id and every known scope inside it."""
    fsid = ScopeId(fid)
    return [fsid, *doc.key_snapshot(fsid)]


def forget_scopes(doc: Document, sids: Iterable[ScopeId]) -> None:
    """Drop cached scopes and node keys of ``sids`` (their protos are gone)."""
    doc.restore_keys({sid: [] for sid in sids})


class KeptPositions:
    """Copies of some position tables, put back in place (table objects kept) on restore."""

    def __init__(self, doc: Document, sids: Iterable[ScopeId]) -> None:
        self.saved = {
            sid: dict(doc.positions[sid]) if sid in doc.positions else None for sid in sids
        }

    def restore(self, doc: Document) -> None:
        for sid, table in self.saved.items():
            if table is None:
                doc.positions.pop(sid, None)
            else:
                current = doc.positions.setdefault(sid, {})
                current.clear()
                current.update(table)


@dataclass
class TakenFunction:
    """A function removed from the model with what undo needs to put it back."""

    index: int
    proto: onnx.FunctionProto
    keys: dict[ScopeId, list[int]]
    positions: dict[ScopeId, dict[int, Position]]


def take_function(doc: Document, fid: FunctionId) -> TakenFunction:
    """Remove function ``fid`` with its node keys and positions (no event)."""
    index, fn = require_function(doc, fid)
    fsid = ScopeId(fid)
    keys = {fsid: list(doc.scope(fsid).keys), **doc.key_snapshot(fsid)}
    positions = {sid: doc.positions.pop(sid) for sid in list(doc.positions) if sid.function == fid}
    copy = onnx.FunctionProto()
    copy.CopyFrom(fn)
    del doc.model.functions[index]
    forget_scopes(doc, keys)
    return TakenFunction(index, copy, keys, positions)


def put_function(doc: Document, taken: TakenFunction) -> None:
    """Undo :func:`take_function`."""
    doc.model.functions.insert(taken.index, taken.proto)
    doc.restore_keys(taken.keys)
    for sid, table in taken.positions.items():
        doc.positions[sid] = dict(table)


def domain_in_use(doc: Document, domain: str) -> bool:
    """True while a function or any node of any scope uses ``domain``. O(nodes)."""
    if any(fn.domain == domain for fn in doc.model.functions):
        return True
    return any(domain in used_domains(doc.scope(sid).proto.node) for sid in doc.top_scope_ids())


Imports = Any  # a repeated OperatorSetIdProto field (of the model or of a function)
Removed = tuple[int, onnx.OperatorSetIdProto] | None


def add_opset(imports: Imports, domain: str) -> bool:
    """Import ``domain`` version 1 when missing; True when added (undo: ``imports.pop()``)."""
    if any(op.domain == domain for op in imports):
        return False
    imports.add(domain=domain, version=1)
    return True


def drop_opset(imports: Imports, domain: str) -> Removed:
    """Remove the import of ``domain``; returns what :func:`restore_opset` needs."""
    for index, op in enumerate(imports):
        if op.domain == domain:
            copy = onnx.OperatorSetIdProto()
            copy.CopyFrom(op)
            del imports[index]
            return index, copy
    return None


def restore_opset(imports: Imports, removed: Removed) -> None:
    if removed is not None:
        imports.insert(removed[0], removed[1])


def drop_unused_opset(doc: Document, domain: str) -> Removed:
    """Remove the model's import of ``domain`` when nothing uses it any more."""
    return None if domain_in_use(doc, domain) else drop_opset(doc.model.opset_import, domain)


# --- edits ---------------------------------------------------------------------------------------
