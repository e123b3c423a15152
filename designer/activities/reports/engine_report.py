"""The engine report card (TREx's report_card, without Jupyter): computations and tables.

From an :class:`EngineBundle`: per-layer latency joined with the profile, latency and count
by layer type (shares sum to 100 %), precision per layer by count and by latency, reformat
layers and their share, the top-N layers, weights / activation memory, the engine summary
(device, TensorRT version, build options, latency percentiles, throughput) and the measured
gap between the sum of per-layer times and the engine latency (profiling overhead).

Weights are the build log's ``Total Weights Memory`` when a build log is loaded; otherwise
the sum of the weight counts the layers record, and when some layers that may hold weights
record none (Myelin kernels, a convolution without ``Weights``) that sum is said to be a
lower bound, never presented as the engine's weights. A profile cut off inside its table
(:class:`~designer.activities.reports.trtexec_log.CutProfile`) is reported first in ``notes``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from designer.activities.reports.engine_bundle import EngineBundle
from designer.activities.reports.table import Cell, Column, Table
from designer.activities.reports.trt_engine import EngineLayer
from designer.activities.reports.trt_formats import as_int, as_str, bytes_per_element, precision_of
from designer.activities.reports.trt_profile import LatencyStats
from designer.activities.reports.trtexec_log import CutProfile

__all__ = ["EngineReport", "LayerTime", "Share", "build_report", "report_tables"]

NOT_IN_GRAPH = "(profiled, not in layer JSON)"
WEIGHTS_LOG_KEY = "Total Weights Memory"  # the builder's line in a trtexec build log

#: Where ``EngineReport.weights_bytes`` comes from: the build log's total; the layer JSON,
#: every layer that may hold weights recording them; the layer JSON with some such layers
#: recording none (a lower bound); nothing recorded at all (names-only verbosity).
WeightsSource = Literal["build log", "layers", "layers (lower bound)", "not recorded"]

# Layer kinds that keep their weights in their own record (``Weights``/``Bias``, or
# ``ConvWeights``/``ConvBias`` in a fused ConvActPool); one that records none leaves the
# engine's weights unknown. Myelin kernels never record the weights they use.
_WEIGHTED_KINDS = {"Convolution", "Deconvolution", "FullyConnected", "ConvActPool", "Constant"}
_MYELIN_TYPES = {"Myelin", "gemm", "kgen"}


@dataclass(frozen=True)
class LayerTime:
    """One row of the report: an engine layer (None for a profile entry with no layer record)
    with its average time (ms) and share of the per-layer sum (%)."""

    name: str
    kind: str
    precision: str | None
    latency_ms: float | None
    percent: float | None
    is_reformat: bool
    layer: EngineLayer | None = None


@dataclass(frozen=True)
class Share:
    """A group (layer type, precision): layer count, summed latency (ms) and % of the total."""

    key: str
    count: int
    latency_ms: float | None
    percent: float | None


@dataclass
class EngineReport:
    bundle: EngineBundle
    rows: list[LayerTime]
    by_type: list[Share]
    by_precision: list[Share]
    reformats: list[LayerTime]
    layers_sum_ms: float | None  # sum of per-layer averages (None without a profile)
    engine_latency_ms: float | None  # GPU compute (else latency) median from metadata/log/timing
    weights_bytes: int  # see weights_source: the engine's total, or a lower bound
    activation_bytes: int
    notes: list[str] = field(default_factory=list)
    weights_source: WeightsSource = "layers"
    weights_in_layers: int = 0  # the sum of the weight counts the layer records give
    # Layers that may hold weights but record no counts (why the layer sum is a lower bound).
    weights_unrecorded: tuple[str, ...] = ()

    @property
    def weights_complete(self) -> bool:
        """Whether ``weights_bytes`` is the engine's weights (not a lower bound or unknown)."""
        return self.weights_source in ("build log", "layers")

    @property
    def has_profile(self) -> bool:
        return self.layers_sum_ms is not None

    @property
    def reformat_latency_ms(self) -> float | None:
        if not self.has_profile:
            return None
        return sum(r.latency_ms or 0.0 for r in self.reformats)

    @property
    def reformat_percent(self) -> float | None:
        total, part = self.layers_sum_ms, self.reformat_latency_ms
        return None if not total or part is None else 100.0 * part / total

    @property
    def gap_ms(self) -> float | None:
        """Sum of per-layer times minus the engine latency (> 0: profiling overhead)."""
        if self.layers_sum_ms is None or self.engine_latency_ms is None:
            return None
        return self.layers_sum_ms - self.engine_latency_ms

    @property
    def gap_percent(self) -> float | None:
        gap, lat = self.gap_ms, self.engine_latency_ms
        return None if gap is None or not lat else 100.0 * gap / lat

    def top(self, n: int = 10) -> list[LayerTime]:
        timed = [r for r in self.rows if r.latency_ms is not None]
        return sorted(timed, key=lambda r: r.latency_ms or 0.0, reverse=True)[:n]

    def summary(self) -> list[tuple[str, Cell, str]]:
        """(metric, value, unit) rows: the engine summary card."""
        b = self.bundle
        device = b.device
        perf = b.performance
        rows: list[tuple[str, Cell, str]] = [
            ("engine", b.name, ""),
            ("tensorrt_version", b.trt_version or f"{b.version_family} (from the JSON schema)", ""),
            ("device", device.name if device else None, ""),
            ("compute_capability", device.compute_capability if device else None, ""),
            ("precision_allowed", b.build.precision if b.build else None, ""),
            ("layers", len(b.graph.layers), ""),
            ("reformat_layers", len([r for r in self.reformats if r.layer is not None]), ""),
            *self._weights_rows(),
            ("activations_sum", self.activation_bytes, "bytes"),
        ]
        for log in b.logs:
            for key, size in log.memory_bytes.items():
                rows.append((key.lower().replace(" ", "_"), size, "bytes"))
        if b.build is not None:
            for key, option in b.build.build_options.items():
                rows.append((f"build:{key}", option, ""))
        if perf is not None:
            rows.append(("throughput", perf.throughput_qps, "qps"))
            for label, stats in (
                ("latency", perf.latency),
                ("gpu_compute", perf.gpu_compute),
                ("enqueue", perf.enqueue),
                ("h2d", perf.h2d),
                ("d2h", perf.d2h),
            ):
                rows.extend(_stat_rows(label, stats))
        if b.profile is not None:
            rows.append(("profiled_iterations", b.profile.count, ""))
        rows.append(("layers_sum", self.layers_sum_ms, "ms"))
        rows.append(("engine_latency", self.engine_latency_ms, "ms"))
        rows.append(("profiling_gap", self.gap_ms, "ms"))
        rows.append(("profiling_gap_percent", self.gap_percent, "%"))
        rows.append(("reformat_latency", self.reformat_latency_ms, "ms"))
        rows.append(("reformat_percent", self.reformat_percent, "%"))
        return rows

    def _weights_rows(self) -> list[tuple[str, Cell, str]]:
        """``weights`` only when it is the engine's; a partial layer sum under its own name."""
        source = self.weights_source
        if source == "build log":
            return [
                ("weights", self.weights_bytes, "bytes"),
                ("weights_source", f"build log ({WEIGHTS_LOG_KEY})", ""),
                ("weights_recorded_in_layers", self.weights_in_layers, "bytes"),
            ]
        if source == "layers":
            return [
                ("weights", self.weights_bytes, "bytes"),
                ("weights_source", "layer records (none missing)", ""),
            ]
        if source == "not recorded":
            return [
                ("weights", None, "bytes"),
                ("weights_source", "not recorded", ""),
            ]
        return [
            ("weights", None, "bytes"),
            ("weights_lower_bound", self.weights_bytes, "bytes"),
            (
                "weights_source",
                f"lower bound: {len(self.weights_unrecorded)} layer(s) record no weights",
                "",
            ),
        ]


def _recorded_weights(layer: EngineLayer) -> int | None:
    """Bytes of the weight/bias counts ``layer``'s record gives (``Weights``, ``Bias`` and
    prefixed ones such as ``ConvWeights``), None when it gives none."""
    total: float | None = None
    for key, value in layer.raw.items():
        if not key.endswith(("Weights", "Bias")) or not isinstance(value, Mapping):
            continue
        count = as_int(value.get("Count"))
        size = bytes_per_element(precision_of(as_str(value.get("Type"))))
        if count is not None and size is not None:
            total = (total or 0.0) + count * size
    if total is None:
        return layer.weights_bytes
    return int(total)


def _may_hold_unrecorded_weights(layer: EngineLayer) -> bool:
    """A Myelin kernel, or a layer kind that keeps weights in its record, recording none."""
    myelin = (
        layer.kind in _MYELIN_TYPES
        or layer.layer_type in _MYELIN_TYPES
        or "_myl" in layer.name
        or layer.name.startswith("__myl")
    )
    return myelin or (layer.kind in _WEIGHTED_KINDS and _recorded_weights(layer) is None)


def _log_weights(bundle: EngineBundle) -> tuple[int | None, str | None]:
    """The build logs' ``Total Weights Memory`` (None when no log records it) and, when the
    logs disagree, a note saying so (then no total is taken)."""
    found = {
        log.memory_bytes[WEIGHTS_LOG_KEY]: log
        for log in bundle.logs
        if WEIGHTS_LOG_KEY in log.memory_bytes
    }
    if len(found) == 1:
        return next(iter(found)), None
    if not found:
        return None, None
    which = ", ".join(
        f"{log.source.name if log.source else 'a log'}: {size} bytes" for size, log in found.items()
    )
    return None, (
        f"the build logs give different {WEIGHTS_LOG_KEY} ({which}): they are logs of "
        "different builds, so none is taken as this engine's weights; load only its own"
    )


def _weights(bundle: EngineBundle) -> tuple[int, WeightsSource, int, tuple[str, ...], str | None]:
    """(bytes, source, sum in the layer records, layers recording none, note)."""
    layers = bundle.graph.layers
    recorded = [_recorded_weights(layer) for layer in layers]
    in_layers = sum(r or 0 for r in recorded)
    unrecorded = tuple(layer.name for layer in layers if _may_hold_unrecorded_weights(layer))
    total, disagree = _log_weights(bundle)
    if total is not None:
        return total, "build log", in_layers, (), None
    if not bundle.graph.detailed and all(r is None for r in recorded):
        return 0, "not recorded", 0, (), disagree
    if unrecorded:
        shown = ", ".join(unrecorded[:3]) + (", …" if len(unrecorded) > 3 else "")
        note = (
            f"weights {in_layers / 2**20:,.2f} MiB is only a lower bound: {len(unrecorded)} "
            f"layer(s) that may hold weights record no weight counts ({shown}); load the "
            f"engine's build log (its '{WEIGHTS_LOG_KEY}' line) for the engine's total"
        )
        return (
            in_layers,
            "layers (lower bound)",
            in_layers,
            unrecorded,
            (f"{disagree}; {note}" if disagree else note),
        )
    return in_layers, "layers", in_layers, (), disagree


def _stat_rows(label: str, stats: LatencyStats | None) -> list[tuple[str, Cell, str]]:
    if stats is None:
        return []
    return [(f"{label}_{k}", v, "ms") for k, v in stats.as_dict().items()]


def _engine_latency(bundle: EngineBundle) -> float | None:
    perf = bundle.performance
    if perf is None:
        return None
    for stats in (perf.gpu_compute, perf.latency):
        if stats is not None and (stats.median or stats.mean):
            return stats.median or stats.mean
    return None


def _shares(groups: dict[str, list[LayerTime]], total: float | None) -> list[Share]:
    out = []
    for key, rows in groups.items():
        latency = sum(r.latency_ms or 0.0 for r in rows) if total is not None else None
        percent = 100.0 * latency / total if latency is not None and total else None
        out.append(Share(key, len(rows), latency, percent))
    out.sort(key=lambda s: (-(s.latency_ms or 0.0), -s.count, s.key))
    return out


def build_report(bundle: EngineBundle) -> EngineReport:
    """Join the layers with the profile and compute the report card. Cost: O(layers)."""
    profile = bundle.profile.by_name() if bundle.profile else {}
    total = bundle.profile.sum_average_ms if bundle.profile else None
    rows: list[LayerTime] = []
    seen: set[str] = set()
    for layer in bundle.graph.layers:
        timed = profile.get(layer.name)
        seen.add(layer.name)
        ms = timed.average_ms if timed else (0.0 if bundle.profile else None)
        rows.append(
            LayerTime(
                layer.name,
                layer.kind,
                layer.precision,
                ms,
                100.0 * ms / total if ms is not None and total else None,
                layer.is_reformat,
                layer,
            )
        )
    for name, timed in profile.items():
        if name in seen:
            continue
        is_ref = name.startswith("Reformatting CopyNode")
        ms = timed.average_ms or 0.0
        rows.append(
            LayerTime(
                name,
                "Reformat" if is_ref else NOT_IN_GRAPH,
                None,
                ms,
                100.0 * ms / total if total else None,
                is_ref,
            )
        )
    by_type: dict[str, list[LayerTime]] = defaultdict(list)
    by_prec: dict[str, list[LayerTime]] = defaultdict(list)
    for row in rows:
        by_type[row.kind].append(row)
        by_prec[row.precision or "not recorded"].append(row)
    weights, weights_source, in_layers, unrecorded, weights_note = _weights(bundle)
    activations = sum(layer.activation_bytes or 0 for layer in bundle.graph.layers)
    report = EngineReport(
        bundle=bundle,
        rows=rows,
        by_type=_shares(by_type, total),
        by_precision=_shares(by_prec, total),
        reformats=[r for r in rows if r.is_reformat],
        layers_sum_ms=total,
        engine_latency_ms=_engine_latency(bundle),
        weights_bytes=weights,
        activation_bytes=activations,
        weights_source=weights_source,
        weights_in_layers=in_layers,
        weights_unrecorded=unrecorded,
    )
    if isinstance(bundle.profile, CutProfile):  # first: every latency below depends on it
        report.notes.append(bundle.profile.problem)
    report.notes.extend(bundle.skipped)  # a damaged profile beside it: why none is shown
    if weights_note:
        report.notes.append(weights_note)
    unmatched = [r for r in rows if r.layer is None]
    if unmatched:
        report.notes.append(
            f"{len(unmatched)} profiled layers are not in the layer JSON (different build or "
            "names-only verbosity); they count in the totals under their own type"
        )
    gap = report.gap_ms
    if gap is not None and gap > 0:
        report.notes.append(
            f"per-layer times sum to {report.layers_sum_ms:.4g} ms, {gap:.4g} ms "
            f"({report.gap_percent:.1f} %) more than the engine latency "
            f"{report.engine_latency_ms:.4g} ms: profiling each layer adds synchronisation"
        )
    if not bundle.graph.detailed:
        report.notes.append(
            "the engine was built without --profilingVerbosity=detailed: only layer names "
            "are recorded (no types, precisions or tensors)"
        )
    return report


def _share_table(name: str, title: str, key_label: str, shares: list[Share]) -> Table:
    columns = (
        Column("key", key_label),
        Column("layers", "Layers", "int"),
        Column("latency_ms", "Latency", "float", "ms"),
        Column("percent", "Share", "percent", "%"),
    )
    return Table(name, title, columns, [(s.key, s.count, s.latency_ms, s.percent) for s in shares])


def _layer_rows(rows: list[LayerTime]) -> list[tuple[Cell, ...]]:
    out: list[tuple[Cell, ...]] = []
    for r in rows:
        layer = r.layer
        out.append(
            (
                layer.index if layer else None,
                r.name,
                r.kind,
                layer.layer_type if layer else None,
                r.precision,
                layer.output_precision if layer else None,
                r.latency_ms,
                r.percent,
                "yes" if r.is_reformat else "",
                layer.tactic if layer else None,
                " ".join(layer.onnx_nodes) if layer else None,
            )
        )
    return out


_LAYER_COLUMNS = (
    Column("index", "#", "int"),
    Column("name", "Layer"),
    Column("type", "Type"),
    Column("implementation", "Implementation"),
    Column("precision", "Precision"),
    Column("output_precision", "Output precision"),
    Column("latency_ms", "Latency", "float", "ms"),
    Column("percent", "Share", "percent", "%"),
    Column("reformat", "Reformat"),
    Column("tactic", "Tactic"),
    Column("onnx_nodes", "ONNX nodes"),
)


def report_tables(report: EngineReport, top_n: int = 10) -> list[Table]:
    """summary, layers, layer_types, precision, reformats, top_layers (names for files)."""
    summary = Table(
        "summary",
        "Engine summary",
        (Column("metric", "Metric"), Column("value", "Value"), Column("unit", "Unit")),
        list(report.summary()),
    )
    return [
        summary,
        Table("layers", "Layers", _LAYER_COLUMNS, _layer_rows(report.rows)),
        _share_table("layer_types", "Latency by layer type", "Type", report.by_type),
        _share_table("precision", "Precision per layer", "Precision", report.by_precision),
        Table("reformats", "Reformat layers", _LAYER_COLUMNS, _layer_rows(report.reformats)),
        Table("top_layers", f"Top {top_n} layers", _LAYER_COLUMNS, _layer_rows(report.top(top_n))),
    ]
