"""A frozen copy of the straightforward view-graph builder (designer.core.viewgraph as of
issue 15, before the open path was tuned), for the equivalence test and bench/bench_open.py:
the tuned builder must produce exactly what this one does.

Keep it plain: it is the definition the fast one is checked against. When the view graph's
meaning changes on purpose, change both.
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx

from designer.core.document import Document
from designer.core.names import sanitize_identifier
from designer.core.schema import OpSchemaInfo, SchemaRegistry, default_registry, normalize_domain
from designer.core.scope import Scope, ScopeId
from designer.core.transforms.graphs import free_names
from designer.core.trt.settings import node_precision
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


def _function_lookup(doc: Document) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    """(normalised domain, name, overload) → the (domain, name, overload) of each local
    function as written in the model (what :meth:`Document.function` takes)."""
    return {
        (normalize_domain(f.domain), f.name, f.overload): (f.domain, f.name, f.overload)
        for f in doc.model.functions
    }


def reference_view_graph(
    doc: Document,
    scope_id: ScopeId,
    *,
    show_constants: bool = False,
    registry: SchemaRegistry | None = None,
    pinned_outer: Iterable[str] = (),
) -> ViewGraph:
    """What :func:`designer.core.viewgraph.build_view_graph` returns, computed plainly."""
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
