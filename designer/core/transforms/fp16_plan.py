"""Planning an FP16 conversion: for every node of every scope, run it in the target type or
keep it in float32, and which element type each of its inputs must have.

The plan depends only on the original types, never on other nodes' decisions, so it is
made once per scope before anything is rewritten (:mod:`designer.core.transforms.fp16`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import onnx
from onnx import TensorProto

from designer.core.transforms.dtypes import FLOAT_TYPES
from designer.core.transforms.graphs import free_names
from designer.core.transforms.schemas import signature, tensor_type_str
from designer.core.transforms.toposort import sorted_order
from designer.core.transforms.typeinfo import (
    NON_TENSOR,
    TypeMap,
    elem_type,
    infer_scope_types,
    tensor_type,
)
from designer.core.walk import Container, subgraphs

FLOAT = TensorProto.FLOAT

#: Operators whose float32 output type is set by an attribute, and that attribute.
ATTRIBUTE_TYPED = {
    "Cast": "to",
    "EyeLike": "dtype",
    "RandomNormal": "dtype",
    "RandomUniform": "dtype",
    "RandomNormalLike": "dtype",
    "RandomUniformLike": "dtype",
    "Bernoulli": "dtype",
}
#: Operators whose output type comes from a tensor attribute.
VALUE_TYPED = frozenset({"Constant", "ConstantOfShape"})

FunctionKey = tuple[str, str, str]


@dataclass
class NodePlan:
    """``converted``: some float32 type variable runs in the target type. ``wanted[i]`` is the
    element type input i must have (None: leave as is); ``out_new[j]`` the new element type
    of output j (None: unchanged). ``reason`` says why a float node stays float32."""

    converted: bool
    wanted: list[int | None]
    out_new: list[int | None]
    reason: str = ""


@dataclass
class ScopePlan:
    types: TypeMap
    #: node indices in topological order (plans are made on the original model and
    #: applied to a copy, so nodes are addressed by index)
    order: list[int]
    nodes: list[NodePlan]
    children: dict[tuple[int, int], ScopePlan] = field(default_factory=dict)
    #: element types wanted of names read here (or in nested scopes) but defined elsewhere,
    #: or of this scope's own initializers.
    wishes: dict[str, set[int]] = field(default_factory=dict)


@dataclass
class PlanContext:
    model: onnx.ModelProto
    target: int
    block_ops: frozenset[str]
    block_nodes: frozenset[str]
    versions: dict[str, int]
    functions: dict[FunctionKey, onnx.FunctionProto]
    calls: dict[FunctionKey, list[list[onnx.TypeProto | None]]] = field(default_factory=dict)


def _float_involved(node: onnx.NodeProto, types: Mapping[str, onnx.TypeProto]) -> bool:
    return any(elem_type(types, n) == FLOAT for n in [*node.input, *node.output] if n)


def _blocked(node: onnx.NodeProto, types: TypeMap, reason: str) -> NodePlan:
    wanted: list[int | None] = []
    for name in node.input:
        t = elem_type(types, name) if name else 0
        wanted.append(t if t in FLOAT_TYPES else None)
    return NodePlan(False, wanted, [None] * len(node.output), reason)


def plan_node(node: onnx.NodeProto, types: TypeMap, ctx: PlanContext) -> NodePlan:
    """Decide how ``node`` converts (O(inputs + outputs) after a cached schema look-up)."""
    domain = "" if node.domain == "ai.onnx" else node.domain
    if (domain, node.op_type, node.overload) in ctx.functions:
        return _blocked(node, types, "local function call")
    if not _float_involved(node, types) and node.op_type not in VALUE_TYPED:
        return _blocked(node, types, "")
    if node.op_type in ctx.block_ops:
        return _blocked(node, types, f"operator {node.op_type} is on the block list")
    if node.name and node.name in ctx.block_nodes:
        return _blocked(node, types, "node is on the block list")
    if any(True for _ in subgraphs(node)):
        return _blocked(node, types, "control flow (its subgraphs are converted inside)")
    if any(a.ref_attr_name for a in node.attribute):
        return _blocked(node, types, "attribute refers to a function attribute")
    sig = signature(node.op_type, domain, ctx.versions.get(domain, 1))
    if sig is None:
        return _blocked(node, types, f"no schema for {domain or 'ai.onnx'}::{node.op_type}")
    target_str = tensor_type_str(ctx.target)
    positions: dict[str, list[tuple[str, int]]] = {}
    for i, name in enumerate(node.input):
        param = sig.input_param(i)
        if name and param and param[1]:
            positions.setdefault(param[0], []).append(("in", i))
    for j, name in enumerate(node.output):
        param = sig.output_param(j)
        if name and param and param[1]:
            positions.setdefault(param[0], []).append(("out", j))
    converted_vars: set[str] = set()
    for var, places in positions.items():
        kinds = {
            elem_type(types, node.input[i] if k == "in" else node.output[i]) for k, i in places
        }
        unknown_input = any(k == "in" and elem_type(types, node.input[i]) == 0 for k, i in places)
        kinds.discard(0)
        if unknown_input or kinds != {FLOAT} or target_str not in sig.allowed.get(var, frozenset()):
            continue
        has_input = any(k == "in" for k, _ in places)
        if (
            not has_input
            and node.op_type not in ATTRIBUTE_TYPED
            and node.op_type not in VALUE_TYPED
        ):
            continue
        converted_vars.add(var)
    if not converted_vars:
        return _blocked(node, types, "no float32 type variable can take the target type")
    wanted: list[int | None] = []
    for i, name in enumerate(node.input):
        param = sig.input_param(i)
        if name and param and param[0] in converted_vars:
            wanted.append(ctx.target)
        else:
            t = elem_type(types, name) if name else 0
            wanted.append(t if t in FLOAT_TYPES else None)
    out_new: list[int | None] = []
    for j, name in enumerate(node.output):
        param = sig.output_param(j)
        out_new.append(ctx.target if name and param and param[0] in converted_vars else None)
    return NodePlan(True, wanted, out_new)


def _wish(wishes: dict[str, set[int]], name: str, want: int | None) -> None:
    if name and want is not None:
        wishes.setdefault(name, set()).add(want)


def plan_scope(
    proto: Container,
    outer: Mapping[str, onnx.TypeProto],
    ctx: PlanContext,
    fixed_outputs: bool,
    input_types: Mapping[str, onnx.TypeProto] | None = None,
) -> ScopePlan:
    """Plan ``proto`` and (recursively) its subgraphs. Cost: one shape inference per scope."""
    types = infer_scope_types(proto, outer, ctx.model, input_types)
    order = sorted_order(proto)
    plan = ScopePlan(types, order, [])
    full = {**outer, **types}
    for index, node_index in enumerate(order):
        node = proto.node[node_index]
        node_plan = plan_node(node, full, ctx)
        plan.nodes.append(node_plan)
        for out, new_type in zip(node.output, node_plan.out_new, strict=True):
            if out and new_type is not None and elem_type(full, out) == 0:
                full[out] = types[out] = tensor_type(FLOAT)  # bound by the plan
        for name, want in zip(node.input, node_plan.wanted, strict=True):
            _wish(plan.wishes, name, want)
        domain = "" if node.domain == "ai.onnx" else node.domain
        key = (domain, node.op_type, node.overload)
        if key in ctx.functions:
            ctx.calls.setdefault(key, []).append([full.get(n) if n else None for n in node.input])
        for g_index, graph in enumerate(subgraphs(node)):
            child = plan_scope(graph, full, ctx, fixed_outputs=True)
            plan.children[(index, g_index)] = child
            for name in free_names(graph):
                for want in child.wishes.get(name, ()):
                    _wish(plan.wishes, name, want)
    if fixed_outputs:
        outputs = (
            proto.output
            if isinstance(proto, onnx.FunctionProto)
            else [v.name for v in proto.output]
        )
        for name in outputs:
            t = elem_type(full, name)
            _wish(plan.wishes, name, t if t in FLOAT_TYPES else None)
    return plan


def function_input_types(
    fn: onnx.FunctionProto, sites: list[list[onnx.TypeProto | None]]
) -> dict[str, onnx.TypeProto] | None:
    """The input types every call site agrees on; None when two sites disagree."""
    chosen: dict[str, onnx.TypeProto] = {}
    for site in sites:
        for name, tp in zip(fn.input, site, strict=False):
            if tp is None:
                continue
            if name in chosen and chosen[name] != tp:
                if chosen[name].tensor_type.elem_type != tp.tensor_type.elem_type:
                    return None
                continue
            chosen[name] = tp
    return chosen


__all__ = [
    "NON_TENSOR",
    "NodePlan",
    "PlanContext",
    "ScopePlan",
    "function_input_types",
    "plan_node",
    "plan_scope",
]
