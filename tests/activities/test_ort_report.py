"""ORT profile parsing on the real fixtures: summary, nodes, fused-node mapping, exports."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import onnx
import pytest
from conftest import ORT_FIXTURES

from designer.activities.reports import (
    ProfileFormatError,
    model_nodes,
    parse_ort_profile,
    write_tables,
)
from designer.activities.reports.ort_profile import percentile

pytestmark = pytest.mark.skipif(not ORT_FIXTURES.is_dir(), reason="shared fixtures absent")


def fixture(kind: str) -> Path:
    return next(ORT_FIXTURES.glob(f"tiny_cnn_opt-{kind}_ort_profile_*.json"))


@pytest.fixture(scope="module")
def nodes() -> list:  # type: ignore[type-arg]
    return model_nodes(onnx.load(ORT_FIXTURES / "tiny_cnn.onnx"))


def test_disabled_profile_maps_every_node_exactly(nodes: list) -> None:  # type: ignore[type-arg]
    report = parse_ort_profile(fixture("disabled"), warmup=1, model_nodes=nodes)
    assert report.summary.runs == 3 and report.summary.measured_runs == 2
    assert report.summary.load_ms == pytest.approx(0.46)
    assert report.summary.first_run_ms == pytest.approx(0.444)
    assert {n.mapping.kind for n in report.nodes} == {"exact"}
    assert len(report.nodes) == 10 and report.not_in_profile == []
    assert all(n.calls == 2 for n in report.nodes)
    assert sum(n.percent for n in report.nodes) == pytest.approx(100.0)
    conv = next(n for n in report.nodes if n.name == "Convolution28")
    assert conv.op_type == "Conv" and conv.provider == "CPUExecutionProvider"
    assert conv.input_shapes.startswith("float[1, 1, 28, 28]")
    assert conv.min_us <= conv.median_us <= conv.max_us


def test_optimized_profile_maps_fused_nodes(nodes: list) -> None:  # type: ignore[type-arg]
    report = parse_ort_profile(fixture("all"), warmup=1, model_nodes=nodes)
    by_name = {n.name: n.mapping for n in report.nodes}
    assert by_name["r1_nchwc"].onnx_nodes == ("Convolution28", "ReLU32")
    assert by_name["r1_nchwc"].kind == "fused"
    assert by_name["Times212/MatMulAddFusion"].onnx_nodes == ("Times212", "Plus214")
    assert by_name["p2_nchwc"].kind == "derived"
    assert by_name["ReorderOutput_token_5"].kind == "inserted"
    assert by_name["Softmax"].kind == "exact"
    assert report.not_in_profile == []  # all 10 ONNX nodes accounted for
    share = report.onnx_node_share()
    assert set(share) == {n.name for n in nodes}
    inserted = sum(n.percent for n in report.nodes if n.mapping.kind == "inserted")
    assert sum(share.values()) + inserted == pytest.approx(100.0)


def test_without_model_nothing_is_guessed() -> None:
    report = parse_ort_profile(fixture("all"))
    assert {n.mapping.kind for n in report.nodes} == {"unmapped"}


def test_iterations_timeline_and_op_types() -> None:
    report = parse_ort_profile(fixture("disabled"), warmup=1)
    assert [it.warmup for it in report.iterations] == [True, False, False]
    timeline = report.timeline()
    assert len(timeline) == 10 and timeline[0].start_us >= 0
    assert [e.start_us for e in timeline] == sorted(e.start_us for e in timeline)
    ops = {o.op_type: o for o in report.op_types}
    assert ops["Conv"].nodes == 2 and ops["Conv"].calls == 4
    assert sum(o.percent for o in report.op_types) == pytest.approx(100.0)


def test_exports_named_per_spec(tmp_path: Path, nodes: list) -> None:  # type: ignore[type-arg]
    report = parse_ort_profile(fixture("all"), warmup=1, model_nodes=nodes)
    written = write_tables(report.tables(), tmp_path, "tiny_cnn.ort-profile")
    names = {p.name for p in written}
    for table in ("summary", "detail", "op_type", "iteration", "timeline"):
        assert f"tiny_cnn.ort-profile_{table}.csv" in names
        assert f"tiny_cnn.ort-profile_{table}.json" in names
    with open(tmp_path / "tiny_cnn.ort-profile_detail.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 9 and {"name", "percent", "onnx_nodes", "mapping"} <= set(rows[0])
    data = json.loads((tmp_path / "tiny_cnn.ort-profile_op_type.json").read_text())
    assert data["name"] == "op_type" and data["rows"][0]["op_type"] == "Conv"


def test_truncated_profile_is_repaired(tmp_path: Path) -> None:
    text = fixture("disabled").read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: int(len(text) * 0.6)])
    report = parse_ort_profile(cut)
    assert 0 < len(report.events) < 30


@pytest.mark.parametrize("content", ["", "{}", "[1, 2]", "not json", '{"a": [}'])
def test_garbage_is_one_clear_error(tmp_path: Path, content: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(ProfileFormatError) as info:
        parse_ort_profile(bad)
    assert "\n" not in str(info.value)


def test_percentile() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 99) == 5.0
    assert percentile([0.0, 10.0], 90) == pytest.approx(9.0)
