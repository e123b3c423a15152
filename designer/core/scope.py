"""Graph scopes: the main graph, every subgraph (graph attributes of any node) and every local
function body of a model, addressed by a stable :class:`ScopeId`.

Nodes are addressed by a *node key*: an integer the document hands out when it first sees a
node and keeps across edits (indices shift when nodes are added or removed; keys do not).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import onnx

from designer.core.walk import graph_attributes as graph_attributes  # re-exported
from designer.core.walk import has_subgraphs as has_subgraphs  # re-exported

GRAPH_TYPES = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


@dataclass(frozen=True, order=True)
class SubgraphStep:
    """One step down: the graph attribute ``attribute`` of node ``node_key``.

    ``index`` selects an element of a GRAPHS attribute; it is -1 for a GRAPH attribute.
    """

    node_key: int
    attribute: str
    index: int = -1


@dataclass(frozen=True, order=True)
class ScopeId:
    """Path to one graph scope.

    ``function`` is ``(domain, name, overload)`` when the path starts at a local function body,
    None when it starts at the main graph; ``steps`` descend into subgraphs.
    """

    function: tuple[str, str, str] | None = None
    steps: tuple[SubgraphStep, ...] = ()

    @property
    def is_main(self) -> bool:
        return self.function is None and not self.steps

    @property
    def is_function(self) -> bool:
        """True for a local function body itself (not a subgraph inside one)."""
        return self.function is not None and not self.steps

    @property
    def parent(self) -> ScopeId | None:
        if not self.steps:
            return None
        return ScopeId(self.function, self.steps[:-1])

    def child(self, node_key: int, attribute: str, index: int = -1) -> ScopeId:
        return ScopeId(self.function, (*self.steps, SubgraphStep(node_key, attribute, index)))

    def is_within(self, other: ScopeId) -> bool:
        """True when this scope is ``other`` or nested (at any depth) inside it."""
        return self.function == other.function and self.steps[: len(other.steps)] == other.steps


MAIN_SCOPE = ScopeId()

Container = onnx.GraphProto | onnx.FunctionProto


@dataclass
class Scope:
    """A live view of one graph or function body of a document.

    ``keys`` runs parallel to ``proto.node``. Only the document and edits change a scope.
    """

    id: ScopeId
    proto: Container
    keys: list[int]
    parent: Scope | None = None
    _index: dict[int, int] | None = field(default=None, repr=False)

    @property
    def is_function(self) -> bool:
        return isinstance(self.proto, onnx.FunctionProto)

    @property
    def name(self) -> str:
        return self.proto.name

    def __len__(self) -> int:
        return len(self.keys)

    # --- nodes ---------------------------------------------------------------------------
    def index_of(self, key: int) -> int:
        """Position of node ``key`` in the node list (dict look-up, rebuilt after inserts)."""
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self.keys)}
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(f"no node with key {key} in this scope") from None

    def has_node(self, key: int) -> bool:
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self.keys)}
        return key in self._index

    def node(self, key: int) -> onnx.NodeProto:
        node: onnx.NodeProto = self.proto.node[self.index_of(key)]
        return node

    def nodes(self) -> Iterator[tuple[int, onnx.NodeProto]]:
        """(key, node) pairs in graph order."""
        return zip(self.keys, self.proto.node, strict=True)

    def insert_node(self, index: int, node: onnx.NodeProto, key: int) -> None:
        """Insert a copy of ``node`` at ``index`` under ``key`` (O(n) for a middle insert)."""
        if index >= len(self.keys):
            self.proto.node.append(node)
            self.keys.append(key)
            if self._index is not None:
                self._index[key] = len(self.keys) - 1
            return
        self.proto.node.insert(index, node)
        self.keys.insert(index, key)
        self._index = None

    def remove_node(self, key: int) -> tuple[int, onnx.NodeProto]:
        """Remove node ``key``; return its index and a detached copy of it."""
        index = self.index_of(key)
        copy = onnx.NodeProto()
        copy.CopyFrom(self.proto.node[index])
        del self.proto.node[index]
        del self.keys[index]
        self._index = None
        return index, copy

    def node_names(self) -> set[str]:
        return {n.name for n in self.proto.node}

    # --- tensors -------------------------------------------------------------------------
    def input_names(self) -> list[str]:
        if isinstance(self.proto, onnx.FunctionProto):
            return list(self.proto.input)
        return [v.name for v in self.proto.input]

    def output_names(self) -> list[str]:
        if isinstance(self.proto, onnx.FunctionProto):
            return list(self.proto.output)
        return [v.name for v in self.proto.output]

    def initializer_names(self) -> list[str]:
        if isinstance(self.proto, onnx.FunctionProto):
            return []
        names = [t.name for t in self.proto.initializer]
        names.extend(s.values.name for s in self.proto.sparse_initializer)
        return names

    def defined_names(self) -> set[str]:
        """Every tensor name defined in this scope itself: inputs, initializers, node outputs."""
        names = set(self.input_names())
        names.update(self.initializer_names())
        for node in self.proto.node:
            names.update(o for o in node.output if o)
        return names

    def outer_names(self) -> set[str]:
        """Names defined by enclosing scopes and visible here (empty for top-level scopes)."""
        names: set[str] = set()
        scope = self.parent
        while scope is not None:
            names |= scope.defined_names()
            scope = scope.parent
        return names

    def value_info(self, name: str) -> onnx.ValueInfoProto | None:
        """The declared ValueInfo of ``name`` (input, output or value_info), if any."""
        vi: onnx.ValueInfoProto
        if isinstance(self.proto, onnx.FunctionProto):
            for vi in self.proto.value_info:
                if vi.name == name:
                    return vi
            return None
        for group in (self.proto.input, self.proto.output, self.proto.value_info):
            for vi in group:
                if vi.name == name:
                    return vi
        return None

    def initializer(self, name: str) -> onnx.TensorProto | None:
        if isinstance(self.proto, onnx.FunctionProto):
            return None
        tensor: onnx.TensorProto
        for tensor in self.proto.initializer:
            if tensor.name == name:
                return tensor
        return None
