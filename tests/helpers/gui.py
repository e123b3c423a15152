"""Shared steps of the GUI tests."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from designer.ui.main_window import DocumentTab, MainWindow


def open_model(window: MainWindow, path: Path, qtbot: QtBot) -> DocumentTab:
    """Open ``path`` in ``window`` and wait until it is laid out and type-checked."""
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    assert tab.view.wait_for_layout(30_000)
    qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=30_000)
    return tab
