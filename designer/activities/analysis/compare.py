"""Compare two runs of one model (SPEC B-3): before/after a transform, CPU vs CUDA, ORT vs
TensorRT. Times are per iteration (over each profile's own range), so runs with different
iteration counts compare fairly.

Each node's time is its median per iteration (robust against one preempted run), the mean
where a profile records no iterations. Nodes are matched by ONNX node name: ORT nodes
through their mapping to the model (or their own names), TensorRT layers through the ONNX
names in the layer metadata; a node or layer that stands for several ONNX nodes has its
time split evenly over them. A name only in A is
``removed``, only in B ``added``. Per-op-type deltas use each run's own op types.
"""

from __future__ import annotations

from dataclasses import dataclass

from designer.activities.analysis.stats import ProfileStats
from designer.activities.reports.table import Cell, Column, Table

__all__ = ["Comparison", "Delta", "compare_stats"]


@dataclass(frozen=True)
class Delta:
    key: str  # ONNX node name, or op type
    op_type: str
    a_us: float | None  # per iteration; None when absent from that run
    b_us: float | None

    @property
    def status(self) -> str:
        if self.a_us is None:
            return "added"
        if self.b_us is None:
            return "removed"
        return "both"

    @property
    def delta_us(self) -> float:
        return (self.b_us or 0.0) - (self.a_us or 0.0)

    @property
    def ratio(self) -> float | None:
        """B / A (below 1: B is faster); None when either is absent or A is zero."""
        if self.a_us is None or self.b_us is None or self.a_us <= 0:
            return None
        return self.b_us / self.a_us


@dataclass
class Comparison:
    a: ProfileStats
    b: ProfileStats
    nodes: list[Delta]
    op_types: list[Delta]

    @property
    def total_a_us(self) -> float:
        """A's node time per iteration: the sum of its per-node times (medians)."""
        return sum(d.a_us or 0.0 for d in self.nodes)

    @property
    def total_b_us(self) -> float:
        return sum(d.b_us or 0.0 for d in self.nodes)

    @property
    def removed(self) -> list[Delta]:
        return [d for d in self.nodes if d.status == "removed"]

    @property
    def added(self) -> list[Delta]:
        return [d for d in self.nodes if d.status == "added"]

    def node_ratios(self) -> dict[str, float]:
        """ONNX node name → B/A time ratio of nodes in both runs (canvas diff overlay);
        a removed node counts as 0 (all of its time saved)."""
        out: dict[str, float] = {}
        for d in self.nodes:
            if d.status == "removed":
                out[d.key] = 0.0
            elif d.ratio is not None:
                out[d.key] = d.ratio
        return out

    def tables(self) -> dict[str, Table]:
        cols = (
            Column("name", "ONNX node"),
            Column("op_type", "Op type"),
            Column("status", "Status"),
            Column("a_us", "A per iteration", "float", "µs"),
            Column("b_us", "B per iteration", "float", "µs"),
            Column("delta_us", "B − A", "float", "µs"),
            Column("ratio", "B / A", "float"),
        )
        rows: list[tuple[Cell, ...]] = [
            (d.key, d.op_type, d.status, d.a_us, d.b_us, d.delta_us, d.ratio) for d in self.nodes
        ]
        op_cols = (Column("op_type", "Op type"), *cols[3:])
        op_rows: list[tuple[Cell, ...]] = [
            (d.key, d.a_us, d.b_us, d.delta_us, d.ratio) for d in self.op_types
        ]
        ia, ib = self.a.iteration_ms(), self.b.iteration_ms()
        from designer.activities.analysis.stats import percentiles

        pa, pb = percentiles(ia), percentiles(ib)
        summary: list[tuple[Cell, ...]] = [
            ("profile", self.a.profile.name, self.b.profile.name, None, None),
            (
                "node_time_per_iteration_us",
                self.total_a_us,
                self.total_b_us,
                self.total_b_us - self.total_a_us,
                _ratio(self.total_a_us, self.total_b_us),
            ),
            (
                "iteration_median_ms",
                pa["median"],
                pb["median"],
                None
                if pa["median"] is None or pb["median"] is None
                else pb["median"] - pa["median"],
                _ratio(pa["median"], pb["median"]),
            ),
            ("nodes_matched", sum(d.status == "both" for d in self.nodes), None, None, None),
            ("nodes_removed", len(self.removed), None, None, None),
            ("nodes_added", len(self.added), None, None, None),
        ]
        s_cols = (
            Column("metric", "Metric"),
            Column("a", "A"),
            Column("b", "B"),
            Column("delta", "B − A"),
            Column("ratio", "B / A", "float"),
        )
        return {
            "compare_summary": Table("compare_summary", "Comparison", s_cols, summary),
            "compare_nodes": Table("compare_nodes", "Per ONNX node", cols, rows),
            "compare_op_types": Table("compare_op_types", "Per op type", op_cols, op_rows),
        }


def _ratio(a: float | None, b: float | None) -> float | None:
    return b / a if a and b is not None and a > 0 else None


def _per_name(stats: ProfileStats) -> tuple[dict[str, float], dict[str, str]]:
    times: dict[str, float] = {}
    ops: dict[str, str] = {}
    for t in stats.nodes:
        names = t.node.onnx_nodes or (t.node.name,)
        for name in names:
            times[name] = times.get(name, 0.0) + t.typical_iteration_us / len(names)
            ops.setdefault(name, t.node.op_type)
    return times, ops


def _per_op(stats: ProfileStats) -> dict[str, float]:
    out: dict[str, float] = {}
    for t in stats.nodes:
        out[t.node.op_type] = out.get(t.node.op_type, 0.0) + t.typical_iteration_us
    return out


def compare_stats(a: ProfileStats, b: ProfileStats) -> Comparison:
    """Per-node and per-op-type deltas, largest absolute change first. O(nodes)."""
    ta, oa = _per_name(a)
    tb, ob = _per_name(b)
    names = list(dict.fromkeys([*ta, *tb]))
    nodes = [Delta(n, oa.get(n) or ob.get(n, ""), ta.get(n), tb.get(n)) for n in names]
    nodes.sort(key=lambda d: -abs(d.delta_us))
    pa, pb = _per_op(a), _per_op(b)
    ops = [Delta(o, o, pa.get(o), pb.get(o)) for o in dict.fromkeys([*pa, *pb])]
    ops.sort(key=lambda d: -abs(d.delta_us))
    return Comparison(a, b, nodes, ops)
