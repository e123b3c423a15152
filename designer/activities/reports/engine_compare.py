"""Compare two or more engines (e.g. FP32 vs FP16 vs QAT of one model): computations.

- summary: latency and its change against the first engine (ms and %), layers-sum, layer
  count (all layers, NoOp copies included, as ``engine info``/``report`` and the precision
  mix count them), precision mix per engine;
- per-layer-type latency and counts with deltas against the first engine (the baseline);
- layers matched through their ONNX node names: engine layers that share an ONNX node are one
  group (fusion differs between engines, so a group may hold several layers per engine);
- chart data (series per engine) for the GUI.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from designer.activities.reports.engine_bundle import EngineBundle
from designer.activities.reports.engine_report import EngineReport, build_report
from designer.activities.reports.table import Cell, Column, Table
from designer.activities.reports.trt_engine import EngineLayer

__all__ = ["EngineComparison", "MatchGroup", "compare_engines", "comparison_tables"]


@dataclass(frozen=True)
class MatchGroup:
    """ONNX nodes and, per engine (same order as the comparison), the layers built from them
    and their summed latency (ms; None without a profile)."""

    onnx_nodes: tuple[str, ...]
    layers: tuple[tuple[str, ...], ...]
    latency_ms: tuple[float | None, ...]
    precision: tuple[str | None, ...]


@dataclass
class EngineComparison:
    names: list[str]
    reports: list[EngineReport]
    groups: list[MatchGroup]

    @property
    def baseline(self) -> EngineReport:
        return self.reports[0]

    def latency(self, i: int) -> float | None:
        r = self.reports[i]
        return r.engine_latency_ms if r.engine_latency_ms is not None else r.layers_sum_ms

    def type_latency(self) -> dict[str, list[float | None]]:
        """Layer type → latency per engine (ms; None = no profile; 0 = type absent)."""
        kinds: list[str] = []
        for r in self.reports:
            for s in r.by_type:
                if s.key not in kinds:
                    kinds.append(s.key)
        out: dict[str, list[float | None]] = {}
        for kind in kinds:
            row: list[float | None] = []
            for r in self.reports:
                share = next((s for s in r.by_type if s.key == kind), None)
                row.append(
                    None if not r.has_profile else (share.latency_ms or 0.0) if share else 0.0
                )
            out[kind] = row
        return out

    def type_counts(self) -> dict[str, list[int]]:
        return {
            kind: [next((s.count for s in r.by_type if s.key == kind), 0) for r in self.reports]
            for kind in self.type_latency()
        }

    def precision_mix(self) -> dict[str, list[int]]:
        """Precision → layer count per engine."""
        keys: list[str] = []
        for r in self.reports:
            keys.extend(s.key for s in r.by_precision if s.key not in keys)
        return {
            k: [next((s.count for s in r.by_precision if s.key == k), 0) for r in self.reports]
            for k in keys
        }

    def chart_data(self) -> dict[str, object]:
        """Series for charts: engines, latency, per-type latency and precision mix."""
        return {
            "engines": self.names,
            "latency_ms": [self.latency(i) for i in range(len(self.reports))],
            "layers_sum_ms": [r.layers_sum_ms for r in self.reports],
            "type_latency_ms": self.type_latency(),
            "precision_layers": self.precision_mix(),
        }


def _groups(reports: Sequence[EngineReport]) -> list[MatchGroup]:
    """Union-find over ONNX node names: layers sharing one node fall in one group."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in reports:
        for layer in r.bundle.graph.layers:
            nodes = layer.onnx_nodes
            for node in nodes[1:]:
                parent[find(node)] = find(nodes[0])
            if nodes:
                find(nodes[0])
    members: dict[str, list[list[EngineLayer]]] = defaultdict(lambda: [[] for _ in reports])
    for i, r in enumerate(reports):
        for layer in r.bundle.graph.layers:
            if layer.onnx_nodes and layer.kind != "NoOp":
                members[find(layer.onnx_nodes[0])][i].append(layer)
    nodes_of: dict[str, list[str]] = defaultdict(list)
    for node in parent:
        nodes_of[find(node)].append(node)
    out: list[MatchGroup] = []
    for root, per_engine in members.items():
        if sum(1 for layers in per_engine if layers) < 2:
            continue  # present in one engine only: nothing to compare
        lat: list[float | None] = []
        prec: list[str | None] = []
        for i, layers in enumerate(per_engine):
            b = reports[i].bundle
            lat.append(
                None
                if b.profile is None or not layers
                else sum(b.latency_of(x.name) or 0.0 for x in layers)
            )
            precisions = {x.precision for x in layers if x.precision}
            prec.append("/".join(sorted(precisions)) if precisions else None)
        out.append(
            MatchGroup(
                tuple(sorted(nodes_of[root])),
                tuple(tuple(x.name for x in layers) for layers in per_engine),
                tuple(lat),
                tuple(prec),
            )
        )
    first = {layer.name: layer.index for layer in reports[0].bundle.graph.layers}
    out.sort(key=lambda g: min((first.get(n, 1 << 30) for n in g.layers[0]), default=1 << 30))
    return out


def compare_engines(bundles: Sequence[EngineBundle]) -> EngineComparison:
    """Compare ``bundles`` (the first is the baseline); needs at least two."""
    if len(bundles) < 2:
        raise ValueError("compare needs at least two engines")
    names = [b.name for b in bundles]
    # Same base name (fp32/resnet.onnx.engine vs fp16/resnet.onnx.engine): add the folder.
    if len(set(names)) < len(names):
        names = [
            f"{b.graph.source.parent.name}/{b.name}" if b.graph.source else b.name for b in bundles
        ]
    reports = [build_report(b) for b in bundles]
    return EngineComparison(names, reports, _groups(reports))


def _delta(value: float | None, base: float | None) -> tuple[float | None, float | None]:
    if value is None or base is None:
        return None, None
    return value - base, (100.0 * (value - base) / base if base else None)


def comparison_tables(cmp: EngineComparison) -> list[Table]:
    """summary, layer_types, matched_layers (one column set per engine)."""
    base_lat = cmp.latency(0)
    summary_rows: list[tuple[Cell, ...]] = []
    for i, r in enumerate(cmp.reports):
        lat = cmp.latency(i)
        d, dp = _delta(lat, base_lat)
        mix = ", ".join(f"{s.key} {s.count}" for s in r.by_precision)
        perf = r.bundle.performance
        summary_rows.append(
            (
                cmp.names[i],
                lat,
                d,
                dp,
                r.layers_sum_ms,
                len(r.bundle.graph.layers),  # as engine info/report and the precision mix
                len(r.reformats),
                mix,
                perf.throughput_qps if perf else None,
                r.bundle.device.name if r.bundle.device else None,
            )
        )
    summary = Table(
        "summary",
        "Engines",
        (
            Column("engine", "Engine"),
            Column("latency_ms", "Latency", "float", "ms"),
            Column("delta_ms", "Δ vs first", "float", "ms"),
            Column("delta_percent", "Δ vs first, relative", "percent", "%"),
            Column("layers_sum_ms", "Layer sum", "float", "ms"),
            Column("layers", "Layers (incl. NoOp)", "int"),
            Column("reformats", "Reformats", "int"),
            Column("precision_mix", "Precision mix"),
            Column("throughput_qps", "Throughput", "float", "qps"),
            Column("device", "Device"),
        ),
        summary_rows,
    )

    type_cols = [Column("type", "Type")]
    for i, name in enumerate(cmp.names):
        type_cols.append(Column(f"count_{i}", f"{name} layers", "int"))
        type_cols.append(Column(f"latency_ms_{i}", f"{name}", "float", "ms"))
        if i:
            type_cols.append(Column(f"delta_ms_{i}", f"Δ {name}", "float", "ms"))
    counts = cmp.type_counts()
    type_rows: list[tuple[Cell, ...]] = []
    for kind, lats in cmp.type_latency().items():
        row: list[Cell] = [kind]
        for i, lat in enumerate(lats):
            row += [counts[kind][i], lat]
            if i:
                row.append(_delta(lat, lats[0])[0])
        type_rows.append(tuple(row))
    types = Table("layer_types", "Latency by layer type", tuple(type_cols), type_rows)

    match_cols = [Column("onnx_nodes", "ONNX nodes")]
    for i, name in enumerate(cmp.names):
        match_cols += [
            Column(f"layers_{i}", f"{name} layers"),
            Column(f"precision_{i}", f"{name} precision"),
            Column(f"latency_ms_{i}", f"{name}", "float", "ms"),
        ]
        if i:
            match_cols.append(Column(f"delta_ms_{i}", f"Δ {name}", "float", "ms"))
    match_rows: list[tuple[Cell, ...]] = []
    for g in cmp.groups:
        row = [" ".join(g.onnx_nodes)]
        for i in range(len(cmp.names)):
            row += [" | ".join(g.layers[i]), g.precision[i], g.latency_ms[i]]
            if i:
                row.append(_delta(g.latency_ms[i], g.latency_ms[0])[0] if g.layers[i] else None)
        match_rows.append(tuple(row))
    matched = Table("matched_layers", "Layers matched by ONNX node", tuple(match_cols), match_rows)
    return [summary, types, matched]
