"""Find anything in one graph scope (Edit ▸ Find…): module scopes (the groups of
:mod:`designer.core.hierarchy`, e.g. ``layers.5/self_attn``), node names, op types, tensor
names, attribute values and initializer names, as :class:`FindHit` records that name the node key
the canvas should select to show each hit. Qt-free; one pass over the scope.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from designer.core.collapse import counted
from designer.core.document import Document
from designer.core.hierarchy import build_hierarchy
from designer.core.scope import MAIN_SCOPE, ScopeId

#: Every kind of hit, in the order results are listed.
KINDS = ("scope", "node", "op", "tensor", "initializer", "attribute")

_VALUE_CHARS = 120  # attribute values are matched and shown up to this length


@dataclass(frozen=True, slots=True)
class FindHit:
    """One match. ``key`` is the node (or graph input/output) to select to show it; None
    for an initializer nothing reads (it has no place on the canvas)."""

    kind: str  # one of KINDS
    text: str  # what matched: the group id, the name, the op type, ``attr=value``
    detail: str  # where: ``node /m/layers.0/MatMul``, ``output of node …``
    key: int | None
    keys: tuple[int, ...] = ()  # a module scope: every node in it (``key`` is the first)


@dataclass(frozen=True, slots=True)
class FindResult:
    hits: list[FindHit]
    truncated: bool  # more hits than the limit were found


def attribute_text(attr: onnx.AttributeProto) -> str:
    """``name=value`` of an attribute as Find matches it (tensors by type and shape, graphs
    by name; long lists cut)."""
    kind = attr.type
    A = onnx.AttributeProto
    if kind == A.INT:
        value = str(attr.i)
    elif kind == A.FLOAT:
        value = repr(attr.f)
    elif kind == A.STRING:
        value = attr.s.decode("utf-8", "replace")
    elif kind == A.INTS:
        value = "[" + ", ".join(str(v) for v in attr.ints[:64]) + "]"
    elif kind == A.FLOATS:
        value = "[" + ", ".join(repr(v) for v in attr.floats[:64]) + "]"
    elif kind == A.STRINGS:
        value = "[" + ", ".join(s.decode("utf-8", "replace") for s in attr.strings[:64]) + "]"
    elif kind == A.TENSOR:
        t = attr.t
        dtype = onnx.TensorProto.DataType.Name(t.data_type).lower()
        value = f"tensor {dtype}[{', '.join(str(d) for d in t.dims)}]"
    elif kind == A.GRAPH:
        value = f"graph {attr.g.name}"
    elif kind == A.GRAPHS:
        value = "graphs " + ", ".join(g.name for g in attr.graphs)
    else:
        value = "…"
    if attr.ref_attr_name:
        value = f"@{attr.ref_attr_name}"
    if len(value) > _VALUE_CHARS:
        value = value[: _VALUE_CHARS - 1] + "…"
    return f"{attr.name}={value}"


def find(
    doc: Document,
    query: str,
    scope_id: ScopeId = MAIN_SCOPE,
    *,
    kinds: tuple[str, ...] = KINDS,
    limit: int = 1000,
    match_case: bool = False,
) -> FindResult:
    """Every hit of ``query`` (a substring; case-insensitive unless ``match_case``) in
    ``scope_id``, grouped by kind in :data:`KINDS` order, each in graph order. At most
    ``limit`` hits are returned. An empty query finds nothing."""
    needle = query if match_case else query.casefold()
    if not needle:
        return FindResult([], False)
    wanted = set(kinds)

    def hit(text: str) -> bool:
        return needle in (text if match_case else text.casefold())

    scope = doc.scope(scope_id)
    out: dict[str, list[FindHit]] = {k: [] for k in KINDS}
    count = 0
    inits = set(scope.initializer_names())
    producer: dict[str, int] = {}
    first_reader: dict[str, int] = {}
    labels: dict[int, str] = {}
    for index, (key, node) in enumerate(scope.nodes()):
        label = node.name or f"{node.op_type}_{index}"
        labels[key] = label
        for name in node.output:
            if name:
                producer.setdefault(name, key)
        for name in node.input:
            if name and name not in first_reader:
                first_reader[name] = key
        if count > limit:
            continue
        if "node" in wanted and node.name and hit(node.name):
            out["node"].append(FindHit("node", node.name, f"{node.op_type} node", key))
            count += 1
        if "op" in wanted and hit(node.op_type):
            text = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
            out["op"].append(FindHit("op", text, f"node {label}", key))
            count += 1
        if "attribute" in wanted:
            for attr in node.attribute:
                text = attribute_text(attr)
                if hit(text):
                    out["attribute"].append(FindHit("attribute", text, f"node {label}", key))
                    count += 1

    if "tensor" in wanted:
        graph_inputs = [n for n in scope.input_names() if n not in inits]
        seen: set[str] = set()
        for name in [*graph_inputs, *producer, *first_reader, *scope.output_names()]:
            if name in seen or name in inits or not hit(name):
                continue
            seen.add(name)
            shown: int | None = producer.get(name)
            if shown is not None:
                detail = f"output of node {labels[shown]}"
            elif name in graph_inputs:
                shown, detail = doc.io_key(scope_id, "input", name), "graph input"
            else:
                shown = first_reader.get(name)
                detail = "read by node " + labels[shown] if shown is not None else "graph output"
                if shown is None:
                    shown = doc.io_key(scope_id, "output", name)
            out["tensor"].append(FindHit("tensor", name, detail, shown))
            count += 1
    if "initializer" in wanted:
        for name in scope.initializer_names():
            if hit(name):
                reader = first_reader.get(name)
                detail = f"read by node {labels[reader]}" if reader is not None else "not read"
                out["initializer"].append(FindHit("initializer", name, detail, reader))
                count += 1
    if "scope" in wanted:
        for group in build_hierarchy(doc, scope_id).groups():
            if hit(group.id):
                keys = group.keys()
                if keys:
                    detail = f"module scope, {counted(len(keys), 'node')}"
                    out["scope"].append(FindHit("scope", group.id, detail, keys[0], tuple(keys)))
    hits = [h for k in KINDS for h in out[k]]
    return FindResult(hits[:limit], len(hits) > limit)
