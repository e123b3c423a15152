"""Topological sort of a graph's nodes (stable: keeps the given order where it is valid)."""

from __future__ import annotations

import heapq

import onnx

from designer.core.transforms.graphs import node_uses
from designer.core.transforms.log import TransformError
from designer.core.walk import Container


def sorted_nodes(proto: Container) -> list[onnx.NodeProto]:
    """The nodes of ``proto`` in a topological order (see :func:`sorted_order`)."""
    nodes = list(proto.node)
    return [nodes[i] for i in sorted_order(proto)]


def sorted_order(proto: Container) -> list[int]:
    """Indices of ``proto``'s nodes in a topological order, ties broken by position.

    A node depends on the producers of its inputs and of the names its subgraphs read from
    this scope. Raises TransformError on a cycle. Cost: O(N log N + edges).
    """
    nodes = list(proto.node)
    producer: dict[str, int] = {}
    for i, node in enumerate(nodes):
        for out in node.output:
            if out:
                producer[out] = i
    waiting = [0] * len(nodes)
    users: list[list[int]] = [[] for _ in nodes]
    for i, node in enumerate(nodes):
        deps = {producer[n] for n in node_uses(node) if n in producer}
        deps.discard(i)
        waiting[i] = len(deps)
        for d in deps:
            users[d].append(i)
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for u in users[i]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
    if len(order) != len(nodes):
        stuck = next(nodes[i] for i, w in enumerate(waiting) if w > 0)
        raise TransformError(
            f"graph '{proto.name}' has a cycle through node '{stuck.name or stuck.op_type}'"
        )
    return order


def is_sorted(proto: Container) -> bool:
    """True when every node comes after the producers of what it reads (O(N))."""
    produced_later = {o for n in proto.node for o in n.output if o}
    for node in proto.node:
        if node_uses(node) & produced_later:
            return False
        produced_later.difference_update(node.output)
    return True


def toposort_graph(proto: Container) -> bool:
    """Sort ``proto``'s nodes in place if needed; True when the order changed."""
    if is_sorted(proto):
        return False
    order = sorted_nodes(proto)
    del proto.node[:]
    proto.node.extend(order)
    return True
