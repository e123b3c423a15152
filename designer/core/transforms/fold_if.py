"""Flatten ``If`` nodes whose condition is a known constant: the branch taken replaces the
node in its graph (what Polygraphy's folding does with ``flatten_subgraphs``).

Names the branch defines that are also defined elsewhere in the model get fresh names;
branch outputs become the If's outputs by renaming their producer, or through an Identity
when a branch output is an outer name, a branch initializer or listed twice. Branch
initializers move to the enclosing graph (Constant nodes in a function body).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper

from designer.core.functions import rename_graph_tensors
from designer.core.transforms.fold import Const
from designer.core.transforms.graphs import Container, Names, all_names, defined_names
from designer.core.walk import graph_at, iter_graphs


@dataclass(frozen=True)
class Flattened:
    """One If replaced by its ``branch`` (``then_branch`` / ``else_branch``) of ``nodes``."""

    name: str
    branch: str
    nodes: int


def _condition(node: onnx.NodeProto, consts: Mapping[str, Const]) -> bool | None:
    const = consts.get(node.input[0]) if node.input and node.input[0] else None
    if const is None or (const.array is None and const.tensor is None):
        return None
    try:
        value = np.asarray(const.value())
    except (ValueError, TypeError, OSError):
        return None
    if value.size != 1:
        return None
    return bool(value.reshape(-1)[0])


def _definition_counts(root: onnx.ModelProto | onnx.GraphProto) -> Counter[str]:
    """How often each name is defined in ``root`` and everything nested in it."""
    counts: Counter[str] = Counter()
    for walked in iter_graphs(root):
        counts.update(defined_names(walked.graph))
    return counts


def _inline(
    proto: Container,
    node: onnx.NodeProto,
    branch: onnx.GraphProto,
    counts: Counter[str],
    names: Names,
) -> list[onnx.NodeProto]:
    """The nodes replacing ``node``; moves ``branch``'s initializers and value_info into
    ``proto``."""
    branch = onnx.GraphProto.FromString(branch.SerializeToString())
    own = _definition_counts(branch)
    rename_graph_tensors(branch, {n: names.new(n) for n in own if counts[n] > own[n]})
    produced = {o for n in branch.node for o in n.output if o}
    outs = [v.name for v in branch.output]
    repeated = {n for n, c in Counter(outs).items() if c > 1}
    mapping: dict[str, str] = {}
    extra: list[onnx.NodeProto] = []
    for target, source in zip(node.output, outs, strict=False):
        if not target:
            continue
        if source in produced and source not in repeated:
            mapping[source] = target
        else:
            extra.append(
                helper.make_node("Identity", [source], [target], name=names.new(f"{target}_id"))
            )
    rename_graph_tensors(branch, mapping)
    taken = {n.name for n in proto.node if n.name}
    for inner in branch.node:
        if inner.name and inner.name in taken:
            inner.name = names.new(inner.name)
    new_nodes: list[onnx.NodeProto] = []
    if isinstance(proto, onnx.GraphProto):
        proto.initializer.extend(branch.initializer)
        proto.value_info.extend(v for v in branch.value_info if v.name not in mapping.values())
    else:
        for t in branch.initializer:
            new_nodes.append(
                helper.make_node("Constant", [], [t.name], name=names.new(t.name), value=t)
            )
    return [*new_nodes, *branch.node, *extra]


def flatten_constant_ifs(
    proto: Container, consts: Mapping[str, Const], model: onnx.ModelProto
) -> list[Flattened]:
    """Replace every If of ``proto`` (this level only) whose condition is in ``consts`` by
    the branch it takes. Cost: one walk of the model per scope that has such an If."""
    targets: dict[int, tuple[str, onnx.GraphProto]] = {}
    for index, node in enumerate(proto.node):
        if node.op_type != "If" or node.domain not in ("", "ai.onnx"):
            continue
        cond = _condition(node, consts)
        if cond is None:
            continue
        attr = "then_branch" if cond else "else_branch"
        branch = graph_at(node, attr)
        if branch is not None and len(branch.output) >= len([o for o in node.output if o]):
            targets[index] = (attr, branch)
    if not targets:
        return []
    counts = _definition_counts(model)
    names = Names(all_names(model))
    done: list[Flattened] = []
    nodes: list[onnx.NodeProto] = []
    for index, node in enumerate(proto.node):
        if index not in targets:
            nodes.append(node)
            continue
        attr, branch = targets[index]
        inlined = _inline(proto, node, branch, counts, names)
        nodes.extend(inlined)
        done.append(Flattened(node.name or f"If#{index}", attr, len(inlined)))
    copies = [onnx.NodeProto.FromString(n.SerializeToString()) for n in nodes]
    del proto.node[:]
    proto.node.extend(copies)
    return done
