"""The run dialog of a custom tool (U-2): command line, status, elapsed time, live stdout and
stderr in separate panes, Cancel that ends the tool's whole process tree.

The dialog is modeless and never waits: the process runs in its own group, its output is
collected on worker threads and shown every 100 ms, and its end arrives as a queued signal.
"""

from __future__ import annotations

import contextlib
import threading
import time

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from designer.activities.custom_tools import ToolError, ToolInvocation, ToolProcess, ToolResult

MAX_LINES = 20_000
_GREEN, _RED, _GREY = "#1b7a1b", "#b00020", "#555555"


class _ExitBridge(QObject):
    """Carries the end of the run from the watcher thread to the GUI thread."""

    exited = Signal(object)  # ToolResult


class ToolRunDialog(QDialog):
    """Runs one :class:`ToolInvocation`. ``finished_run`` carries the ToolResult once the process
    has ended (also when it failed to start: ``returncode`` None and ``error`` set)."""

    finished_run = Signal(object)  # ToolResult

    def __init__(
        self, invocation: ToolInvocation, note: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.invocation = invocation
        self.process: ToolProcess | None = None
        self.run_result: ToolResult | None = None
        self.setWindowTitle(f"Run Tool — {invocation.tool.name}")
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.resize(820, 560)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        form = QFormLayout()
        self.command = QLineEdit(invocation.command_line)
        self.command.setReadOnly(True)
        self.command.setFont(mono)
        self.command.setCursorPosition(0)
        self.command.setToolTip(invocation.command_line)
        form.addRow("Command:", self.command)
        model_text = str(invocation.model) + (f"  ({note})" if note else "")
        self.model_label = QLabel(model_text)
        self.model_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Model:", self.model_label)
        self.status = QLabel("Not started")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setWordWrap(True)
        form.addRow("Status:", self.status)
        self.elapsed = QLabel("0.0 s")
        form.addRow("Elapsed:", self.elapsed)
        self.outcome = QLabel()
        self.outcome.setWordWrap(True)
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outcome.setVisible(False)
        form.addRow(self.outcome)

        self.stdout_view = self._pane(mono)
        self.stderr_view = self._pane(mono)
        splitter = QSplitter(Qt.Orientation.Vertical)
        for title, view in (
            ("Standard output", self.stdout_view),
            ("Standard error", self.stderr_view),
        ):
            box = QGroupBox(title)
            inner = QVBoxLayout(box)
            inner.setContentsMargins(6, 6, 6, 6)
            inner.addWidget(view)
            splitter.addWidget(box)
        splitter.setSizes([300, 160])

        self.buttons = QDialogButtonBox()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Terminate the tool and every process it started")
        self.close_button = QPushButton("Close")
        self.buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.buttons.addButton(self.close_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button.clicked.connect(self.close)
        self.close_button.setEnabled(False)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.buttons)

        self._lock = threading.Lock()
        self._out: list[str] = []
        self._err: list[str] = []
        self._started = 0.0
        self._bridge = _ExitBridge(self)
        self._bridge.exited.connect(self._on_exited)
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._tick)

    @staticmethod
    def _pane(font: object) -> QPlainTextEdit:
        view = QPlainTextEdit()
        view.setReadOnly(True)
        view.setFont(font)  # type: ignore[arg-type]
        view.setMaximumBlockCount(MAX_LINES)
        view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        return view

    # --- running ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.process is not None and self.run_result is None

    def start(self) -> None:
        """Start the tool; a tool that cannot start ends the run at once with the reason."""
        self.process = ToolProcess(
            list(self.invocation.argv),
            on_stdout=lambda line: self._collect(self._out, line),
            on_stderr=lambda line: self._collect(self._err, line),
            on_exit=self._emit_exit,
        )
        self._started = time.monotonic()
        try:
            self.process.start()
        except ToolError as exc:
            result = ToolResult(list(self.invocation.argv), None, error=str(exc))
            self._on_exited(result)
            return
        self._set_status(f"Running (process {self.process.pid})…", _GREY)
        self._timer.start()

    def cancel(self) -> None:
        """Terminate the process group; it is killed if still there after the grace period."""
        if self.running and self.process is not None:
            self._set_status("Cancelling…", _GREY)
            self.cancel_button.setEnabled(False)
            self.process.cancel()

    def _collect(self, target: list[str], line: str) -> None:  # worker threads
        with self._lock:
            target.append(line)

    def _emit_exit(self, result: ToolResult) -> None:  # watcher thread
        with contextlib.suppress(RuntimeError):  # the dialog is gone: nothing to show it on
            self._bridge.exited.emit(result)

    def _tick(self) -> None:
        with self._lock:
            out, err = self._out, self._err
            self._out, self._err = [], []
        if out:
            self.stdout_view.appendPlainText("\n".join(out))
        if err:
            self.stderr_view.appendPlainText("\n".join(err))
        if self.run_result is None and self._started:
            self.elapsed.setText(f"{time.monotonic() - self._started:.1f} s")

    def _on_exited(self, result: ToolResult) -> None:
        self.run_result = result
        self._tick()
        self._timer.stop()
        self.elapsed.setText(f"{result.elapsed:.1f} s")
        if result.error is not None:
            self._set_status(f"Failed to start: {result.error}", _RED)
        elif result.cancelled:
            self._set_status("Cancelled (the tool and its child processes were ended)", _GREY)
        elif result.returncode == 0:
            self._set_status("Finished with exit code 0", _GREEN)
        else:
            self._set_status(f"Finished with exit code {result.returncode} (failed)", _RED)
        self.cancel_button.setEnabled(False)
        self.close_button.setEnabled(True)
        self.close_button.setDefault(True)
        self.finished_run.emit(result)

    # --- presentation ----------------------------------------------------------------------
    def _set_status(self, text: str, color: str) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color:{color};font-weight:bold;")

    def show_outcome(self, text: str, ok: bool) -> None:
        """A line under the status about the output model (opened, missing, invalid)."""
        self.outcome.setText(text)
        self.outcome.setStyleSheet(f"color:{_GREEN if ok else _RED};")
        self.outcome.setVisible(True)

    def reject(self) -> None:  # Esc: cancel a running tool, close a finished one
        if self.running:
            self.cancel()
        else:
            super().reject()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.running:
            self.cancel()
        super().closeEvent(event)
