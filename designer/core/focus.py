"""Focus on one group of a scope: the view graph of that group alone. Its nodes keep their
own terminals and the links between them; a value read from outside the group becomes one
input stub (a :class:`NodeKind.INPUT` pseudo node named by the value) and a value read
outside or a graph output becomes one output stub (:class:`NodeKind.OUTPUT`). Stub keys are
negative and never document keys (nor group-box keys, see :func:`designer.core.collapse.group_key`).

:func:`crumbs` gives the path a breadcrumb bar shows (``model › layers.3 › self_attn``).
Qt-free; O(nodes + edges) of the graph.
"""

from __future__ import annotations

import zlib

from designer.core.hierarchy import Group, Hierarchy
from designer.core.viewgraph import (
    NodeKind,
    Terminal,
    TerminalState,
    ViewEdge,
    ViewGraph,
    ViewNode,
)

#: Stub keys lie below every group-box key (those are ``-1 - crc32``, at least ``-2**32``).
_STUB_BASE = -(2**33)

#: The label of the first crumb: the whole graph.
TOP = "model"


def stub_key(side: str, tensor: str) -> int:
    """The (negative, stable) view key of a border stub: ``side`` is "in" or "out"."""
    return _STUB_BASE - zlib.crc32(f"{side}:{tensor}".encode())


def is_stub_key(key: int) -> bool:
    """True for keys :func:`stub_key` hands out."""
    return key <= _STUB_BASE


def focus_graph(graph: ViewGraph, hierarchy: Hierarchy, group_id: str) -> ViewGraph:
    """``graph`` cut down to the nodes of group ``group_id`` (its whole subtree) with one
    stub per value crossing its border; ``graph`` itself is not changed. KeyError when the
    hierarchy has no such group."""
    group = hierarchy.by_id[group_id]
    inside = set(group.keys())
    nodes = [n for n in graph.nodes if n.kind is NodeKind.OP and n.key in inside]
    kept = {n.key for n in nodes}
    inputs: dict[str, ViewNode] = {}
    outputs: dict[str, ViewNode] = {}
    edges: list[ViewEdge] = []
    linked = TerminalState.LINKED
    for edge in graph.edges:
        source_in, target_in = edge.source in kept, edge.target in kept
        if source_in and target_in:
            edges.append(edge)
        elif target_in:  # read inside, made outside: an input stub feeds every reader
            stub = inputs.get(edge.tensor)
            if stub is None:
                key = stub_key("in", edge.tensor)
                terminal = Terminal(0, edge.tensor, edge.tensor, linked)
                stub = inputs[edge.tensor] = ViewNode(
                    key, NodeKind.INPUT, edge.tensor, "Input", outputs=[terminal]
                )
            edges.append(ViewEdge(stub.key, 0, edge.target, edge.target_index, edge.tensor))
        elif source_in and edge.tensor not in outputs:  # made inside, read outside
            key = stub_key("out", edge.tensor)
            terminal = Terminal(0, edge.tensor, edge.tensor, linked)
            outputs[edge.tensor] = ViewNode(
                key, NodeKind.OUTPUT, edge.tensor, "Output", inputs=[terminal]
            )
            edges.append(ViewEdge(edge.source, edge.source_index, key, 0, edge.tensor))
    return ViewGraph(graph.scope, [*inputs.values(), *nodes, *outputs.values()], edges)


def ancestors(hierarchy: Hierarchy, group_id: str) -> list[Group]:
    """The groups from the top level down to ``group_id`` (inclusive); empty when there is
    no such group."""
    group = hierarchy.by_id.get(group_id)
    out: list[Group] = []
    while group is not None and group.path:
        out.append(group)
        group = group.parent
    out.reverse()
    return out


def crumbs(hierarchy: Hierarchy, group_id: str | None) -> list[tuple[str, str | None]]:
    """(label, group id) of each crumb: first :data:`TOP` (id None: the whole graph), then
    every group from the top level down to ``group_id``."""
    out: list[tuple[str, str | None]] = [(TOP, None)]
    if group_id is not None:
        out.extend((g.name, g.id) for g in ancestors(hierarchy, group_id))
    return out
