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
from designer.activities.reports.engine_bundle import (
    classify,
    match_profile,
    profile_companions,
    timing_mismatch,
)
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


def _own_graph(
    path: Path, profile: EngineProfile, graph: EngineGraph | None, left_out: list[str]
) -> EngineGraph | None:
    """``graph`` when it is the profiled engine's layer JSON: enough of the profile's layers
    are its layers (:func:`match_profile`, the rule that refuses another engine's profile
    in the engine view and ``engine report``). Another engine's (given with --with or found
    beside) is not combined: None, and a line in ``left_out`` (the profile's warnings)."""
    if graph is None:
        return None
    match = match_profile(graph, profile)
    if match.enough:
        return graph
    name = graph.source.name if graph.source is not None else "the layer JSON"
    example = f" (e.g. {match.missing[0]!r})" if match.missing else ""
    left_out.append(
        f"{name} describes another engine: {match.matched} of the {match.profiled} layers "
        f"of {path.name} are its layers{example}; not combined, so layer types, precisions "
        "and tactics are not recorded. Give the layer JSON of the engine that was profiled "
        "(trtexec --loadEngine=<engine> --exportLayerInfo=… --profilingVerbosity=detailed)"
    )
    return None


def _own_timing(
    path: Path, profile: EngineProfile, timing: EngineTiming | None, left_out: list[str]
) -> EngineTiming | None:
    """``timing`` unless its GPU compute times cannot be the profiled engine's
    (:func:`timing_mismatch`, a heuristic): then it is left out of the iteration times, with
    a line in ``left_out`` (the profile's warnings), given or found beside."""
    if timing is None:
        return None
    why = timing_mismatch(profile, timing)
    if why is None:
        return timing
    name = timing.source.name if timing.source is not None else "the --exportTimes JSON"
    left_out.append(
        f"{name} is not combined with {path.name}: {why}; the iteration times are not shown"
    )
    return None


def trt_profile(
    path: Path, *, model: onnx.ModelProto | None = None, extra: Sequence[Path] = ()
) -> Profile:
    profile: EngineProfile | None = None
    graph: EngineGraph | None = None
    timing: EngineTiming | None = None
    logs: list[TrtexecLog] = []
    seen: set[Path] = set()
    for i, p in enumerate([path, *extra, *profile_companions(path)]):
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
    left_out: list[str] = []
    found_graph = graph is not None
    graph = _own_graph(path, profile, graph, left_out)
    timing = _own_timing(path, profile, timing, left_out)
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
            qdq = eng.is_qdq
        else:
            # Only the name is recorded: TensorRT names the reformats it inserts
            # ("Reformatting CopyNode for …"); type, precision and tactic are not recorded
            # (a Myelin name is a layer's, not its kernel's).
            reformat = bool(REFORMAT_NAME.match(layer.name)) or layer.name.startswith("Reformat")
            op_type = "Reformat" if reformat else "not recorded"
            precision, ins, outs, text, kernels, qdq = None, (), (), "", (), False
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
                qdq=qdq,
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
    if not found_graph:
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
        warnings=left_out,  # a companion of another engine, not combined
        model=model,
    )
