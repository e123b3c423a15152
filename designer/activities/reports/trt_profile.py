"""TensorRT profiling output as plain records (Qt-free).

- ``trtexec --exportProfile``: ``[{"count": N}, {"name", "timeMs", "averageMs", "medianMs",
  "percentage"}, …]`` → :class:`EngineProfile` (also built from the per-layer table of a
  ``--dumpProfile`` log, see :mod:`trtexec_log`).
- ``trtexec --exportTimes``: one record per inference → :class:`EngineTiming`.
- latency statistics and trtexec's performance summary (:class:`LatencyStats`,
  :class:`PerformanceSummary`); device/build/run metadata live in :mod:`trt_metadata`.

Missing fields are None ("not recorded"); a file of the wrong kind raises
:class:`~designer.activities.reports.trt_engine.EngineFormatError`.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from designer.activities.reports.trt_engine import EngineFormatError

__all__ = [
    "EngineProfile",
    "EngineTiming",
    "LatencyStats",
    "PerformanceSummary",
    "ProfileLayer",
    "TimingRecord",
    "as_float",
    "parse_profile_json",
    "parse_timing_json",
    "read_json",
    "stats_from_list",
    "stats_from_values",
]


def read_json(path: Path, expected: str) -> Any:
    """Parsed JSON of ``path``; one-line :class:`EngineFormatError` naming ``expected`` if not."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise EngineFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise EngineFormatError(f"{path}: binary file, expected {expected}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise EngineFormatError(
            f"{path}: not JSON (line {exc.lineno}); expected {expected}"
        ) from exc


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.split()[0])
        except (ValueError, IndexError):
            return None
    return None


# ---------------------------------------------------------------- per-layer profile


@dataclass(frozen=True)
class ProfileLayer:
    """One layer's time: total over all iterations, average, median (ms) and % of the sum."""

    name: str
    time_ms: float | None
    average_ms: float | None
    median_ms: float | None
    percentage: float | None


@dataclass
class EngineProfile:
    """Per-layer times in execution order; ``count`` = profiled iterations (None if not
    recorded); ``total_*`` = the table's own "Total" row when it has one."""

    layers: list[ProfileLayer]
    count: int | None = None
    total_time_ms: float | None = None
    total_average_ms: float | None = None
    total_median_ms: float | None = None
    source: Path | None = None

    def by_name(self) -> dict[str, ProfileLayer]:
        return {p.name: p for p in self.layers}

    @property
    def sum_average_ms(self) -> float:
        """Sum of per-layer average times: what the layers add up to (ms per inference)."""
        return sum(p.average_ms or 0.0 for p in self.layers)


_PROFILE_EXPECTED = (
    'a trtexec --exportProfile JSON: [{"count": N}, {"name", "timeMs", "averageMs", ...}, ...]'
)


def parse_profile_json(root: Any, source: Path | None = None) -> EngineProfile:
    """:class:`EngineProfile` from parsed ``--exportProfile`` JSON."""
    where = f"{source}: " if source else ""
    if not isinstance(root, list) or not all(isinstance(x, Mapping) for x in root):
        raise EngineFormatError(f"{where}not {_PROFILE_EXPECTED}")
    count: int | None = None
    layers: list[ProfileLayer] = []
    for item in root:
        if "name" not in item:
            if "count" in item and isinstance(item["count"], int):
                count = item["count"]
                continue
            raise EngineFormatError(f"{where}a record has no 'name'; expected {_PROFILE_EXPECTED}")
        if not any(k in item for k in ("timeMs", "averageMs", "medianMs", "percentage")):
            raise EngineFormatError(
                f"{where}record {item['name']!r} has no times; expected {_PROFILE_EXPECTED}"
            )
        layers.append(
            ProfileLayer(
                name=str(item["name"]),
                time_ms=as_float(item.get("timeMs")),
                average_ms=as_float(item.get("averageMs")),
                median_ms=as_float(item.get("medianMs")),
                percentage=as_float(item.get("percentage")),
            )
        )
    return EngineProfile(layers, count, source=source)


# ---------------------------------------------------------------- latency statistics


@dataclass(frozen=True)
class LatencyStats:
    """min/max/mean/median and percentiles (percent → value), all in ms."""

    min: float | None = None
    max: float | None = None
    mean: float | None = None
    median: float | None = None
    percentiles: Mapping[float, float] = field(default_factory=dict)

    def percentile(self, p: float) -> float | None:
        return self.percentiles.get(float(p))

    def as_dict(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {
            "min": self.min,
            "max": self.max,
            "mean": self.mean,
            "median": self.median,
        }
        for p, v in sorted(self.percentiles.items()):
            out[f"p{p:g}"] = v
        return out


def stats_from_list(values: Sequence[Any]) -> LatencyStats | None:
    """TREx metadata lists: ``[min, max, mean, median, p99]`` (trtexec 8.x logs printed one
    percentile, 99 %) or ``[min, max, mean, median, p90, p95, p99]`` (later trtexec)."""
    nums = [as_float(v) for v in values]
    if len(nums) < 4:
        return None
    tail = nums[4:]
    names = (99.0,) if len(tail) == 1 else (90.0, 95.0, 99.0)[: len(tail)]
    pct = {p: v for p, v in zip(names, tail, strict=False) if v is not None}
    return LatencyStats(nums[0], nums[1], nums[2], nums[3], pct)


def _percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile, like trtexec's own ``findPercentile``."""
    n = len(sorted_values)
    index = max(0, min(n - 1, int(p / 100.0 * n + 0.5) - 1)) if n > 1 else 0
    return sorted_values[index]


def stats_from_values(values: Sequence[float]) -> LatencyStats | None:
    """Statistics of raw samples (ms); None for no samples."""
    if not values:
        return None
    ordered = sorted(values)
    return LatencyStats(
        ordered[0],
        ordered[-1],
        statistics.fmean(ordered),
        statistics.median(ordered),
        {p: _percentile(ordered, p) for p in (90.0, 95.0, 99.0)},
    )


@dataclass(frozen=True)
class PerformanceSummary:
    """trtexec's "Performance summary": throughput (queries/s), latency stats (ms), totals (s)."""

    throughput_qps: float | None = None
    latency: LatencyStats | None = None
    enqueue: LatencyStats | None = None
    h2d: LatencyStats | None = None
    gpu_compute: LatencyStats | None = None
    d2h: LatencyStats | None = None
    total_host_walltime_s: float | None = None
    total_gpu_compute_s: float | None = None


# ---------------------------------------------------------------- timing (exportTimes)


@dataclass(frozen=True)
class TimingRecord:
    """One measured inference (ms)."""

    latency_ms: float | None
    compute_ms: float | None
    h2d_ms: float | None
    d2h_ms: float | None
    enqueue_ms: float | None
    start_compute_ms: float | None


@dataclass
class EngineTiming:
    records: list[TimingRecord]
    source: Path | None = None

    def summary(self) -> PerformanceSummary:
        """Stats over the records; throughput = inferences / compute span."""

        def col(attr: str) -> list[float]:
            return [v for r in self.records if (v := getattr(r, attr)) is not None]

        starts = col("start_compute_ms")
        throughput = None
        if len(starts) > 1 and max(starts) > min(starts):
            throughput = (len(starts) - 1) / ((max(starts) - min(starts)) / 1000.0)
        compute = col("compute_ms")
        return PerformanceSummary(
            throughput_qps=throughput,
            latency=stats_from_values(col("latency_ms")),
            enqueue=stats_from_values(col("enqueue_ms")),
            h2d=stats_from_values(col("h2d_ms")),
            gpu_compute=stats_from_values(compute),
            d2h=stats_from_values(col("d2h_ms")),
            total_gpu_compute_s=sum(compute) / 1000.0 if compute else None,
        )


_TIMING_EXPECTED = 'a trtexec --exportTimes JSON: [{"latencyMs", "computeMs", ...}, ...]'


def parse_timing_json(root: Any, source: Path | None = None) -> EngineTiming:
    where = f"{source}: " if source else ""
    if not isinstance(root, list) or not all(isinstance(x, Mapping) for x in root):
        raise EngineFormatError(f"{where}not {_TIMING_EXPECTED}")
    if root and not any(k in root[0] for k in ("latencyMs", "computeMs")):
        raise EngineFormatError(
            f"{where}records have no latencyMs/computeMs; expected {_TIMING_EXPECTED}"
        )
    records = []
    for item in root:
        start, end = as_float(item.get("startEnqMs")), as_float(item.get("endEnqMs"))
        records.append(
            TimingRecord(
                latency_ms=as_float(item.get("latencyMs")),
                compute_ms=as_float(item.get("computeMs")),
                h2d_ms=as_float(item.get("h2dMs")),
                d2h_ms=as_float(item.get("d2hMs")),
                enqueue_ms=end - start if start is not None and end is not None else None,
                start_compute_ms=as_float(item.get("startComputeMs")),
            )
        )
    return EngineTiming(records, source)
