"""Shared run-and-report logic of the global modification dialogs (M-1..M-3).

A :class:`TransformDialog` holds the options of one transform (added by a subclass), a
:class:`DestinationBox` (change the open document as one undo step, or write a file), a busy
indicator and Run / Cancel. Running goes through :func:`designer.ui.jobs.start_job`: the
transform runs on the thread pool, the dialog stays responsive and Cancel stops it. The run
ends with a :class:`StatusDialog` carrying the transform's log.

Cancel is honoured until the result is committed: once the worker starts writing the output
file (or the finished result is on its way to the document) Cancel can no longer half-undo
it, so the run reports what really happened.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import onnx
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QCloseEvent, QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from designer.core.io import write_model
from designer.core.io.external import is_external, iter_model_tensors
from designer.core.io.save import AUTO_EXTERNAL_LIMIT
from designer.core.transforms import TransformCancelled, TransformLog, replace_edit
from designer.ui.dialogs.status_dialog import RunState, StatusDialog
from designer.ui.jobs import IsCancelled, Job, Report, start_job
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ErrorLabel

if TYPE_CHECKING:
    from designer.core.io.stream import DataSink

MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"


@dataclass
class TransformOutcome:
    """What a transform produced: the new model, its log, the undo text, lines for the
    status message (e.g. the numerical check) and a warning that makes the run yellow."""

    model: onnx.ModelProto
    log: TransformLog
    label: str
    summary: list[str] = field(default_factory=list)
    warning: str | None = None
    saved: Path | None = None


TransformWork = Callable[[Report, IsCancelled], TransformOutcome]


@dataclass(frozen=True)
class StreamableWork:
    """A transform that can also write each converted weight straight into the output's
    data file (``run``'s third argument, a :class:`designer.core.io.stream.DataSink`) instead
    of holding every one until the save. Called with two arguments it runs without one."""

    run: Callable[[Report, IsCancelled, DataSink | None], TransformOutcome]

    def __call__(self, report: Report, cancelled: IsCancelled) -> TransformOutcome:
        return self.run(report, cancelled, None)


def same_file(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name the same file (resolved, or the same inode)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


def has_external_data(model: onnx.ModelProto) -> bool:
    return any(is_external(t) for t in iter_model_tensors(model))


class _EnterFilter(QObject):
    def __init__(self, parent: QObject, on_enter: Callable[[], object] | None) -> None:
        super().__init__(parent)
        self.on_enter = on_enter

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            if self.on_enter is not None:
                self.on_enter()
            return True
        return False


def keep_enter(edit: QLineEdit, on_enter: Callable[[], object] | None = None) -> None:
    """Enter in ``edit`` calls ``on_enter`` instead of pressing the dialog's Run button
    (typing a filter or a name must never start a transform)."""
    edit.installEventFilter(_EnterFilter(edit, on_enter))


def plain_button(text: str) -> QPushButton:
    """A push button that never becomes the dialog's default (Enter stays with Run)."""
    button = QPushButton(text)
    button.setAutoDefault(False)
    return button


class DestinationBox(QGroupBox):
    """Where the result goes: the open document (one undo step) or a file."""

    def __init__(self, session: DocumentSession, suffix: str, parent: QWidget | None = None):
        super().__init__("Destination", parent)
        self.session = session
        layout = QVBoxLayout(self)
        self.to_document = QRadioButton("Modify the open document (undoable as one step)")
        self.to_file = QRadioButton("Write to file:")
        self.to_document.setChecked(True)
        layout.addWidget(self.to_document)
        row = QHBoxLayout()
        row.addWidget(self.to_file)
        self.path = QLineEdit(str(self._default_path(suffix)))
        self.path.setToolTip("The new model file; the open model's own file is refused")
        self.browse = plain_button("Browse…")
        self.browse.clicked.connect(self._browse)
        row.addWidget(self.path, 1)
        row.addWidget(self.browse)
        layout.addLayout(row)
        self.to_file.toggled.connect(self._sync)
        self._sync()

    def _default_path(self, suffix: str) -> Path:
        source = self.session.doc.path
        if source is None:
            return Path.cwd() / f"model_{suffix}.onnx"
        return source.with_name(f"{source.stem}_{suffix}.onnx")

    def _sync(self) -> None:
        self.path.setEnabled(self.to_file.isChecked())
        self.browse.setEnabled(self.to_file.isChecked())

    def _browse(self) -> None:
        chosen = self.choose_path(self.path.text())
        if chosen:
            self.path.setText(chosen)
            self.to_file.setChecked(True)

    def choose_path(self, start: str) -> str:
        """Ask for the output file (a seam for tests)."""
        name, _ = QFileDialog.getSaveFileName(self, "Write Model To", start, MODEL_FILTER)
        return name

    def target(self) -> Path | None:
        """The output file, or None for the open document."""
        return Path(self.path.text().strip()).expanduser() if self.to_file.isChecked() else None

    def validate(self) -> str | None:
        """Why the destination cannot be used, or None."""
        if not self.to_file.isChecked():
            return None
        text = self.path.text().strip()
        if not text:
            return "Enter the file to write the result to."
        target = Path(text).expanduser()
        source = self.session.doc.path
        if source is not None and same_file(target, source):
            return (
                f"{target} is the open model's own file; choose another file, or modify "
                "the open document and save it."
            )
        if target.is_dir():
            return f"{target} is a folder; choose a file name."
        if not target.parent.is_dir():
            return f"The folder {target.parent} does not exist."
        return None


class _CommitGuard:
    """Makes Cancel and "start writing the result" mutually exclusive."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.committing = False
        self.job: Job | None = None

    def cancel(self) -> bool:
        """Ask the job to stop; False if the result is already being committed."""
        with self.lock:
            if self.committing or self.job is None:
                return False
            self.job.cancel()
            return True

    def commit(self, cancelled: IsCancelled) -> None:
        with self.lock:
            if cancelled():
                raise TransformCancelled()
            self.committing = True


class TransformDialog(QDialog):
    """Base of the three dialogs. Subclasses put their options in ``self.body`` and
    implement :meth:`prepare`; some override :meth:`before_run` (the cast preview)."""

    #: Emitted with the RunState after a run ended and its status dialog is up.
    runEnded = Signal(object)

    def __init__(
        self,
        session: DocumentSession,
        what: str,
        run_text: str,
        suffix: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.what = what
        self.setWindowTitle(what)
        self.job: Job | None = None
        self.status: StatusDialog | None = None
        self._guard: _CommitGuard | None = None
        layout = QVBoxLayout(self)
        self.options = QWidget()
        self.body = QVBoxLayout(self.options)
        self.body.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.options, 1)
        self.destination = DestinationBox(session, suffix)
        layout.addWidget(self.destination)
        self.error = ErrorLabel()
        layout.addWidget(self.error)
        busy = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setVisible(False)
        self.progress_text = QLabel()
        busy.addWidget(self.progress, 3)
        busy.addWidget(self.progress_text, 2)
        layout.addLayout(busy)
        self.buttons = QDialogButtonBox()
        self.run_button = self.buttons.addButton(run_text, QDialogButtonBox.ButtonRole.ActionRole)
        self.run_button.setDefault(True)
        self.run_button.setAutoDefault(True)
        self.run_button.clicked.connect(self.run)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.close_button.setAutoDefault(False)
        self.close_button.clicked.connect(self.reject)
        layout.addWidget(self.buttons)

    # --- for subclasses -----------------------------------------------------------------
    def prepare(self) -> TransformWork | str:
        """The work to run with the current options, or a message saying what is wrong."""
        raise NotImplementedError

    def before_run(self, work: TransformWork) -> None:
        """Hook between validation and the run; the default runs at once."""
        self.start(work)

    def show_error(self, message: str) -> None:
        self.error.setText(message)

    @property
    def running(self) -> bool:
        return self.job is not None

    # --- running -------------------------------------------------------------------------
    def run(self) -> None:
        """Validate, then run (nothing changes on bad input: the message says why)."""
        if self.running:
            return
        problem = self.destination.validate()
        prepared = self.prepare() if problem is None else problem
        if isinstance(prepared, str):
            self.show_error(prepared)
            return
        self.show_error("")
        self.before_run(prepared)

    def run_job(
        self,
        work: Callable[[Report, IsCancelled], Any],
        on_finished: Callable[[Any], None],
        on_failed: Callable[[str], None],
        on_cancelled: Callable[[], None],
        text: str,
    ) -> Job:
        """Run ``work`` off the GUI thread with the busy indicator and Cancel."""
        ready = threading.Event()

        def guarded(report: Report, cancelled: IsCancelled) -> Any:
            ready.wait()  # signals are connected before the work can end
            return work(report, cancelled)

        self._set_busy(True, text)
        job = start_job(guarded, self)
        self.job = job

        def done(handler: Callable[..., None]) -> Callable[..., None]:
            def call(*args: Any) -> None:
                self.job = None
                self._guard = None
                self._set_busy(False, "")
                handler(*args)

            return call

        job.progress.connect(self._on_progress)
        job.finished.connect(done(on_finished))
        job.failed.connect(done(on_failed))
        job.cancelled.connect(done(on_cancelled))
        ready.set()
        return job

    def start(self, work: TransformWork) -> None:
        """Run the transform, commit the result to the chosen destination, report."""
        target = self.destination.target()
        doc = self.session.doc
        source_model, source_dir = doc.model, doc.base_dir
        guard = _CommitGuard()

        def full(report: Report, cancelled: IsCancelled) -> TransformOutcome:
            if (
                target is not None
                and isinstance(work, StreamableWork)
                and has_external_data(source_model)
            ):
                # OUT keeps its weights external: each converted one goes straight into its
                # data file, not held until the save (designer.core.io.stream)
                from designer.core.io.stream import DataSink

                with DataSink(target, source_model) as sink:
                    outcome: TransformOutcome = work.run(report, cancelled, sink)
                    guard.commit(cancelled)
                    report(1.0, f"writing {target.name}")
                    saved = write_model(outcome.model, target, source_dir, limit=0, sink=sink)
                outcome.saved = saved.path
                return outcome
            outcome = work(report, cancelled)
            guard.commit(cancelled)
            if target is not None:
                report(1.0, f"writing {target.name}")
                limit = 0 if has_external_data(source_model) else AUTO_EXTERNAL_LIMIT
                outcome.saved = write_model(outcome.model, target, source_dir, limit=limit).path
            return outcome

        def finished(outcome: TransformOutcome) -> None:
            if target is None and doc.model is not source_model:
                self.report(
                    RunState.FAILURE,
                    "The document changed while the transform ran; nothing was applied. "
                    "Run it again.",
                    outcome.log.text(),
                )
                return
            refused = (
                self.session.try_push(replace_edit(outcome.label, outcome.model))
                if target is None
                else None
            )
            if refused is not None:
                self.report(RunState.FAILURE, f"The document refused the result: {refused}", "")
                return
            where = (
                f"The result was written to {outcome.saved}."
                if outcome.saved is not None
                else "The open document was changed as one step; Edit > Undo restores it."
            )
            lines = [where, *outcome.summary]
            state = RunState.SUCCESS
            if outcome.warning:
                lines.append(outcome.warning)
                state = RunState.WARNING
            self.report(state, "\n".join(lines), outcome.log.text())
            self.accept()

        def failed(message: str) -> None:
            self.report(RunState.FAILURE, f"{message}\nNothing was changed.", "")

        def cancelled() -> None:
            self.report(RunState.CANCELLED, "Nothing was changed.", "")

        self._guard = guard
        guard.job = self.run_job(full, finished, failed, cancelled, f"{self.what}…")

    def cancel_run(self) -> None:
        """Cancel button while running: stop the job unless its result is being written."""
        if self._guard is not None:
            if not self._guard.cancel():
                self.progress_text.setText("Writing the result; it can no longer be cancelled")
                return
        elif self.job is not None:
            self.job.cancel()
        self.progress_text.setText("Cancelling…")

    def report(self, state: RunState, message: str, details: str) -> None:
        """Show the status dialog (non-blocking; kept in ``self.status``)."""
        owner = self.parentWidget() or self
        self.status = StatusDialog(self.what, state, message, details, owner)
        self.status.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.status.open()
        self.runEnded.emit(state)

    # --- busy state ----------------------------------------------------------------------
    def _set_busy(self, busy: bool, text: str) -> None:
        self.options.setEnabled(not busy)
        self.destination.setEnabled(not busy)
        self.run_button.setEnabled(not busy)
        self.close_button.setText("Cancel" if busy else "Close")
        self.close_button.setToolTip("Stop the running transform" if busy else "")
        self.progress.setVisible(busy)
        self.progress.setRange(0, 0)  # indeterminate until the first progress report
        self.progress_text.setText(text)

    def _on_progress(self, fraction: float, text: str) -> None:
        if self.job is None:
            return
        self.progress.setRange(0, 1000)
        self.progress.setValue(int(fraction * 1000))
        if text:
            self.progress_text.setText(text)

    def reject(self) -> None:
        if self.running:
            self.cancel_run()
            return
        super().reject()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.running:
            self.cancel_run()
            event.ignore()
            return
        super().closeEvent(event)
