"""Map ONNX Runtime's profiled node names back to the ONNX model's nodes.

With optimizations off, ORT profiles nodes under their ONNX names. With them on, the
optimizer renames, fuses and inserts nodes, and the profile names what actually ran:
``r1_nchwc`` (a Conv+Relu fused and laid out as NCHWc, named after its output tensor ``r1``),
``Times212/MatMulAddFusion`` (MatMul ``Times212`` fused with the Add that consumed it),
``ReorderOutput_token_5`` (a layout reorder the optimizer added). The rules below recover
what names allow and say honestly what they could not:

- ``exact``: the profiled name is an ONNX node name with the same op type;
- ``derived``: one ONNX node under another name (found through a tensor name or a suffix);
- ``fused``: several ONNX nodes (an anchor plus the chain its fusion swallowed);
- ``inserted``: nothing in the model matches (layout reorders, memcpy, casts ORT added);
- ``unmapped``: no model was given to compare with.

Cost: O(model nodes) to index, then O(1)-ish per profiled name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import onnx

__all__ = ["Mapping", "MappingKind", "ModelNode", "NodeMapper", "model_nodes"]

MappingKind = Literal["exact", "derived", "fused", "inserted", "unmapped"]

_SUFFIXES = (re.compile(r"_nchwc$"), re.compile(r"_token_\d+$"))
_MAX_CHAIN = 4


@dataclass(frozen=True)
class ModelNode:
    """What the mapper needs of one ONNX node (plain data; the GUI builds it from a Document)."""

    name: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class Mapping:
    kind: MappingKind
    onnx_nodes: tuple[str, ...]


def model_nodes(model: onnx.ModelProto) -> list[ModelNode]:
    """The main graph's nodes as :class:`ModelNode` records (O(nodes))."""
    return [ModelNode(n.name, n.op_type, tuple(n.input), tuple(n.output)) for n in model.graph.node]


class NodeMapper:
    """Answers "which ONNX nodes did this profiled node come from?" for one model."""

    def __init__(self, nodes: Iterable[ModelNode]) -> None:
        self.nodes = list(nodes)
        self.by_name = {n.name: n for n in self.nodes if n.name}
        self.producer: dict[str, ModelNode] = {}
        self.consumers: dict[str, list[ModelNode]] = {}
        for node in self.nodes:
            for out in node.outputs:
                if out:
                    self.producer[out] = node
            for inp in node.inputs:
                if inp:
                    self.consumers.setdefault(inp, []).append(node)

    def map(self, name: str, op_type: str) -> Mapping:
        """The mapping of one profiled node (``name`` without ``_kernel_time``)."""
        exact = self.by_name.get(name)
        if exact is not None and (exact.op_type == op_type or not op_type):
            return Mapping("exact", (exact.name,))
        head, _, tag = name.partition("/")
        anchor, via_tensor = self._anchor(head)
        if anchor is None:
            return Mapping("inserted", ())
        chain: list[ModelNode] = [anchor]
        if via_tensor and op_type and anchor.op_type != op_type:
            chain = self._up_to(anchor, op_type) or chain
        if tag:
            chain = chain + self._down_along(chain[-1], tag)
        names = tuple(n.name for n in chain)
        return Mapping("fused" if len(names) > 1 else "derived", names)

    def _anchor(self, head: str) -> tuple[ModelNode | None, bool]:
        candidates = [head]
        for pattern in _SUFFIXES:
            stripped = pattern.sub("", head)
            if stripped and stripped not in candidates:
                candidates.append(stripped)
        for candidate in candidates:
            if candidate in self.by_name:
                return self.by_name[candidate], False
            if candidate in self.producer:
                return self.producer[candidate], True
        return None, False

    def _up_to(self, node: ModelNode, op_type: str) -> list[ModelNode]:
        """The producer chain from ``node`` up to the first node of ``op_type`` (top first)."""
        chain = [node]
        current = node
        for _ in range(_MAX_CHAIN):
            first = next((i for i in current.inputs if i), None)
            parent = self.producer.get(first) if first else None
            if parent is None:
                return []
            chain.insert(0, parent)
            if parent.op_type == op_type:
                return chain
            current = parent
        return []

    def _down_along(self, node: ModelNode, tag: str) -> list[ModelNode]:
        """Single consumers after ``node`` whose op types the fusion tag names (MatMulAdd…)."""
        added: list[ModelNode] = []
        current = node
        for _ in range(_MAX_CHAIN):
            users = [u for out in current.outputs for u in self.consumers.get(out, [])]
            if len(users) != 1 or users[0].op_type not in tag or users[0].op_type == node.op_type:
                break
            current = users[0]
            added.append(current)
        return added

    def uncovered(self, mapped: Sequence[Mapping]) -> list[ModelNode]:
        """ONNX nodes that no profiled node maps to (folded away, or never run)."""
        covered = {name for m in mapped for name in m.onnx_nodes}
        return [n for n in self.nodes if n.name not in covered]
