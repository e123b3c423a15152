"""The engine report card and the comparison of engines in the GUI (SPEC X-5, issue 13
points 3 and 5) on the real TREx exports of ResNet18 on an A100 (FP32, FP16) and the
TensorRT 10.16 cookbook layer JSON (no profile)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.engine_fixtures import A100 as RESNET
from helpers.engine_fixtures import A100_FP16 as FP16
from helpers.engine_fixtures import A100_FP32 as FP32
from helpers.engine_fixtures import LAYER_JSON_10 as LAYER_10
from helpers.shots import save_screenshot
from pytestqt.qtbot import QtBot

from designer.ui.engine.compare_tab import EngineCompareTab, open_compare_tab
from designer.ui.engine.report_tab import EngineReportTab
from designer.ui.engine.tab import EngineTab
from designer.ui.main_window import MainWindow

pytestmark = pytest.mark.skipif(not RESNET.is_dir(), reason=f"{RESNET} (shared fixtures) is absent")


def _report(window: MainWindow, path: Path) -> EngineReportTab:
    window.open_files([path])
    engine = window.tabs.currentWidget()
    assert isinstance(engine, EngineTab), window.errors
    engine.buttons["report"].click()
    tab = window.tabs.currentWidget()
    assert isinstance(tab, EngineReportTab)
    return tab


def _percent_sum(tab: EngineReportTab, name: str) -> float:
    return sum(float(v or 0.0) for v in tab.tables[name].column_values("percent"))  # type: ignore[arg-type]


def test_report_card_tables_sum_to_100_percent(window: MainWindow) -> None:
    tab = _report(window, FP16)
    assert _percent_sum(tab, "layer_types") == pytest.approx(100.0)
    assert _percent_sum(tab, "precision") == pytest.approx(100.0)
    types = tab.table_widgets["layer_types"].visible_column("key")
    assert "Convolution" in types and "Reformat" in types
    assert {"FP16", "FP32"} <= set(tab.table_widgets["precision"].visible_column("key"))
    reformats = tab.tables["reformats"].column_values("name")
    assert all(str(n).startswith("Reformatting CopyNode") for n in reformats) and reformats
    header = tab.header.text()
    assert "NVIDIA A100" in header and "FP32+FP16" in header
    assert "more than the engine latency" in header  # the profiling gap, measured
    assert tab.tabs.count() == 8  # charts + 7 tables (lint included)
    assert set(tab.charts) == {"types", "precision", "precision_count", "top"}
    assert tab.title == "resnet.onnx.engine (report card)"
    save_screenshot(window, "engine_report_card.png")


def test_report_card_exports_csv_and_json(
    window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tab = _report(window, FP16)
    monkeypatch.setattr(tab, "ask_export_folder", lambda: tmp_path)
    written = tab.export(("csv", "json"))
    names = {p.name for p in written}
    assert "resnet.onnx.engine_layer_types.csv" in names
    assert "resnet.onnx.engine_lint.json" in names
    rows = json.loads((tmp_path / "resnet.onnx.engine_layer_types.json").read_text())["rows"]
    assert sum(r["percent"] for r in rows) == pytest.approx(100.0)
    assert "Wrote" in tab.message.text()


def test_a_layer_of_the_report_jumps_to_the_graph(window: MainWindow, qtbot: QtBot) -> None:
    tab = _report(window, FP16)
    table = tab.table_widgets["top_layers"]
    tab.tabs.setCurrentWidget(table)
    first = table.proxy.index(0, 0)
    table.view.doubleClicked.emit(first)
    engine = window.tabs.currentWidget()
    assert isinstance(engine, EngineTab)
    chosen = [engine.engine.info[k].layer for k in engine.view.selected_keys()]
    assert [layer.name for layer in chosen if layer] == ["Conv_0 + Relu_1"]  # the slowest
    assert not tab.select_layer("no such layer")
    assert "not a layer" in tab.message.text()


def test_a_report_without_profile_counts_layers(window: MainWindow) -> None:
    tab = _report(window, LAYER_10)
    assert all(v is None for v in tab.tables["layer_types"].column_values("percent"))
    assert "No per-layer profile" in tab.header.text()
    assert sum(c for c in tab.tables["layer_types"].column_values("layers")) == 9  # type: ignore[misc]


def test_compare_fp32_with_fp16(
    window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.open_files([FP32])
    engine = window.tabs.currentWidget()
    assert isinstance(engine, EngineTab)
    window.open_files([FP16])
    assert window.tabs.tabText(1) == "fp16/resnet.onnx.engine (engine)"  # told apart
    grid = window.actions_by_name["show_grid"]
    grid.setChecked(not grid.isChecked())
    assert engine.view.canvas.show_grid == grid.isChecked()  # View > Show Grid
    window.tabs.setCurrentWidget(engine)
    engine.compare_with([FP16])
    tab = window.tabs.currentWidget()
    assert isinstance(tab, EngineCompareTab)
    summary = tab.tables["summary"]
    latency = summary.column_values("latency_ms")
    assert latency[1] < latency[0]  # type: ignore[operator]  # FP16 is faster
    assert "fp16/resnet.onnx.engine</b>" in tab.header.text()
    assert "faster than fp32/resnet.onnx.engine" in tab.header.text()
    types = tab.table_widgets["layer_types"].visible_column("type")
    assert "Convolution" in types
    matched = tab.tables["matched_layers"]
    assert len(matched.rows) >= 15  # layers matched through their ONNX node names
    assert any("Conv_0" in str(r[0]) for r in matched.rows)
    assert {"latency", "types_0", "types_1"} <= set(tab.charts)
    monkeypatch.setattr(tab, "ask_export_folder", lambda: tmp_path)
    assert {p.name for p in tab.export(("csv",))} == {
        "compare_summary.csv",
        "compare_layer_types.csv",
        "compare_matched_layers.csv",
    }


def test_compare_needs_two_real_engines(window: MainWindow, tmp_path: Path) -> None:
    assert open_compare_tab(window, [FP16]) is None
    bad = tmp_path / "x.json"
    bad.write_text('{"a": 1}')
    assert open_compare_tab(window, [FP16, bad]) is None
    assert len(window.errors) == 2 and all("\n" not in e for e in window.errors)
    assert window.tabs.count() == 0


def test_a_lint_finding_jumps_to_its_layer(window: MainWindow) -> None:
    tab = _report(window, FP16)
    table = tab.table_widgets["lint"]
    rules = table.visible_column("rule")
    assert rules and all(r == "reformat-at-io" for r in rules)  # the FP32 input and output
    row = table.visible_column("layers").index(
        "Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1"
    )
    table.view.doubleClicked.emit(table.proxy.index(row, 0))
    engine = window.tabs.currentWidget()
    assert isinstance(engine, EngineTab)
    (key,) = engine.view.selected_keys()
    assert engine.engine.info[key].is_reformat
