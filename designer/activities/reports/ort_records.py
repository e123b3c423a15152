"""The records an ONNX Runtime profile is parsed into (see
:mod:`designer.activities.reports.ort_profile`), shared by the parser and the tables
(:mod:`designer.activities.reports.ort_tables`) without either importing the other."""

from __future__ import annotations

from dataclasses import dataclass, field

from designer.activities.reports.node_mapping import Mapping, ModelNode


@dataclass(frozen=True)
class NodeEvent:
    """One execution of one node: start (µs since session start), duration (µs)."""

    name: str
    op_type: str
    provider: str
    start_us: int
    dur_us: int
    run: int  # index of the model_run containing it, -1 if none
    input_shapes: str
    output_shapes: str


@dataclass(frozen=True)
class IterationTime:
    index: int
    start_us: int
    dur_us: int
    warmup: bool


@dataclass(frozen=True)
class SessionSummary:
    """Times in milliseconds; iteration statistics over measured (non-warm-up) runs."""

    load_ms: float
    init_ms: float
    first_run_ms: float | None
    runs: int
    warmup_runs: int
    measured_runs: int
    mean_ms: float | None
    median_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    min_ms: float | None
    max_ms: float | None
    throughput_per_s: float | None


@dataclass(frozen=True)
class NodeStats:
    name: str
    op_type: str
    provider: str
    calls: int
    total_us: float
    mean_us: float
    median_us: float
    min_us: float
    max_us: float
    percent: float
    input_shapes: str
    output_shapes: str
    mapping: Mapping


@dataclass(frozen=True)
class OpTypeStats:
    op_type: str
    nodes: int
    calls: int
    total_us: float
    mean_us: float
    percent: float


@dataclass
class OrtProfileData:
    """Everything one profile says, as plain data (:class:`OrtProfileReport` adds its
    tables)."""

    source: str
    summary: SessionSummary
    nodes: list[NodeStats]
    op_types: list[OpTypeStats]
    iterations: list[IterationTime]
    events: list[NodeEvent] = field(repr=False)
    not_in_profile: list[ModelNode] = field(default_factory=list)

    def timeline(self, run: int | None = None) -> list[NodeEvent]:
        """The node events of one run (default: the measured run of median duration), with
        times made relative to that run's start."""
        if run is None:
            run = self.typical_run()
        if run is None:
            return []
        start = self.iterations[run].start_us
        return [
            NodeEvent(
                e.name,
                e.op_type,
                e.provider,
                e.start_us - start,
                e.dur_us,
                e.run,
                e.input_shapes,
                e.output_shapes,
            )
            for e in self.events
            if e.run == run
        ]

    def typical_run(self) -> int | None:
        """Index of the measured run whose duration is the median (None without runs)."""
        measured = [it for it in self.iterations if not it.warmup] or self.iterations
        if not measured:
            return None
        ordered = sorted(measured, key=lambda it: it.dur_us)
        return ordered[(len(ordered) - 1) // 2].index

    def onnx_node_share(self) -> dict[str, float]:
        """Percent of node time per ONNX node name, a fused node's share split evenly over
        the ONNX nodes it came from (for the canvas overlay)."""
        share: dict[str, float] = {}
        for node in self.nodes:
            names = node.mapping.onnx_nodes
            for name in names:
                share[name] = share.get(name, 0.0) + node.percent / len(names)
        return share
