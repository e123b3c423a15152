"""Building a :class:`~designer.core.viewgraph.ViewGraph`: one pass over a scope's nodes.

What a graph contains is defined in :mod:`designer.core.viewgraph`; this module is the tuned
builder (issue 15 point 5), checked field for field against a plain one
(tests/core/test_viewgraph_equivalence.py). Where the time goes at 100,000 nodes: reading
protobuf fields (each read is a C call that makes a new object) and making ~280,000
Terminal and ~120,000 ViewEdge objects. So each field is read once; everything that only
depends on a node's signature (domain, op type, arity) is looked up once per signature;
a node's inputs are linked while it is built (its producers come first in a graph in
order) and an output terminal is marked linked when a link leaves it.

That one pass assumes each tensor has one producer. A scope where it does not (a name
produced twice, a node output shadowing a graph input or an initializer, two hidden
Constants with one output name) is rebuilt the plain way: links resolved after all nodes
are known, output states from the full set of links, so it reads as it always did.
"""

from __future__ import annotations

from typing import NamedTuple

import onnx

from designer.core.document import Document
from designer.core.names import sanitize_identifier
from designer.core.schema import OpSchemaInfo, SchemaRegistry, default_registry, normalize_domain
from designer.core.scope import Scope, ScopeId
from designer.core.transforms.graphs import free_names
from designer.core.viewgraph import (
    IMPLICIT,
    NodeKind,
    Terminal,
    TerminalState,
    ViewEdge,
    ViewGraph,
    ViewNode,
)
from designer.core.walk import graph_attributes

# (label, optional, variadic, growth) for each terminal of one side of a signature
_Template = tuple[tuple[str, bool, bool, bool], ...]

_UNCONNECTED = TerminalState.UNCONNECTED
_LINKED = TerminalState.LINKED
_INITIALIZER = TerminalState.INITIALIZER
_OUTER = TerminalState.OUTER
_GROWTH = TerminalState.GROWTH
_OP = NodeKind.OP
_GRAPH = onnx.AttributeProto.GRAPH
_GRAPHS = onnx.AttributeProto.GRAPHS
_new_edge = tuple.__new__


# Terminals of one side of a signature: the ones named by the node's tensors, in order,
# as (index, label or None for the tensor's name, optional, variadic), then the rest (no
# tensor: optional ones left out, the grey growth terminal) as (index, label, state,
# optional, variadic).
_Head = tuple[tuple[int, str | None, bool, bool], ...]
_Tail = tuple[tuple[int, str, TerminalState, bool, bool], ...]


class _Signature(NamedTuple):
    """What every node of one (domain, op type, #inputs, #outputs) shares."""

    in_head: _Head
    in_tail: _Tail
    out_head: _Head
    out_tail: _Tail
    domain: str  # normalised
    is_call: bool  # a local function's call
    is_constant: bool
    stem: str  # of generated display names: ``<stem>_<index>``


class _Signatures(dict[tuple[str, str, int, int], _Signature]):
    """Signature per (raw domain, op type, #inputs, #outputs): one schema look-up each."""

    def __init__(
        self, registry: SchemaRegistry, opsets: dict[str, int], functions: set[tuple[str, str]]
    ) -> None:
        super().__init__()
        self.registry = registry
        self.opsets = opsets
        self.functions = functions

    def __missing__(self, key: tuple[str, str, int, int]) -> _Signature:
        raw_domain, op_type, n_in, n_out = key
        domain = normalize_domain(raw_domain)
        is_call = (domain, op_type) in self.functions
        schema = None
        if not is_call and domain in self.opsets:
            schema = self.registry.get(op_type, domain, self.opsets[domain])
        if schema is None:  # terminals named after their tensors
            in_head, in_tail = _split(n_in, None)
            out_head, out_tail = _split(n_out, None)
        else:
            in_head, in_tail = _split(n_in, _template(n_in, schema.inputs, schema, True))
            out_head, out_tail = _split(n_out, _template(n_out, schema.outputs, schema, False))
        value = _Signature(
            in_head,
            in_tail,
            out_head,
            out_tail,
            domain,
            is_call,
            op_type == "Constant" and not raw_domain,
            sanitize_identifier(op_type),
        )
        self[key] = value
        return value


def _template(
    actual: int, params: tuple[object, ...], schema: OpSchemaInfo, is_input: bool
) -> _Template:
    param_at = schema.input_param if is_input else schema.output_param
    fixed = [p for p in params if getattr(p, "option", "") != "variadic"]
    count = max(actual, len(fixed))
    out = []
    for i in range(count):
        param = param_at(i)
        option = getattr(param, "option", "single")
        out.append(
            (getattr(param, "name", f"#{i}"), option == "optional", option == "variadic", False)
        )
    last = params[-1] if params else None
    if last is not None and getattr(last, "option", "") == "variadic":
        # The "infinite" terminal: one more, grey, beside the connected ones.
        out.append((getattr(last, "name", ""), True, True, True))
    return tuple(out)


def _split(actual: int, template: _Template | None) -> tuple[_Head, _Tail]:
    if template is None:
        return tuple((i, None, False, False) for i in range(actual)), ()
    head: list[tuple[int, str | None, bool, bool]] = []
    tail: list[tuple[int, str, TerminalState, bool, bool]] = []
    for i, (label, optional, variadic, growth) in enumerate(template):
        if growth:
            tail.append((max(i, actual), label, _GROWTH, True, True))
        elif i < actual:
            head.append((i, label, optional, variadic))
        else:
            tail.append((i, label, _UNCONNECTED, optional, variadic))
    return tuple(head), tuple(tail)


class _Rebuild(Exception):
    """The one-pass assumptions do not hold for this scope: build it the plain way."""


# A producer: (view key, output index, tensor name, its output terminal)
_Producer = tuple[int, int, str, Terminal]


def build(
    doc: Document,
    scope_id: ScopeId,
    show_constants: bool,
    registry: SchemaRegistry | None,
    pinned: set[str],
) -> ViewGraph:
    """See :func:`designer.core.viewgraph.build_view_graph`."""
    try:
        return _Builder(doc, scope_id, show_constants, registry, pinned, plain=False).run()
    except _Rebuild:
        return _Builder(doc, scope_id, show_constants, registry, pinned, plain=True).run()


class _Builder:
    def __init__(
        self,
        doc: Document,
        scope_id: ScopeId,
        show_constants: bool,
        registry: SchemaRegistry | None,
        pinned: set[str],
        *,
        plain: bool,
    ) -> None:
        self.doc = doc
        self.scope_id = scope_id
        self.scope: Scope = doc.scope(scope_id)
        self.show_constants = show_constants
        self.registry = registry or default_registry()
        self.pinned = pinned
        self.plain = plain  # links after all nodes are known; output states from all links
        self.initializers = set(self.scope.initializer_names())
        self.outer = self.scope.outer_names()
        self.producers: dict[str, _Producer] = {}
        self.registered = 0  # producer entries written (more than len(producers): a clash)
        self.edges: list[ViewEdge] = []
        # Links decided once every producer is known, each with the length of ``edges``
        # when it was met (its place in the order): (place, target key, terminal or None,
        # node for the implicit links of its subgraphs or None).
        self.pending: list[tuple[int, int, Terminal | None, onnx.NodeProto | None]] = []

    def run(self) -> ViewGraph:
        doc, scope, scope_id = self.doc, self.scope, self.scope_id
        producers = self.producers
        nodes: list[ViewNode] = []
        for name in scope.input_names():
            if name in self.initializers:
                continue  # IR < 4 lists initializers as inputs too; they are not real inputs
            key = doc.io_key(scope_id, "input", name)
            terminal = Terminal(0, name, name, _UNCONNECTED)
            producers[name] = (key, 0, name, terminal)
            self.registered += 1
            nodes.append(ViewNode(key, NodeKind.INPUT, name, "Input", outputs=[terminal]))
        constants = self._operators(nodes)
        if self.outer:  # a subgraph: values of enclosing scopes it reads become OUTER nodes
            nodes[0:0] = self._outer_nodes(constants)
        self._resolve(constants)
        edges = self.edges
        for name in scope.output_names():
            key = doc.io_key(scope_id, "output", name)
            terminal = Terminal(0, name, name, _UNCONNECTED)
            nodes.append(ViewNode(key, NodeKind.OUTPUT, name, "Output", inputs=[terminal]))
            producer = producers.get(name)
            if producer is not None:
                terminal.tensor = producer[2]
                terminal.state = _LINKED
                producer[3].state = _LINKED
                edges.append(_new_edge(ViewEdge, (producer[0], producer[1], key, 0, producer[2])))
            elif name:
                terminal.state = self._unlinked_state(name, constants)
        if self.plain:
            _mark_linked_outputs(nodes, edges)
        return ViewGraph(scope_id, nodes, edges)

    def _operators(self, nodes: list[ViewNode]) -> dict[str, int]:
        """Append the scope's operator nodes (linking what can be linked now); returns the
        hidden Constants: tensor → node key."""
        scope = self.scope
        doc = self.doc
        fids = {
            (normalize_domain(f.domain), f.name, f.overload): (f.domain, f.name, f.overload)
            for f in doc.model.functions
        }
        if scope_id_function := scope.id.function:
            fn = doc.function(*scope_id_function)
            opsets = {normalize_domain(o.domain): o.version for o in fn.opset_import}
        else:
            opsets = {normalize_domain(d): v for d, v in doc.opset_imports.items()}
        signatures = _Signatures(self.registry, opsets, {(d, n) for d, n, _o in fids})
        plain = self.plain
        hide = not self.show_constants
        hidden: set[int] = set()
        constants: dict[str, int] = {}
        if plain and hide:
            for key, node in scope.nodes():
                if node.op_type == "Constant" and not node.domain and len(node.output) == 1:
                    constants[node.output[0]] = key
            hidden = set(constants.values())
        hidden_count = 0
        producers = self.producers
        initializers = self.initializers
        edges = self.edges
        pending = self.pending
        # TensorRT precisions count on main-graph nodes only (read once per model change)
        precisions = doc.node_metadata(scope.id).precisions if self.scope_id.is_main else {}
        registered = self.registered
        for index, (key, node) in enumerate(scope.nodes()):
            op_type = node.op_type
            raw_domain = node.domain
            outputs = node.output[:]
            inputs = node.input[:]
            in_head, in_tail, out_head, out_tail, domain, is_call, is_constant, stem = signatures[
                raw_domain, op_type, len(inputs), len(outputs)
            ]
            if is_constant and hide and len(outputs) == 1:
                if plain:
                    if key in hidden:
                        continue
                else:
                    constants[outputs[0]] = key
                    hidden_count += 1
                    continue
            # Output terminals, registered as producers.
            outs: list[Terminal] = []
            for (i, label, optional, variadic), name in zip(out_head, outputs, strict=False):
                terminal = Terminal(
                    i, name if label is None else label, name, _UNCONNECTED, optional, variadic
                )
                outs.append(terminal)
                if name:
                    producers[name] = (key, i, name, terminal)
                    registered += 1
            for i, label, state, optional, variadic in out_tail:
                outs.append(Terminal(i, label, "", state, optional, variadic))
            # Input terminals, linked to their producer when it is known already.
            ins: list[Terminal] = []
            for (i, label, optional, variadic), name in zip(in_head, inputs, strict=False):
                if label is None:
                    label = name
                if not name:
                    ins.append(Terminal(i, label, "", _UNCONNECTED, optional, variadic))
                    continue
                producer = None if plain else producers.get(name)
                if producer is not None:
                    shared = producer[2]  # the producer's string: one copy per tensor
                    ins.append(Terminal(i, label, shared, _LINKED, optional, variadic))
                    edges.append(_new_edge(ViewEdge, (producer[0], producer[1], key, i, shared)))
                    producer[3].state = _LINKED
                elif not plain and (name in initializers or name in constants):
                    ins.append(Terminal(i, label, name, _INITIALIZER, optional, variadic))
                else:
                    terminal = Terminal(i, label, name, _UNCONNECTED, optional, variadic)
                    ins.append(terminal)
                    pending.append((len(edges), key, terminal, None))
            for i, label, state, optional, variadic in in_tail:
                ins.append(Terminal(i, label, "", state, optional, variadic))
            subgraphs: list[tuple[str, int]] = []
            attributes = node.attribute
            if attributes:  # the graphs it holds, as designer.core.walk.graph_attributes says
                for attr in attributes:
                    kind = attr.type
                    if kind == _GRAPH or (attr.HasField("g") and not attr.graphs):
                        subgraphs.append((attr.name, -1))
                    elif kind == _GRAPHS or attr.graphs:
                        subgraphs.extend((attr.name, i) for i in range(len(attr.graphs)))
                if subgraphs:
                    pending.append((len(edges), key, None, node))
            nodes.append(
                ViewNode(
                    key,
                    _OP,
                    node.name or f"{stem}_{index}",
                    op_type,
                    raw_domain,
                    ins,
                    outs,
                    subgraphs,
                    is_constant,
                    is_call,
                    fids.get((domain, op_type, node.overload)) if is_call else None,
                    precisions.get(key, ""),
                )
            )
        self.registered = registered
        if not plain and (
            registered != len(producers)
            or hidden_count != len(constants)
            or not producers.keys().isdisjoint(initializers)
            or not producers.keys().isdisjoint(constants)
        ):
            raise _Rebuild
        return constants

    def _outer_nodes(self, constants: dict[str, int]) -> list[ViewNode]:
        scope = self.scope
        read = {t.tensor for _p, _k, t, _n in self.pending if t is not None}
        read.update(scope.output_names())
        own = self.initializers | self.producers.keys() | constants.keys()
        out = []
        for name in sorted(self.outer - own):
            if name in read or name in self.pinned:
                key = self.doc.io_key(self.scope_id, "outer", name)
                terminal = Terminal(0, name, name, _UNCONNECTED)
                self.producers[name] = (key, 0, name, terminal)
                out.append(
                    ViewNode(key, NodeKind.OUTER, f"outer ▸ {name}", "Outer", outputs=[terminal])
                )
        return out

    def _unlinked_state(self, name: str, constants: dict[str, int]) -> TerminalState:
        if name in self.initializers or name in constants:
            return _INITIALIZER
        if name in self.outer:
            return _OUTER
        return _UNCONNECTED  # a dangling reference: nothing feeds it

    def _resolve(self, constants: dict[str, int]) -> None:
        """Decide the pending links now that every producer is known, and put the links
        found at their place in ``edges``."""
        if not self.pending:
            return
        producers = self.producers
        found: list[tuple[int, ViewEdge]] = []
        for place, key, terminal, node in self.pending:
            if terminal is not None:
                producer = producers.get(terminal.tensor)
                if producer is None:
                    terminal.state = self._unlinked_state(terminal.tensor, constants)
                    continue
                terminal.tensor = producer[2]
                terminal.state = _LINKED
                producer[3].state = _LINKED
                found.append(
                    (place, ViewEdge(producer[0], producer[1], key, terminal.index, producer[2]))
                )
                continue
            # Values the node's subgraphs read from this scope (a graph input used only
            # inside an If branch is then drawn as used, not as dangling).
            assert node is not None
            read: set[str] = set()
            for _attr, _index, graph in graph_attributes(node):
                read |= free_names(graph)
            read -= set(node.input)
            for name in sorted(read):
                producer = producers.get(name)
                if producer is not None:
                    producer[3].state = _LINKED
                    found.append(
                        (place, ViewEdge(producer[0], producer[1], key, IMPLICIT, producer[2]))
                    )
        if not found:
            return
        edges = self.edges
        merged: list[ViewEdge] = []
        last = 0
        for place, edge in found:  # places never decrease
            merged.extend(edges[last:place])
            merged.append(edge)
            last = place
        merged.extend(edges[last:])
        edges[:] = merged


def _mark_linked_outputs(nodes: list[ViewNode], edges: list[ViewEdge]) -> None:
    used = {(e.source, e.source_index) for e in edges}
    for node in nodes:
        for terminal in node.outputs:
            if terminal.state is not _GROWTH:
                terminal.state = _LINKED if (node.key, terminal.index) in used else _UNCONNECTED
