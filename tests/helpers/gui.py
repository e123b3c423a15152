"""Shared steps of the GUI tests."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from designer.ui.docks.explorer import ExplorerPanel
from designer.ui.main_window import DocumentTab, MainWindow


def open_model(window: MainWindow, path: Path, qtbot: QtBot) -> DocumentTab:
    """Open ``path`` in ``window`` and wait until it is laid out and type-checked."""
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    assert tab.view.wait_for_layout(30_000)
    qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=30_000)
    return tab


def explorer_panel(window: MainWindow) -> ExplorerPanel:
    """The Layer Explorer, its dock tab brought to the front as a user would click it: a
    hidden explorer reads the document's layers only when it is shown."""
    dock = next(d for d in window.docks if d.objectName() == "dock_explorer")
    dock.show()
    dock.raise_()
    QApplication.processEvents()
    panel = dock.widget()
    assert isinstance(panel, ExplorerPanel)
    return panel
