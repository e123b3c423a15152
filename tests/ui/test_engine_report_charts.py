"""The engine report card's and the TensorRT report's charts and tables read right, and the
TensorRT dialog's dependency table fits (QA trt-gui findings 8 and 9), on the real TREx
exports of ResNet18 on an A100 (FP16) and trtexec 10.16's output on an H100."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.engine_fixtures import A100_FP16, LAYER_JSON_10
from helpers.shared import TRT_SAMPLES
from helpers.shots import save_screenshot
from helpers.trt_fixtures import (
    dialog_model,  # noqa: F401 (the fixture model)
    trt_isolated,  # noqa: F401 (an autouse fixture)
)
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from designer.activities.deploy import DependencyState, DependencyStatus
from designer.activities.reports.trt_tables import load_profile_report
from designer.ui.dialogs.trt_dialog import TrtDialog
from designer.ui.engine.report_tab import EngineReportTab
from designer.ui.engine.tab import EngineTab
from designer.ui.main_window import MainWindow
from designer.ui.reports.charts import BarChartWidget
from designer.ui.reports.table_model import TableWidget
from designer.ui.reports.trt_report_tab import TrtReportTab, open_trt_report_tab

pytestmark = pytest.mark.skipif(
    not A100_FP16.is_file(), reason=f"{A100_FP16} (shared fixtures) is absent"
)

#: trtexec 10.16's log with the --dumpProfile table (percentages rounded to 0.1: 100.1 in all).
DUMP_PROFILE_LOG = TRT_SAMPLES / "result-05.log"
#: The largest bar spans at least this share of its chart's width (it had 10 px of ~310).
BAR_SHARE_AT_LEAST = 0.3


def _report(window: MainWindow, path: Path) -> EngineReportTab:
    window.open_files([path])
    engine = window.tabs.currentWidget()
    assert isinstance(engine, EngineTab), window.errors  # type: ignore[attr-defined]
    engine.buttons["report"].click()
    tab = window.tabs.currentWidget()
    assert isinstance(tab, EngineReportTab)
    tab.tabs.setCurrentIndex(0)
    return tab


def _chart(widget: QWidget) -> BarChartWidget:
    assert isinstance(widget, BarChartWidget)
    return widget


def _values(widget: QWidget) -> list[str]:
    return [value for *_rest, value in _chart(widget)._rects]


def _assert_readable(widget: QWidget) -> None:
    """The largest bar is long (scaled to the largest value, with room beside the labels),
    the others in proportion, and every value ends inside the chart."""
    chart = _chart(widget)
    bars = [bar for _label, bar, *_rest in chart._rects]
    values = [v for _, v in chart.bars]
    assert bars and bars[0].width() >= BAR_SHARE_AT_LEAST * chart.width(), chart.title
    for bar, value in zip(bars, values, strict=True):
        assert bar.width() == pytest.approx(bars[0].width() * value / values[0], abs=0.5)
    for _label, _bar, text, _shown, shown_value in chart._rects:
        width = chart.fontMetrics().horizontalAdvance(shown_value)
        assert text.left() + width <= chart.width(), (chart.title, shown_value)


def _assert_unsorted_without_indicator(widget: TableWidget) -> None:
    """Rows in the report's order and no sort indicator claiming otherwise."""
    header = widget.view.horizontalHeader()
    assert header.sortIndicatorSection() == -1, widget.model.table.name
    first = widget.model.table.columns[0].key
    in_order = [str(row[0]) for row in widget.model.table.rows]
    assert [v.replace(",", "") for v in widget.visible_column(first)][:3] == [
        v.replace(",", "") for v in in_order[:3]
    ]


def test_engine_charts_count_layers_as_integers_once(window: MainWindow) -> None:
    tab = _report(window, LAYER_JSON_10)  # no per-layer profile: counts, not latency
    assert list(tab.charts) == ["types", "precision", "top"]  # no second precision chart
    assert _values(tab.charts["types"])[:2] == ["4 layers", "2 layers"]  # kgen, Convolution
    assert _values(tab.charts["precision"]) == ["8 layers", "1 layers"]  # FP32, INT32
    assert _chart(tab.charts["top"]).bars == []
    assert "No per-layer profile" in _chart(tab.charts["top"]).empty
    _assert_readable(tab.charts["types"])
    save_screenshot(window, "engine_report_charts_trt10.png")


def test_engine_charts_scale_bars_to_the_largest(window: MainWindow) -> None:
    tab = _report(window, A100_FP16)
    assert list(tab.charts) == ["types", "precision", "precision_count", "top"]
    assert _values(tab.charts["precision_count"]) == ["35 layers", "1 layers"]  # FP16, FP32
    for chart in tab.charts.values():
        _assert_readable(chart)
    top = _chart(tab.charts["top"])
    assert top.bars[0][0] == "Conv_0 + Relu_1" and _values(top)[0] == "111.6 µs"
    save_screenshot(window, "engine_report_charts_a100_fp16.png")


def test_engine_report_tables_show_no_sort_indicator_until_sorted(window: MainWindow) -> None:
    tab = _report(window, A100_FP16)
    for widget in tab.table_widgets.values():
        _assert_unsorted_without_indicator(widget)
    summary = tab.table_widgets["summary"]
    assert summary.visible_column("metric")[:2] == ["engine", "tensorrt_version"]
    summary.view.horizontalHeader().sectionClicked.emit(0)  # a click still sorts
    summary.view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert summary.view.horizontalHeader().sortIndicatorSection() == 0
    metrics = summary.visible_column("metric")
    assert metrics == sorted(metrics, key=str.lower)


def test_trt_profile_type_shares_sum_to_100_percent(window: MainWindow) -> None:
    report = load_profile_report(DUMP_PROFILE_LOG)  # rounded percentages add up to 100.1
    assert sum(r.percent for r in report.layers) == pytest.approx(100.1)
    tab = open_trt_report_tab(window, report)
    assert isinstance(tab, TrtReportTab)
    shares = _chart(tab.type_chart).bars
    assert sum(v for _, v in shares) == pytest.approx(100.0, abs=1e-9)
    assert _values(tab.type_chart) == ["100.0 %"]  # one type: the log records none
    for name in ("layer_types", "precisions"):  # the tables' "% of total" too (100.10 before)
        table = report.tables()[name]
        column = [c.key for c in table.columns].index("percent")
        assert sum(float(row[column] or 0.0) for row in table.rows) == pytest.approx(100.0)
    _assert_readable(tab.layer_chart)
    assert len(_chart(tab.layer_chart).bars) == 15
    for widget in (tab.layer_table, tab.type_table, tab.precision_table, tab.summary_table):
        _assert_unsorted_without_indicator(widget)
    save_screenshot(window, "trt_report_charts_dump_profile.png")


# --- the TensorRT dialog's dependency table -----------------------------------------------------

#: The rows a Check of a local x86_64 target without TensorRT nor GPU reports (the texts of
#: designer.activities.trt.detect for that case).
NOTHING_FOUND = [
    DependencyStatus(
        "tensorrt",
        "TensorRT (trtexec)",
        DependencyState.UNAVAILABLE,
        "no trtexec (/usr/src/tensorrt/bin, PATH) and no tensorrt module: deploy the tensorrt"
        " wheels into the deployment venv, or give a custom trtexec path",
    ),
    DependencyStatus(
        "gpu", "CUDA GPU", DependencyState.UNAVAILABLE, "no nvidia-smi, no /dev/nvidia0"
    ),
    DependencyStatus(
        "clocks",
        "Clock locking (optional)",
        DependencyState.UNAVAILABLE,
        "no GPU whose clocks could be locked",
    ),
]


def test_dependency_table_fits_the_dialog_and_advises_per_dependency(
    window: MainWindow, qtbot: QtBot, model: Path
) -> None:
    dialog = TrtDialog(window, model, profile=False)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30_000)  # the automatic local check
    panel = dialog.deps
    panel.set_statuses(NOTHING_FOUND)
    tree = panel.tree
    qtbot.wait(50)  # the rows' heights follow the columns' widths once laid out
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    rows = {item.text(0): item for item in items if item is not None}
    assert len(rows) == 3
    assert {item.text(1) for item in rows.values()} == {"unavailable"}
    gpu, clocks = rows["CUDA GPU"].text(2), rows["Clock locking (optional)"].text(2)
    assert gpu.startswith("no nvidia-smi") and "NVIDIA GPU" in gpu and "install" not in gpu
    assert clocks.startswith("no GPU whose") and "optional" in clocks and "install" not in clocks
    trt = rows["TensorRT (trtexec)"].text(2)
    assert trt == NOTHING_FOUND[0].detail  # its detail says what to do already
    viewport = tree.viewport().rect()
    metrics = tree.fontMetrics()
    for item in rows.values():
        rect = tree.visualItemRect(item)
        assert viewport.contains(rect), item.text(0)  # every row on screen, no scrolling
        icon = tree.iconSize().width() + 12
        assert metrics.horizontalAdvance(item.text(1)) + icon <= tree.columnWidth(1)
        assert item.toolTip(2).endswith(item.text(2))
        width = tree.columnWidth(2) - 8
        needed = metrics.boundingRect(
            QRect(0, 0, width, 10_000), int(Qt.TextFlag.TextWordWrap.value), item.text(2)
        )
        assert needed.height() <= rect.height(), item.text(0)  # the wrapped detail, all of it
    save_screenshot(dialog, "trt_dialog_dependencies_unavailable.png")
