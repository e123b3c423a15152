"""The profile report tab on the committed ONNX Runtime profiles: tables, charts, timeline,
sorting/filtering, warm-up range, CSV/JSON export, bad files, closing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.shots import save_screenshot
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from designer.activities.reports import parse_ort_profile
from designer.ui.main_window import MainWindow
from designer.ui.reports.charts import BarChartWidget, bar_chart
from designer.ui.reports.report_tab import ReportTab, open_profile

ROOT = Path(__file__).resolve().parents[2]
ORT = ROOT.parent / "shared" / "fixtures" / "generated" / "onnxruntime-1.32.0-cpu"

pytestmark = pytest.mark.skipif(not ORT.is_dir(), reason=f"{ORT} (shared fixtures) is absent")


def fixture_profile(kind: str) -> Path:
    return next(ORT.glob(f"tiny_cnn_opt-{kind}_ort_profile_*.json"))


def open_report(window: MainWindow, qtbot: QtBot, kind: str = "all") -> ReportTab:
    open_profile(window, fixture_profile(kind), ORT / "tiny_cnn.onnx")
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), ReportTab), timeout=10_000)
    tab = window.tabs.currentWidget()
    assert isinstance(tab, ReportTab)
    return tab


def test_report_tab_tables_charts_and_timeline(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_report(window, qtbot)
    expected = parse_ort_profile(fixture_profile("all"), warmup=1)
    assert window.stack.currentWidget() is window.tabs
    assert window.tab() is None and window.document_tabs() == []  # not a document
    assert "Median" in tab.header.text() and "Throughput" in tab.header.text()
    assert tab.node_table.model.rowCount() == len(expected.nodes)
    assert tab.op_table.model.rowCount() == len(expected.op_types)
    assert tab.iteration_table.model.rowCount() == len(expected.iterations)
    assert len(tab.timeline.events) == len(expected.timeline()) > 0
    assert tab.timeline.lanes[0] == expected.timeline()[0].op_type
    assert [tab.tabs.tabText(i) for i in range(tab.tabs.count())][:4] == [
        "Charts",
        "Nodes",
        "Op Types",
        "Iterations",
    ]
    chart = tab.node_chart
    assert isinstance(chart, BarChartWidget)
    assert [name for name, _v in chart.bars] == [n.name for n in expected.nodes[:15]]
    for _label, bar, text, shown, value in chart._rects:  # readable: no bare "…", no overlap
        assert shown.strip("…") and text.left() >= bar.right() and value.endswith(" µs")
    assert max(bar.right() for _l, bar, _t, _s, _v in chart._rects) <= chart.width()
    tab.tabs.setCurrentIndex(0)
    save_screenshot(tab, "report_charts.png")


def test_tables_sort_numerically_and_filter(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_report(window, qtbot)
    table = tab.node_table
    total = table.model.table.column_index("total_us")
    table.view.sortByColumn(total, Qt.SortOrder.AscendingOrder)
    values = [float(v.replace(",", "")) for v in table.visible_column("total_us")]
    assert values == sorted(values)
    table.filter.setText("conv")
    shown = table.visible_column("op_type")
    assert shown and set(shown) == {"Conv"}
    assert "of" in table.count.text()
    table.filter.setText("no such node at all")
    assert table.proxy.rowCount() == 0
    tab.tabs.setCurrentIndex(1)
    table.filter.setText("")
    save_screenshot(tab, "report_nodes.png")


def test_warmup_range_reparses(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_report(window, qtbot)
    assert tab.report.summary.warmup_runs == 1
    tab.warmup.setValue(0)
    qtbot.waitUntil(lambda: tab.report.summary.warmup_runs == 0, timeout=10_000)
    assert tab.report.summary.measured_runs == len(tab.report.iterations)


def test_export_csv_and_json(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    tab = open_report(window, qtbot)
    out = tmp_path / "export"
    tab.ask_export_folder = lambda: out  # type: ignore[method-assign]
    written = tab.export(("csv",)) + tab.export(("json",))
    name = fixture_profile("all").name.removesuffix(".json")
    names = {p.name for p in written}
    reports = ("summary", "detail", "op_type", "iteration", "kernel", "expert", "timeline")
    for table in reports:
        assert f"{name}_{table}.csv" in names and f"{name}_{table}.json" in names
    detail = json.loads((out / f"{name}_detail.json").read_text())
    assert len(detail["rows"]) == len(tab.report.nodes)  # the profiled nodes
    header = (out / f"{name}_detail.csv").read_text().splitlines()[0]
    assert header.startswith("name,op_type,device,precision,calls,total_us")
    assert "Wrote 7 files" in tab.message.text()
    tab.ask_export_folder = lambda: None  # type: ignore[method-assign]
    assert tab.export(("csv",)) == []  # cancelled: nothing written


def test_export_to_unwritable_folder_says_so(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    tab = open_report(window, qtbot)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    tab.ask_export_folder = lambda: blocker / "sub"  # type: ignore[method-assign]
    assert tab.export(("csv",)) == []
    assert tab.message.text().startswith("Export failed")


def test_bad_profile_is_a_clear_error(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a profile"')
    job = open_profile(window, bad)
    qtbot.waitUntil(lambda: bool(window.errors), timeout=10_000)  # type: ignore[attr-defined]
    assert job.wait(1)
    assert "not an ONNX Runtime profile" in window.errors[0]  # type: ignore[attr-defined]
    assert window.tabs.count() == 0


def test_closing_the_report_tab(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_report(window, qtbot)
    window.close_tab(window.tabs.indexOf(tab))
    assert window.tabs.count() == 0
    assert window.stack.currentWidget() is window.welcome


def test_painter_bar_chart_fallback(qtbot: QtBot) -> None:
    chart = bar_chart("Top", [("conv1", 12.5), ("relu", 3.0)], "µs", use_qtcharts=False)
    assert isinstance(chart, BarChartWidget)
    qtbot.addWidget(chart)
    chart.resize(400, 200)
    image = chart.grab().toImage()
    assert (
        image.pixelColor(
            int(chart._rects[0][1].center().x()), int(chart._rects[0][1].center().y())
        ).name()
        == "#3f7fd0"
    )
    assert chart._rects[0][1].width() > chart._rects[1][1].width()
