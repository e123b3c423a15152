"""The engine report card on real engines: shares, precisions, reformats, gap, export."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from helpers.engine_fixtures import (
    A100_FP16,
    A100_FP32,
    A100_QAT,
    A100_QAT_QGAP,
    LAYER_JSON_10,
    all_trex_graphs,
    names_only,
    read,
    to_trt11,
    write,
)
from helpers.shared import TRT_SAMPLES

from designer.activities.reports.engine_bundle import load_engine
from designer.activities.reports.engine_report import NOT_IN_GRAPH, build_report, report_tables
from designer.activities.reports.table import write_tables


@pytest.mark.parametrize("graph", all_trex_graphs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_trex_engine_reports(graph: Path) -> None:
    report = build_report(load_engine(graph))
    assert report.has_profile
    assert sum(s.percent or 0 for s in report.by_type) == pytest.approx(100.0)
    assert sum(s.percent or 0 for s in report.by_precision) == pytest.approx(100.0)
    assert sum(s.count for s in report.by_type) == len(report.bundle.graph.layers)
    # profiled per-layer times add up to more than the engine's own latency: overhead
    assert report.gap_ms is not None and report.gap_ms > 0
    assert any("profiling each layer" in note for note in report.notes)
    assert report.weights_bytes > 0 and report.activation_bytes > 0
    assert report.top(3)[0].latency_ms == max(r.latency_ms or 0 for r in report.rows)
    tables = {t.name: t for t in report_tables(report)}
    assert set(tables) == {
        "summary",
        "layers",
        "layer_types",
        "precision",
        "reformats",
        "top_layers",
    }
    assert len(tables["layers"].rows) == len(report.bundle.graph.layers)


def test_resnet18_fp16_is_faster_than_fp32_on_a100() -> None:
    fp32, fp16 = build_report(load_engine(A100_FP32)), build_report(load_engine(A100_FP16))
    assert fp16.engine_latency_ms is not None and fp32.engine_latency_ms is not None
    assert fp16.engine_latency_ms < fp32.engine_latency_ms
    assert fp16.layers_sum_ms is not None and fp32.layers_sum_ms is not None
    assert fp16.layers_sum_ms < fp32.layers_sum_ms
    assert [s.key for s in fp32.by_precision] == ["FP32"]
    assert fp16.by_precision[0].key == "FP16"


def test_qat_report_matches_the_trex_article() -> None:
    # NVIDIA's TREx post: ResNet18 QAT has 12 reformat layers, about a quarter of the time
    report = build_report(load_engine(A100_QAT))
    assert len(report.reformats) == 12
    assert report.reformat_percent == pytest.approx(25.4, abs=0.1)
    assert report.reformat_percent == pytest.approx(
        next(s.percent for s in report.by_type if s.key == "Reformat")
    )
    after = build_report(load_engine(A100_QAT_QGAP))  # Q/DQ on residuals and GAP: one left
    assert len(after.reformats) == 1
    int8 = next(s for s in after.by_precision if s.key == "INT8")
    assert int8.count == 22 and int8.percent is not None and int8.percent > 80


def test_the_gap_is_the_layer_sum_minus_the_median_gpu_time() -> None:
    report = build_report(load_engine(A100_QAT))
    assert report.layers_sum_ms == pytest.approx(1.09568)
    assert report.engine_latency_ms == 0.882568  # GPU compute median, profile.metadata.json
    assert report.gap_ms == pytest.approx(1.09568 - 0.882568)
    summary = {row[0]: row[1] for row in report.summary()}
    assert summary["device"] == "NVIDIA A100 80GB PCIe"
    assert summary["precision_allowed"] == "FP32+FP16+INT8"
    assert summary["throughput"] == 1130.01 and summary["latency_p99"] == 0.884766


def test_without_a_profile_counts_only(tmp_path: Path) -> None:
    report = build_report(load_engine(A100_FP16, siblings=False))
    assert not report.has_profile and report.gap_ms is None
    assert all(s.latency_ms is None and s.percent is None for s in report.by_type)
    assert sum(s.count for s in report.by_type) == 36
    names = build_report(load_engine(write(tmp_path / "n.json", names_only(read(LAYER_JSON_10)))))
    assert [s.key for s in names.by_type] == ["not recorded"]
    assert any("profilingVerbosity=detailed" in n for n in names.notes)


def test_trt11_file_reports_the_same_numbers(tmp_path: Path) -> None:
    folder = tmp_path / "qat"
    folder.mkdir()
    for sibling in A100_QAT.parent.iterdir():
        if sibling.name != A100_QAT.name:
            (folder / sibling.name).symlink_to(sibling)
    write(folder / A100_QAT.name, to_trt11(read(A100_QAT)))
    old, new = (
        build_report(load_engine(A100_QAT)),
        build_report(load_engine(folder / A100_QAT.name)),
    )
    assert new.bundle.graph.version_family == "11.x"
    assert [(s.key, s.count, s.latency_ms) for s in old.by_type] == [
        (s.key, s.count, s.latency_ms) for s in new.by_type
    ]
    assert [(s.key, s.count) for s in old.by_precision] == [
        (s.key, s.count) for s in new.by_precision
    ]
    assert (old.weights_bytes, old.activation_bytes, old.gap_ms) == (
        new.weights_bytes,
        new.activation_bytes,
        new.gap_ms,
    )


def test_profile_from_another_build_is_kept_not_dropped() -> None:
    # result-05.log profiled a rebuilt engine (Myelin names differ from the layer JSON)
    report = build_report(load_engine([LAYER_JSON_10, TRT_SAMPLES / "result-05.log"]))
    unmatched = [r for r in report.rows if r.layer is None]
    assert unmatched and any(r.kind == NOT_IN_GRAPH for r in unmatched)
    assert any(r.kind == "Reformat" and r.is_reformat for r in unmatched)
    assert sum(s.percent or 0 for s in report.by_type) == pytest.approx(100.0)
    assert any("not in the layer JSON" in n for n in report.notes)


def test_tables_export_to_csv_and_json(tmp_path: Path) -> None:
    report = build_report(load_engine(A100_QAT))
    written = write_tables(report_tables(report), tmp_path, report.bundle.name)
    names = sorted(p.name for p in written)
    assert "resnet-qat.onnx.engine_layer_types.csv" in names
    assert "resnet-qat.onnx.engine_summary.json" in names
    with (tmp_path / "resnet-qat.onnx.engine_layer_types.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert sum(float(r["percent"]) for r in rows) == pytest.approx(100.0)
    doc = json.loads((tmp_path / "resnet-qat.onnx.engine_reformats.json").read_text())
    assert len(doc["rows"]) == 12 and doc["rows"][0]["name"] == "QuantizeLinear_2"
