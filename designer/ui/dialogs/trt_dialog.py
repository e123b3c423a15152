"""Export TensorRT Engine (SPEC X-3) and Profile with TensorRT (X-4): the ONNX Runtime
activity dialog (target at the top, dependencies, live log, Cancel) with the TensorRT form.

Check connects, finds TensorRT on the target and reads its version; the form then disables
what that version lacks. "Show Command" prints the exact line Build / Profile runs on the
chosen target — its paths and timing cache included (the same one ``onnx-designer trt build
--print-command`` prints for that target). A finished build lists
the engine, log and layer JSON; a profile opens the TensorRT report tab.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QHBoxLayout, QPushButton

from designer.activities.connections import Connection
from designer.activities.deploy import DependencyStatus
from designer.activities.targets import CancelToken
from designer.core.errors import DesignerError
from designer.ui.dialogs.activity_dialog import ActivityDialog
from designer.ui.dialogs.trt_form import TrtForm
from designer.ui.dialogs.trt_jobs import TrtOutcome, check_trt, run_trt
from designer.ui.jobs import start_job_with

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow


def graph_opener() -> tuple[Any, str]:
    """F2's ``open_engine_tab`` when the engine explorer exists, else (None, why not)."""
    try:
        from designer.ui.engine import open_engine_tab
    except ImportError:
        return None, "needs the engine explorer (not in this build)"
    return open_engine_tab, "open the layer JSON in the engine explorer when the build ends"


class TrtDialog(ActivityDialog):
    """``profile=False``: Export TensorRT Engine; ``True``: Profile with TensorRT."""

    SIZE = (980, 720)  # fits a 1366×768 screen with the window frame
    LOCAL_DEPLOY_TIP = (
        "Local runs use this machine's TensorRT (trtexec, or the one chosen below); "
        "nothing is deployed"
    )

    def __init__(
        self, window: MainWindow | None, model: Path | None = None, profile: bool = False
    ) -> None:
        self.profile_mode = profile
        self.TITLE = "Profile with TensorRT" if profile else "Export TensorRT Engine"
        self.detection: Any = None
        self._checked_for: tuple[str | None, str | None, str] | None = None
        super().__init__(window, model)
        self.log.setPlaceholderText("trtexec's output appears here while it runs.")
        self.log.setMinimumHeight(60)  # 4 lines: the form's rows need the height more
        self.check_button.setToolTip("Connect, find TensorRT on the target and read its version")
        self.command_button = QPushButton("Show Command")
        self.command_button.setToolTip("Print the trtexec command line for the checked target")
        self.command_button.clicked.connect(self.show_command)
        self.run_button.setText("Profile" if profile else "Build")
        layout = self.layout()
        assert layout is not None
        row = layout.itemAt(layout.count() - 1)  # the Run/Cancel/Close row
        buttons = row.layout() if row is not None else None
        assert isinstance(buttons, QHBoxLayout)
        buttons.insertWidget(1, self.command_button)
        opener, reason = graph_opener()
        self.trt_form.set_graph_opener(opener is not None and not profile, reason)
        if profile:
            self.report_button.setText("Open Report")
        else:
            self.report_button.setText("Open Engine Graph")
            self.report_button.setToolTip(reason)

    def make_form(self) -> TrtForm:  # type: ignore[override]
        self.trt_form = TrtForm(self.profile_mode, self)
        self.trt_form.convertRequested.connect(self.convert_model)
        return self.trt_form

    def convert_model(self) -> None:
        """Open the model (or its tab) and the FP16 conversion dialog for it: the precision
        change that a strongly typed TensorRT accepts, as one undoable step."""
        from designer.ui.tools.global_modification import ENTRIES, open_dialog

        window, model = self.window_, self.trt_form.model_path()
        if window is None or model is None:
            return
        window.open_files([model])
        tab = window.tab()
        if tab is None or tab.session.doc.path != model.resolve():
            return
        factory = next(entry[3] for entry in ENTRIES if entry[0] == "convert_fp16")
        open_dialog(window, factory)

    def reset_for_target(self) -> None:
        self.detection = None
        self.trt_form.clear_version()
        self.trt_form.set_clocks(False, "Check the target first: clocks can be locked on a Jetson")

    def _custom(self) -> str | None:
        try:
            return self.trt_form.custom_trtexec()
        except DesignerError:
            return None

    # --- check -----------------------------------------------------------------------------
    def check_work(
        self, conn: Connection | None, password: str | None, deploy: bool, token: CancelToken
    ) -> tuple[list[DependencyStatus], Any]:
        source = self.trt_form.trt_source()
        return check_trt(
            conn, password, self.decider, self.signals, deploy, self._custom(), source, token
        )

    def _check_key(self) -> tuple[str | None, str | None, str]:
        """What a detection depends on: the source, the custom path, the target."""
        conn = self.connection()
        return self.trt_form.trt_source(), self._custom(), conn.name if conn else ""

    def _checked(self, statuses: list[DependencyStatus], found: Any) -> None:
        self._ended()
        self.deps.set_statuses(statuses)
        self.detection = found
        self._checked_for = self._check_key()
        version = getattr(found, "version", None)
        if version is not None and getattr(found, "trtexec", None):
            self.trt_form.set_version(version)
            self.deps.set_idle(getattr(found, "summary", "") or f"TensorRT {version} found.")
        else:
            reason = getattr(found, "reason", "") or "not found"
            self.deps.set_idle(f"No TensorRT: {reason}")
            if version is None:  # Show Command previews a chosen version (_preview_inputs)
                self.trt_form.set_missing(reason)
            else:  # a Python builder without trtexec: its version still rules the options
                self.trt_form.set_version(version)
        self.trt_form.set_clocks(
            bool(getattr(found, "can_lock_clocks", False)),
            getattr(found, "clocks_detail", "") or "clock locking is not permitted here",
        )

    # --- command preview -------------------------------------------------------------------
    def _preview_inputs(self) -> tuple[Any, Any]:
        """(options, detection) for a preview — detection None when the Check found no
        TensorRT (the form's preview version is used then); DesignerError saying what to do
        first."""
        found = self.detection
        if found is None:
            raise DesignerError("press Check first: the command depends on the TensorRT version")
        if self._checked_for != self._check_key():
            raise DesignerError(
                "the TensorRT choice changed since the last Check: press Check again"
            )
        if getattr(found, "version", None) is None:
            found = None
        return self.trt_form.options(), found

    def version_preview(self, options: Any) -> str:
        """The line for the form's preview version where the target has no TensorRT, as
        ``trt build --print-command --trt-version`` (``profile trt``'s) prints it: the
        custom trtexec or plain ``trtexec``, no target paths, no timing cache."""
        from designer.activities.trt.command import (
            format_command,
            trtexec_argv,
            trtexec_profile_argv,
        )
        from designer.activities.trt.options import TrtProfileOptions

        version = self.trt_form.chosen_preview()
        trtexec = self._custom() or "trtexec"
        if isinstance(options, TrtProfileOptions):
            return format_command(trtexec_profile_argv(options, version, trtexec=trtexec))
        return format_command(trtexec_argv(options, version, trtexec=trtexec))

    def _show_version_preview(self, options: Any) -> None:
        try:
            line = self.version_preview(options)
        except DesignerError as exc:
            self.show_status(str(exc), ok=False)
            return
        version = self.trt_form.chosen_preview().short
        reason = self.trt_form.missing_reason or "not found"
        self.append_log(f"# no TensorRT on this target: {reason}; preview for TensorRT {version}")
        self.append_log(f"$ {line}")
        self.show_status(
            f"No TensorRT on this target: {reason}. The line for TensorRT {version} is"
            f" printed in the log (a preview: Build needs TensorRT there).{self._shapes_note()}"
        )

    def _shapes_note(self, form: str = " Note: {}.") -> str:
        """``form`` filled with what trtexec runs the prebuilt engine's dynamic inputs
        without a shape with (where ``profile trt --use-engine`` prints its note), else ""."""
        note = self.trt_form.shapes_note if self.profile_mode else None
        return form.format(note) if note else ""

    def preview_work(
        self, conn: Connection | None, password: str | None, options: Any, found: Any
    ) -> str:
        """The line Build / Profile runs for ``options`` (run.preview_trt_build / _profile,
        as ``trt build --print-command``): the target's paths, the timing cache. On an SSH
        target this connects (to resolve the deployment folder); nothing is copied or run."""
        from designer.activities.trt.command import format_command
        from designer.activities.trt.options import TrtProfileOptions
        from designer.activities.trt.run import preview_trt_build, preview_trt_profile
        from designer.ui.dialogs.activity_jobs import _open

        deploy_dir = conn.deploy_dir if conn is not None else ".onnx-designer"
        target = _open(conn, password, self.decider)
        try:
            if isinstance(options, TrtProfileOptions):
                argv = preview_trt_profile(target, options, found, deploy_dir=deploy_dir)
            else:
                argv = preview_trt_build(target, options, found, deploy_dir=deploy_dir)
        finally:
            target.close()
        return format_command(argv)

    def command_line(self) -> str:
        """The exact line Build / Profile would run now (first pass when profiling), for the
        checked target (where the Check found no TensorRT: the preview for the form's chosen
        version). Blocks while an SSH target connects: :meth:`show_command` does that off the
        GUI thread. DesignerError when it cannot be known yet."""
        options, found = self._preview_inputs()
        if found is None:
            return self.version_preview(options)
        conn = self.connection()
        ok, password = self._password(conn)
        if not ok:
            raise DesignerError(self.status.text() or "the target needs a password")
        return self.preview_work(conn, password, options, found)

    def show_command(self) -> None:
        """Print the line Build / Profile runs in the log (SSH: after connecting, off the
        GUI thread)."""
        if self.job is not None:
            return
        try:
            options, found = self._preview_inputs()
        except DesignerError as exc:
            self.show_status(str(exc), ok=False)
            return
        if found is None:
            self._show_version_preview(options)
            return
        conn = self.connection()
        if conn is None:
            try:
                line = self.preview_work(None, None, options, found)
            except DesignerError as exc:
                self.show_status(str(exc), ok=False)
                return
            self._command_shown(line)
            return
        ok, password = self._password(conn)
        if not ok:
            return
        token = CancelToken()
        job = start_job_with(
            lambda _r, _c: self.preview_work(conn, password, options, found),
            self,
            finished=self._command_shown,
            failed=self._command_failed,
            cancelled=lambda: self._command_failed("cancelled"),
        )
        self._started(job, token)
        self.show_status(f"Connecting to {conn.name} for the command line…")

    def _command_shown(self, line: str) -> None:
        if self.job is not None:
            self._ended()
        self.append_log(f"$ {line}")
        passes = self.trt_form.passes.value() if self.profile_mode else 1
        more = f" (the first of {passes} measurement passes)" if passes > 1 else ""
        self.show_status(f"Command line printed in the log{more}.{self._shapes_note()}")

    def _command_failed(self, text: str) -> None:
        self._ended()
        self.show_status(f"No command line: {text}", ok=False)

    # --- run -------------------------------------------------------------------------------
    def describe_run(self, options: Any, where: str) -> str:
        what = "profiling" if self.profile_mode else "building an engine from"
        model = getattr(options, "build", options).model
        note = self._shapes_note("\n# note: {}")  # a line of its own in the log
        return f"{what} {model} on {where}{note}"

    def run_work(  # type: ignore[override]
        self, conn: Connection | None, password: str | None, options: Any, token: CancelToken
    ) -> TrtOutcome:
        source = self.trt_form.trt_source()
        passes = self.trt_form.passes.value() if self.profile_mode else 1
        checked = self.detection if self._checked_for == self._check_key() else None
        return run_trt(
            conn, password, self.decider, options, self._custom(), source, self.signals, token,
            passes, checked,
        )  # fmt: skip

    def _finished(self, outcome: Any) -> None:
        self._ended()
        if not isinstance(outcome, TrtOutcome):  # a job that failed before it could run
            outcome = TrtOutcome(outcome.result)
        self.outcome = outcome
        result = outcome.result
        if result.error and not any(result.error in line for line in self._log_tail()):
            self.append_log(f"error: {result.error}")
        kept = ", ".join(f"{k} {v}" for k, v in result.outputs.items())
        kept_text = f" Kept: {kept}." if kept else ""
        if result.status == "ok":
            self.show_status(f"Done in {result.seconds:.1f} s.{kept_text}", ok=True)
            if self.profile_mode and outcome.report is not None:
                self.report_button.setEnabled(True)
                self.open_report()
            elif self.profile_mode:
                self.show_status(f"The profile could not be read: {outcome.parse_error}", ok=False)
            else:
                self._after_build(result)
        elif result.status == "cancelled":
            self.show_status(f"Cancelled.{kept_text}", ok=False)
        else:
            self.show_status(f"Failed: {result.error}.{kept_text}", ok=False)

    def _after_build(self, result: Any) -> None:
        opener, _reason = graph_opener()
        layer_info = result.outputs.get("layer_info")
        ready = opener is not None and layer_info is not None and self.window_ is not None
        self.report_button.setEnabled(ready)
        if ready and self.trt_form.open_graph.isChecked():
            self.open_report()

    def open_report(self) -> None:
        outcome = self.outcome
        if not isinstance(outcome, TrtOutcome) or self.window_ is None:
            return
        if self.profile_mode:
            from designer.ui.reports.trt_report_tab import open_trt_report_tab

            if outcome.report is not None:
                open_trt_report_tab(self.window_, outcome.report, self.trt_form.model_path())
            return
        opener, _reason = graph_opener()
        layer_info = outcome.result.outputs.get("layer_info")
        if opener is not None and layer_info is not None:
            opener(self.window_, layer_info)
