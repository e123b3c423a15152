"""Shared run-and-report logic of the global modification dialogs (M-1..M-3).

A :class:`TransformDialog` holds the options of one transform (added by a subclass), a
:class:`DestinationBox` (change the open document as one undo step, or write a file), a busy
indicator and Run / Cancel. Running goes through :func:`designer.ui.jobs.start_job`: the
transform runs on the thread pool, the dialog stays responsive and Cancel stops it. The run
ends with a :class:`StatusDialog` carrying the transform's log.

The type checker gates a run as it gates the CLI's (``--force``): an input it rejects runs
only after the user confirms, and a result it rejects from an input it accepted is neither
applied nor written. A result equal to the input changes nothing (no undo step).

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
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from designer.core.analysis.gate import first_error
from designer.core.io import write_model
from designer.core.io.save import AUTO_EXTERNAL_LIMIT
from designer.core.transforms import (
    TransformCancelled,
    TransformError,
    TransformLog,
    replace_edit,
)
from designer.ui.dialogs.status_dialog import RunState, StatusDialog
from designer.ui.jobs import IsCancelled, Job, Report, start_job
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ErrorLabel

if TYPE_CHECKING:
    from designer.core.io.stream import DataSink

from designer.ui.dialogs.destination_box import MODEL_FILTER as MODEL_FILTER
from designer.ui.dialogs.destination_box import DestinationBox as DestinationBox
from designer.ui.dialogs.destination_box import has_external_data as has_external_data
from designer.ui.dialogs.destination_box import keep_enter as keep_enter
from designer.ui.dialogs.destination_box import plain_button as plain_button
from designer.ui.dialogs.destination_box import same_file as same_file


@dataclass
class TransformOutcome:
    """What a transform produced: the new model, its log, the undo text, lines for the
    status message (e.g. the numerical check) and a warning that makes the run yellow.
    ``saved``, ``unchanged`` (the result equals the input) and ``invalid`` (the type
    checker's first error of the result, when run on an invalid input) are set by the
    runner."""

    model: onnx.ModelProto
    log: TransformLog
    label: str
    summary: list[str] = field(default_factory=list)
    warning: str | None = None
    saved: Path | None = None
    unchanged: bool = False
    invalid: str | None = None


TransformWork = Callable[[Report, IsCancelled], TransformOutcome]


@dataclass(frozen=True)
class StreamableWork:
    """A transform that can also write each converted weight straight into the output's
    data file (``run``'s third argument, a :class:`designer.core.io.stream.DataSink`) instead
    of holding every one until the save. Called with two arguments it runs without one."""

    run: Callable[[Report, IsCancelled, DataSink | None], TransformOutcome]

    def __call__(self, report: Report, cancelled: IsCancelled) -> TransformOutcome:
        return self.run(report, cancelled, None)


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
    """Base of the transform dialogs. Subclasses put their options in ``self.body`` and
    implement :meth:`prepare`; some override :meth:`before_run` (the cast preview)."""

    #: Emitted with the RunState after a run ended and its status dialog is up.
    runEnded = Signal(object)
    #: False where the transform checks its own result (Sanitize refuses an invalid one).
    checks_result = True

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
        #: the type checker's first error of the input the user chose to transform anyway
        self.forced: str | None = None
        #: the last run's result was the input itself (nothing changed; no Show Changes)
        self.unchanged = False
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
        """Validate, check the model, then run (nothing changes on bad input: the message
        says why)."""
        if self.running:
            return
        problem = self.destination.validate()
        prepared = self.prepare() if problem is None else problem
        if isinstance(prepared, str):
            self.show_error(prepared)
            return
        self.show_error("")
        self.gate(prepared)

    def gate(self, work: TransformWork) -> None:
        """Check the input with the type checker (off the GUI thread; the CLI's gate,
        :func:`designer.core.analysis.gate.first_error`) and run ``work`` when it passes,
        or when the user confirms running on an invalid model (the CLI's ``--force``)."""
        model, path = self.session.doc.model, self.session.doc.path

        def check(report: Report, cancelled: IsCancelled) -> str | None:
            report(0.0, "checking the model")
            return first_error(model, path)

        def checked(problem: str | None) -> None:
            self.forced = problem
            if problem is not None and not self.confirm_invalid(problem):
                self.show_error(
                    f"Not run: the model is not valid ({problem}). Fix it first (the Type "
                    "Check dock lists every error), or run again and confirm."
                )
                return
            self.before_run(work)

        self.run_job(
            check,
            checked,
            lambda m: self.report(RunState.FAILURE, f"{m}\nNothing was changed.", ""),
            lambda: self.report(RunState.CANCELLED, "Nothing was changed.", ""),
            "Checking the model…",
        )

    def confirm_invalid(self, problem: str) -> bool:
        """Ask whether to transform a model the type checker rejects (a seam for tests)."""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Not a valid model",
            f"{self.session.title.rstrip('*')} is not a valid model: {problem}",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setInformativeText(
            f"Fix it first (the Type Check dock lists every error), or run {self.what} "
            "anyway: the result may not be valid either."
        )
        anyway = box.addButton("Run Anyway", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        confirmed = box.clickedButton() is anyway
        box.deleteLater()
        return confirmed

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
        source_model, source_dir, source_path = doc.model, doc.base_dir, doc.path
        stamps = dict(doc.data_stamps)  # a data file changed on disk since is refused
        guard = _CommitGuard()
        forced, what, verify = self.forced, self.what, self.checks_result
        self.unchanged = False

        def checked(outcome: TransformOutcome) -> None:
            """Refuse an invalid result of a valid input (the CLI's ``_verify``); note
            whether the result is the input itself."""
            problem = first_error(outcome.model, source_path) if verify else None
            outcome.invalid = problem
            if problem is not None and forced is None:
                done = "applied" if target is None else "written"
                raise TransformError(
                    f"{what} produced a model that is not valid ({problem}); the input "
                    f"was valid, so the result was not {done}."
                )
            outcome.unchanged = outcome.model == source_model

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
                    checked(outcome)
                    guard.commit(cancelled)
                    report(1.0, f"writing {target.name}")
                    saved = write_model(
                        outcome.model, target, source_dir, limit=0, sink=sink, stamps=stamps
                    )
                outcome.saved = saved.path
                return outcome
            outcome = work(report, cancelled)
            checked(outcome)
            guard.commit(cancelled)
            if target is not None:
                report(1.0, f"writing {target.name}")
                limit = 0 if has_external_data(source_model) else AUTO_EXTERNAL_LIMIT
                outcome.saved = write_model(
                    outcome.model, target, source_dir, limit=limit, stamps=stamps
                ).path
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
            self.unchanged = outcome.unchanged
            refused = (
                self.session.try_push(replace_edit(outcome.label, outcome.model))
                if target is None and not outcome.unchanged
                else None
            )
            if refused is not None:
                self.report(RunState.FAILURE, f"The document refused the result: {refused}", "")
                return
            state, message = self._ended(outcome, forced, verify)
            self.report(state, message, outcome.log.text())
            self.accept()

        def failed(message: str) -> None:
            self.report(RunState.FAILURE, f"{message}\nNothing was changed.", "")

        def cancelled() -> None:
            self.report(RunState.CANCELLED, "Nothing was changed.", "")

        self._guard = guard
        guard.job = self.run_job(full, finished, failed, cancelled, f"{self.what}…")

    @staticmethod
    def _ended(
        outcome: TransformOutcome, forced: str | None, verified: bool
    ) -> tuple[RunState, str]:
        """How a committed run ended: where the result went, the transform's lines, and
        the warnings (the transform's; an invalid input run anyway) that make it yellow."""
        if outcome.saved is not None:
            same = " (the same model as the open document)" if outcome.unchanged else ""
            where = f"The result was written to {outcome.saved}{same}."
        elif outcome.unchanged:
            where = "Nothing to change: the document is unchanged (no undo step)."
        else:
            where = "The open document was changed as one step; Edit > Undo restores it."
        warnings = [outcome.warning] if outcome.warning else []
        if forced is not None:
            result = ""
            if verified:
                result = (
                    f"; the result is not valid either ({outcome.invalid})"
                    if outcome.invalid
                    else "; the result passes the type check"
                )
            warnings.append(
                f"The input is not a valid model ({forced}); it ran anyway, as confirmed{result}."
            )
        state = RunState.WARNING if warnings else RunState.SUCCESS
        return state, "\n".join([where, *outcome.summary, *warnings])

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
