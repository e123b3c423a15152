"""Matching the nodes of two graphs and comparing matched pairs.

Nodes are matched by name first (non-empty names, in order when a name repeats). The rest
(unnamed or renamed nodes) are matched by structure, in one forward pass over B's node
order and one backward pass, each O(nodes):

1. forward: same op type and domain, and inputs that are the same tensors (a tensor of B
   maps to A through the matched producers, renamed initializers and equal names) — with
   equal attributes first, then any — unless a node produces a tensor of the same name
   (that comes first); failing that, one reading the same known tensors at the same input
   positions;
2. backward: a node whose output feeds the same input of a matched consumer;
3. forward again for what the backward pass made known.

Costs: attributes are serialized once per node to compare them; tensors are compared in
:mod:`designer.core.diff.tensors`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import onnx

from designer.core.diff.records import FieldChange, GraphDiff, NodeChange, NodeInfo
from designer.core.diff.values import format_attribute
from designer.core.walk import attribute_graphs

SubgraphDiff = Callable[[onnx.GraphProto, onnx.GraphProto, str, Mapping[str, str]], GraphDiff]


@dataclass
class Side:
    """One graph's nodes and the tensor names it knows."""

    nodes: Sequence[onnx.NodeProto]
    #: names that may be renamed without the reading nodes counting as changed
    #: (initializers and graph inputs)
    sources: set[str]
    names: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        names = set(self.sources)
        for node in self.nodes:
            names.update(node.input)
            names.update(node.output)
        names.discard("")
        self.names = names


def metadata_changes(
    a: Iterable[onnx.StringStringEntryProto],
    b: Iterable[onnx.StringStringEntryProto],
    prefix: str = "metadata",
) -> list[FieldChange]:
    """Every ``metadata_props`` key whose value differs (added, removed, changed), sorted,
    as ``PREFIX KEY`` fields: node metadata holds the designer's TensorRT layer precisions,
    graph and model metadata its optimization profiles, so a change there is a real
    difference of what gets built, not noise."""
    pa = {p.key: p.value for p in a}
    pb = {p.key: p.value for p in b}
    return [
        FieldChange(f"{prefix} {key}", pa.get(key), pb.get(key))
        for key in sorted(pa.keys() | pb.keys())
        if pa.get(key) != pb.get(key)
    ]


def node_info(node: onnx.NodeProto, index: int) -> NodeInfo:
    return NodeInfo(index, node.name, node.op_type, node.domain)


def _fingerprint(node: onnx.NodeProto) -> bytes:
    return b"\0".join(a.SerializeToString(deterministic=True) for a in node.attribute)


Key = tuple[object, ...]


class Matcher:
    """Pairs the nodes of A and B (see the module docstring); ``pairs`` maps B's node index
    to A's, ``b2a`` B's tensor names to A's."""

    def __init__(self, a: Side, b: Side, outer: Mapping[str, str] | None = None) -> None:
        self.a, self.b = a, b
        self.outer = dict(outer or {})
        self.b2a: dict[str, str] = {}
        self.pairs: dict[int, int] = {}
        self.by: dict[int, str] = {}
        self.taken: set[int] = set()
        self._fp_a: list[bytes] | None = None
        self._match_names()
        self._forward()
        self._backward()
        self._forward()

    # --- tensor names --------------------------------------------------------------------
    def mapped(self, name: str) -> str | None:
        """The A name of B's tensor ``name`` ("" stays ""), or None when unknown."""
        if not name:
            return ""
        got = self.b2a.get(name)
        if got is not None:
            return got
        if name in self.a.names:
            return name
        return self.outer.get(name)

    def _pair(self, i: int, j: int, by: str) -> None:
        self.pairs[j] = i
        self.by[j] = by
        self.taken.add(i)
        na, nb = self.a.nodes[i], self.b.nodes[j]
        for x, y in zip(na.output, nb.output, strict=False):
            if x and y:
                self.b2a[y] = x
        self._learn_sources(na, nb)

    def _learn_sources(self, na: onnx.NodeProto, nb: onnx.NodeProto) -> None:
        """A source tensor (initializer, graph input) read at the same position under a name
        only A has and a name only B has is the same tensor, renamed."""
        for x, y in zip(na.input, nb.input, strict=False):
            if (
                x != y
                and y not in self.b2a
                and x in self.a.sources
                and y in self.b.sources
                and x not in self.b.names
                and y not in self.a.names
            ):
                self.b2a[y] = x

    # --- passes --------------------------------------------------------------------------
    def _match_names(self) -> None:
        by_name: dict[str, deque[int]] = {}
        for i, node in enumerate(self.a.nodes):
            if node.name:
                by_name.setdefault(node.name, deque()).append(i)
        for j, node in enumerate(self.b.nodes):
            queue = by_name.get(node.name) if node.name else None
            if queue:
                self._pair(queue.popleft(), j, "name")

    def _fingerprints_a(self) -> list[bytes]:
        if self._fp_a is None:
            self._fp_a = [_fingerprint(n) for n in self.a.nodes]
        return self._fp_a

    def _forward(self) -> None:
        free = [i for i in range(len(self.a.nodes)) if i not in self.taken]
        if not free or len(self.pairs) == len(self.b.nodes):
            return
        fps = self._fingerprints_a()
        exact: dict[Key, deque[int]] = {}
        loose: dict[Key, deque[int]] = {}
        anchor: dict[Key, list[int]] = {}
        producer: dict[str, int] = {}
        for i in free:
            node = self.a.nodes[i]
            key: Key = (node.op_type, node.domain, tuple(node.input))
            exact.setdefault((*key, fps[i]), deque()).append(i)
            loose.setdefault(key, deque()).append(i)
            for pos, name in enumerate(node.input):
                if name:
                    anchor.setdefault((node.op_type, node.domain, pos, name), []).append(i)
            for name in node.output:
                if name:
                    producer[name] = i
        for j, node in enumerate(self.b.nodes):
            if j in self.pairs:
                continue
            found = self._find(node, exact, loose, anchor, producer)
            if found is not None:
                self._pair(found, j, "structure")

    def _take(self, queue: deque[int] | None) -> int | None:
        while queue:
            i = queue.popleft()
            if i not in self.taken:
                return i
        return None

    def _find(
        self,
        node: onnx.NodeProto,
        exact: dict[Key, deque[int]],
        loose: dict[Key, deque[int]],
        anchor: dict[Key, list[int]],
        producer: dict[str, int],
    ) -> int | None:
        ins = [self.mapped(x) for x in node.input]
        known = all(x is not None for x in ins)
        i: int | None
        key: Key = (node.op_type, node.domain, tuple(ins))
        for name in node.output:
            i = producer.get(name) if name else None
            if i is not None and i not in self.taken and self._same_kind(i, node):
                return i
        if known:
            i = self._take(exact.get((*key, _fingerprint(node))))
            if i is not None:
                return i
        if known and node.input:  # a node without inputs needs equal attributes or an anchor
            i = self._take(loose.get(key))
            if i is not None:
                return i
        best: set[int] | None = None
        for pos, name in enumerate(ins):
            if name:
                found = {
                    i
                    for i in anchor.get((node.op_type, node.domain, pos, name), ())
                    if i not in self.taken and len(self.a.nodes[i].input) == len(node.input)
                }
                best = found if best is None else best & found
        return min(best) if best else None

    def _same_kind(self, i: int, node: onnx.NodeProto) -> bool:
        other = self.a.nodes[i]
        return other.op_type == node.op_type and other.domain == node.domain

    def _backward(self) -> None:
        if len(self.pairs) == len(self.b.nodes) or len(self.taken) == len(self.a.nodes):
            return
        producer: dict[str, int] = {}
        for i, node in enumerate(self.a.nodes):
            for name in node.output:
                if name:
                    producer[name] = i
        consumers: dict[str, list[tuple[int, int]]] = {}
        for j, node in enumerate(self.b.nodes):
            for pos, name in enumerate(node.input):
                if name:
                    consumers.setdefault(name, []).append((j, pos))
        for j in range(len(self.b.nodes) - 1, -1, -1):
            if j in self.pairs:
                continue
            found = self._by_consumer(self.b.nodes[j], consumers, producer)
            if found is not None:
                self._pair(found, j, "structure")

    def _by_consumer(
        self,
        node: onnx.NodeProto,
        consumers: dict[str, list[tuple[int, int]]],
        producer: dict[str, int],
    ) -> int | None:
        for name in node.output:
            for jc, pos in consumers.get(name, ()):
                ic = self.pairs.get(jc)
                if ic is None:
                    continue
                reader = self.a.nodes[ic]
                if pos >= len(reader.input):
                    continue
                i = producer.get(reader.input[pos])
                if (
                    i is not None
                    and i not in self.taken
                    and self._same_kind(i, node)
                    and len(self.a.nodes[i].output) == len(node.output)
                ):
                    return i
        return None


def compare_nodes(
    matcher: Matcher, scope: str, subgraph_diff: SubgraphDiff
) -> tuple[list[NodeChange], int]:
    """The changed pairs (in B's order) and the number of unchanged ones."""
    changes: list[NodeChange] = []
    unchanged = 0
    for j in sorted(matcher.pairs):
        i = matcher.pairs[j]
        change = _compare(matcher, i, j, scope, subgraph_diff)
        if change is None:
            unchanged += 1
        else:
            changes.append(change)
    return changes, unchanged


def _slot(values: Sequence[str], k: int) -> str | None:
    return values[k] if k < len(values) else None


def _compare(
    matcher: Matcher, i: int, j: int, scope: str, subgraph_diff: SubgraphDiff
) -> NodeChange | None:
    na, nb = matcher.a.nodes[i], matcher.b.nodes[j]
    fields: list[FieldChange] = []
    for name in ("name", "op_type", "domain"):
        x, y = getattr(na, name), getattr(nb, name)
        if x != y:
            fields.append(FieldChange(name, x, y))
    for k in range(max(len(na.input), len(nb.input))):
        x, y = _slot(na.input, k), _slot(nb.input, k)
        if x is None or y is None or matcher.mapped(y) != x:
            fields.append(FieldChange(f"input {k}", x, y))
    for k in range(max(len(na.output), len(nb.output))):
        x, y = _slot(na.output, k), _slot(nb.output, k)
        if x != y:
            fields.append(FieldChange(f"output {k}", x, y))
    label = na.name or nb.name or f"{nb.op_type} #{j}"
    subgraphs: list[tuple[str, GraphDiff]] = []
    attrs_a = {a.name: a for a in na.attribute}
    attrs_b = {a.name: a for a in nb.attribute}
    for name in sorted(attrs_a.keys() | attrs_b.keys()):
        x_attr, y_attr = attrs_a.get(name), attrs_b.get(name)
        graphs_a = _graphs(x_attr)
        graphs_b = _graphs(y_attr)
        if graphs_a and graphs_b and len(graphs_a) == len(graphs_b):
            for k, (ga, gb) in enumerate(zip(graphs_a, graphs_b, strict=True)):
                where = f"{name}[{k}]" if len(graphs_a) > 1 or x_attr.graphs else name  # type: ignore[union-attr]
                sub = subgraph_diff(ga, gb, f"{scope}/{label}.{where}", matcher.b2a)
                if not sub.identical:
                    subgraphs.append((where, sub))
                fields.extend(
                    metadata_changes(ga.metadata_props, gb.metadata_props, f"{where} metadata")
                )
            continue
        if (
            x_attr is not None
            and y_attr is not None
            and x_attr.SerializeToString(deterministic=True)
            == y_attr.SerializeToString(deterministic=True)
        ):
            continue
        fields.append(
            FieldChange(
                f"attribute {name}",
                None if x_attr is None else format_attribute(x_attr),
                None if y_attr is None else format_attribute(y_attr, x_attr),
            )
        )
    fields.extend(metadata_changes(na.metadata_props, nb.metadata_props))
    if not fields and not subgraphs:
        return None
    return NodeChange(
        node_info(na, i), node_info(nb, j), matcher.by[j], tuple(fields), tuple(subgraphs)
    )


def _graphs(attr: onnx.AttributeProto | None) -> list[onnx.GraphProto]:
    return [] if attr is None else attribute_graphs(attr)
