"""ONNX Runtime profile JSON → a plain report: summary, per-node, per-op-type, iterations,
timeline (SPEC R-2, E-1, E-3).

ORT writes a Chrome-trace list of ``{"cat", "name", "ts", "dur", "args"}`` events (µs).
``Session`` events: ``model_loading_uri``/``model_loading_array``, ``session_initialization``,
one ``model_run`` per ``Run()`` (warm-up runs included). ``Node`` events: since ORT 1.2x only
``<node>_kernel_time`` (older builds add ``_fence_before``/``_fence_after``, ignored here) with
``args.op_name``, ``provider``, ``node_index`` and shapes. Node events are assigned to the
``model_run`` that contains them. A profile cut short (a cancelled run, a copy cut off) may
lack its closing ``]`` or end inside an event; the whole events before the cut are kept, and
the report says so (:data:`OrtProfileReport.warnings`, :func:`read_profile_events`).

Cost: one JSON parse plus O(events log events); a 100-iteration profile of a 1000-node model
(~100k events) parses in about a second.
"""

from __future__ import annotations

import bisect
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from designer.activities.reports.node_mapping import Mapping, ModelNode, NodeMapper
from designer.activities.reports.ort_records import (
    IterationTime,
    NodeEvent,
    NodeStats,
    OpTypeStats,
    OrtProfileData,
    SessionSummary,
)
from designer.activities.reports.ort_tables import report_tables
from designer.activities.reports.table import Table
from designer.core.errors import DesignerError

__all__ = [
    "IterationTime",
    "NodeEvent",
    "NodeStats",
    "OpTypeStats",
    "OrtProfileReport",
    "ProfileFormatError",
    "SessionSummary",
    "cut_off_note",
    "load_profile_events",
    "parse_ort_profile",
    "percentile",
    "read_profile_events",
]


class ProfileFormatError(DesignerError):
    """The file is not an ONNX Runtime profile (or is damaged beyond repair)."""


@dataclass
class OrtProfileReport(OrtProfileData):
    """Everything one profile says, as plain data (the GUI tab and the CLI share it).
    ``warnings``: what makes its numbers doubtful (a file cut off), one line each."""

    warnings: list[str] = field(default_factory=list)

    def tables(self) -> dict[str, Table]:
        """The E-1 reports: summary, detail, op_type, iteration, timeline."""
        return report_tables(self)


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile ``p`` (0..100) of already sorted values."""
    if not sorted_values:
        raise ValueError("no values")
    pos = (len(sorted_values) - 1) * p / 100.0
    low = int(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


def cut_off_note(events: int) -> str:
    """The warning of a profile whose file was cut off after ``events`` whole events."""
    return (
        f"the profile was cut off after {events} events (the file ends before its closing "
        "']'); the events after the cut are lost and the last iteration may be incomplete"
    )


def read_profile_events(
    source: Path | str | bytes | list[Any],
) -> tuple[list[dict[str, Any]], str | None]:
    """The raw event list of a profile file (or its bytes, or an already-parsed list) and,
    when the file was cut off and repaired, the warning that says so (:func:`cut_off_note`)."""
    repaired = False
    if isinstance(source, list):
        data: Any = source
    else:
        if isinstance(source, bytes):
            text, where = source.decode("utf-8", errors="replace"), "profile"
        else:
            where = str(source)
            try:
                text = Path(source).read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise ProfileFormatError(f"{where}: cannot read ({exc.strerror or exc})") from None
        data, repaired = _loads_repairing(text, where)
    if isinstance(data, dict) and isinstance(data.get("traceEvents"), list):
        data = data["traceEvents"]
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ProfileFormatError("not an ONNX Runtime profile (expected a list of trace events)")
    return data, cut_off_note(len(data)) if repaired else None


def load_profile_events(source: Path | str | bytes | list[Any]) -> list[dict[str, Any]]:
    """The raw event list of a profile (:func:`read_profile_events` without its warning)."""
    return read_profile_events(source)[0]


def _loads_repairing(text: str, where: str) -> tuple[Any, bool]:
    """The parsed JSON and whether it had to be repaired (a list cut off: its whole events)."""
    try:
        return json.loads(text), False
    except json.JSONDecodeError as exc:
        first_error = exc
    body = text.rstrip().rstrip(",")
    if body.startswith("["):
        # A run stopped before end_profiling(): keep every whole event that was written.
        cut = body.rfind("}")
        while cut > 0:
            try:
                return json.loads(body[: cut + 1] + "]"), True
            except json.JSONDecodeError:
                cut = body.rfind("}", 0, cut)
    raise ProfileFormatError(
        f"{where}: not an ONNX Runtime profile (invalid JSON at line {first_error.lineno}, "
        f"column {first_error.colno})"
    )


def _shapes(value: Any) -> str:
    if not isinstance(value, list):
        return ""
    parts: list[str] = []
    for item in value:
        if isinstance(item, dict):
            parts.extend(f"{dtype}{list(dims)}" for dtype, dims in item.items())
    return "; ".join(parts)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def parse_ort_profile(
    source: Path | str | bytes | list[Any],
    *,
    warmup: int = 0,
    model_nodes: Sequence[ModelNode] | None = None,
) -> OrtProfileReport:
    """Parse an ORT profile. The first ``warmup`` runs are excluded from the statistics (E-3);
    with ``model_nodes`` the profiled nodes are mapped back to the ONNX nodes."""
    events, cut_off = read_profile_events(source)
    load_us = init_us = 0
    runs: list[tuple[int, int]] = []
    raw_nodes: list[tuple[int, dict[str, Any]]] = []
    for event in events:
        cat, name = event.get("cat"), str(event.get("name", ""))
        if cat == "Session":
            if name.startswith("model_loading"):
                load_us += _int(event.get("dur"))
            elif name == "session_initialization":
                init_us += _int(event.get("dur"))
            elif name == "model_run":
                runs.append((_int(event.get("ts")), _int(event.get("dur"))))
        elif cat == "Node" and name.endswith("_kernel_time"):
            raw_nodes.append((_int(event.get("ts")), event))
    if not raw_nodes:
        what = "session events only" if runs or load_us or init_us else "no session events"
        raise ProfileFormatError(
            f"{_where(source)}: no ONNX Runtime node events in the profile ({what}): not a "
            "profile of a model's run"
        )
    runs.sort()
    starts = [start for start, _ in runs]
    warmup = max(0, min(warmup, len(runs) - 1)) if runs else 0
    node_events: list[NodeEvent] = []
    for ts, event in sorted(raw_nodes, key=lambda item: item[0]):
        i = bisect.bisect_right(starts, ts) - 1
        run = i if i >= 0 and ts <= runs[i][0] + runs[i][1] else -1
        raw_args = event.get("args")
        args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
        node_events.append(
            NodeEvent(
                name=str(event["name"])[: -len("_kernel_time")],
                op_type=str(args.get("op_name", "")),
                provider=str(args.get("provider", "")),
                start_us=ts,
                dur_us=_int(event.get("dur")),
                run=run,
                input_shapes=_shapes(args.get("input_type_shape")),
                output_shapes=_shapes(args.get("output_type_shape")),
            )
        )
    iterations = [IterationTime(i, s, d, i < warmup) for i, (s, d) in enumerate(runs)]
    measured_runs = {it.index for it in iterations if not it.warmup}
    counted = [e for e in node_events if e.run in measured_runs] if measured_runs else node_events
    mapper = NodeMapper(model_nodes) if model_nodes is not None else None
    nodes = _node_stats(counted, mapper)
    return OrtProfileReport(
        source=_where(source),
        summary=_summary(load_us, init_us, iterations),
        nodes=nodes,
        op_types=_op_type_stats(nodes),
        iterations=iterations,
        events=node_events,
        not_in_profile=mapper.uncovered([n.mapping for n in nodes]) if mapper else [],
        warnings=[] if cut_off is None else [cut_off],
    )


def _where(source: Path | str | bytes | list[Any]) -> str:
    return str(source) if isinstance(source, (str, Path)) else "profile"


def _summary(load_us: int, init_us: int, iterations: list[IterationTime]) -> SessionSummary:
    measured = sorted(it.dur_us / 1000.0 for it in iterations if not it.warmup)
    first = iterations[0].dur_us / 1000.0 if iterations else None
    warm = sum(1 for it in iterations if it.warmup)
    if not measured:
        return SessionSummary(
            load_us / 1000,
            init_us / 1000,
            first,
            len(iterations),
            warm,
            0,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        )
    mean = statistics.fmean(measured)
    return SessionSummary(
        load_ms=load_us / 1000.0,
        init_ms=init_us / 1000.0,
        first_run_ms=first,
        runs=len(iterations),
        warmup_runs=warm,
        measured_runs=len(measured),
        mean_ms=mean,
        median_ms=percentile(measured, 50),
        p90_ms=percentile(measured, 90),
        p99_ms=percentile(measured, 99),
        min_ms=measured[0],
        max_ms=measured[-1],
        throughput_per_s=1000.0 / mean if mean > 0 else None,
    )


def _node_stats(events: list[NodeEvent], mapper: NodeMapper | None) -> list[NodeStats]:
    groups: dict[tuple[str, str, str], list[NodeEvent]] = {}
    for event in events:
        groups.setdefault((event.name, event.op_type, event.provider), []).append(event)
    grand_total = float(sum(e.dur_us for e in events)) or 1.0
    stats = []
    for (name, op_type, provider), group in groups.items():
        durations = sorted(float(e.dur_us) for e in group)
        total = sum(durations)
        stats.append(
            NodeStats(
                name=name,
                op_type=op_type,
                provider=provider,
                calls=len(group),
                total_us=total,
                mean_us=total / len(group),
                median_us=percentile(durations, 50),
                min_us=durations[0],
                max_us=durations[-1],
                percent=100.0 * total / grand_total,
                input_shapes=group[-1].input_shapes,
                output_shapes=group[-1].output_shapes,
                mapping=mapper.map(name, op_type) if mapper else Mapping("unmapped", ()),
            )
        )
    stats.sort(key=lambda s: s.total_us, reverse=True)
    return stats


def _op_type_stats(nodes: list[NodeStats]) -> list[OpTypeStats]:
    by_type: dict[str, list[NodeStats]] = {}
    for node in nodes:
        by_type.setdefault(node.op_type, []).append(node)
    result = []
    for op_type, group in by_type.items():
        calls = sum(n.calls for n in group)
        total = sum(n.total_us for n in group)
        result.append(
            OpTypeStats(
                op_type,
                len(group),
                calls,
                total,
                total / calls if calls else 0.0,
                sum(n.percent for n in group),
            )
        )
    result.sort(key=lambda s: s.total_us, reverse=True)
    return result
