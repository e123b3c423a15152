"""File > Open Profile… of a cut-off ONNX Runtime profile: the report tab shows what the
whole events say and a warning line that the file was cut off; a whole profile has none.
Real profile from ../shared, cut in tmp_path."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from designer.ui.main_window import MainWindow
from designer.ui.reports.report_tab import ReportTab, open_profile
from tests.helpers.shared import ORT_FIXTURES

OPT_OFF = next(ORT_FIXTURES.glob("tiny_cnn_opt-disabled_*.json"))
TINY = ORT_FIXTURES / "tiny_cnn.onnx"


def _open(window: MainWindow, qtbot: QtBot, profile: Path) -> ReportTab:
    def shown() -> bool:
        tab = window.tabs.currentWidget()
        return isinstance(tab, ReportTab) and tab.profile == profile

    open_profile(window, profile, TINY)
    qtbot.waitUntil(shown, timeout=15_000)
    tab = window.tabs.currentWidget()
    assert isinstance(tab, ReportTab)
    return tab


def test_a_cut_off_profile_shows_a_warning_line(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    whole = _open(window, qtbot, OPT_OFF)
    assert whole.warning.isHidden() and whole.warning.text() == ""
    cut = tmp_path / "cut.json"
    cut.write_bytes(OPT_OFF.read_bytes()[:3000])  # ends inside an event of the first run
    tab = _open(window, qtbot, cut)
    assert not window.errors  # type: ignore[attr-defined]
    assert len(tab.report.nodes) == 3
    assert tab.warning.isVisible()
    text = tab.warning.text()
    assert text.startswith("Warning: the profile was cut off after 5 events")
    assert "last iteration may be incomplete" in text
    # A re-read (another warm-up range) keeps it.
    tab.warmup.setValue(0)
    qtbot.waitUntil(lambda: tab.job is None, timeout=15_000)
    assert tab.warning.isVisible() and "cut off after 5 events" in tab.warning.text()
