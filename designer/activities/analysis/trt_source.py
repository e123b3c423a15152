"""TensorRT profiling output → :class:`Profile` (per-layer aggregates).

Reads a ``--exportProfile`` JSON (or TREx ``<engine>.profile.json``) or a trtexec log with
the ``--dumpProfile`` table, plus whatever lies beside it or is given in ``extra``: the layer
JSON (layer type, precision, tactic, ONNX nodes from ``Metadata``), the ``--exportTimes``
JSON (per-iteration GPU compute times), trtexec logs (version, device, layer dump).
TensorRT records per layer the total, mean and median over all profiled iterations, so the
per-layer numbers do not depend on an iteration range; the range selects the per-iteration
times of ``--exportTimes``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import onnx

from designer.activities.analysis.profile import (
    EXPECTED,
    Aggregate,
    Iteration,
    ModelMismatchError,
    NotAProfileError,
    Profile,
    ProfiledNode,
    profile_name,
)
from designer.activities.reports.engine_bundle import classify, sibling_files
from designer.activities.reports.trt_engine import EngineFormatError, EngineGraph, parse_graph
from designer.activities.reports.trt_formats import REFORMAT_NAME, names_from_layer_name
from designer.activities.reports.trt_profile import (
    EngineProfile,
    EngineTiming,
    parse_profile_json,
    parse_timing_json,
)
from designer.activities.reports.trtexec_log import TrtexecLog

__all__ = ["trt_profile"]

# Myelin names a kernel after an ONNX node plus ``_myl<graph>_<kernel>``.
_MYELIN = re.compile(r"^(.+?)_myl\d+_\d+$")


def _names(layer_name: str) -> tuple[str, ...]:
    out: list[str] = []
    for name in names_from_layer_name(layer_name):
        match = _MYELIN.match(name)
        name = match.group(1) if match else name
        if name.startswith("__my"):
            continue
        if name not in out:
            out.append(name)
    return tuple(out)


def _siblings(path: Path) -> list[Path]:
    found = list(sibling_files(path))
    stem = path.name
    for suffix in ("-exportProfile.json",):  # the trtexec samples' names
        if stem.endswith(suffix):
            base = path.with_name(stem[: -len(suffix)])
            found += [
                base.with_name(base.name + f"-{k}")
                for k in ("exportLayerInfo.json", "exportLayerInfo.log", "exportTimes.json")
            ]
    return [p for p in found if p.is_file() and p.resolve() != path.resolve()]


def trt_profile(
    path: Path, *, model: onnx.ModelProto | None = None, extra: Sequence[Path] = ()
) -> Profile:
    profile: EngineProfile | None = None
    graph: EngineGraph | None = None
    timing: EngineTiming | None = None
    logs: list[TrtexecLog] = []
    seen: set[Path] = set()
    for i, p in enumerate([path, *extra, *_siblings(path)]):
        if p.resolve() in seen:
            continue
        seen.add(p.resolve())
        try:
            kind, content = classify(p)
        except EngineFormatError as exc:
            if i == 0:
                raise NotAProfileError(f"{exc}; expected {EXPECTED}") from None
            if i <= len(extra):
                raise NotAProfileError(str(exc)) from None
            continue  # a damaged sibling is skipped
        try:
            if kind == "profile" and profile is None:
                profile = parse_profile_json(content, p)
            elif kind == "graph" and graph is None:
                graph = parse_graph(content, p)
            elif kind == "timing" and timing is None:
                timing = parse_timing_json(content, p)
            elif kind == "log":
                logs.append(content)
        except EngineFormatError as exc:
            raise NotAProfileError(str(exc)) from None
    for log in logs:
        if profile is None and log.profile is not None:
            profile = log.profile
        if graph is None and log.graph is not None:
            graph = log.graph
    if profile is None:
        raise NotAProfileError(f"{path}: no per-layer times in it; expected {EXPECTED}")
    model_names = {n.name for n in model.graph.node} if model is not None else None
    nodes: list[ProfiledNode] = []
    aggregates: dict[int, Aggregate] = {}
    calls = profile.count or (len(timing.records) if timing is not None else 0) or 1
    named = matched = 0  # layers naming ONNX nodes; those the model has
    for layer in profile.layers:
        if layer.name == "Total":
            continue
        eng = graph.layer(layer.name) if graph is not None else None
        mapping: str
        if eng is not None and eng.onnx_nodes:
            onnx_names, mapping = eng.onnx_nodes, eng.onnx_nodes_source
        else:
            onnx_names, mapping = _names(layer.name), "name"
            if not onnx_names:
                mapping = "inserted"
        if model_names is not None:
            named += bool(onnx_names)
            onnx_names = tuple(n for n in onnx_names if n in model_names)
            matched += bool(onnx_names)
        if eng is not None:
            op_type, precision = eng.kind, eng.precision
            kernels = (eng.tactic,) if eng.tactic else ()
            ins = tuple(t.dims or () for t in eng.inputs)
            outs = tuple(t.dims or () for t in eng.outputs)
            text = " ; ".join(t.label() for t in eng.inputs)
        else:
            reformat = bool(REFORMAT_NAME.match(layer.name)) or layer.name.startswith("Reformat")
            myelin = "_myl" in layer.name or layer.name.startswith("__my")
            op_type = "Reformat" if reformat else "Myelin" if myelin else "not recorded"
            precision, ins, outs, text = None, (), (), ""
            kernels = (layer.name,) if myelin else ()  # a Myelin profile entry is a kernel
        index = len(nodes)
        nodes.append(
            ProfiledNode(
                index=index,
                name=layer.name,
                op_type=op_type,
                device="TensorRT",
                precision=precision,
                onnx_nodes=onnx_names,
                mapping=mapping,
                input_shapes=ins,
                output_shapes=outs,
                kernels=kernels,
                shapes_text=text,
            )
        )
        mean = (layer.average_ms or 0.0) * 1000.0
        total = layer.time_ms * 1000.0 if layer.time_ms is not None else mean * calls
        median = layer.median_ms * 1000.0 if layer.median_ms is not None else None
        aggregates[index] = Aggregate(calls, total, mean, median)
    iterations: list[Iteration] = []
    if timing is not None:
        for k, rec in enumerate(timing.records):
            dur = rec.compute_ms if rec.compute_ms is not None else rec.latency_ms
            start = rec.start_compute_ms if rec.start_compute_ms is not None else 0.0
            iterations.append(Iteration(k, start * 1000.0, (dur or 0.0) * 1000.0))
    facts: list[tuple[str, Any, str]] = [("profiled_iterations", calls, "")]
    for log in logs:
        if log.trt_version:
            facts.append(("tensorrt_version", log.trt_version, ""))
        device = log.device
        if device is not None and device.name:
            facts.append(("gpu", device.name, ""))
        perf = log.performance
        if perf is not None:
            if perf.throughput_qps is not None:
                facts.append(("trtexec_throughput", perf.throughput_qps, "qps"))
            for label, stats in (("latency", perf.latency), ("gpu_compute", perf.gpu_compute)):
                if stats is not None:
                    for key, value in stats.as_dict().items():
                        if value is not None:
                            facts.append((f"trtexec_{label}_{key}", value, "ms"))
    if model is not None and named and not matched:
        raise ModelMismatchError(
            f"{path}: none of the {named} layers that name ONNX nodes names a node of the "
            f"model given ({model.graph.name or 'its main graph'}): pass the model this "
            "engine was built from, or no model"
        )
    notes = [
        *(problem for log in logs for problem in log.problems),  # a cut table, say
        "TensorRT records per-layer totals, means and medians over all profiled iterations; "
        "the iteration range applies to the per-iteration times (--exportTimes)",
    ]
    if model is not None and matched < named:
        notes.append(
            f"{named - matched} of the {named} layers that name ONNX nodes name none of the "
            "model's: their ONNX-node column is empty"
        )
    if graph is None:
        notes.append("no layer JSON found: layer types, precisions and tactics are unknown")
    return Profile(
        name=profile_name(path),
        source=str(path),
        kind="tensorrt",
        nodes=nodes,
        iterations=iterations,
        iteration_source="timing" if iterations else "none",
        aggregates=aggregates,
        facts=facts,
        notes=notes,
        model=model,
    )
