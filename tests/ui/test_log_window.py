"""The Log window (View > Log): records of module loggers, from any thread, with level,
time, logger and message; the level and text filters; the status-bar hint."""

from __future__ import annotations

import logging
import threading

from PySide6.QtWidgets import QDockWidget
from pytestqt.qtbot import QtBot

from designer.ui.docks.log import LogPanel
from designer.ui.main_window import MainWindow


def panel_of(window: MainWindow) -> LogPanel:
    panel = window.findChild(LogPanel)
    assert panel is not None
    return panel


def test_module_logger_records_show_with_level_time_logger(
    window: MainWindow, qtbot: QtBot
) -> None:
    panel = panel_of(window)
    panel.clear()  # records earlier tests in this process logged (the recorder is global)
    logger = logging.getLogger("designer.activities.example")
    logger.info("loaded 3 connections")
    qtbot.waitUntil(lambda: ("INFO", logger.name, "loaded 3 connections") in panel.visible_rows())
    item = panel.items()[-1]
    assert item.text(1).count(":") == 2  # HH:MM:SS
    assert "problem" not in panel.dock.windowTitle()

    done = threading.Event()
    threading.Thread(target=lambda: (logger.warning("disk almost full"), done.set())).start()
    assert done.wait(5)
    qtbot.waitUntil(lambda: ("WARNING", logger.name, "disk almost full") in panel.visible_rows())
    assert window.statusBar().currentMessage() == "Warning: disk almost full — see View > Log"
    assert panel.dock.windowTitle().startswith("Log (")

    panel.level.setCurrentIndex(2)  # warnings and errors
    rows = panel.visible_rows()
    assert ("WARNING", logger.name, "disk almost full") in rows
    assert all(level in ("WARNING", "ERROR", "CRITICAL") for level, _n, _m in rows)
    panel.level.setCurrentIndex(1)
    panel.text.setText("connections")
    assert panel.visible_rows() == [("INFO", logger.name, "loaded 3 connections")]
    panel.text.clear()
    panel.clear()
    assert panel.visible_rows() == [] and panel.dock.windowTitle() == "Log"


def test_view_log_shows_the_dock(window: MainWindow, qtbot: QtBot) -> None:
    dock = window.findChild(QDockWidget, "dock_log")
    assert dock is not None and dock.toggleViewAction() in window.windows_menu.actions()
    dock.close()
    action = window.actions_by_name["show_log"]
    assert action in window.menus["View"].actions()
    action.trigger()
    qtbot.waitUntil(dock.isVisible)
