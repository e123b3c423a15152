"""Local functions of a model: which ones exist, where they are called, which body nodes use
their attributes, and the proto helpers that grouping and inlining share.

Queries only: nothing here changes a document (see :mod:`designer.core.edits.functions`).
A node calls a local function when its (domain, op_type, overload) equals the function's
(domain, name, overload); ``ai.onnx`` and ``""`` are the same domain.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import onnx
from onnx import helper

from designer.core.document import Document
from designer.core.errors import EditError
from designer.core.names import unique_name
from designer.core.scope import ScopeId
from designer.core.walk import graph_attributes, iter_graphs, iter_nodes, nested_graphs

FunctionId = tuple[str, str, str]


def _domain(domain: str) -> str:
    return "" if domain == "ai.onnx" else domain


def function_id(fn: onnx.FunctionProto) -> FunctionId:
    return (fn.domain, fn.name, fn.overload)


def function_ids(doc: Document) -> list[FunctionId]:
    """Every local function of ``doc``, in model order."""
    return [function_id(fn) for fn in doc.model.functions]


def function_title(fid: FunctionId) -> str:
    """``domain:name`` (``:overload`` when set), the way messages name a function."""
    domain, name, overload = fid
    return f"{domain}:{name}" + (f":{overload}" if overload else "")


def _call_table(doc: Document) -> dict[tuple[str, str, str], FunctionId]:
    return {
        (_domain(fn.domain), fn.name, fn.overload): function_id(fn) for fn in doc.model.functions
    }


def called_function(doc: Document, node: onnx.NodeProto) -> FunctionId | None:
    """The local function ``node`` calls, or None (an operator or an unknown custom op)."""
    return _call_table(doc).get((_domain(node.domain), node.op_type, node.overload))


def _calls(doc: Document) -> Iterator[tuple[ScopeId, int, FunctionId]]:
    table = _call_table(doc)
    if not table:
        return
    for scope in doc.scopes():
        for key, node in scope.nodes():
            fid = table.get((_domain(node.domain), node.op_type, node.overload))
            if fid is not None:
                yield scope.id, key, fid


def call_sites(doc: Document, fid: FunctionId) -> list[tuple[ScopeId, int]]:
    """(scope, node key) of every node calling ``fid``: main graph, subgraphs at any depth and
    other function bodies. O(nodes of the model)."""
    return [(sid, key) for sid, key, called in _calls(doc) if called == fid]


def call_counts(doc: Document) -> dict[FunctionId, int]:
    """Number of call sites of every local function (0 included), in one walk."""
    counts = dict.fromkeys(function_ids(doc), 0)
    for _sid, _key, fid in _calls(doc):
        counts[fid] += 1
    return counts


def attribute_users(fn: onnx.FunctionProto, name: str) -> list[str]:
    """Names (op type when unnamed) of the body nodes, nested subgraphs included, with an
    attribute referring to the function attribute ``name`` (``ref_attr_name``)."""
    return [
        node.name or node.op_type
        for node in iter_nodes(fn.node)
        if any(a.ref_attr_name == name for a in node.attribute)
    ]


def attribute_refs(nodes: Iterable[onnx.NodeProto]) -> dict[str, int]:
    """Function attribute name → attribute type, for every ``ref_attr_name`` in ``nodes``."""
    refs: dict[str, int] = {}
    for node in iter_nodes(nodes):
        for attr in node.attribute:
            if attr.ref_attr_name:
                refs.setdefault(attr.ref_attr_name, attr.type)
    return refs


def used_domains(nodes: Iterable[onnx.NodeProto]) -> set[str]:
    """Operator domains of ``nodes`` and their subgraphs (``""`` for ai.onnx)."""
    return {_domain(n.domain) for n in iter_nodes(nodes)}


# --- tensor names ----------------------------------------------------------------------------
def outer_reads(graph: onnx.GraphProto) -> list[str]:
    """Names ``graph`` (and its nested subgraphs) read from enclosing scopes, in first-use
    order: node inputs and graph outputs it does not define itself."""
    defined = {v.name for v in graph.input}
    defined.update(t.name for t in graph.initializer)
    defined.update(s.values.name for s in graph.sparse_initializer)
    reads: dict[str, None] = {}
    for node in graph.node:
        for name in node_reads(node):
            if name not in defined:
                reads.setdefault(name)
        defined.update(o for o in node.output if o)
    for value in graph.output:
        if value.name not in defined:
            reads.setdefault(value.name)
    return list(reads)


def node_reads(node: onnx.NodeProto) -> list[str]:
    """Every name ``node`` reads: its connected inputs, then what its subgraphs read from
    outside themselves (implicit inputs)."""
    reads = dict.fromkeys(n for n in node.input if n)
    for _attr, _index, graph in graph_attributes(node):
        reads.update(dict.fromkeys(outer_reads(graph)))
    return list(reads)


def defined_names(node: onnx.NodeProto) -> list[str]:
    """Names ``node`` defines, in order: its outputs and, inside its subgraphs, their
    inputs, initializers and node outputs."""
    names = dict.fromkeys(o for o in node.output if o)
    for graph in nested_graphs(node):
        names.update(dict.fromkeys(v.name for v in graph.input))
        names.update(dict.fromkeys(t.name for t in graph.initializer))
        names.update(dict.fromkeys(s.values.name for s in graph.sparse_initializer))
        for inner in graph.node:
            names.update(dict.fromkeys(o for o in inner.output if o))
    return list(names)


def used_names(proto: onnx.GraphProto | onnx.FunctionProto) -> set[str]:
    """Tensor names that exist in ``proto`` and its subgraphs (inputs, outputs, initializers,
    node terminals); value_info entries alone do not make a name used."""
    names: set[str] = set()
    for walked in iter_graphs(proto):
        graph = walked.graph
        if isinstance(graph, onnx.FunctionProto):
            names.update(graph.input, graph.output)
        else:
            names.update(v.name for v in graph.input)
            names.update(v.name for v in graph.output)
            names.update(t.name for t in graph.initializer)
            names.update(s.values.name for s in graph.sparse_initializer)
        for node in graph.node:
            names.update(node.input)
            names.update(node.output)
    names.discard("")
    return names


def rename_tensors(node: onnx.NodeProto, mapping: Mapping[str, str]) -> None:
    """Rename tensors in ``node`` and its subgraphs in place (names not in ``mapping`` stay)."""
    _rename_terminals(node, mapping)
    for graph in nested_graphs(node):
        _rename_graph_own(graph, mapping)


def _rename_terminals(node: onnx.NodeProto, mapping: Mapping[str, str]) -> None:
    for field in (node.input, node.output):
        for i, name in enumerate(field):
            if name in mapping:
                field[i] = mapping[name]


def rename_graph_tensors(graph: onnx.GraphProto, mapping: Mapping[str, str]) -> None:
    """Rename every occurrence of the tensor names in ``mapping`` inside ``graph`` (its
    inputs, outputs, value_info, initializers and nodes, nested subgraphs included)."""
    for sub in nested_graphs(graph):
        _rename_graph_own(sub, mapping)


def _rename_graph_own(graph: onnx.GraphProto, mapping: Mapping[str, str]) -> None:
    """Rename in ``graph``'s own fields and nodes' terminals (not in nested subgraphs)."""
    for group in (graph.input, graph.output, graph.value_info):
        for value in group:
            if value.name in mapping:
                value.name = mapping[value.name]
    for tensor in graph.initializer:
        if tensor.name in mapping:
            tensor.name = mapping[tensor.name]
    for sparse in graph.sparse_initializer:
        if sparse.values.name in mapping:
            sparse.values.name = mapping[sparse.values.name]
    for inner in graph.node:
        _rename_terminals(inner, mapping)


def substitute_attribute_refs(
    node: onnx.NodeProto, values: Mapping[str, onnx.AttributeProto]
) -> None:
    """Replace every attribute referring to a function attribute (``ref_attr_name``) in
    ``node`` and its subgraphs by the value in ``values``; a reference without a value is
    dropped (the operator's own default applies), as ONNX defines for function calls."""
    _substitute_own_refs(node, values)
    # The walk looks a node's subgraphs up after handing it out, so it descends into the
    # attributes as substituted.
    for inner in iter_nodes(node):
        _substitute_own_refs(inner, values)


def _substitute_own_refs(node: onnx.NodeProto, values: Mapping[str, onnx.AttributeProto]) -> None:
    kept: list[onnx.AttributeProto] = []
    changed = False
    for attr in node.attribute:
        if attr.ref_attr_name:
            changed = True
            value = values.get(attr.ref_attr_name)
            if value is not None:
                new = onnx.AttributeProto()
                new.CopyFrom(value)
                new.name = attr.name
                kept.append(new)
            continue
        kept.append(attr)
    if changed:
        copies = [onnx.AttributeProto() for _ in kept]
        for copy, attr in zip(copies, kept, strict=True):
            copy.CopyFrom(attr)
        del node.attribute[:]
        node.attribute.extend(copies)


# --- grouping and inlining plans ---------------------------------------------------------------
@dataclass
class GroupPlan:
    """How selected nodes of one graph become one call: ``indices`` are the grouped nodes
    (ascending), ``before`` the other nodes between them that must come before the call (they
    do not depend on the group), ``inputs``/``outputs`` the function's formal parameters."""

    indices: list[int]
    before: list[int]
    inputs: list[str]
    outputs: list[str]


def plan_group(
    nodes: Sequence[onnx.NodeProto], indices: Iterable[int], graph_outputs: Iterable[str]
) -> GroupPlan:
    """Plan grouping ``nodes[i]`` for ``i`` in ``indices`` (a topologically sorted graph).

    Inputs: names the group reads that it does not produce (outer-scope values and
    initializers included); outputs: names it produces that other nodes or the graph
    outputs read (its sink outputs when nothing outside reads any). Raises EditError when a
    node outside the group both depends on the group and feeds it (the call would be a
    cycle). One pass over the graph.
    """
    selected = sorted(set(indices))
    if not selected:
        raise EditError("select at least one node to group into a function")
    chosen = set(selected)
    first, last = selected[0], selected[-1]
    produced: dict[str, None] = {}
    downstream: dict[str, str] = {}  # name → node outside the group that depends on it
    inputs: dict[str, None] = {}
    read_outside = set(graph_outputs)
    before: list[int] = []
    for i, node in enumerate(nodes):
        reads = node_reads(node)
        if i in chosen:
            for name in reads:
                if name in downstream:
                    raise EditError(
                        f"grouping would create a cycle: node '{downstream[name]}' reads an "
                        f"output of the selection and feeds its input '{name}'; add it to the "
                        "selection or leave nodes out"
                    )
                if name not in produced:
                    inputs.setdefault(name)
            produced.update(dict.fromkeys(o for o in node.output if o))
            continue
        read_outside.update(reads)
        if any(r in produced or r in downstream for r in reads):
            downstream.update(
                dict.fromkeys((o for o in node.output if o), node.name or node.op_type)
            )
        elif first < i < last:
            before.append(i)
    outputs = [n for n in produced if n in read_outside]
    if not outputs:
        read_inside = {r for i in selected for r in node_reads(nodes[i])}
        outputs = [n for n in produced if n not in read_inside]
    if not outputs:
        raise EditError("the selected nodes produce no tensor; a function needs an output")
    return GroupPlan(selected, before, list(inputs), outputs)


def inline_nodes(
    fn: onnx.FunctionProto, call: onnx.NodeProto, taken: set[str], node_names: set[str]
) -> list[onnx.NodeProto]:
    """Copies of ``fn``'s body for the call site ``call``: formal parameters replaced by the
    call's tensors, attribute references by the call's values or the defaults, internal
    tensor and node names renamed only where they clash with ``taken``/``node_names`` (both
    updated). A formal output that is a formal input becomes an Identity node."""
    values = {a.name: a for a in fn.attribute_proto}
    declared = set(fn.attribute) | set(values)
    values.update({a.name: a for a in call.attribute if a.name in declared})
    missing = [n for n in fn.attribute if n not in values]
    if missing:
        raise EditError(
            f"node '{call.name or call.op_type}' does not set the required attribute "
            f"'{missing[0]}' of {fn.domain}:{fn.name}; set it before inlining"
        )
    mapping = {f: (call.input[i] if i < len(call.input) else "") for i, f in enumerate(fn.input)}
    produced = {o for node in fn.node for o in node.output if o}
    passthrough: list[tuple[str, str]] = []
    for i, formal in enumerate(fn.output):
        actual = call.output[i] if i < len(call.output) else ""
        if not actual:
            actual = unique_name(formal, taken)
            taken.add(actual)
        if formal in mapping or formal not in produced:
            passthrough.append((mapping.get(formal, formal), actual))
        else:
            mapping[formal] = actual
    for node in fn.node:
        for name in defined_names(node):
            if name in mapping:
                continue
            if name in taken:
                mapping[name] = unique_name(name, taken)
            taken.add(mapping.get(name, name))
    out: list[onnx.NodeProto] = []
    for node in fn.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        substitute_attribute_refs(copy, values)
        rename_tensors(copy, mapping)
        if copy.name and copy.name in node_names:
            copy.name = unique_name(copy.name, node_names)
        node_names.add(copy.name)
        out.append(copy)
    for source, target in passthrough:
        name = unique_name(f"{fn.name}_identity", node_names)
        node_names.add(name)
        out.append(helper.make_node("Identity", [source], [target], name=name))
    return out
