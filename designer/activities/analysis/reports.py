"""The E-1 reports of any profile: summary, detail, op_type, iteration, kernel, expert.

Each is a :class:`Table` written as ``<profile_name>_<report>.csv`` / ``.json``
(:func:`write_reports`). Guarantees (tested): the detail rows' ``total_us`` add up to the
summary's ``node_time_total_us``; op-type totals add up to the same; every number is over
the chosen iteration range.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from designer.activities.analysis.detectors.base import Finding
from designer.activities.analysis.profile import ProfiledNode
from designer.activities.analysis.stats import NodeTimes, ProfileStats, percentiles
from designer.activities.reports.ort_profile import percentile
from designer.activities.reports.table import Cell, Column, Table, write_tables

__all__ = ["REPORTS", "build_reports", "tensor_core_kernel", "write_reports"]

REPORTS = ("summary", "detail", "op_type", "iteration", "kernel", "expert")

# Kernel names of Tensor Core kernels (cuDNN/cuBLAS/CUTLASS/TensorRT naming), as DLProf
# decides from the kernel name. Misses custom kernels; says nothing about CPU kernels.
_TENSOR_CORE = re.compile(
    r"(h884|h1688|h16816|s884|s1688|s16816|i8816|i16832|imma|hmma|tensorop|xmma|wgmma|"
    r"tensor\d+x\d+x\d+|_tc_|bf16.*gemm|gemm.*f16)",
    re.IGNORECASE,
)


def tensor_core_kernel(name: str) -> bool:
    return bool(_TENSOR_CORE.search(name))


def _summary(stats: ProfileStats, findings: Sequence[Finding] | None) -> Table:
    p = stats.profile
    it = percentiles(stats.iteration_ms())
    rng = stats.range
    rows: list[tuple[Cell, ...]] = [
        ("profile", p.name, ""),
        ("kind", p.kind, ""),
        ("source", p.source, ""),
        ("iterations", len(p.iterations), ""),
        ("iteration_source", p.iteration_source, ""),
        ("key_node", p.key_node or "", ""),
        ("iter_start", None if rng is None else rng.start, ""),
        ("iter_stop", None if rng is None else rng.stop, ""),
        ("iterations_in_range", len(stats.iterations), ""),
    ]
    rows += [(f"iteration_{k}", v, "ms") for k, v in it.items()]
    mean = it["mean"]
    rows.append(("throughput", 1000.0 / mean if mean else None, "1/s"))
    rows += [
        ("node_time_total_us", stats.total_us, "µs"),
        ("node_time_per_iteration_us", stats.per_iteration_us, "µs"),
        ("nodes", len(stats.nodes), ""),
        ("op_types", len({t.node.op_type for t in stats.nodes}), ""),
        ("devices", ", ".join(sorted(p.devices)), ""),
        ("kernels", len(_kernel_rows(stats)), ""),
    ]
    if findings is not None:
        rows.append(("findings", len(findings), ""))
    rows += list(p.facts)
    rows += [("warning", warning, "") for warning in p.warnings]
    rows += [("note", note, "") for note in p.notes]
    columns = (Column("metric", "Metric"), Column("value", "Value"), Column("unit", "Unit"))
    return Table("summary", "Summary", columns, rows)


DETAIL_COLUMNS = (
    Column("name", "Name"),
    Column("op_type", "Op / layer type"),
    Column("device", "Provider / device"),
    Column("precision", "Precision"),
    Column("calls", "Calls", "int"),
    Column("total_us", "Total", "float", "µs"),
    Column("per_iteration_us", "Per iteration", "float", "µs"),
    Column("median_iteration_us", "Median per iteration", "float", "µs"),
    Column("mean_us", "Mean per call", "float", "µs"),
    Column("median_us", "Median per call", "float", "µs"),
    Column("p90_us", "p90 per call", "float", "µs"),
    Column("min_us", "Min", "float", "µs"),
    Column("max_us", "Max", "float", "µs"),
    Column("percent", "% of node time", "percent", "%"),
    Column("kernels", "Kernels"),
    Column("tensor_core", "Tensor Core kernel", "int"),
    Column("onnx_nodes", "ONNX nodes"),
    Column("mapping", "Mapping"),
    Column("shapes", "Shapes"),
)


def _detail_row(t: NodeTimes) -> tuple[Cell, ...]:
    n = t.node
    return (
        n.name,
        n.op_type,
        n.device,
        n.precision,
        t.calls,
        t.total_us,
        t.per_iteration_us,
        t.median_iteration_us,
        t.mean_us,
        t.median_us,
        t.p90_us,
        t.min_us,
        t.max_us,
        t.percent,
        " | ".join(n.kernels),
        int(any(tensor_core_kernel(k) for k in n.kernels)) if n.kernels else None,
        " ".join(n.onnx_nodes),
        n.mapping,
        n.shapes_text,
    )


def _detail(stats: ProfileStats) -> Table:
    return Table(
        "detail", "Per node / layer", DETAIL_COLUMNS, [_detail_row(t) for t in stats.nodes]
    )


def _op_type(stats: ProfileStats) -> Table:
    groups: dict[str, list[NodeTimes]] = {}
    for t in stats.nodes:
        groups.setdefault(t.node.op_type or "not recorded", []).append(t)
    per_iter = _per_iteration_by(stats, lambda n: n.op_type or "not recorded")
    rows: list[tuple[Cell, ...]] = []
    for op, items in groups.items():
        calls = sum(t.calls for t in items)
        total = sum(t.total_us for t in items)
        samples = sorted(per_iter.get(op, []))
        rows.append(
            (
                op,
                len(items),
                calls,
                total,
                total / stats.iteration_count,
                total / calls if calls else None,
                percentile(samples, 50) if samples else None,
                percentile(samples, 90) if samples else None,
                sum(t.percent for t in items),
            )
        )
    rows.sort(key=lambda r: -float(r[3] or 0.0))
    columns = (
        Column("op_type", "Op / layer type"),
        Column("nodes", "Nodes", "int"),
        Column("calls", "Calls", "int"),
        Column("total_us", "Total", "float", "µs"),
        Column("per_iteration_us", "Per iteration", "float", "µs"),
        Column("mean_us", "Mean per call", "float", "µs"),
        Column("median_iteration_us", "Median per iteration", "float", "µs"),
        Column("p90_iteration_us", "p90 per iteration", "float", "µs"),
        Column("percent", "% of node time", "percent", "%"),
    )
    return Table("op_type", "Per op type", columns, rows)


def _per_iteration_by(
    stats: ProfileStats, key: Callable[[ProfiledNode], str]
) -> dict[str, list[float]]:
    """Per group: the group's node time in each iteration of the range (per-execution
    profiles only; empty otherwise)."""
    p, rng = stats.profile, stats.range
    if not p.executions or rng is None:
        return {}
    sums: dict[tuple[str, int], float] = {}
    for e in p.executions:
        if e.iteration in rng:
            k = (key(p.nodes[e.node]), e.iteration)
            sums[k] = sums.get(k, 0.0) + e.dur_us
    out: dict[str, list[float]] = {}
    for (name, _it), value in sums.items():
        out.setdefault(name, []).append(value)
    return out


def _iteration(stats: ProfileStats) -> Table:
    p, rng = stats.profile, stats.range
    node_time: dict[int, float] = {}
    count: dict[int, int] = {}
    for e in p.executions:
        node_time[e.iteration] = node_time.get(e.iteration, 0.0) + e.dur_us
        count[e.iteration] = count.get(e.iteration, 0) + 1
    rows: list[tuple[Cell, ...]] = [
        (
            it.index,
            it.start_us,
            it.dur_us / 1000.0,
            int(rng is not None and it.index in rng),
            node_time.get(it.index) if p.executions else None,
            count.get(it.index) if p.executions else None,
        )
        for it in p.iterations
    ]
    columns = (
        Column("iteration", "Iteration", "int"),
        Column("start_us", "Start", "float", "µs"),
        Column("duration_ms", "Duration", "float", "ms"),
        Column("in_range", "In range", "int"),
        Column("node_time_us", "Node time", "float", "µs"),
        Column("executions", "Node executions", "int"),
    )
    return Table("iteration", "Per iteration", columns, rows)


@dataclass
class _KernelGroup:
    source: str
    nodes: set[str] = field(default_factory=set)
    ops: set[str] = field(default_factory=set)
    durations: list[float] = field(default_factory=list)
    total_us: float = 0.0
    calls: int = 0


def _kernel_rows(stats: ProfileStats) -> list[tuple[Cell, ...]]:
    """One row per kernel: GPU kernels where recorded, else TensorRT tactics, else the
    provider's kernel of each op type (``CPUExecutionProvider::Conv``)."""
    p, rng = stats.profile, stats.range
    groups: dict[str, _KernelGroup] = {}

    def group(name: str, source: str) -> _KernelGroup:
        return groups.setdefault(name, _KernelGroup(source))

    if p.kernel_calls:
        for k in p.kernel_calls:
            if rng is None or k.iteration in rng:
                g = group(k.name, "gpu kernel")
                if k.node >= 0:
                    g.nodes.add(p.nodes[k.node].name)
                    g.ops.add(p.nodes[k.node].op_type)
                g.durations.append(k.dur_us)
                g.total_us += k.dur_us
                g.calls += 1
    else:
        name_of: dict[int, str] = {}
        for t in stats.nodes:
            n = t.node
            if n.kernels:
                name, source = n.kernels[0], "tactic" if p.kind == "tensorrt" else "gpu kernel"
            elif p.kind == "tensorrt":  # no layer JSON (or no tactic in it): not guessed
                name, source = "not recorded", "not recorded"
            else:
                name, source = f"{n.device or 'unknown'}::{n.op_type}", "provider kernel"
            name_of[n.index] = name
            g = group(name, source)
            g.nodes.add(n.name)
            g.ops.add(n.op_type)
            g.total_us += t.total_us
            g.calls += t.calls
        for e in p.executions:
            if (rng is None or e.iteration in rng) and e.node in name_of:
                groups[name_of[e.node]].durations.append(e.dur_us)
    grand = sum(g.total_us for g in groups.values()) or 1.0
    rows: list[tuple[Cell, ...]] = []
    for name, g in groups.items():
        d = sorted(g.durations)
        rows.append(
            (
                name,
                g.source,
                g.calls,
                g.total_us,
                g.total_us / g.calls if g.calls else None,
                percentile(d, 50) if d else None,
                d[0] if d else None,
                d[-1] if d else None,
                100.0 * g.total_us / grand,
                None
                if g.source in ("provider kernel", "not recorded")
                else int(tensor_core_kernel(name)),
                len(g.nodes),
                " ".join(sorted(o for o in g.ops if o)),
            )
        )
    rows.sort(key=lambda r: -float(r[3] or 0.0))
    return rows


def _kernel(stats: ProfileStats) -> Table:
    columns = (
        Column("kernel", "Kernel"),
        Column("source", "Source"),
        Column("calls", "Calls", "int"),
        Column("total_us", "Total", "float", "µs"),
        Column("mean_us", "Mean", "float", "µs"),
        Column("median_us", "Median", "float", "µs"),
        Column("min_us", "Min", "float", "µs"),
        Column("max_us", "Max", "float", "µs"),
        Column("percent", "% of kernel time", "percent", "%"),
        Column("tensor_core", "Tensor Core", "int"),
        Column("nodes", "Nodes", "int"),
        Column("op_types", "Op types"),
    )
    return Table("kernel", "Per kernel / layer implementation", columns, _kernel_rows(stats))


def expert_table(findings: Sequence[Finding]) -> Table:
    columns = (
        Column("rank", "#", "int"),
        Column("detector", "Detector"),
        Column("severity", "Severity"),
        Column("problem", "Problem"),
        Column("fix", "Fix"),
        Column("expected_gain_us", "Expected gain per iteration", "float", "µs"),
        Column("expected_gain_percent", "Expected gain", "percent", "%"),
        Column("nodes", "Nodes"),
    )
    rows: list[tuple[Cell, ...]] = [
        (
            i + 1,
            f.detector,
            f.severity,
            f.problem,
            f.fix,
            f.gain_us,
            f.gain_percent,
            " ".join(f.nodes),
        )
        for i, f in enumerate(findings)
    ]
    return Table("expert", "Expert system", columns, rows)


def build_reports(
    stats: ProfileStats,
    findings: Sequence[Finding] | None = None,
    reports: Sequence[str] = REPORTS,
) -> dict[str, Table]:
    """The tables asked for (``expert`` needs ``findings``). Cost: O(executions + nodes)."""
    unknown = [r for r in reports if r not in REPORTS]
    if unknown:
        raise ValueError(
            f"unknown report(s) {', '.join(unknown)}; choose from {', '.join(REPORTS)}"
        )
    makers = {
        "summary": lambda: _summary(stats, findings),
        "detail": lambda: _detail(stats),
        "op_type": lambda: _op_type(stats),
        "iteration": lambda: _iteration(stats),
        "kernel": lambda: _kernel(stats),
        "expert": lambda: expert_table(findings or []),
    }
    return {name: makers[name]() for name in REPORTS if name in reports}


def write_reports(
    tables: dict[str, Table], folder: Path, profile_name: str, formats: Sequence[str]
) -> list[Path]:
    """``<profile_name>_<report>.<ext>`` for each table and format (atomic per file)."""
    bad = [f for f in formats if f not in ("csv", "json")]
    if bad:
        raise ValueError(f"unknown format(s) {', '.join(bad)}; choose csv and/or json")
    return write_tables(tables, folder, profile_name, formats)  # type: ignore[arg-type]
