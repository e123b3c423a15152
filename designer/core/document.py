"""The Document: one ONNX model, its node positions, its undo history and its listeners.

The model is kept as the ``onnx.ModelProto`` that was read from disk. Protobuf stays the
source of truth so that everything ONNX defines (and fields this version does not know)
survives an open + save byte for byte; look-ups that protobuf lacks (node keys, scopes) are
kept beside it. Only :mod:`designer.core.edits` change a document.

``undo_stack`` is the document's one history (the GUI shows it, it keeps none of its own);
``modified`` is "its revision differs from the saved revision". Positions are changed by
edits (MoveNodes, AddNode, …) or, for view state that is no undo step (a first layout, a
layout file, collapsing module boxes), by :meth:`Document.set_positions`; both notify a
``POSITIONS`` event (or the edit's own event for added/removed nodes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import onnx

from designer.core.deferred_shifts import DeferredShifts
from designer.core.node_meta import NodeMetadata, read_node_metadata
from designer.core.scope import MAIN_SCOPE, Scope, ScopeId
from designer.core.walk import graph_at, graph_attributes

if TYPE_CHECKING:  # (designer.core.io imports this module)
    from designer.core.io.external import DataStamp

Position = tuple[float, float]


class ChangeKind(Enum):
    """What an edit changed; listeners refresh only what they show of it."""

    NODES = "nodes"  # nodes added or removed
    NODE = "node"  # a node's inputs, outputs, attributes or name
    TENSORS = "tensors"  # tensor names, value types, graph inputs/outputs
    INITIALIZERS = "initializers"
    POSITIONS = "positions"
    MODEL = "model"  # model properties or the whole model replaced
    SAVED = "saved"  # path or clean state changed; the model itself did not


@dataclass(frozen=True)
class DocumentEvent:
    kind: ChangeKind
    scope: ScopeId | None = None
    node_keys: frozenset[int] = frozenset()
    names: frozenset[str] = frozenset()


Listener = Callable[[DocumentEvent], None]


@dataclass
class _KeyState:
    """Node keys of every scope seen so far, kept across scope invalidation."""

    keys: dict[ScopeId, list[int]] = field(default_factory=dict)


@dataclass
class _KeyGenerator:
    """Where node keys continue. A model and its working copies share one, so a key handed
    out in either is never handed out in the other (positions and confirms stay unambiguous)."""

    next: int = 1


class Document:
    """One model being edited.

    ``path`` is where the model lives on disk (None for a new, never-saved model);
    ``base_dir`` is where its external data files are resolved; ``data_stamps`` are those
    files' stamps by real path when the document was opened or last saved (empty: nothing
    known, nothing checked), which a save compares them with before it reads them.
    """

    def __init__(self, model: onnx.ModelProto, path: Path | None = None) -> None:
        from designer.core.edits.stack import UndoStack

        self.model = model
        self.path = path
        self.base_dir: Path | None = path.parent if path is not None else None
        self.data_stamps: dict[Path, DataStamp] = {}
        self._positions: dict[ScopeId, dict[int, Position]] = {}
        self._shifts = DeferredShifts()  # shifts of hidden nodes not applied yet
        #: View state saved with the positions: ids of the module groups drawn collapsed
        #: on each scope's canvas (designer.core.hierarchy.Group.id).
        self.collapsed: dict[ScopeId, set[str]] = {}
        self.undo_stack = UndoStack(self)
        self._listeners: list[Listener] = []
        #: Counts the change events that concern the model (not positions, not saving)
        self.content_revision = 0
        self._keygen = _KeyGenerator()
        self._keys = _KeyState()
        self._scopes: dict[ScopeId, Scope] = {}
        self._io_keys: dict[tuple[ScopeId, str, str], int] = {}
        self._io_entries: dict[int, tuple[ScopeId, str, str]] = {}
        self._node_meta: dict[ScopeId, tuple[int, Scope, NodeMetadata]] = {}

    # --- listeners -----------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` after every change; returns a function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def notify(self, event: DocumentEvent) -> None:
        if event.kind not in (ChangeKind.POSITIONS, ChangeKind.SAVED):
            self.content_revision += 1  # what the model says changed (views key caches on it)
        for listener in list(self._listeners):
            listener(event)

    # --- state ---------------------------------------------------------------------------
    @property
    def modified(self) -> bool:
        """True when the history's revision differs from the revision last saved."""
        return self.undo_stack.revision != self.undo_stack.saved_revision

    @property
    def title(self) -> str:
        name = self.path.name if self.path is not None else "Untitled"
        return name + ("*" if self.modified else "")

    # --- positions (view state) -------------------------------------------------------------
    @property
    def positions(self) -> dict[ScopeId, dict[int, Position]]:
        """Positions (top-left corners) by scope and node key, every deferred shift
        (:meth:`defer_shift`) applied first: what anyone reading or writing them sees."""
        if self._shifts:
            self._shifts.settle(self._positions)
        return self._positions

    @positions.setter
    def positions(self, tables: dict[ScopeId, dict[int, Position]]) -> None:
        self._shifts.clear()  # replaced as a whole: nothing left to shift
        self._positions = tables

    def drawn_positions(self, scope_id: ScopeId) -> Mapping[int, Position]:
        """Positions of ``scope_id`` with deferred shifts left pending: exact for every key
        no :meth:`defer_shift` named since (what a canvas draws). Read-only."""
        return self._positions.get(scope_id, {})

    def defer_shift(
        self, scope_id: ScopeId, token: str, keys: Callable[[], Iterable[int]], dx: float, dy: float
    ) -> None:
        """Move the nodes of ``scope_id`` that ``keys()`` gives (hidden ones: nobody draws
        them) by (dx, dy) later: when :attr:`positions` is read next, or
        :meth:`settle_positions` names ``token`` (one token per set of keys until then, e.g.
        the collapsed group hiding them). The result is exactly that of moving them now; no
        event (their drawing is unchanged)."""
        self._shifts.add(self._positions.setdefault(scope_id, {}), scope_id, token, keys, dx, dy)

    def settle_positions(
        self, scope_id: ScopeId | None = None, chosen: Callable[[str], bool] | None = None
    ) -> None:
        """Apply the deferred shifts now (of ``scope_id``; of the tokens ``chosen`` accepts)."""
        if self._shifts:
            self._shifts.settle(self._positions, scope_id, chosen)

    def deferred_tokens(self, scope_id: ScopeId) -> list[str]:
        """Tokens of the shifts still deferred in ``scope_id``."""
        return self._shifts.tokens(scope_id)

    def set_positions(
        self,
        scope_id: ScopeId,
        table: Mapping[int, Position],
        *,
        replace: bool = False,
        keep_deferred: bool = False,
    ) -> None:
        """Set canvas positions of ``scope_id`` that are no undo step (a first layout, boxes
        of collapsed modules, a layout file) and notify one POSITIONS event naming the keys
        that changed; ``replace`` drops the scope's other positions first. Moves a user
        makes are :class:`~designer.core.edits.MoveNodes` edits instead. Deferred shifts
        are applied first, unless ``keep_deferred`` (the caller writes no key that one of
        them names: a quick expand or fold moving what is drawn)."""
        tables = self._positions if keep_deferred and not replace else self.positions
        current = tables.setdefault(scope_id, {})
        # (a first layout writes into an empty table: every key changes, counted in C)
        changed = {k for k, p in table.items() if current.get(k) != p} if current else set(table)
        if replace:
            changed |= current.keys() - table.keys()
            current.clear()
        current.update(table)
        if changed:
            self.notify(DocumentEvent(ChangeKind.POSITIONS, scope_id, frozenset(changed)))

    def clear_positions(self) -> None:
        """Forget every position (a layout file that turned out unusable); one event."""
        had = any(self.positions.values())
        self.positions.clear()
        if had:
            self.notify(DocumentEvent(ChangeKind.POSITIONS))

    def new_key(self) -> int:
        key = self._keygen.next
        self._keygen.next += 1
        return key

    def _new_keys(self, count: int) -> list[int]:
        """``count`` fresh keys, as ``count`` calls of :meth:`new_key` would give them."""
        start = self._keygen.next
        self._keygen.next = start + count
        return list(range(start, start + count))

    def reserve_keys(self, max_key: int) -> None:
        """Make every key handed out from now on greater than ``max_key`` (keys that came
        from another document, e.g. a working copy's, must never be handed out again)."""
        if max_key >= self._keygen.next:
            self._keygen.next = max_key + 1

    def io_key(self, scope_id: ScopeId, kind: str, name: str) -> int:
        """A stable key for graph input/output ``name`` (``kind`` "input" or "output") so
        the canvas can place it like a node; the same name always gets the same key."""
        entry = (scope_id, kind, name)
        key = self._io_keys.get(entry)
        if key is None:
            key = self._io_keys[entry] = self.new_key()
            self._io_entries[key] = entry
        return key

    def io_entry(self, key: int) -> tuple[ScopeId, str, str] | None:
        """(scope, kind, name) of a graph input/output key, or None for other keys."""
        return self._io_entries.get(key)

    @property
    def opset_imports(self) -> dict[str, int]:
        return {
            op.domain if op.domain != "ai.onnx" else "": op.version
            for op in self.model.opset_import
        }

    # --- scopes --------------------------------------------------------------------------
    def scope(self, scope_id: ScopeId = MAIN_SCOPE) -> Scope:
        """The live scope for ``scope_id``; raises KeyError when it no longer exists."""
        cached = self._scopes.get(scope_id)
        if cached is not None:
            return cached
        parent: Scope | None = None
        proto: onnx.GraphProto | onnx.FunctionProto
        if scope_id.steps:
            assert scope_id.parent is not None
            parent = self.scope(scope_id.parent)
            step = scope_id.steps[-1]
            proto = _graph_of(parent.node(step.node_key), step.attribute, step.index)
        elif scope_id.function is not None:
            proto = self.function(*scope_id.function)
        else:
            proto = self.model.graph
        keys = self._keys.keys.get(scope_id)
        if keys is None or len(keys) != len(proto.node):
            keys = self._new_keys(len(proto.node))
            self._keys.keys[scope_id] = keys
        scope = Scope(scope_id, proto, keys, parent)
        self._scopes[scope_id] = scope
        return scope

    def node_metadata(self, scope_id: ScopeId = MAIN_SCOPE) -> NodeMetadata:
        """The node metadata the designer reads (module paths, precisions) of ``scope_id``,
        read in one pass and kept until the model changes (:mod:`designer.core.node_meta`)."""
        scope = self.scope(scope_id)
        cached = self._node_meta.get(scope_id)
        if (
            cached is not None
            and cached[0] == self.content_revision
            and cached[1] is scope
            and len(cached[2].paths) == len(scope.keys)
        ):
            return cached[2]
        meta = read_node_metadata(scope)
        self._node_meta[scope_id] = (self.content_revision, scope, meta)
        return meta

    def function(self, domain: str, name: str, overload: str = "") -> onnx.FunctionProto:
        fn: onnx.FunctionProto
        for fn in self.model.functions:
            if fn.domain == domain and fn.name == name and fn.overload == overload:
                return fn
        raise KeyError(f"no local function {domain}:{name}")

    def top_scope_ids(self) -> list[ScopeId]:
        """The main graph and every local function body."""
        ids = [MAIN_SCOPE]
        ids.extend(ScopeId((f.domain, f.name, f.overload)) for f in self.model.functions)
        return ids

    def scopes(self) -> Iterator[Scope]:
        """Every scope of the model, parents before their subgraphs (depth first)."""
        stack = [self.scope(sid) for sid in reversed(self.top_scope_ids())]
        while stack:
            scope = stack.pop()
            yield scope
            children = []
            for key, node in scope.nodes():
                if node.attribute:  # (most nodes have none: no generator made for them)
                    for attr, index, _graph in graph_attributes(node):
                        children.append(self.scope(scope.id.child(key, attr, index)))
            stack.extend(reversed(children))

    def subscope_ids(self, scope_id: ScopeId, node_key: int) -> list[ScopeId]:
        """Ids of the subgraphs held directly by node ``node_key``."""
        node = self.scope(scope_id).node(node_key)
        return [scope_id.child(node_key, a, i) for a, i, _g in graph_attributes(node)]

    # --- bookkeeping for edits -----------------------------------------------------------
    def invalidate_subscopes(self, scope_id: ScopeId, node_key: int | None = None) -> None:
        """Forget cached live scopes below ``scope_id`` (below one node when given).

        Called when nodes holding subgraphs are removed, inserted or get new graph
        attributes: their protos are new objects. Node keys of those subgraphs are kept, so
        the same subgraph content gets back the same keys.
        """
        for sid in list(self._scopes):
            if len(sid.steps) > len(scope_id.steps) and sid.is_within(scope_id):
                step = sid.steps[len(scope_id.steps)]
                if node_key is None or step.node_key == node_key:
                    del self._scopes[sid]

    def key_snapshot(
        self, scope_id: ScopeId, node_key: int | None = None
    ) -> dict[ScopeId, list[int]]:
        """Copies of the key lists of every scope below ``scope_id`` (and one node)."""
        out = {}
        for sid, keys in self._keys.keys.items():
            below = len(sid.steps) > len(scope_id.steps) and sid.is_within(scope_id)
            if below and (node_key is None or sid.steps[len(scope_id.steps)].node_key == node_key):
                out[sid] = list(keys)
        return out

    def restore_keys(self, snapshot: dict[ScopeId, list[int]]) -> None:
        for sid, keys in snapshot.items():
            self._keys.keys[sid] = list(keys)
            self._scopes.pop(sid, None)

    def replace_model(self, model: onnx.ModelProto, keys: dict[ScopeId, list[int]] | None) -> None:
        """Swap in a whole new model (global modifications); ``keys`` restores node keys."""
        self.model = model
        self._scopes.clear()
        self._keys.keys = {sid: list(k) for sid, k in keys.items()} if keys else {}
        self.reserve_keys(max((max(k, default=0) for k in self._keys.keys.values()), default=0))

    # --- working copies (subgraph and function tabs) ---------------------------------------
    def sync_from(self, other: Document) -> None:
        """Become a full copy of ``other``: model, node keys, graph-IO keys, positions,
        the folder external data resolves against and its data files' stamps. Keys handed
        out here afterwards stay above every key ``other`` has handed out: both share one
        key sequence from now on. Listeners are not notified (the caller is)."""
        model = onnx.ModelProto()
        model.CopyFrom(other.model)
        self.replace_model(model, other.all_keys())
        self.base_dir = other.base_dir
        self.data_stamps = dict(other.data_stamps)
        self.positions = {sid: dict(table) for sid, table in other.positions.items()}
        self._io_keys = dict(other._io_keys)
        self._io_entries = dict(other._io_entries)
        self.reserve_keys(other._keygen.next - 1)
        self._keygen = other._keygen  # one key sequence for a model and its working copies

    def working_copy(self) -> Document:
        """A new document that is a full copy of this one (see :meth:`sync_from`); it has no
        path, so it can never be saved over this document's file by accident."""
        copy = Document(onnx.ModelProto())
        copy.sync_from(self)
        return copy

    def scope_keys(self, scope_id: ScopeId) -> dict[ScopeId, list[int]]:
        """Copies of the key lists of ``scope_id`` and of every scope below it."""
        return {sid: keys for sid, keys in self.all_keys().items() if sid.is_within(scope_id)}

    def set_scope_keys(self, scope_id: ScopeId, keys: dict[ScopeId, list[int]]) -> None:
        """Forget the keys (and cached scopes) of ``scope_id`` and everything below it, then
        take ``keys`` (scopes left out get fresh keys when next seen). For edits that replace
        a whole scope's proto."""
        for sid in [s for s in self._keys.keys if s.is_within(scope_id)]:
            del self._keys.keys[sid]
        for sid in [s for s in self._scopes if s.is_within(scope_id)]:
            del self._scopes[sid]
        for sid, k in keys.items():
            self._keys.keys[sid] = list(k)
            self.reserve_keys(max(k, default=0))

    def all_keys(self) -> dict[ScopeId, list[int]]:
        for _ in self.scopes():  # make sure every scope has keys
            pass
        return {sid: list(k) for sid, k in self._keys.keys.items()}

    def node_scope_of(self, key: int) -> ScopeId | None:
        """The scope holding node ``key`` (O(scopes))."""
        for sid, keys in self._keys.keys.items():
            if key in keys:
                return sid
        return None


def _graph_of(node: onnx.NodeProto, attribute: str, index: int) -> onnx.GraphProto:
    graph = graph_at(node, attribute, index)
    if graph is not None:
        return graph
    raise KeyError(f"node '{node.name}' has no graph attribute '{attribute}'")
