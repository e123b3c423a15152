"""The Findings dock on real profiles (fixture and profiled here), Show on Canvas, and the
comparison overlay of two runs (Tools > Compare Two Profiles…)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDockWidget
from pytestqt.qtbot import QtBot

from designer.ui.canvas.items import NodeItem
from designer.ui.docks.findings import FindingsPanel
from designer.ui.main_window import MainWindow
from designer.ui.reports.report_tab import ReportTab, open_profile
from designer.ui.tools.compare_runs import start_comparison
from tests.activities.analysis_helpers import profile_model
from tests.helpers.shared import ORT_FIXTURES, model

OPT_OFF = next(ORT_FIXTURES.glob("tiny_cnn_opt-disabled_*.json"))
OPT_ALL = next(ORT_FIXTURES.glob("tiny_cnn_opt-all_*.json"))
TINY = ORT_FIXTURES / "tiny_cnn.onnx"
SHOTS = Path("/tmp/od-notes/shots")


def shot(widget: object, name: str) -> None:
    """Keep a screenshot for the notes when asked (ONNX_DESIGNER_NOTES_SHOTS=1)."""
    if os.environ.get("ONNX_DESIGNER_NOTES_SHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        assert widget.grab().save(str(SHOTS / name))  # type: ignore[attr-defined]


def panel_of(window: MainWindow) -> tuple[QDockWidget, FindingsPanel]:
    dock = next(d for d in window.docks if d.objectName() == "dock_findings")
    panel = dock.widget()
    assert isinstance(panel, FindingsPanel)
    return dock, panel


def open_report(window: MainWindow, qtbot: QtBot, profile: Path, model_path: Path) -> ReportTab:
    open_profile(window, profile, model_path)
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), ReportTab), timeout=15_000)
    tab = window.tabs.currentWidget()
    assert isinstance(tab, ReportTab)
    return tab


def test_findings_follow_the_report_and_show_on_canvas(window: MainWindow, qtbot: QtBot) -> None:
    dock, panel = panel_of(window)
    assert "Open a profile report" in panel.header.text()
    report = open_report(window, qtbot, OPT_OFF, TINY)
    qtbot.waitUntil(lambda: panel.analysis is not None, timeout=15_000)
    assert panel.analysis is not None
    findings = panel.analysis.findings
    assert panel.table.rowCount() == len(findings) >= 1
    assert dock.windowTitle() == f"Findings ({len(findings)})"
    gains = [f.gain_us or 0.0 for f in findings]
    assert gains == sorted(gains, reverse=True)
    row = next(i for i, f in enumerate(findings) if f.detector == "fp32-tensor-core")
    panel.table.selectRow(row)
    assert "run in FP32" in panel.detail.toPlainText() and panel.show_button.isEnabled()
    assert panel.show_on_canvas()  # opens tiny_cnn.onnx, selects the two Convs and the MatMul
    doc_tab = window.tab()
    assert doc_tab is not None and doc_tab.session.doc.path == TINY.resolve()
    selected = [i for i in doc_tab.view.canvas.selectedItems() if isinstance(i, NodeItem)]
    assert sorted(i.view.name for i in selected) == ["Convolution110", "Convolution28", "Times212"]
    assert "3 node(s) selected" in panel.status.text()
    # The report's warm-up setting is the analysis range: changing it re-analyses.
    window.tabs.setCurrentWidget(report)
    report.warmup.setValue(0)
    qtbot.waitUntil(
        lambda: panel.analysis is not None and panel.analysis.stats.range.start == 0,  # type: ignore[union-attr]
        timeout=15_000,
    )
    assert "iterations 0–2" in panel.header.text()


def test_findings_of_a_transformer(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    gpt2 = model("gpt2_6l_h64.torchscript.onnx")
    profile = profile_model(gpt2, tmp_path, optimize=False, runs=3)
    _dock, panel = panel_of(window)
    window.open_files([gpt2])
    qtbot.waitUntil(lambda: window.tab() is not None, timeout=30_000)
    open_report(window, qtbot, profile, gpt2)
    qtbot.waitUntil(lambda: panel.analysis is not None, timeout=30_000)
    assert panel.analysis is not None
    detectors = {f.detector for f in panel.analysis.findings}
    assert {"fused-patterns", "tiny-kernels", "dynamic-no-profile"} <= detectors
    row = next(
        i
        for i, f in enumerate(panel.analysis.findings)
        if f.detector == "fused-patterns" and "FastGelu" in f.problem
    )
    panel.table.selectRow(row)
    dock = panel.dock
    dock.setFloating(True)
    dock.resize(900, 360)
    qtbot.wait(50)
    shot(dock, "H-findings-dock.png")
    dock.setFloating(False)
    assert panel.show_on_canvas()
    doc_tab = window.tab()
    assert doc_tab is not None
    names = {i.view.name for i in doc_tab.view.canvas.selectedItems() if isinstance(i, NodeItem)}
    assert len(names) == 42 and any(n.endswith("/Tanh") for n in names)
    # A whole-model finding has no nodes to show.
    row = next(
        i for i, f in enumerate(panel.analysis.findings) if f.detector == "dynamic-no-profile"
    )
    panel.table.selectRow(row)
    assert not panel.show_button.isEnabled() and not panel.show_on_canvas()


def test_comparison_overlay(window: MainWindow, qtbot: QtBot) -> None:
    window.open_files([TINY])
    qtbot.waitUntil(lambda: window.tab() is not None, timeout=15_000)
    tab = window.tab()
    assert tab is not None
    job = start_comparison(window, tab, OPT_OFF, OPT_ALL)
    qtbot.waitUntil(lambda: bool(tab.view.canvas.overlay_keys()), timeout=15_000)
    assert job.wait(1) and not window.errors  # type: ignore[attr-defined]
    items = {i.view.name: i for i in tab.view.canvas.items() if isinstance(i, NodeItem)}
    conv = items["Convolution110"]  # 3x faster with optimizations on
    assert conv.heat_fill is not None and conv.heat_fill.hueF() == pytest.approx(0.33, abs=0.01)
    assert conv.heat_label.startswith("-")
    relu = items["ReLU114"]  # its fused Conv's time split onto it: slower
    assert relu.heat_fill is not None and relu.heat_fill.hueF() == pytest.approx(0.0, abs=0.01)
    assert "Comparison:" in window.statusBar().currentMessage()
    tab.view.resetTransform()  # readable zoom: names, op types and the change labels
    tab.view.center_on(items["Pooling66"].key)
    qtbot.wait(50)
    shot(tab.view, "H-compare-overlay.png")
    window.actions_by_name["clear_comparison"].trigger()
    assert not tab.view.canvas.overlay_keys() and conv.heat_fill is None


def test_findings_of_a_tensorrt_report(window: MainWindow, qtbot: QtBot) -> None:
    from designer.activities.reports.trt_tables import load_trt_report
    from designer.ui.reports.trt_report_tab import open_trt_report_tab
    from tests.helpers.shared import TREX

    profile = TREX / "examples" / "pytorch" / "resnet" / "A100" / "fp32"
    report = load_trt_report(
        profile / "resnet.onnx.engine.profile.json",
        layer_info=profile / "resnet.onnx.engine.graph.json",
    )
    _dock, panel = panel_of(window)
    open_trt_report_tab(window, report)
    qtbot.waitUntil(lambda: panel.analysis is not None, timeout=15_000)
    assert panel.analysis is not None and panel.analysis.profile.kind == "tensorrt"
    first = panel.analysis.findings[0]
    assert first.detector == "fp32-tensor-core" and first.severity == "high"
    assert panel.table.item(0, 0).text().endswith("%)")  # an estimated gain
