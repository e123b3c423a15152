"""The profile overlay on the canvas: nodes tinted by their share of time, labels, clear."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.shots import save_screenshot
from pytestqt.qtbot import QtBot

from designer.core.edits import MoveNodes
from designer.core.scope import MAIN_SCOPE
from designer.ui.canvas.items import heat_color
from designer.ui.main_window import DocumentTab, MainWindow
from designer.ui.reports.report_tab import ReportTab, open_profile

ROOT = Path(__file__).resolve().parents[2]
ORT = ROOT.parent / "shared" / "fixtures" / "generated" / "onnxruntime-1.32.0-cpu"
EXAMPLE = ROOT / "resources" / "examples" / "tiny_cnn.onnx"


def open_doc(window: MainWindow, path: Path) -> DocumentTab:
    window.open_files([path])
    tab = window.tab()
    assert tab is not None and tab.view.wait_for_layout(30_000)
    return tab


def test_set_overlay_tints_and_clears(window: MainWindow) -> None:
    tab = open_doc(window, EXAMPLE)
    items = tab.view.canvas.node_items
    keys = [k for k, item in items.items() if item.view.op_type][:3]
    tab.view.set_overlay({keys[0]: 0.5, keys[1]: 0.25})
    assert items[keys[0]].heat == 1.0 and items[keys[0]].heat_label == "50.0%"
    assert items[keys[1]].heat == 0.5 and items[keys[1]].heat_label == "25.0%"
    assert items[keys[2]].heat == -1.0
    assert heat_color(1.0).red() > heat_color(1.0).green() > heat_color(0.0).blue() - 255
    assert heat_color(0.0) != heat_color(1.0)
    tab.view.grab()  # paints with the overlay
    tab.session.push(MoveNodes(MAIN_SCOPE, {keys[0]: (600.0, 600.0)}))
    tab.view.flush()
    assert tab.view.canvas.node_items[keys[0]].heat == 1.0  # kept across refreshes
    tab.view.set_overlay(None)
    assert all(item.heat == -1.0 for item in items.values())
    assert tab.view.canvas.overlay_keys() == set()


@pytest.mark.skipif(not ORT.is_dir(), reason=f"{ORT} (shared fixtures) is absent")
@pytest.mark.parametrize("kind", ["disabled", "all"])
def test_report_shows_time_on_the_profiled_model(
    window: MainWindow, qtbot: QtBot, kind: str
) -> None:
    doc_tab = open_doc(window, ORT / "tiny_cnn.onnx")
    profile = next(ORT.glob(f"tiny_cnn_opt-{kind}_ort_profile_*.json"))
    open_profile(window, profile, ORT / "tiny_cnn.onnx")
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), ReportTab), timeout=10_000)
    report_tab = window.tabs.currentWidget()
    assert isinstance(report_tab, ReportTab)
    report_tab.show_on_canvas()
    qtbot.waitUntil(lambda: report_tab.overlay_tab is doc_tab, timeout=10_000)
    assert window.tab() is doc_tab
    scope = doc_tab.session.doc.scope(MAIN_SCOPE)
    key_of = dict(zip((n.name for n in scope.proto.node), scope.keys, strict=True))
    items = doc_tab.view.canvas.node_items
    heats = {name: items[key].heat for name, key in key_of.items() if key in items}
    assert max(heats.values()) == 1.0
    colored = [name for name, heat in heats.items() if heat >= 0]
    assert len(colored) >= len(heats) - 1  # every node ran (or was fused into one that did)
    shares = report_tab.report.onnx_node_share()
    hottest = max(shares, key=shares.__getitem__)
    assert heats[hottest] == 1.0
    assert items[key_of[hottest]].heat_label.endswith("%")
    if kind == "disabled":
        doc_tab.view.fit_to_view()
        save_screenshot(window, "report_overlay.png")
    report_tab.clear_overlay()
    assert all(item.heat == -1.0 for item in items.values())


@pytest.mark.skipif(not ORT.is_dir(), reason=f"{ORT} (shared fixtures) is absent")
def test_show_on_canvas_without_the_model_says_so(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    profile = next(ORT.glob("tiny_cnn_opt-disabled_ort_profile_*.json"))
    open_profile(window, profile, tmp_path / "gone.onnx")
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), ReportTab), timeout=10_000)
    report_tab = window.tabs.currentWidget()
    assert isinstance(report_tab, ReportTab)
    report_tab.show_on_canvas()
    assert "Open the profiled model first" in report_tab.message.text()
