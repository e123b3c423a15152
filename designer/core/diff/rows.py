"""The rows of a diff's summary table, with the main-graph nodes each row concerns on
either side (what the Compare view selects and centres on). Plain data, no Qt."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

import onnx

from designer.core.diff.records import FieldChange, ModelDiff
from designer.core.diff.text import count_text, tensor_change_text


@dataclass(frozen=True)
class ChangeRow:
    """``kind``: added / removed / changed; ``item``: node, initializer, input, output,
    opset, metadata, function. ``a_nodes``/``b_nodes``: main-graph node indices to select;
    ``a_near``/``b_near``: where to centre a side the item does not exist on (the nearest
    matched node), or None."""

    kind: str
    item: str
    a: str
    b: str
    details: str
    a_nodes: tuple[int, ...] = ()
    b_nodes: tuple[int, ...] = ()
    a_near: int | None = None
    b_near: int | None = None


def _field_text(c: FieldChange) -> str:
    if c.before is None:
        return f"{c.field} added: {c.after}"
    if c.after is None:
        return f"{c.field} removed: {c.before}"
    return f"{c.field}: {c.before} → {c.after}"


class _Near:
    """Where to centre the side a node does not exist on: the counterpart of a matched
    graph neighbour (a producer of its inputs, else a reader of its outputs), else of the
    matched node nearest in the node list."""

    def __init__(self, matches: tuple[tuple[int, int], ...], a: _Graph, b: _Graph) -> None:
        self.a_to_b = dict(matches)
        self.b_to_a = {j: i for i, j in matches}
        self.a_sorted = sorted(matches)
        self.b_sorted = sorted((j, i) for i, j in matches)
        self.a, self.b = a, b

    @staticmethod
    def _nearest(table: list[tuple[int, int]], index: int) -> int | None:
        if not table:
            return None
        k = bisect_left(table, (index, -1))
        options = [table[m] for m in (k - 1, k) if 0 <= m < len(table)]
        return min(options, key=lambda p: abs(p[0] - index))[1]

    @staticmethod
    def _neighbour(graph: _Graph, index: int, matched: dict[int, int]) -> int | None:
        for name in graph.inputs[index]:
            k = graph.producers.get(name)
            if k is not None and k in matched:
                return matched[k]
        for name in graph.outputs[index]:
            for k in graph.readers.get(name, ()):
                if k in matched:
                    return matched[k]
        return None

    def in_b(self, a_index: int) -> int | None:
        got = self._neighbour(self.a, a_index, self.a_to_b)
        return got if got is not None else self._nearest(self.a_sorted, a_index)

    def in_a(self, b_index: int) -> int | None:
        got = self._neighbour(self.b, b_index, self.b_to_a)
        return got if got is not None else self._nearest(self.b_sorted, b_index)


class _Graph:
    """Each node's inputs and outputs read once from the protobuf (reading repeated fields
    is the cost here), who reads each tensor and who writes it."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self.inputs = [list(n.input) for n in graph.node]
        self.outputs = [list(n.output) for n in graph.node]
        self.readers: dict[str, list[int]] = {}
        for i, names in enumerate(self.inputs):
            for name in names:
                if name:
                    self.readers.setdefault(name, []).append(i)
        self.producers = {name: i for i, names in enumerate(self.outputs) for name in names if name}


def change_rows(diff: ModelDiff, a: onnx.GraphProto, b: onnx.GraphProto) -> list[ChangeRow]:
    """One row per difference of the main graph (subgraph and function changes are folded
    into the row of their node or function), then opsets, metadata and functions."""
    g = diff.graph
    ga, gb = _Graph(a), _Graph(b)
    near = _Near(g.matches, ga, gb)
    rows: list[ChangeRow] = []
    for n in g.nodes_removed:
        rows.append(
            ChangeRow(
                "removed", "node", n.label, "", n.op_type, (n.index,), (), None, near.in_b(n.index)
            )
        )
    for n in g.nodes_added:
        rows.append(
            ChangeRow(
                "added", "node", "", n.label, n.op_type, (), (n.index,), near.in_a(n.index), None
            )
        )
    for c in g.nodes_changed:
        parts = [_field_text(f) for f in c.fields]
        parts.extend(f"subgraph {w}: {count_text(s)}" for w, s in c.subgraphs)
        rows.append(
            ChangeRow(
                "changed",
                "node",
                c.before.label,
                c.after.label,
                "; ".join(parts),
                (c.before.index,),
                (c.after.index,),
            )
        )
    ra, rb = ga.readers, gb.readers
    for t in g.initializers_removed:
        rows.append(
            ChangeRow(
                "removed",
                "initializer",
                t.name,
                "",
                f"{t.dtype}{list(t.shape)}",
                tuple(ra.get(t.name, ())),
            )
        )
    for t in g.initializers_added:
        rows.append(
            ChangeRow(
                "added",
                "initializer",
                "",
                t.name,
                f"{t.dtype}{list(t.shape)}",
                (),
                tuple(rb.get(t.name, ())),
            )
        )
    for tc in g.initializers_changed:
        rows.append(
            ChangeRow(
                "changed",
                "initializer",
                tc.before.name,
                tc.after.name,
                tensor_change_text(tc, name=False),
                tuple(ra.get(tc.before.name, ())),
                tuple(rb.get(tc.after.name, ())),
            )
        )
    pa, pb = ga.producers, gb.producers
    for item, changes in (("input", g.inputs), ("output", g.outputs)):
        for fc in changes:
            if item == "input":
                an, bn = tuple(ra.get(fc.field, ())), tuple(rb.get(fc.field, ()))
            else:
                an = (pa[fc.field],) if fc.field in pa else ()
                bn = (pb[fc.field],) if fc.field in pb else ()
            rows.append(
                ChangeRow(
                    fc.kind,
                    item,
                    fc.field if fc.before is not None else "",
                    fc.field if fc.after is not None else "",
                    _field_text(fc),
                    an if fc.before is not None else (),
                    bn if fc.after is not None else (),
                )
            )
    for item, changes in (("opset", diff.opsets), ("metadata", diff.metadata)):
        for fc in changes:
            rows.append(ChangeRow(fc.kind, item, fc.before or "", fc.after or "", fc.field))
    for name in diff.functions_removed:
        rows.append(ChangeRow("removed", "function", name, "", "local function"))
    for name in diff.functions_added:
        rows.append(ChangeRow("added", "function", "", name, "local function"))
    for name, sub in diff.functions_changed:
        rows.append(
            ChangeRow("changed", "function", name, name, count_text(sub) or "attributes differ")
        )
    return rows
