"""What the canvas draws for one graph scope, as plain records: nodes with their terminals
(from the operator schema), links between terminals, graph inputs and outputs as nodes.

Qt-free, so the canvas, the image export and tests share it. Building
(designer.core.viewgraph_build) costs one pass over the scope's nodes; the schema is
consulted once per distinct (operator, arity) signature.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

import onnx

from designer.core.document import Document
from designer.core.gcpause import gc_paused
from designer.core.names import sanitize_identifier
from designer.core.schema import SchemaRegistry
from designer.core.scope import ScopeId


class NodeKind(Enum):
    OP = "op"
    INPUT = "input"  # a graph input, drawn as a node with one output terminal
    OUTPUT = "output"  # a graph output, drawn as a node with one input terminal
    OUTER = "outer"  # a value of an enclosing graph read here, drawn like a graph input
    GROUP = "group"  # a collapsed module scope (designer.core.collapse): one box for its nodes


class TerminalState(Enum):
    UNCONNECTED = "unconnected"  # green
    LINKED = "linked"  # dark blue
    INITIALIZER = "initializer"  # light blue: fed by an initializer (or a hidden Constant)
    OUTER = "outer"  # fed by a value of an enclosing graph
    GROWTH = "growth"  # grey: the extra terminal of a variadic ("infinite") input/output


@dataclass(slots=True)
class Terminal:
    index: int
    label: str  # formal parameter name, or the tensor name when there is no schema
    tensor: str  # "" when nothing is connected
    state: TerminalState
    optional: bool = False
    variadic: bool = False


@dataclass(slots=True)
class ViewNode:
    key: int
    kind: NodeKind
    name: str  # display name: the node's name, or a generated one for unnamed nodes
    op_type: str
    domain: str = ""
    inputs: list[Terminal] = field(default_factory=list)
    outputs: list[Terminal] = field(default_factory=list)
    subgraphs: list[tuple[str, int]] = field(default_factory=list)  # (attribute, index)
    is_constant: bool = False
    is_function_call: bool = False
    function: tuple[str, str, str] | None = None  # (domain, name, overload) of a local call
    precision: str = ""  # TensorRT layer precision constraint (main graph only), "" if none
    group: str = ""  # GROUP: the id of the collapsed group (designer.core.hierarchy.Group.id)


#: ``ViewEdge.target_index`` of a value the target's subgraphs read (no input terminal).
IMPLICIT = -1


class ViewEdge(NamedTuple):
    """One link (immutable, hashable: the canvas keys its link items by it). A named tuple:
    a 100,000-node graph has about 180,000 of them, built several times faster than frozen
    dataclasses."""

    source: int  # view node key
    source_index: int  # output terminal
    target: int
    target_index: int  # input terminal, or IMPLICIT: read inside the target's subgraphs
    tensor: str

    @property
    def implicit(self) -> bool:
        """The target does not take the value as an input; a subgraph of it reads it."""
        return self.target_index == IMPLICIT


@dataclass
class ViewGraph:
    """Nodes in drawing order (graph inputs, operators, graph outputs) and the links."""

    scope: ScopeId
    nodes: list[ViewNode]
    edges: list[ViewEdge]
    _by_key: dict[int, ViewNode] | None = field(default=None, repr=False, compare=False)
    #: Results derived from this graph, computed once (graphs are never changed in place;
    #: an edit builds a new one): see designer.ui.canvas.placement.
    memo: dict[str, object] = field(default_factory=dict, repr=False, compare=False)

    def node(self, key: int) -> ViewNode:
        """The node with ``key`` (a dict look-up after the first call); KeyError if absent."""
        if self._by_key is None:
            self._by_key = {n.key: n for n in self.nodes}
        return self._by_key[key]

    def has_node(self, key: int) -> bool:
        if self._by_key is None:
            self._by_key = {n.key: n for n in self.nodes}
        return key in self._by_key

    def consumers(self) -> dict[int, list[ViewEdge]]:
        """Source key → edges leaving it (O(edges))."""
        out: dict[int, list[ViewEdge]] = {}
        for edge in self.edges:
            out.setdefault(edge.source, []).append(edge)
        return out


def display_name(node: onnx.NodeProto, index: int) -> str:
    """The node's name, or ``<OpType>_<index>`` for a node that has none."""
    return node.name or f"{sanitize_identifier(node.op_type)}_{index}"


@dataclass(frozen=True, slots=True)
class OuterValue:
    """A value defined in an enclosing scope and visible in a subgraph."""

    name: str
    scope: ScopeId  # the enclosing scope that defines it
    origin: str  # "initializer", "input" or "output of node <name>"
    graph: str  # name of the graph that defines it

    @property
    def is_initializer(self) -> bool:
        return self.origin == "initializer"

    def describe(self) -> str:
        """``initializer of graph main`` / ``input of graph main`` / ``output of node n``."""
        if self.origin.startswith("output"):
            return f"{self.origin} (graph {self.graph})"
        return f"{self.origin} of graph {self.graph}"


def outer_values(doc: Document, scope_id: ScopeId) -> dict[str, OuterValue]:
    """Every value of enclosing scopes visible in subgraph ``scope_id`` (the innermost
    definition of a name wins; names the subgraph defines itself are left out). O(size of
    the enclosing scopes)."""
    scope = doc.scope(scope_id)
    own = scope.defined_names()
    out: dict[str, OuterValue] = {}
    parent = scope.parent
    while parent is not None:
        found: dict[str, OuterValue] = {}
        graph = parent.name or "main"
        for name in parent.input_names():
            found[name] = OuterValue(name, parent.id, "input", graph)
        for name in parent.initializer_names():
            found[name] = OuterValue(name, parent.id, "initializer", graph)
        for index, node in enumerate(parent.proto.node):
            label = display_name(node, index)
            for name in node.output:
                if name:
                    found[name] = OuterValue(name, parent.id, f"output of node {label}", graph)
        for name, value in found.items():
            if name not in own and name not in out:
                out[name] = value
        parent = parent.parent
    return out


def build_view_graph(
    doc: Document,
    scope_id: ScopeId,
    *,
    show_constants: bool = False,
    registry: SchemaRegistry | None = None,
    pinned_outer: Iterable[str] = (),
) -> ViewGraph:
    """The drawable graph of ``scope_id``. Constant nodes are left out unless
    ``show_constants``; the inputs they feed then show as initializer-fed. Values of
    enclosing scopes that nodes read (and ``pinned_outer`` ones) are drawn as OUTER nodes.
    O(nodes + edges); about 1 s of CPU for 100,000 nodes on the 2-core bench machine
    (bench/bench_open.py)."""
    from designer.core.viewgraph_build import build  # it builds the records defined here

    with gc_paused():
        return build(doc, scope_id, show_constants, registry, set(pinned_outer))
