"""Log window (View > Log): the records of every module logger and plug-in — level, time,
logger, message — filterable by level and text. It shows what was logged before the window
opened too (a plug-in that failed while the window was being built), and a warning or error
that arrives later also shows in the status bar."""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from designer.logs import KEEP, recorder, setup_logging

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

TITLE = "Log"
#: Level filter choices: (text, minimum level shown).
LEVELS = (
    ("Debug and above", logging.DEBUG),
    ("Info and above", logging.INFO),
    ("Warnings and errors", logging.WARNING),
    ("Errors only", logging.ERROR),
)
COLUMNS = ("Level", "Time", "Logger", "Message")
_COLOURS = {logging.WARNING: "#9a6700", logging.ERROR: "#b42318", logging.CRITICAL: "#b42318"}


class _Bridge(QObject):
    """Carries records from any thread to the GUI thread."""

    record = Signal(object)


class LogPanel(QWidget):
    def __init__(self, window: MainWindow, dock: QDockWidget) -> None:
        super().__init__()
        self.window_ = window
        self.dock = dock
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        self.level = QComboBox()
        for text, level in LEVELS:
            self.level.addItem(text, level)
        self.level.setCurrentIndex(1)
        self.level.setToolTip("The least severe level shown")
        self.level.currentIndexChanged.connect(lambda _i: self.refilter())
        self.text = QLineEdit()
        self.text.setPlaceholderText("Filter by logger or message")
        self.text.setClearButtonEnabled(True)
        self.text.textChanged.connect(lambda _t: self.refilter())
        self.clear_button = QPushButton("Clear")
        self.clear_button.setAutoDefault(False)
        self.clear_button.clicked.connect(self.clear)
        self.count = QLabel()
        top.addWidget(self.level)
        top.addWidget(self.text, 1)
        top.addWidget(self.count)
        top.addWidget(self.clear_button)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setColumnWidth(0, 70)
        self.tree.setColumnWidth(1, 70)
        self.tree.setColumnWidth(2, 220)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)

        self.bridge = _Bridge(self)
        self.bridge.record.connect(self._arrived)
        self._listener = self._from_any_thread
        setup_logging()  # idempotent: the recorder is on the root logger
        log = recorder()
        # unsubscribe first thing on destruction, before any record can reach a dead panel
        self.destroyed.connect(lambda _o=None, f=self._listener: log.unsubscribe(f))
        for record in log.subscribe(self._listener):
            self.add(record)
        self._update_count()
        problems = self.problem_count()
        if problems:
            self.window_.statusBar().showMessage(
                f"{problems} warning(s) or error(s) while starting — see View > Log", 15000
            )

    # --- records -------------------------------------------------------------------------
    def _from_any_thread(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(RuntimeError):  # the window is being torn down
            self.bridge.record.emit(record)

    def _arrived(self, record: logging.LogRecord) -> None:
        if not shiboken6.isValid(self.dock):  # a queued record after the dock was deleted
            return
        self.add(record)
        self._update_count()
        if record.levelno >= logging.WARNING:
            self.window_.statusBar().showMessage(
                f"{record.levelname.capitalize()}: {record.getMessage()} — see View > Log", 10000
            )

    def add(self, record: logging.LogRecord) -> QTreeWidgetItem:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        message = record.getMessage()
        item = QTreeWidgetItem(
            [record.levelname, stamp, record.name, (message.splitlines() or [""])[0]]
        )
        item.setData(0, Qt.ItemDataRole.UserRole, record.levelno)
        item.setToolTip(3, message)
        colour = _COLOURS.get(record.levelno)
        if colour is not None:
            for column in range(len(COLUMNS)):
                item.setForeground(column, QBrush(QColor(colour)))
        self.tree.addTopLevelItem(item)
        while self.tree.topLevelItemCount() > KEEP:
            self.tree.takeTopLevelItem(0)
        item.setHidden(not self._shows(item))
        return item

    def _shows(self, item: QTreeWidgetItem) -> bool:
        if int(item.data(0, Qt.ItemDataRole.UserRole)) < int(self.level.currentData()):
            return False
        needle = self.text.text().strip().casefold()
        return not needle or needle in f"{item.text(2)} {item.toolTip(3)}".casefold()

    def items(self) -> list[QTreeWidgetItem]:
        found = (self.tree.topLevelItem(row) for row in range(self.tree.topLevelItemCount()))
        return [item for item in found if item is not None]

    def refilter(self) -> None:
        for item in self.items():
            item.setHidden(not self._shows(item))
        self._update_count()

    def visible_rows(self) -> list[tuple[str, str, str]]:
        """(level, logger, message) of each row shown, oldest first."""
        return [
            (item.text(0), item.text(2), item.toolTip(3))
            for item in self.items()
            if not item.isHidden()
        ]

    def problem_count(self) -> int:
        levels = [int(item.data(0, Qt.ItemDataRole.UserRole)) for item in self.items()]
        return len([level for level in levels if level >= logging.WARNING])

    def clear(self) -> None:
        self.tree.clear()
        self._update_count()

    def _update_count(self) -> None:
        shown = len(self.visible_rows())
        total = self.tree.topLevelItemCount()
        self.count.setText(f"{shown} of {total}" if shown != total else f"{total}")
        problems = self.problem_count()
        self.dock.setWindowTitle(f"{TITLE} ({problems} problem(s))" if problems else TITLE)


def create_dock(window: MainWindow) -> QDockWidget:
    dock = QDockWidget(TITLE, window)
    dock.setObjectName("dock_log")
    dock.setWidget(LogPanel(window, dock))
    return dock
