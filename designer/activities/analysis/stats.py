"""Statistics of a :class:`Profile` over an iteration range (DLProf's iter_start/iter_stop).

The range is inclusive and counts iterations from 0. By default it starts at 1 when the
profile has two or more iterations (the first run of a session carries one-off allocations
and is a warm-up) and ends at the last. Per-node numbers: calls, total, mean / median / p90
per call, time per iteration (total ÷ iterations in the range), percent of all node time.
For profiles that only record per-layer aggregates (TensorRT) the node numbers are those
aggregates, whatever the range.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from designer.activities.analysis.profile import Iteration, Profile, ProfiledNode
from designer.activities.reports.ort_profile import percentile

__all__ = ["IterRange", "NodeTimes", "ProfileStats", "compute_stats", "percentiles"]


@dataclass(frozen=True)
class IterRange:
    start: int
    stop: int  # inclusive

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and self.start <= index <= self.stop


@dataclass(frozen=True)
class NodeTimes:
    node: ProfiledNode
    calls: int
    total_us: float
    mean_us: float
    median_us: float | None
    p90_us: float | None
    min_us: float | None
    max_us: float | None
    per_iteration_us: float
    percent: float
    median_iteration_us: float | None = None  # median over the range's iterations

    @property
    def typical_iteration_us(self) -> float:
        """Median time per iteration where known, else the mean (robust for comparisons)."""
        return (
            self.per_iteration_us
            if self.median_iteration_us is None
            else (self.median_iteration_us)
        )


@dataclass
class ProfileStats:
    profile: Profile
    range: IterRange | None  # None: the profile has no iterations
    iterations: list[Iteration]  # those in the range
    nodes: list[NodeTimes]  # by total time, largest first
    total_us: float  # sum of node totals (= the detail report's total)

    @property
    def iteration_count(self) -> int:
        """Iterations the per-iteration numbers divide by (at least 1)."""
        if self.profile.per_execution:
            return max(len(self.iterations), 1)
        calls = [t.calls for t in self.nodes]
        return max(max(calls, default=1), 1)

    @property
    def per_iteration_us(self) -> float:
        return self.total_us / self.iteration_count

    def iteration_ms(self) -> list[float]:
        return sorted(it.dur_us / 1000.0 for it in self.iterations)

    def by_onnx_node(self) -> dict[str, float]:
        """Per-iteration µs per ONNX node name; a fused node's time split evenly over the
        ONNX nodes it came from, a node without ONNX names kept under its own name."""
        out: dict[str, float] = {}
        for t in self.nodes:
            names = t.node.onnx_nodes or (t.node.name,)
            for name in names:
                out[name] = out.get(name, 0.0) + t.per_iteration_us / len(names)
        return out

    def onnx_node_share(self) -> dict[str, float]:
        """Percent per ONNX node name (for the canvas overlay)."""
        out: dict[str, float] = {}
        for t in self.nodes:
            for name in t.node.onnx_nodes:
                out[name] = out.get(name, 0.0) + t.percent / len(t.node.onnx_nodes)
        return out


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """mean, median, p90, p95, p99, min, max of ``values`` (None each when empty)."""
    ordered = sorted(values)
    if not ordered:
        return dict.fromkeys(("mean", "median", "p90", "p95", "p99", "min", "max"))
    return {
        "mean": statistics.fmean(ordered),
        "median": percentile(ordered, 50),
        "p90": percentile(ordered, 90),
        "p95": percentile(ordered, 95),
        "p99": percentile(ordered, 99),
        "min": ordered[0],
        "max": ordered[-1],
    }


def default_range(profile: Profile) -> IterRange | None:
    n = len(profile.iterations)
    if n == 0:
        return None
    return IterRange(1 if n >= 2 else 0, n - 1)


def resolve_range(profile: Profile, start: int | None, stop: int | None) -> IterRange | None:
    """The range asked for, checked: a start or stop outside the profile's iterations, or
    a start after the stop, is a ValueError with one line that says which and what the
    profile has (never clamped silently)."""
    n = len(profile.iterations)
    if n == 0:
        if start is not None or stop is not None:
            raise ValueError(
                f"{profile.source}: the profile has no iterations, so --iter-start/--iter-stop "
                "cannot apply (give --key-node to find them)"
            )
        return None
    base = default_range(profile)
    assert base is not None
    available = f"the profile's iterations are 0..{n - 1}"
    for flag, value in (("--iter-start", start), ("--iter-stop", stop)):
        if value is not None and not 0 <= value < n:
            raise ValueError(f"{flag} {value} is outside the profile: {available}")
    lo = base.start if start is None else start
    hi = base.stop if stop is None else stop
    if lo > hi:
        if start is None:  # only the stop was given: it is before the default start
            raise ValueError(
                f"--iter-stop {hi} is before the default --iter-start {lo} (the first run "
                f"is left out as a warm-up): give --iter-start too ({available})"
            )
        raise ValueError(
            f"iteration range {lo}..{hi} is inverted: --iter-start {lo} is after "
            f"--iter-stop {hi} ({available})"
        )
    return IterRange(lo, hi)


def compute_stats(
    profile: Profile, start: int | None = None, stop: int | None = None
) -> ProfileStats:
    """Statistics over iterations ``start..stop`` (inclusive; defaults as described above).
    Cost: O(executions + nodes log nodes)."""
    rng = resolve_range(profile, start, stop)
    iterations = [it for it in profile.iterations if rng is None or it.index in rng]
    times: list[NodeTimes] = []
    if profile.per_execution:
        per_node: dict[int, list[float]] = {}
        per_iter: dict[int, dict[int, float]] = {}
        for e in profile.executions:
            if rng is None or e.iteration in rng:
                per_node.setdefault(e.node, []).append(e.dur_us)
                sums = per_iter.setdefault(e.node, {})
                sums[e.iteration] = sums.get(e.iteration, 0.0) + e.dur_us
        count = max(len(iterations), 1)
        grand = sum(sum(v) for v in per_node.values()) or 1.0
        for index, durations in per_node.items():
            durations.sort()
            total = sum(durations)
            times.append(
                NodeTimes(
                    node=profile.nodes[index],
                    calls=len(durations),
                    total_us=total,
                    mean_us=total / len(durations),
                    median_us=percentile(durations, 50),
                    p90_us=percentile(durations, 90),
                    min_us=durations[0],
                    max_us=durations[-1],
                    per_iteration_us=total / count,
                    percent=100.0 * total / grand,
                    median_iteration_us=percentile(sorted(per_iter[index].values()), 50),
                )
            )
    else:
        grand = sum(a.total_us for a in profile.aggregates.values()) or 1.0
        for index, agg in profile.aggregates.items():
            times.append(
                NodeTimes(
                    node=profile.nodes[index],
                    calls=agg.calls,
                    total_us=agg.total_us,
                    mean_us=agg.mean_us,
                    median_us=agg.median_us,
                    p90_us=None,
                    min_us=None,
                    max_us=None,
                    per_iteration_us=agg.total_us / max(agg.calls, 1),
                    percent=100.0 * agg.total_us / grand,
                    median_iteration_us=agg.median_us,
                )
            )
    times.sort(key=lambda t: t.total_us, reverse=True)
    return ProfileStats(profile, rng, iterations, times, sum(t.total_us for t in times))
