"""What Sanitize Graph tells: which nodes were folded into which constant, every
initializer added or removed with its bytes, and why the size changed.

:class:`FoldTrace` follows folded values across passes: the nodes folded into each value
(transitively, so a constant made in pass 3 names the nodes of passes 1 and 2 behind it) and
the constant inputs it was computed from. :func:`report` compares the initializers of the
model before and after and writes the lines and the JSON details.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import onnx

from designer.core.tensor_sizes import tensor_nbytes
from designer.core.transforms.log import TransformLog
from designer.core.walk import iter_graphs

#: Node labels shown per folded group and unused nodes listed; the rest are counted.
SHOWN_NODES = 6
SHOWN_UNUSED = 20
#: A folded constant that is this many bytes larger than its inputs is named as a cause.
GROWTH_NOTE_BYTES = 1024


def node_label(node: onnx.NodeProto) -> str:
    return f"{node.op_type} '{node.name}'" if node.name else f"{node.op_type} (unnamed)"


def human(n: int) -> str:
    size = float(abs(n))
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            text = f"{size:,.0f} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
            return ("-" if n < 0 else "") + text
        size /= 1024
    return f"{n} bytes"


@dataclass
class FoldTrace:
    origins: dict[str, list[str]] = field(default_factory=dict)  # value: nodes folded into it
    ops: dict[str, str] = field(default_factory=dict)  # value: op type of its last node
    sources: dict[str, dict[str, int]] = field(default_factory=dict)  # value: inputs, bytes
    unused: list[str] = field(default_factory=list)  # nodes removed because nothing used them

    def folded(self, node: onnx.NodeProto, constants: dict[str, int]) -> None:
        """Record that ``node`` was folded; ``constants``: bytes of the original constants
        (initializers) of its scope, by name."""
        labels = [node_label(node)]
        sources: dict[str, int] = {}
        if node.op_type == "Constant":
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            sources[f"Constant '{node.name or node.output[0]}'"] = (
                tensor_nbytes(value) if value is not None else 0
            )
        for name in node.input:
            if not name:
                continue
            if name in self.origins:
                labels.extend(n for n in self.origins[name] if n not in labels)
                sources.update(self.sources.get(name, {}))
            elif name in constants:
                sources[name] = constants[name]
        for out in node.output:
            if out:
                self.origins[out] = labels
                self.ops[out] = node.op_type
                self.sources[out] = sources


def _initializers(model: onnx.ModelProto) -> dict[str, onnx.TensorProto]:
    found: dict[str, onnx.TensorProto] = {}
    for walked in iter_graphs(model, functions=False):
        graph = walked.graph
        if isinstance(graph, onnx.GraphProto):
            for t in graph.initializer:
                found.setdefault(t.name, t)
    return found


def _type_text(t: onnx.TensorProto) -> str:
    try:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.data_type).name
    except (KeyError, TypeError, ValueError):
        dtype = f"type{t.data_type}"
    return f"{dtype}[{', '.join(str(d) for d in t.dims)}]"


def _names(labels: Iterable[str], shown: int) -> str:
    items = list(labels)
    text = ", ".join(items[:shown])
    return text + (f", … and {len(items) - shown} more" if len(items) > shown else "")


def report(
    log: TransformLog,
    trace: FoldTrace,
    before: onnx.ModelProto,
    after: onnx.ModelProto,
    size_before: int,
    size_after: int,
) -> list[str]:
    """Write the size change and its causes and the JSON details into ``log``; return the
    lines of every initializer added (with the nodes folded into it) or removed, which the
    caller logs last (they can be many)."""
    old, new = _initializers(before), _initializers(after)
    added = [new[n] for n in new if n not in old]
    removed = [old[n] for n in old if n not in new]
    groups: list[dict[str, Any]] = [
        {"constant": t.name, "bytes": tensor_nbytes(t), "nodes": trace.origins.get(t.name, [])}
        for t in added
    ]
    plus = sum(g["bytes"] for g in groups)
    minus = sum(tensor_nbytes(t) for t in removed)
    net = size_after - size_before
    log.info(
        f"size {size_before:,} -> {size_after:,} bytes ({net:+,}): {len(added)} initializer(s) "
        f"added (+{plus:,}), {len(removed)} removed (-{minus:,}), nodes, Constant values and "
        f"value_info {net - plus + minus:+,}"
    )
    causes = []
    for t in added:
        sources = trace.sources.get(t.name, {})
        growth = tensor_nbytes(t) - sum(sources.values())
        if growth >= GROWTH_NOTE_BYTES:
            causes.append((growth, t, sources))
    for growth, t, sources in sorted(causes, key=lambda c: -c[0])[:5]:
        op = trace.ops.get(t.name, "a node")
        log.info(
            f"folded {op} produced a {human(tensor_nbytes(t))} constant '{t.name}' replacing "
            f"{len(sources)} small input(s) ({sum(sources.values()):,} bytes): "
            f"{human(growth)} more"
        )
    if trace.unused:
        log.info(
            f"removed {len(trace.unused)} unused node(s): {_names(trace.unused, SHOWN_UNUSED)}"
        )
    details: list[str] = []
    for t, group in zip(added, groups, strict=True):
        nodes = group["nodes"]
        details.append(
            f"added initializer '{t.name}' {_type_text(t)} ({group['bytes']:,} bytes) "
            f"folded from {len(nodes)} node(s): {_names(nodes, SHOWN_NODES) or '-'}"
        )
    consumed = {s for t in added for s in trace.sources.get(t.name, {})}
    for t in removed:
        why = "folded into a constant" if t.name in consumed else "no longer used"
        details.append(f"removed initializer '{t.name}' ({tensor_nbytes(t):,} bytes): {why}")
    log.details["folded_groups"] = groups
    log.details["initializers_added"] = [{"name": t.name, "bytes": tensor_nbytes(t)} for t in added]
    log.details["initializers_removed"] = [
        {"name": t.name, "bytes": tensor_nbytes(t)} for t in removed
    ]
    log.details["unused_nodes"] = list(trace.unused)
    return details
