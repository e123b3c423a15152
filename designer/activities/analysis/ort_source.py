"""An ONNX Runtime profile JSON → :class:`Profile` (per-execution times).

Node events (``<node>_kernel_time``) become executions; GPU ``Kernel`` events (ORT's CUDA
profiler writes them right after the node that launched them, with the node's ``op_name``)
become kernel calls of that node. Iterations are the ``model_run`` events; with a key node
(or, when the profile has no ``model_run``, the first node that ran) an iteration starts at
each start of that node and lasts until the next one (the last until the last event ends).
DLProf cuts at the key node's *stop* and gets N+1 intervals; cutting at its start gives
exactly N whole runs when the key node is the first node of a run, which is the usual choice.

Cost: one JSON parse plus O(events log events).
"""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Any

import onnx

from designer.activities.analysis.profile import (
    EXPECTED,
    Execution,
    Iteration,
    KernelCall,
    ModelMismatchError,
    NotAProfileError,
    Profile,
    ProfiledNode,
    precision_from_type,
    profile_name,
)
from designer.activities.reports.node_mapping import NodeMapper, model_nodes
from designer.activities.reports.ort_profile import ProfileFormatError, read_profile_events

__all__ = ["ort_profile"]

_SUFFIX = "_kernel_time"


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _shapes(value: Any) -> tuple[tuple[tuple[int, ...], ...], str | None, str]:
    """(dims of each tensor, precision of the first, readable text)."""
    dims: list[tuple[int, ...]] = []
    precision: str | None = None
    parts: list[str] = []
    if isinstance(value, list):
        for item in value:
            if not isinstance(item, dict):
                continue
            for dtype, shape in item.items():
                shape_t = tuple(_int(d) for d in shape) if isinstance(shape, list) else ()
                dims.append(shape_t)
                if precision is None:
                    precision = precision_from_type(str(dtype))
                parts.append(f"{dtype}{list(shape_t)}")
    return tuple(dims), precision, "; ".join(parts)


def _key(event: dict[str, Any]) -> tuple[str, str, str]:
    args = event.get("args") if isinstance(event.get("args"), dict) else {}
    assert isinstance(args, dict)
    name = str(event.get("name", ""))[: -len(_SUFFIX)]
    return name, str(args.get("op_name", "")), str(args.get("provider", ""))


def ort_profile(
    path: Path, *, model: onnx.ModelProto | None = None, key_node: str | None = None
) -> Profile:
    try:
        events, cut_off = read_profile_events(path)
    except ProfileFormatError as exc:
        raise NotAProfileError(f"{exc}; expected {EXPECTED}") from None
    load_us = init_us = 0
    runs: list[tuple[int, int]] = []
    node_events: list[dict[str, Any]] = []
    kernel_events: list[tuple[int, dict[str, Any]]] = []  # (index of preceding node event, e)
    for event in events:
        cat, name = event.get("cat"), str(event.get("name", ""))
        if cat == "Session":
            if name.startswith("model_loading"):
                load_us += _int(event.get("dur"))
            elif name == "session_initialization":
                init_us += _int(event.get("dur"))
            elif name == "model_run":
                runs.append((_int(event.get("ts")), _int(event.get("dur"))))
        elif cat == "Node" and name.endswith(_SUFFIX):
            node_events.append(event)
        elif cat == "Kernel":
            kernel_events.append((len(node_events) - 1, event))
    if not node_events:
        what = f"{len(runs)} model_run event(s) only" if runs else "no model_run events either"
        raise NotAProfileError(
            f"{path}: no ONNX Runtime node events ({what}), so nothing to report; expected "
            f"{EXPECTED}"
        )
    mapper = NodeMapper(model_nodes(model)) if model is not None else None
    index_of: dict[tuple[str, str, str], int] = {}
    nodes: list[ProfiledNode] = []
    node_of_event: list[int] = []
    kernels_of: dict[int, list[str]] = {}
    for event in node_events:
        key = _key(event)
        i = index_of.get(key)
        if i is None:
            args = event.get("args") if isinstance(event.get("args"), dict) else {}
            assert isinstance(args, dict)
            ins, precision, in_text = _shapes(args.get("input_type_shape"))
            outs, out_precision, out_text = _shapes(args.get("output_type_shape"))
            name, op_type, provider = key
            if mapper is not None:
                found = mapper.map(name, op_type)
                onnx_names, mapping = found.onnx_nodes, found.kind
            else:
                onnx_names, mapping = (name,), "unmapped"
            i = index_of[key] = len(nodes)
            nodes.append(
                ProfiledNode(
                    index=i,
                    name=name,
                    op_type=op_type,
                    device=provider,
                    precision=precision or out_precision,
                    onnx_nodes=onnx_names,
                    mapping=mapping,
                    input_shapes=ins,
                    output_shapes=outs,
                    shapes_text=f"{in_text} -> {out_text}" if in_text or out_text else "",
                )
            )
        node_of_event.append(i)
    if mapper is not None and nodes and not any(n.onnx_nodes for n in nodes):
        raise ModelMismatchError(
            f"{path}: none of its {len(nodes)} profiled nodes is a node of the model given "
            f"({model.graph.name if model is not None else ''}): pass the profiled model, "
            "or no model"
        )
    starts: list[tuple[int, int]]
    source: str
    key_used: str | None = None
    if key_node is not None:
        key_starts = [
            _int(e.get("ts"))
            for e, i in zip(node_events, node_of_event, strict=True)
            if nodes[i].name == key_node
        ]
        if not key_starts:
            raise NotAProfileError(
                f"{path}: key node {key_node!r} is not in the profile; pick a node name "
                "from the detail report"
            )
        starts, source, key_used = _intervals(sorted(key_starts), node_events), "key_node", key_node
    elif runs:
        starts, source = sorted(runs), "runs"
    elif node_events:
        first = nodes[node_of_event[0]].name
        key_starts = [
            _int(e.get("ts"))
            for e, i in zip(node_events, node_of_event, strict=True)
            if nodes[i].name == first
        ]
        starts, source, key_used = _intervals(sorted(key_starts), node_events), "first_node", first
    else:
        starts, source = [], "none"
    iterations = [Iteration(k, float(s), float(d)) for k, (s, d) in enumerate(starts)]
    begin = [s for s, _ in starts]

    def iteration_of(ts: int) -> int:
        k = bisect.bisect_right(begin, ts) - 1
        return k if k >= 0 and ts <= starts[k][0] + starts[k][1] else -1

    executions = [
        Execution(
            i, iteration_of(_int(e.get("ts"))), float(_int(e.get("ts"))), float(_int(e.get("dur")))
        )
        for e, i in zip(node_events, node_of_event, strict=True)
    ]
    kernel_calls: list[KernelCall] = []
    for before, event in kernel_events:
        node = node_of_event[before] if before >= 0 else -1
        ts = _int(event.get("ts"))
        kname = str(event.get("name", ""))
        kernel_calls.append(
            KernelCall(kname, node, iteration_of(ts), float(ts), float(_int(event.get("dur"))))
        )
        if node >= 0 and kname not in kernels_of.setdefault(node, []):
            kernels_of[node].append(kname)
    if kernels_of:
        nodes = [
            _with_kernels(n, tuple(kernels_of.get(n.index, ()))) if n.index in kernels_of else n
            for n in nodes
        ]
    facts: list[tuple[str, Any, str]] = [
        ("model_load", load_us / 1000.0, "ms"),
        ("session_initialization", init_us / 1000.0, "ms"),
    ]
    notes = []
    if mapper is not None:
        uncovered = mapper.uncovered([_as_mapping(n) for n in nodes])
        facts.append(("onnx_nodes_not_in_profile", len(uncovered), ""))
    if not kernel_calls:
        notes.append("no GPU kernel events recorded; the kernel report lists provider kernels")
    return Profile(
        name=profile_name(path),
        source=str(path),
        kind="onnxruntime",
        nodes=nodes,
        iterations=iterations,
        iteration_source=source,  # type: ignore[arg-type]
        executions=executions,
        kernel_calls=kernel_calls,
        key_node=key_used,
        facts=facts,
        notes=notes,
        warnings=[] if cut_off is None else [cut_off],
        model=model,
    )


def _with_kernels(node: ProfiledNode, kernels: tuple[str, ...]) -> ProfiledNode:
    from dataclasses import replace

    return replace(node, kernels=kernels)


def _as_mapping(node: ProfiledNode) -> Any:
    from designer.activities.reports.node_mapping import Mapping

    return Mapping("exact", node.onnx_nodes)


def _intervals(key_starts: list[int], events: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(start, duration) per key-node start; the last lasts until the last event ends."""
    end = max(_int(e.get("ts")) + _int(e.get("dur")) for e in events)
    out = []
    for k, start in enumerate(key_starts):
        stop = key_starts[k + 1] - 1 if k + 1 < len(key_starts) else end
        out.append((start, max(stop - start, 0)))
    return out
