"""What the TensorRT dialog runs off the GUI thread: the check of the target (deployment
folder, TensorRT and its version, GPU, clock locking) and the build / profiling run, reporting
through the ORT dialog's :class:`ActivitySignals`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from designer.activities.connections import Connection
from designer.activities.deploy import DependencyState, DependencyStatus
from designer.activities.runner import ActivityResult
from designer.activities.targets import Cancelled, CancelToken
from designer.activities.targets.hostkeys import HostKeyDecider
from designer.activities.trt.options import TrtBuildOptions, TrtProfileOptions
from designer.activities.trt.run import run_trt_build, run_trt_profile
from designer.core.errors import DesignerError
from designer.ui.dialogs.activity_jobs import ActivitySignals, _open


@dataclass
class TrtOutcome:
    result: ActivityResult
    report: Any = None  # a TrtReport when a profile came back and could be read
    parse_error: str = ""


def _state(ok: bool) -> DependencyState:
    return DependencyState.CURRENT if ok else DependencyState.UNAVAILABLE


def detection_statuses(found: Any) -> list[DependencyStatus]:
    """The TensorRT rows of the dependency panel for one detection result."""
    version = getattr(found, "version", None)
    trtexec = getattr(found, "trtexec", None)
    source = getattr(found, "source", None) or "none"
    jetson = (
        " — Jetson (L4T): the system's TensorRT (JetPack), never pip wheels"
        if getattr(found, "jetson", False)
        else ""
    )
    detail = (
        f"{version} ({source}) {trtexec}{jetson}"
        if trtexec and version
        else getattr(found, "reason", "") or "not found"
    )
    rows = [
        DependencyStatus(
            "tensorrt", "TensorRT (trtexec)", _state(bool(trtexec and version)), detail
        ),
        DependencyStatus(
            "gpu",
            "CUDA GPU",
            _state(bool(getattr(found, "gpu", False))),
            getattr(found, "gpu_detail", "") or "",
        ),
        DependencyStatus(
            "clocks",
            "Clock locking (optional)",
            _state(bool(getattr(found, "can_lock_clocks", False))),
            getattr(found, "clocks_detail", "") or "",
        ),
    ]
    return rows


def check_trt(
    conn: Connection | None,
    password: str | None,
    decide: HostKeyDecider,
    signals: ActivitySignals,
    deploy: bool,
    custom: str | None,
    source: str | None,
    token: CancelToken,
) -> tuple[list[DependencyStatus], Any]:
    """Worker thread: find TensorRT on the target (version, GPU, clock locking); on an SSH
    target also check (``deploy``: bring up to date) the deployment folder's dependencies."""
    from designer.activities.trt.deps import trt_deployment
    from designer.activities.trt.detect import detect_tensorrt

    target = _open(conn, password, decide)
    try:
        deploy_dir = conn.deploy_dir if conn is not None else None
        found = detect_tensorrt(
            target, deploy_dir=deploy_dir, custom=custom, source=source, cancel=token
        )
        rows = detection_statuses(found)
        for i, row in enumerate(rows):
            signals.dependency.emit(i + 1, len(rows), row)
        if conn is None:
            return rows, found
        dep = trt_deployment(target, conn.deploy_dir, found)
        progress = signals.dependency.emit
        if deploy:
            statuses = dep.deploy(progress=progress, log=signals.line.emit, cancel=token)
        else:
            statuses = dep.check(progress=progress, cancel=token)
        keys = {s.key for s in statuses}
        return [r for r in rows if r.key not in keys] + statuses, found
    finally:
        target.close()


def run_trt(
    conn: Connection | None,
    password: str | None,
    decide: HostKeyDecider,
    options: TrtBuildOptions | TrtProfileOptions,
    custom: str | None,
    source: str | None,
    signals: ActivitySignals,
    token: CancelToken,
    passes: int = 1,
    detection: Any = None,
) -> TrtOutcome:
    """Connect, build or profile, read the report. Never raises for run-time failures.
    ``detection``: what Check found on this target (None: detect again)."""
    target = None
    try:
        target = _open(conn, password, decide)
        kwargs: dict[str, Any] = {
            "custom": custom,
            "source": source,
            "detection": detection,
            "on_log": signals.line.emit,
            "on_status": signals.status.emit,
            "cancel": token,
        }
        if conn is not None:
            kwargs["deploy_dir"] = conn.deploy_dir
        if isinstance(options, TrtProfileOptions):
            result = run_trt_profile(target, options, passes=passes, **kwargs)
        else:
            result = run_trt_build(target, options, **kwargs)
    except Cancelled:
        result = ActivityResult("cancelled", None, [], "cancelled by the user")
    except DesignerError as exc:
        result = ActivityResult("failed", None, [], str(exc))
    finally:
        if target is not None:
            target.close()
    outcome = TrtOutcome(result)
    if result.profile is not None and result.profile.is_file():
        outcome.report, outcome.parse_error = read_report(result, options)
    return outcome


def read_report(result: ActivityResult, options: Any) -> tuple[Any, str]:
    """(TrtReport, "") or (None, why) for what a profiling run brought back."""
    from designer.activities.reports.trt_tables import load_run_report

    layer_info = None
    if isinstance(options, TrtProfileOptions) and options.build.layer_info:
        built = Path(options.build.layer_info)
        layer_info = built if built.is_file() else None
    try:
        return load_run_report(result, layer_info), ""
    except DesignerError as exc:
        return None, str(exc)
