"""Folded ``Identity`` nodes of an initializer become aliases: their readers read the
initializer itself, so folding does not copy a tied weight (TorchScript exports read shared
embeddings and biases through Identity nodes; Polygraphy copies them)."""

from __future__ import annotations

from collections.abc import Mapping

import onnx

from designer.core.protocopy import copy_message
from designer.core.transforms.fold import FoldResult
from designer.core.transforms.graphs import graph_output_names, node_uses
from designer.core.walk import Container, nested_graphs


def identity_aliases(
    proto: Container, nodes: list[onnx.NodeProto], result: FoldResult
) -> dict[str, str]:
    """Folded Identity nodes of an initializer of ``proto``: their readers can read the
    initializer itself instead of a copy (tied weights are not duplicated). Graph outputs
    keep their own value. The aliased values are dropped from ``result.values``."""
    if not isinstance(proto, onnx.GraphProto):
        return {}
    inits = {t.name for t in proto.initializer} - {v.name for v in proto.input}
    outputs = set(graph_output_names(proto))
    aliases: dict[str, str] = {}
    for index in sorted(result.removed):
        node = nodes[index]
        if node.op_type != "Identity" or node.domain not in ("", "ai.onnx") or not node.input:
            continue
        source = aliases.get(node.input[0], node.input[0])
        out = node.output[0]
        if source in inits and out not in outputs and out in result.values:
            aliases[out] = source
            del result.values[out]
    return aliases


def renamed_inputs(node: onnx.NodeProto, aliases: Mapping[str, str]) -> onnx.NodeProto:
    """``node`` reading ``aliases[name]`` for each aliased name, in its subgraphs too."""
    if not node_uses(node) & aliases.keys():
        return node
    node = copy_message(node)
    for i, name in enumerate(node.input):
        node.input[i] = aliases.get(name, name)
    for graph in nested_graphs(node, include_root=True):
        for inner in graph.node:
            for i, name in enumerate(inner.input):
                inner.input[i] = aliases.get(name, name)
        for vi in graph.output:
            vi.name = aliases.get(vi.name, vi.name)
    return node
