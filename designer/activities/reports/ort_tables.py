"""The E-1 tables of an ORT profile report (summary, detail, op_type, iteration, timeline)."""

from __future__ import annotations

from designer.activities.reports.ort_records import OrtProfileData
from designer.activities.reports.table import Cell, Column, Table

__all__ = ["NODE_COLUMNS", "report_tables"]

#: The per-node columns (the GUI shows the same headers as the exports).
NODE_COLUMNS = (
    Column("name", "Name"),
    Column("op_type", "Op type"),
    Column("provider", "Provider"),
    Column("calls", "Calls", "int"),
    Column("total_us", "Total", "float", "µs"),
    Column("mean_us", "Mean", "float", "µs"),
    Column("median_us", "Median", "float", "µs"),
    Column("min_us", "Min", "float", "µs"),
    Column("max_us", "Max", "float", "µs"),
    Column("percent", "% of total", "percent", "%"),
    Column("input_shapes", "Input shapes"),
    Column("output_shapes", "Output shapes"),
    Column("mapping", "Mapping"),
    Column("onnx_nodes", "ONNX nodes"),
)


def _summary_table(report: OrtProfileData) -> Table:
    s = report.summary
    rows: list[tuple[Cell, ...]] = [
        ("model_load", s.load_ms, "ms"),
        ("session_initialization", s.init_ms, "ms"),
        ("first_run", s.first_run_ms, "ms"),
        ("runs", s.runs, ""),
        ("warmup_runs", s.warmup_runs, ""),
        ("measured_runs", s.measured_runs, ""),
        ("mean", s.mean_ms, "ms"),
        ("median", s.median_ms, "ms"),
        ("p90", s.p90_ms, "ms"),
        ("p99", s.p99_ms, "ms"),
        ("min", s.min_ms, "ms"),
        ("max", s.max_ms, "ms"),
        ("throughput", s.throughput_per_s, "1/s"),
        ("profiled_nodes", len(report.nodes), ""),
        ("onnx_nodes_not_in_profile", len(report.not_in_profile), ""),
    ]
    columns = (
        Column("metric", "Metric"),
        Column("value", "Value", "float"),
        Column("unit", "Unit"),
    )
    return Table("summary", "Session summary", columns, rows)


def _detail_table(report: OrtProfileData) -> Table:
    rows: list[tuple[Cell, ...]] = [
        (
            n.name,
            n.op_type,
            n.provider,
            n.calls,
            n.total_us,
            n.mean_us,
            n.median_us,
            n.min_us,
            n.max_us,
            n.percent,
            n.input_shapes,
            n.output_shapes,
            n.mapping.kind,
            " ".join(n.mapping.onnx_nodes),
        )
        for n in report.nodes
    ]
    rows.extend(
        (
            m.name,
            m.op_type,
            "",
            0,
            0.0,
            None,
            None,
            None,
            None,
            0.0,
            "",
            "",
            "not_in_profile",
            m.name,
        )
        for m in report.not_in_profile
    )
    return Table("detail", "Per node", NODE_COLUMNS, rows)


def _op_type_table(report: OrtProfileData) -> Table:
    columns = (
        Column("op_type", "Op type"),
        Column("nodes", "Nodes", "int"),
        Column("calls", "Calls", "int"),
        Column("total_us", "Total", "float", "µs"),
        Column("mean_us", "Mean per call", "float", "µs"),
        Column("percent", "% of total", "percent", "%"),
    )
    rows: list[tuple[Cell, ...]] = [
        (o.op_type, o.nodes, o.calls, o.total_us, o.mean_us, o.percent) for o in report.op_types
    ]
    return Table("op_type", "Per op type", columns, rows)


def _iteration_table(report: OrtProfileData) -> Table:
    columns = (
        Column("iteration", "Iteration", "int"),
        Column("start_us", "Start", "int", "µs"),
        Column("duration_ms", "Duration", "float", "ms"),
        Column("warmup", "Warm-up", "int"),
    )
    rows: list[tuple[Cell, ...]] = [
        (it.index, it.start_us, it.dur_us / 1000.0, int(it.warmup)) for it in report.iterations
    ]
    return Table("iteration", "Per iteration", columns, rows)


def _timeline_table(report: OrtProfileData) -> Table:
    columns = (
        Column("run", "Run", "int"),
        Column("name", "Name"),
        Column("op_type", "Op type"),
        Column("provider", "Provider"),
        Column("start_us", "Start", "int", "µs"),
        Column("duration_us", "Duration", "int", "µs"),
    )
    rows: list[tuple[Cell, ...]] = [
        (e.run, e.name, e.op_type, e.provider, e.start_us, e.dur_us) for e in report.timeline()
    ]
    return Table("timeline", "Timeline of one iteration", columns, rows)


def report_tables(report: OrtProfileData) -> dict[str, Table]:
    """All tables, keyed by report name. Cost: O(nodes + events of one run + iterations)."""
    tables = [
        _summary_table(report),
        _detail_table(report),
        _op_type_table(report),
        _iteration_table(report),
        _timeline_table(report),
    ]
    return {t.name: t for t in tables}
