"""Small helpers shared by the transforms: names, scopes, uses, model copies.

Everything here reads protobuf only; costs are linear in the size of the graph (not of the
weights) unless said otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx

from designer.core.names import unique_name
from designer.core.protocopy import copy_message as copy_message  # re-exported
from designer.core.protocopy import (
    copy_without_initializers as copy_without_initializers,  # re-exported
)
from designer.core.tensor_sizes import tensor_nbytes as tensor_nbytes  # re-exported
from designer.core.walk import Container as Container  # re-exported
from designer.core.walk import iter_graphs
from designer.core.walk import subgraphs as subgraphs  # re-exported


def defined_names(proto: Container) -> set[str]:
    """Names defined by ``proto`` itself (inputs, initializers, node outputs), not nested."""
    if isinstance(proto, onnx.FunctionProto):
        names = set(proto.input)
    else:
        names = {v.name for v in proto.input}
        names.update(t.name for t in proto.initializer)
        names.update(s.values.name for s in proto.sparse_initializer)
    for node in proto.node:
        names.update(o for o in node.output if o)
    return names


def node_uses(node: onnx.NodeProto) -> set[str]:
    """Names a node reads: its inputs and the free names of its subgraphs."""
    used = {i for i in node.input if i}
    for graph in subgraphs(node):
        used |= free_names(graph)
    return used


def free_names(proto: Container) -> set[str]:
    """Names ``proto`` (or a graph nested in it) reads from an enclosing scope."""
    defined = defined_names(proto)
    used: set[str] = set()
    for node in proto.node:
        used |= node_uses(node)
    if isinstance(proto, onnx.GraphProto):
        used.update(v.name for v in proto.output)
    else:
        used.update(proto.output)
    return used - defined


def all_names(model: onnx.ModelProto) -> set[str]:
    """Every value and node name in the model, subgraphs and functions included (for making
    new names that collide with nothing)."""
    names: set[str] = set()
    for walked in iter_graphs(model):
        proto = walked.graph
        names.update(defined_names(proto))
        names.update(n.name for n in proto.node if n.name)
        for node in proto.node:
            names.update(node.input)
    return names


class Names:
    """Hands out new names that collide with no name of the model."""

    def __init__(self, taken: Iterable[str]) -> None:
        self.taken = set(taken)

    def new(self, base: str) -> str:
        name = unique_name(base, self.taken)
        self.taken.add(name)
        return name


def graph_output_names(proto: Container) -> list[str]:
    if isinstance(proto, onnx.FunctionProto):
        return list(proto.output)
    return [v.name for v in proto.output]
