"""The engine report card's Lint table reads without scrolling sideways, and File > Open
Profile… opens a TensorRT profile as the TensorRT report (QA analysis defects 9 and 14), on
the real TREx exports of ResNet18 on an A100."""

from __future__ import annotations

import pytest
from helpers.engine_fixtures import A100, A100_QAT
from helpers.shots import save_screenshot
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from designer.ui.engine.report_tab import EngineReportTab
from designer.ui.engine.tab import EngineTab
from designer.ui.main_window import MainWindow
from designer.ui.reports.report_tab import ReportTab, open_profile
from designer.ui.reports.trt_report_tab import TrtReportTab

pytestmark = pytest.mark.skipif(not A100.is_dir(), reason=f"{A100} (shared fixtures) is absent")

LAYERS_AT_MOST = 240  # px: the Layers column leaves the rest of a ~900 px view to Found/Fix


def test_lint_found_and_fix_are_visible_beside_the_layers(window: MainWindow, qtbot: QtBot) -> None:
    window.resize(1600, 1000)
    window.open_files([A100_QAT])
    engine = window.tabs.currentWidget()
    assert isinstance(engine, EngineTab), window.errors  # type: ignore[attr-defined]
    engine.buttons["report"].click()
    card = window.tabs.currentWidget()
    assert isinstance(card, EngineReportTab)
    lint = card.table_widgets["lint"]
    card.tabs.setCurrentWidget(lint)
    view, table = lint.view, lint.model.table
    header = view.horizontalHeader()
    col = {c.key: i for i, c in enumerate(table.columns)}
    width = view.viewport().width()
    qtbot.waitUntil(lambda: header.sectionSize(col["fix"]) < width)
    assert width < 1000  # the report card beside the docks, as the window opens it
    assert header.sectionSize(col["layers"]) <= LAYERS_AT_MOST
    for key in ("found", "fix"):  # each begins on screen and ends there, with room to read
        start = header.sectionViewportPosition(col[key])
        assert start >= 0 and start + header.sectionSize(col[key]) <= width + 1, key
        assert header.sectionSize(col[key]) >= 150, key
    # The long layer list is elided on one line; its tooltip has all of it.
    row = next(r for r, v in enumerate(table.rows) if " | " in str(v[col["layers"]]))
    index = lint.proxy.mapFromSource(lint.model.index(row, col["layers"]))
    assert view.model().data(index, Qt.ItemDataRole.ToolTipRole) == table.rows[row][col["layers"]]
    # Rows are as tall as their wrapped Fix text, not one cut line.
    first = lint.proxy.index(0, col["fix"])
    qtbot.waitUntil(lambda: view.rowHeight(0) >= view.sizeHintForIndex(first).height())
    assert view.rowHeight(0) > 2 * view.verticalHeader().defaultSectionSize()
    save_screenshot(window, "engine_report_lint.png")


def test_open_profile_opens_a_tensorrt_profile_as_its_report(
    window: MainWindow, qtbot: QtBot
) -> None:
    profile = A100 / "fp16" / "resnet.onnx.engine.profile.json"
    job = open_profile(window, profile)
    qtbot.waitUntil(lambda: window.tabs.count() > 0 or bool(window.errors), timeout=20_000)  # type: ignore[attr-defined]
    assert job.wait(5)
    assert window.errors == []  # type: ignore[attr-defined]
    tab = window.tabs.currentWidget()
    assert isinstance(tab, TrtReportTab) and not isinstance(tab, ReportTab)
    assert tab.report.source == profile and len(tab.report.layers) == 36
    assert tab.report.graph is not None  # the layer JSON beside it: precisions, tactics
    assert tab.report.timing is not None
    precisions = {r.precision for r in tab.report.layers}
    assert {"FP16", "FP32"} <= precisions
    assert tab.title == "resnet.onnx.engine.profile (TensorRT report)"


def test_open_profile_still_explains_a_file_that_is_no_profile(
    window: MainWindow, qtbot: QtBot
) -> None:
    graph = A100 / "fp16" / "resnet.onnx.engine.graph.json"  # a layer JSON, no profile
    open_profile(window, graph)
    qtbot.waitUntil(lambda: bool(window.errors), timeout=20_000)  # type: ignore[attr-defined]
    assert window.tabs.count() == 0
