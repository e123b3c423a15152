"""What the canvas draws for one graph scope, as plain records: nodes with their terminals
(from the operator schema), links between terminals, graph inputs and outputs as nodes.

Qt-free, so the canvas, the image export and tests share it. Building costs one pass over
the scope's nodes; the schema is consulted once per distinct (operator, arity) signature, so
a 100,000-node model builds in well under a second.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

import onnx

from designer.core.document import Document
from designer.core.gcpause import gc_paused
from designer.core.names import sanitize_identifier
from designer.core.schema import OpSchemaInfo, SchemaRegistry, default_registry, normalize_domain
from designer.core.scope import Scope, ScopeId
from designer.core.transforms.graphs import free_names
from designer.core.trt.settings import node_precision
from designer.core.walk import graph_attributes


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


@dataclass(frozen=True, slots=True)
class ViewEdge:
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


# (label, optional, variadic, growth) for each terminal of one side of a signature
_Template = tuple[tuple[str, bool, bool, bool], ...]


class _Templates:
    """Terminal templates per (domain, op_type, #inputs, #outputs): one schema look-up each."""

    def __init__(self, registry: SchemaRegistry, opsets: dict[str, int], functions: set) -> None:  # type: ignore[type-arg]
        self.registry = registry
        self.opsets = opsets
        self.functions = functions
        self._cache: dict[tuple[str, str, int, int], tuple[_Template, _Template] | None] = {}

    def get(
        self, domain: str, op_type: str, n_in: int, n_out: int
    ) -> tuple[_Template, _Template] | None:
        key = (domain, op_type, n_in, n_out)
        if key in self._cache:
            return self._cache[key]
        schema = None
        if (domain, op_type) not in self.functions and domain in self.opsets:
            schema = self.registry.get(op_type, domain, self.opsets[domain])
        value = None
        if schema is not None:
            value = (
                _template(n_in, schema.inputs, schema, True),
                _template(n_out, schema.outputs, schema, False),
            )
        self._cache[key] = value
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


def _make_terminals(actual: list[str], template: _Template | None) -> list[Terminal]:
    unconnected = TerminalState.UNCONNECTED
    if template is None:
        return [Terminal(i, name, name, unconnected) for i, name in enumerate(actual)]
    n = len(actual)
    terminals = []
    for i, (label, optional, variadic, growth) in enumerate(template):
        if growth:
            index = max(i, n)
            terminals.append(Terminal(index, label, "", TerminalState.GROWTH, True, True))
        else:
            terminals.append(
                Terminal(i, label, actual[i] if i < n else "", unconnected, optional, variadic)
            )
    return terminals


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


def _function_lookup(doc: Document) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    """(normalised domain, name, overload) → the (domain, name, overload) of each local
    function as written in the model (what :meth:`Document.function` takes)."""
    return {
        (normalize_domain(f.domain), f.name, f.overload): (f.domain, f.name, f.overload)
        for f in doc.model.functions
    }


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
    O(nodes + edges); about 1 s for 100,000 nodes."""
    with gc_paused():
        return _build(doc, scope_id, show_constants, registry, set(pinned_outer))


def _build(
    doc: Document,
    scope_id: ScopeId,
    show_constants: bool,
    registry: SchemaRegistry | None,
    pinned: set[str],
) -> ViewGraph:
    registry = registry or default_registry()
    scope = doc.scope(scope_id)
    fids = _function_lookup(doc)
    functions = {(d, n) for d, n, _o in fids}
    templates = _Templates(registry, _opsets(doc, scope), functions)
    initializers = set(scope.initializer_names())
    outer = scope.outer_names()
    constants = {} if show_constants else _constant_outputs(scope)
    hidden = set(constants.values())
    producers: dict[str, tuple[int, int, str]] = {}
    nodes: list[ViewNode] = []
    linked = TerminalState.LINKED
    main = scope_id.is_main

    for name in scope.input_names():
        if name in initializers:
            continue  # IR < 4 lists initializers as inputs too; they are not real inputs
        key = doc.io_key(scope_id, "input", name)
        producers[name] = (key, 0, name)
        nodes.append(
            ViewNode(key, NodeKind.INPUT, name, "Input", outputs=[Terminal(0, name, name, linked)])
        )
    ops: list[tuple[ViewNode, list[str], _Template | None]] = []
    for index, (key, node) in enumerate(scope.nodes()):
        if key in hidden:
            continue
        op_type = node.op_type
        raw_domain = node.domain
        domain = normalize_domain(raw_domain)
        inputs = list(node.input)
        outputs = list(node.output)
        pair = templates.get(domain, op_type, len(inputs), len(outputs))
        subgraphs = [(a, i) for a, i, _g in graph_attributes(node)] if len(node.attribute) else []
        view = ViewNode(
            key,
            NodeKind.OP,
            node.name or f"{sanitize_identifier(op_type)}_{index}",
            op_type,
            raw_domain,
            outputs=_make_terminals(outputs, pair[1] if pair else None),
            subgraphs=subgraphs,
            is_constant=op_type == "Constant" and not raw_domain,
            is_function_call=(domain, op_type) in functions,
            function=fids.get((domain, op_type, node.overload)) if fids else None,
            precision=(node_precision(node) or "") if main and node.metadata_props else "",
        )
        for terminal in view.outputs:
            if terminal.tensor:
                producers[terminal.tensor] = (key, terminal.index, terminal.tensor)
        ops.append((view, inputs, pair[0] if pair else None))
        nodes.append(view)

    if outer:  # a subgraph: values of enclosing scopes it reads become OUTER nodes
        read = {n for _v, inputs, _t in ops for n in inputs if n}
        read.update(scope.output_names())
        own = initializers | producers.keys() | constants.keys()
        outer_nodes = []
        for name in sorted(outer - own):
            if name in read or name in pinned:
                key = doc.io_key(scope_id, "outer", name)
                producers[name] = (key, 0, name)
                terminal = Terminal(0, name, name, linked)
                outer_nodes.append(
                    ViewNode(key, NodeKind.OUTER, f"outer ▸ {name}", "Outer", outputs=[terminal])
                )
        nodes[0:0] = outer_nodes

    edges: list[ViewEdge] = []
    for view, inputs, template in ops:
        view.inputs = _make_terminals(inputs, template)
        for terminal in view.inputs:
            _link(terminal, view.key, producers, initializers, constants, outer, edges)
        if view.subgraphs:
            _link_implicit(scope.node(view.key), view.key, producers, edges)
    for name in scope.output_names():
        key = doc.io_key(scope_id, "output", name)
        terminal = Terminal(0, name, name, TerminalState.UNCONNECTED)
        view = ViewNode(key, NodeKind.OUTPUT, name, "Output", inputs=[terminal])
        _link(terminal, key, producers, initializers, constants, outer, edges)
        nodes.append(view)
    _mark_linked_outputs(nodes, edges)
    return ViewGraph(scope_id, nodes, edges)


def _opsets(doc: Document, scope: Scope) -> dict[str, int]:
    if scope.id.function is not None:
        fn = doc.function(*scope.id.function)
        return {normalize_domain(o.domain): o.version for o in fn.opset_import}
    return {normalize_domain(d): v for d, v in doc.opset_imports.items()}


def _constant_outputs(scope: Scope) -> dict[str, int]:
    """Tensor → key of the Constant node producing it."""
    return {
        node.output[0]: key
        for key, node in scope.nodes()
        if node.op_type == "Constant" and not node.domain and len(node.output) == 1
    }


def _link(
    terminal: Terminal,
    key: int,
    producers: dict[str, tuple[int, int, str]],
    initializers: set[str],
    constants: dict[str, int],
    outer: set[str],
    edges: list[ViewEdge],
) -> None:
    name = terminal.tensor
    if not name or terminal.state == TerminalState.GROWTH:
        return
    producer = producers.get(name)
    if producer is not None:
        name = terminal.tensor = producer[2]  # share the producer's string (memory)
        edges.append(ViewEdge(producer[0], producer[1], key, terminal.index, name))
        terminal.state = TerminalState.LINKED
    elif name in initializers or name in constants:
        terminal.state = TerminalState.INITIALIZER
    elif name in outer:
        terminal.state = TerminalState.OUTER
    else:
        terminal.state = TerminalState.UNCONNECTED  # a dangling reference: nothing feeds it


def _link_implicit(
    node: onnx.NodeProto,
    key: int,
    producers: dict[str, tuple[int, int, str]],
    edges: list[ViewEdge],
) -> None:
    """Links to ``node`` from the values its subgraphs read from this scope (a graph input
    used only inside an If branch is then drawn as used, not as dangling)."""
    read: set[str] = set()
    for _attr, _index, graph in graph_attributes(node):
        read |= free_names(graph)
    read -= set(node.input)
    for name in sorted(read):
        producer = producers.get(name)
        if producer is not None:
            edges.append(ViewEdge(producer[0], producer[1], key, IMPLICIT, producer[2]))


def _mark_linked_outputs(nodes: list[ViewNode], edges: list[ViewEdge]) -> None:
    used = {(e.source, e.source_index) for e in edges}
    linked, unconnected, growth = (
        TerminalState.LINKED,
        TerminalState.UNCONNECTED,
        TerminalState.GROWTH,
    )
    for node in nodes:
        for terminal in node.outputs:
            if terminal.state is not growth:
                terminal.state = linked if (node.key, terminal.index) in used else unconnected
