"""The "Profile with ONNX Runtime" activity (SPEC A-1, A-3, A-4, R-1): target at the top,
the profiling options, the dependencies on the target, then a run with a live log, Cancel,
and the report opened as a tab. Every network or process call runs off the GUI thread."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
)

from designer.activities import secrets
from designer.activities.connections import Connection, ConnectionStore
from designer.activities.deploy import DependencyStatus
from designer.activities.runner import (
    CPU,
    ActivityResult,
)
from designer.activities.targets import CancelToken
from designer.core.errors import DesignerError
from designer.ui.dialogs.activity_form import ProfileForm
from designer.ui.dialogs.activity_jobs import (
    ActivitySignals,
    Outcome,
    check_dependencies,
    run_profile,
)
from designer.ui.dialogs.dependency_panel import DependencyPanel
from designer.ui.dialogs.host_key_dialog import GuiHostKeyDecider
from designer.ui.jobs import Job, start_job_with
from designer.ui.widgets.error_label import ERROR_STYLE

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

OK_STYLE = "color:#1e7b34"
LOCAL = "Local (this machine)"


class ActivityDialog(QDialog):
    """Profile a model with ONNX Runtime on this machine or an SSH target.

    The target row, dependency panel, log, status and Run/Cancel are generic: other
    activities (TensorRT) subclass it and override :meth:`make_form`, :meth:`reset_for_target`,
    :meth:`check_work`, :meth:`run_work`, ``_checked``, ``_finished`` and :meth:`open_report`."""

    TITLE = "Profile with ONNX Runtime"
    SIZE = (760, 700)  # fits a 1366×768 screen with the window frame
    #: The Deploy button's tooltip on this machine, where it is disabled.
    LOCAL_DEPLOY_TIP = "Local runs use this Python and its onnxruntime; nothing is deployed"

    def __init__(self, window: MainWindow | None, model: Path | None = None) -> None:
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle(self.TITLE)
        self.decider = GuiHostKeyDecider(self)
        self.signals = ActivitySignals(self)
        self.signals.line.connect(self.append_log)
        self.signals.status.connect(lambda text: self.show_status(f"{text.capitalize()}…"))
        self.signals.dependency.connect(self.deps_status)
        self.job: Job | None = None
        self.token: CancelToken | None = None
        self.outcome: Outcome | None = None
        self.target = QComboBox()
        self.target.currentIndexChanged.connect(lambda _i: self._target_changed())
        manage = QPushButton("Connections…")
        manage.clicked.connect(self.manage_connections)
        top = QHBoxLayout()
        top.addWidget(QLabel("<b>Target:</b>"))
        top.addWidget(self.target, 1)
        top.addWidget(manage)
        self.form = self.make_form()
        self.deps = DependencyPanel()
        self.check_button = QPushButton("Check")
        self.check_button.setToolTip("Connect and check what profiling needs on the target")
        self.check_button.clicked.connect(lambda: self.check(deploy=False))
        self.deploy_button = QPushButton("Deploy")
        self.deploy_button.clicked.connect(lambda: self.check(deploy=True))
        dep_buttons = QVBoxLayout()
        dep_buttons.addWidget(self.check_button)
        dep_buttons.addWidget(self.deploy_button)
        dep_buttons.addStretch(1)
        dep_box = QGroupBox("Dependencies on the target")
        dep_row = QHBoxLayout(dep_box)
        dep_row.addWidget(self.deps, 1)
        dep_row.addLayout(dep_buttons)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(20_000)
        self.log.setPlaceholderText("The runner's output appears here while it runs.")
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.report_button = QPushButton("Open Report")
        self.report_button.setEnabled(False)
        self.report_button.clicked.connect(self.open_report)
        close = QPushButton("Close")
        close.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.run_button, self.cancel_button, self.report_button, close):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.form)
        layout.addWidget(dep_box)
        layout.addWidget(QLabel("Log:"))
        layout.addWidget(self.log, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.resize(*self.SIZE)
        self.reload_targets()
        if model is not None:
            self.form.set_model(model)

    def make_form(self) -> ProfileForm:
        return ProfileForm(self)

    # --- target -------------------------------------------------------------------------------
    def reload_targets(self, select: str | None = None) -> None:
        current = select or self.target.currentText()
        self.target.blockSignals(True)
        self.target.clear()
        self.target.addItem(LOCAL, None)
        try:
            for conn in ConnectionStore().list():
                self.target.addItem(f"{conn.name}  (SSH, deploys to {conn.deploy_dir})", conn)
        except DesignerError as exc:
            self.show_status(str(exc), ok=False)
        index = max(self.target.findText(current), 0) if current else 0
        if select:
            index = next(
                (
                    i
                    for i in range(self.target.count())
                    if self.target.itemText(i).startswith(select + " ")
                ),
                index,
            )
        self.target.setCurrentIndex(index)
        self.target.blockSignals(False)
        self._target_changed()

    def connection(self) -> Connection | None:
        data = self.target.currentData()
        return data if isinstance(data, Connection) else None

    def manage_connections(self) -> None:
        from designer.ui.dialogs.connections_dialog import ConnectionsDialog

        dialog = ConnectionsDialog(self)
        dialog.connectionsChanged.connect(lambda: self.reload_targets())
        dialog.open()

    def _target_changed(self) -> None:
        self.deps.clear()
        self._update_deploy_button()
        self.reset_for_target()
        if self.connection() is None:
            self.check(deploy=False)
        else:
            self.deps.set_idle("Press Check to connect and check the dependencies.")

    def reset_for_target(self) -> None:
        """The target changed: forget what the form knew of the old one."""
        self.form.set_providers([CPU])

    def ask_password(self, conn: Connection) -> str | None:
        """The password of ``conn`` for this session (tests replace this)."""
        text, ok = QInputDialog.getText(
            self, "Password", f"Password for {conn.name}:", QLineEdit.EchoMode.Password
        )
        return text if ok and text else None

    def _password(self, conn: Connection | None) -> tuple[bool, str | None]:
        if conn is None or conn.auth != "password":
            return True, None
        stored = secrets.get_secret(conn.secret_account("password"))
        if stored is not None:
            return True, stored
        typed = self.ask_password(conn)
        if typed is None:
            self.show_status(f"{conn.name} needs a password.", ok=False)
            return False, None
        secrets.set_secret(conn.secret_account("password"), typed, persist=False)
        return True, typed

    # --- dependency check / deploy ----------------------------------------------------------------
    def check(self, deploy: bool) -> Job | None:
        if self.job is not None:
            return None
        conn = self.connection()
        ok, password = self._password(conn)
        if not ok:
            return None
        self.show_status("")  # what it said (e.g. "press Check first") is about to be stale
        token = CancelToken()
        job = start_job_with(
            lambda _r, _c: self.check_work(conn, password, deploy, token),
            self,
            finished=lambda found: self._checked(*found),
            failed=self._check_failed,
            cancelled=lambda: self._check_failed("cancelled"),
        )
        self._started(job, token)
        self.deps.set_busy("Deploying…" if deploy else "Checking…")
        return job

    def check_work(
        self, conn: Connection | None, password: str | None, deploy: bool, token: CancelToken
    ) -> tuple[list[DependencyStatus], list[str] | None]:
        """Worker thread: check (or deploy) the dependencies; the result goes to _checked."""
        return check_dependencies(conn, password, self.decider, self.signals, deploy, token)

    def deps_status(self, done: int, total: int, status: DependencyStatus) -> None:
        self.deps.set_status(done, total, status)

    def _checked(self, statuses: list[DependencyStatus], providers: list[str] | None) -> None:
        self._ended()
        self.deps.set_statuses(statuses)
        if providers is not None:
            self.form.set_providers(providers)
        missing = [s.label for s in statuses if not s.current]
        if not missing:
            self.deps.set_idle("Everything is current.")
        elif self.connection() is None:
            self.deps.set_idle("Install what is missing into this Python to profile locally.")
        else:
            self.deps.set_idle(f"{len(missing)} to deploy (Deploy, or Run deploys them first).")

    def _check_failed(self, text: str) -> None:
        self._ended()
        self.deps.set_idle(f"Check failed: {text}")
        self.deps.message.setStyleSheet(ERROR_STYLE)

    # --- run ------------------------------------------------------------------------------
    def run(self) -> Job | None:
        if self.job is not None:
            return None
        try:
            options = self.form.options()
        except DesignerError as exc:
            self.show_status(str(exc), ok=False)
            return None
        conn = self.connection()
        ok, password = self._password(conn)
        if not ok:
            return None
        token = CancelToken()
        self.log.clear()
        self.outcome = None
        self.report_button.setEnabled(False)
        self.append_log(self.describe_run(options, conn.name if conn else "this machine"))
        job = start_job_with(
            lambda _r, _c: self.run_work(conn, password, options, token),
            self,
            finished=self._finished,
            failed=lambda text: self._finished(Outcome(ActivityResult("failed", None, [], text))),
        )
        self._started(job, token)
        self.show_status("Starting…")
        return job

    def describe_run(self, options: Any, where: str) -> str:
        """The first log line of a run."""
        return f"profiling {options.model} on {where}"

    def run_work(
        self, conn: Connection | None, password: str | None, options: Any, token: CancelToken
    ) -> Outcome:
        """Worker thread: the activity itself; never raises for run-time failures."""
        return run_profile(conn, password, self.decider, options, self.signals, token)

    def cancel(self) -> None:
        if self.token is not None:
            self.token.cancel()
            self.show_status("Cancelling…")

    def _started(self, job: Job, token: CancelToken) -> None:
        self.job, self.token = job, token
        self.deps.message.setStyleSheet("")
        for widget in (self.run_button, self.check_button, self.deploy_button, self.target):
            widget.setEnabled(False)
        self.form.setEnabled(False)
        self.cancel_button.setEnabled(True)

    def _ended(self) -> None:
        self.job = self.token = None
        for widget in (self.run_button, self.check_button, self.target):
            widget.setEnabled(True)
        self._update_deploy_button()
        self.form.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def _update_deploy_button(self) -> None:
        local = self.connection() is None
        self.deploy_button.setEnabled(not local and self.job is None)
        self.deploy_button.setToolTip(
            self.LOCAL_DEPLOY_TIP if local else "Install what is missing or outdated on the target"
        )

    def _finished(self, outcome: Outcome) -> None:
        self._ended()
        self.outcome = outcome
        result = outcome.result
        if result.error and not any(result.error in line for line in self._log_tail()):
            self.append_log(f"error: {result.error}")
        kept = f" Partial profile kept: {result.profile}." if result.profile else ""
        if result.status == "ok" and outcome.report is not None:
            self.show_status(f"Done in {result.seconds:.1f} s: {result.profile}", ok=True)
            self.report_button.setEnabled(True)
            self.open_report()
        elif result.status == "ok":
            self.show_status(f"The profile could not be read: {outcome.parse_error}", ok=False)
        elif result.status == "cancelled":
            self.show_status(f"Cancelled.{kept}", ok=False)
        else:
            self.show_status(f"Failed: {result.error}.{kept}", ok=False)
        if result.status != "ok" and outcome.report is not None:
            self.report_button.setText("Open Partial Report")
            self.report_button.setEnabled(True)

    def open_report(self) -> None:
        from designer.ui.reports.report_tab import ReportTab, add_report_tab

        outcome = self.outcome
        if outcome is None or outcome.report is None or self.window_ is None:
            return
        profile = outcome.result.profile
        assert profile is not None
        model = self.form.model_path()
        tab = ReportTab(
            self.window_, profile, outcome.report, model, self.form.warmup.value(), outcome.nodes
        )
        add_report_tab(self.window_, tab)

    # --- log and status -------------------------------------------------------------------
    def append_log(self, line: str) -> None:
        self.log.appendPlainText(line)

    def _log_tail(self) -> list[str]:
        return self.log.toPlainText().splitlines()[-3:]

    def show_status(self, text: str, ok: bool = True) -> None:
        self.status.setStyleSheet("" if ok else ERROR_STYLE)
        self.status.setText(text)

    def reject(self) -> None:
        if self.job is not None:
            self.cancel()
            self.show_status("Cancelling; close again once it has stopped.", ok=False)
            return
        super().reject()
