"""The TensorRT profiling report (SPEC X-4) as plain tables, from F1's parsed records.

Inputs (any may be missing): the ``--exportProfile`` JSON (per-layer times), the layer JSON
(``--exportLayerInfo``: precision, tactic, ONNX nodes of each layer through ``Metadata``), the
trtexec log (performance summary, the ``--dumpProfile`` table when no profile JSON came back,
the layer dump) and the ``--exportTimes`` JSON. One measurement pass gives one mean and median
per layer; with several passes (profiles of the same engine) the per-layer min and max are
taken over the passes' means, otherwise they are empty.

Tables (``<profile>_<name>.csv/json``): ``layers`` (per-layer latency, precision, tactic, ONNX
nodes), ``layer_types``, ``precisions`` and ``summary`` (latency percentiles, throughput, GPU
compute, H2D/D2H, engine facts).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from designer.activities.reports.engine_bundle import (
    classify,
    match_profile,
    profile_companions,
    read_profile,
    timing_mismatch,
)
from designer.activities.reports.table import Cell, Column, Table
from designer.activities.reports.trt_engine import (
    EngineFormatError,
    EngineGraph,
    EngineLayer,
    load_graph,
    parse_graph,
)
from designer.activities.reports.trt_profile import (
    EngineProfile,
    EngineTiming,
    LatencyStats,
    PerformanceSummary,
    parse_profile_json,
    parse_timing_json,
    read_json,
)
from designer.activities.reports.trtexec_log import TrtexecLog, load_trtexec_log

__all__ = [
    "TrtLayerRow",
    "TrtReport",
    "load_profile_report",
    "load_run_report",
    "load_trt_report",
]

# Myelin names a kernel after an ONNX node plus ``_myl<graph>_<kernel>``.
_MYELIN = re.compile(r"^(.+?)_myl\d+_\d+$")


@dataclass(frozen=True)
class TrtLayerRow:
    """One engine layer's time (ms per inference) and what the engine says about it."""

    index: int
    name: str
    kind: str | None
    precision: str | None
    tactic: str | None
    onnx_nodes: tuple[str, ...]
    total_ms: float | None
    mean_ms: float | None
    median_ms: float | None
    min_ms: float | None
    max_ms: float | None
    percent: float


@dataclass
class TrtReport:
    """A TensorRT profile with what came with it; :meth:`tables` gives the report."""

    source: Path | None
    profiles: list[EngineProfile]
    graph: EngineGraph | None = None
    log: TrtexecLog | None = None
    timing: EngineTiming | None = None
    layers: list[TrtLayerRow] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.layers = self._rows()

    # --- rows ----------------------------------------------------------------------------
    def _engine_layer(self, name: str) -> EngineLayer | None:
        return self.graph.layer(name) if self.graph is not None else None

    def _rows(self) -> list[TrtLayerRow]:
        if not self.profiles:
            return []
        first = self.profiles[0]
        per_pass = [p.by_name() for p in self.profiles]
        total = first.sum_average_ms or 0.0
        rows = []
        for i, layer in enumerate(first.layers):
            means = [
                p[layer.name].average_ms
                for p in per_pass
                if layer.name in p and p[layer.name].average_ms is not None
            ]
            mean = statistics.fmean(means) if means else None  # type: ignore[arg-type]
            several = len(means) > 1
            eng = self._engine_layer(layer.name)
            onnx = eng.onnx_nodes if eng is not None else _names_from_profile(layer.name)
            percent = layer.percentage
            if percent is None and mean is not None and total > 0:
                percent = 100.0 * mean / total
            rows.append(
                TrtLayerRow(
                    index=i,
                    name=layer.name,
                    kind=eng.kind if eng is not None else None,
                    precision=eng.precision if eng is not None else None,
                    tactic=eng.tactic if eng is not None else None,
                    onnx_nodes=onnx,
                    total_ms=layer.time_ms,
                    mean_ms=mean,
                    median_ms=layer.median_ms,
                    min_ms=min(means) if several else None,  # type: ignore[type-var]
                    max_ms=max(means) if several else None,  # type: ignore[type-var]
                    percent=percent or 0.0,
                )
            )
        return rows

    @property
    def total_ms(self) -> float:
        """Sum of the layers' mean times (ms per inference)."""
        return sum(r.mean_ms or 0.0 for r in self.layers)

    @property
    def performance(self) -> PerformanceSummary | None:
        """trtexec's performance summary, else statistics of the timing JSON."""
        if self.log is not None and self.log.performance is not None:
            return self.log.performance
        return self.timing.summary() if self.timing is not None else None

    def onnx_node_share(self) -> dict[str, float]:
        """Percent of layer time per ONNX node name; a fused layer's share is split evenly
        over its ONNX nodes so that every one of them is coloured (canvas overlay)."""
        share: dict[str, float] = {}
        for row in self.layers:
            for name in row.onnx_nodes:
                share[name] = share.get(name, 0.0) + row.percent / len(row.onnx_nodes)
        return share

    # --- tables --------------------------------------------------------------------------
    def tables(self) -> dict[str, Table]:
        return {
            "layers": self._layer_table(),
            "layer_types": self._group_table("layer_types", "Time per layer type", "kind"),
            "precisions": self._group_table("precisions", "Time per precision", "precision"),
            "summary": self._summary_table(),
        }

    def _layer_table(self) -> Table:
        columns = (
            Column("index", "#", "int"),
            Column("name", "Layer"),
            Column("type", "Type"),
            Column("precision", "Precision"),
            Column("mean_ms", "Mean", "float", "ms"),
            Column("median_ms", "Median", "float", "ms"),
            Column("min_ms", "Min", "float", "ms"),
            Column("max_ms", "Max", "float", "ms"),
            Column("percent", "% of total", "percent", "%"),
            Column("total_ms", "Total (all runs)", "float", "ms"),
            Column("onnx_nodes", "ONNX nodes"),
            Column("tactic", "Tactic"),
        )
        rows: list[tuple[Cell, ...]] = [
            (
                r.index,
                r.name,
                r.kind,
                r.precision,
                r.mean_ms,
                r.median_ms,
                r.min_ms,
                r.max_ms,
                r.percent,
                r.total_ms,
                ", ".join(r.onnx_nodes),
                r.tactic,
            )
            for r in self.layers
        ]
        return Table("layers", "Layers", columns, rows)

    def group_shares(self, attr: str) -> list[tuple[str, int, float, float]]:
        """(value of ``attr``, layers, summed mean ms, percent of the layers' total time)
        per layer type (``attr`` "kind") or precision, largest first. The percentages come
        from the times, not from adding up trtexec's per-layer ones: those are rounded to
        0.1 (a ``--dumpProfile`` table), and their sum drifted from 100 (100.1 % for the 15
        layers of trtexec 10.16's table). Without times, trtexec's own figures are added."""
        groups: dict[str, list[TrtLayerRow]] = {}
        for row in self.layers:
            groups.setdefault(getattr(row, attr) or "not recorded", []).append(row)
        total = sum(r.mean_ms or 0.0 for r in self.layers)
        shares = []
        for key, items in groups.items():
            time = sum(r.mean_ms or 0.0 for r in items)
            percent = 100.0 * time / total if total > 0 else sum(r.percent for r in items)
            shares.append((key, len(items), time, percent))
        shares.sort(key=lambda r: -r[3])
        return shares

    def _group_table(self, name: str, title: str, attr: str) -> Table:
        columns = (
            Column(attr, "Layer type" if attr == "kind" else "Precision"),
            Column("layers", "Layers", "int"),
            Column("mean_ms", "Mean time", "float", "ms"),
            Column("percent", "% of total", "percent", "%"),
        )
        rows: list[tuple[Cell, ...]] = list(self.group_shares(attr))
        return Table(name, title, columns, rows)

    def summary_items(self) -> list[tuple[str, Cell, str]]:
        """(metric, value, unit) rows of the engine summary."""
        items: list[tuple[str, Cell, str]] = []
        log = self.log
        if log is not None:
            items.append(("TensorRT version", log.trt_version, ""))
            device = log.device
            if device is not None and device.name:
                items.append(("GPU", device.name, ""))
        perf = self.performance
        if perf is not None:
            items.append(("Throughput", perf.throughput_qps, "qps"))
            for label, stats in (
                ("Latency", perf.latency),
                ("GPU compute", perf.gpu_compute),
                ("H2D", perf.h2d),
                ("D2H", perf.d2h),
                ("Enqueue", perf.enqueue),
            ):
                items.extend(_stat_items(label, stats))
            if perf.total_gpu_compute_s is not None:
                items.append(("Total GPU compute", perf.total_gpu_compute_s, "s"))
            if perf.total_host_walltime_s is not None:
                items.append(("Total host walltime", perf.total_host_walltime_s, "s"))
        if self.profiles and self.profiles[0].count is not None:
            items.append(("Profiled iterations", self.profiles[0].count, ""))
        items.append(("Measurement passes", len(self.profiles), ""))
        items.append(("Layers", len(self.layers), ""))
        items.append(("Sum of layer means", self.total_ms, "ms"))
        if log is not None and log.engine_size_mib is not None:
            items.append(("Engine size", log.engine_size_mib, "MiB"))
        if log is not None and log.build_time_s is not None:
            items.append(("Build time", log.build_time_s, "s"))
        return items

    def _summary_table(self) -> Table:
        columns = (Column("metric", "Metric"), Column("value", "Value"), Column("unit", "Unit"))
        return Table("summary", "Engine summary", columns, list(self.summary_items()))


def _stat_items(label: str, stats: LatencyStats | None) -> list[tuple[str, Cell, str]]:
    if stats is None:
        return []
    out: list[tuple[str, Cell, str]] = []
    for key, value in stats.as_dict().items():
        if value is not None:
            out.append((f"{label} {key}", value, "ms"))
    return out


def _names_from_profile(name: str) -> tuple[str, ...]:
    """ONNX node names guessed from a profile layer name without a layer JSON entry: fused
    ``a + b``, Myelin ``node_myl0_1``; reformats and Myelin-internal kernels give nothing."""
    if name.startswith(("Reformatting ", "__my")) or name == "Total":
        return ()
    out: list[str] = []
    for part in name.split(" + "):
        part = part.strip()
        match = _MYELIN.match(part)
        part = match.group(1) if match else part
        if part and part not in out:
            out.append(part)
    return tuple(out)


def load_trt_report(
    profile: Path | None = None,
    *,
    extra_profiles: list[Path] | None = None,
    layer_info: Path | None = None,
    log: Path | None = None,
    times: Path | None = None,
) -> TrtReport:
    """Read what a TensorRT profiling run left. Without a profile JSON the log's
    ``--dumpProfile`` table is used. Raises EngineFormatError (one line) for a bad file."""
    parsed_log = load_trtexec_log(log) if log is not None and log.is_file() else None
    profiles: list[EngineProfile] = []
    for path in [p for p in [profile, *(extra_profiles or [])] if p is not None]:
        root = read_json(path, "a trtexec --exportProfile JSON")
        profiles.append(parse_profile_json(root, path))
    if not profiles and parsed_log is not None and parsed_log.profile is not None:
        profiles.append(parsed_log.profile)
    graph = None
    if layer_info is not None and layer_info.is_file():
        graph = load_graph(layer_info)
    elif parsed_log is not None:
        graph = parsed_log.graph
    timing = None
    if times is not None and times.is_file():
        timing = parse_timing_json(read_json(times, "a trtexec --exportTimes JSON"), times)
    return TrtReport(profile or log, profiles, graph, parsed_log, timing)


def load_profile_report(path: Path) -> TrtReport:
    """The report of a profile file opened on its own (File > Open Profile…): a
    ``--exportProfile`` JSON / TREx ``<engine>.profile.json`` or a trtexec log with the
    ``--dumpProfile`` table, with the layer JSON, ``--exportTimes`` JSON and trtexec log
    found beside it under its engine's name (:func:`profile_companions`). A layer JSON or
    timing of another engine (:func:`match_profile`, :func:`timing_mismatch`) is left out.
    Raises EngineFormatError (one line) when ``path`` holds no per-layer profile."""
    kind, content = classify(path)
    log: TrtexecLog | None = content if kind == "log" else None
    if kind == "profile":
        profile = parse_profile_json(content, path)
    elif log is not None and log.profile is not None:
        profile = log.profile
    else:
        profile, _ = read_profile(path)  # raises: what the file is, and what to give
    graph = log.graph if log is not None else None
    timing: EngineTiming | None = None
    for extra in profile_companions(path):
        try:
            extra_kind, extra_content = classify(extra)
            if extra_kind == "graph" and graph is None:
                found = parse_graph(extra_content, extra)
                graph = found if match_profile(found, profile).enough else None
            elif extra_kind == "timing" and timing is None:
                times = parse_timing_json(extra_content, extra)
                timing = times if timing_mismatch(profile, times) is None else None
            elif extra_kind == "log" and log is None:
                log = extra_content
        except EngineFormatError:  # a damaged file beside it: the profile still opens
            continue
    return TrtReport(path, [profile], graph, log, timing)


def load_run_report(result: Any, layer_info: Path | None = None) -> TrtReport:
    """The report of a TensorRT profiling activity's result (``ActivityResult``): its
    profile, the other measurement passes' profiles, layer JSON, log and timing JSON."""
    outputs: dict[str, Path] = result.outputs
    passes = sorted(
        (k for k in outputs if k.startswith("profile_")), key=lambda k: int(k.split("_")[1])
    )
    return load_trt_report(
        result.profile,
        extra_profiles=[outputs[k] for k in passes],
        layer_info=outputs.get("layer_info", layer_info),
        log=outputs.get("log"),
        times=outputs.get("times"),
    )
