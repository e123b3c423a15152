"""What the activity dialog runs off the GUI thread: the dependency check/deploy and the
profiling run, reporting through :class:`ActivitySignals` (queued to the GUI thread)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from designer.activities.connections import Connection
from designer.activities.deploy import DependencyState, DependencyStatus
from designer.activities.reports import model_nodes, parse_ort_profile
from designer.activities.runner import (
    ActivityResult,
    OrtProfileOptions,
    list_providers,
    ort_deployment,
    run_ort_profile,
)
from designer.activities.targets import Cancelled, CancelToken, LocalTarget, SshTarget
from designer.activities.targets.hostkeys import HostKeyDecider
from designer.core.errors import DesignerError

if TYPE_CHECKING:
    from designer.activities.reports.ort_profile import OrtProfileReport


class ActivitySignals(QObject):
    """Emitted from the worker thread, delivered on the GUI thread."""

    line = Signal(str)
    status = Signal(str)
    dependency = Signal(int, int, object)  # done, total, DependencyStatus


@dataclass
class Outcome:
    result: ActivityResult
    report: OrtProfileReport | None = None
    nodes: list[Any] | None = None
    parse_error: str = ""


def _open(conn: Connection | None, password: str | None, decide: HostKeyDecider) -> Any:
    if conn is None:
        return LocalTarget()
    return SshTarget(conn.settings(password=password), decide).connect()


def check_dependencies(
    conn: Connection | None,
    password: str | None,
    decide: HostKeyDecider,
    signals: ActivitySignals,
    deploy: bool,
    token: CancelToken,
) -> tuple[list[DependencyStatus], list[str] | None]:
    """Check (and with ``deploy`` bring up to date) what profiling needs on the target, then
    list its execution providers when onnxruntime is there. Runs on a worker thread."""
    target = _open(conn, password, decide)
    try:
        if conn is None:
            return _local_check(target, signals)
        dep = ort_deployment(target, conn.deploy_dir)
        report = signals.dependency.emit
        if deploy:
            statuses = dep.deploy(progress=report, log=signals.line.emit, cancel=token)
        else:
            statuses = dep.check(progress=report, cancel=token)
        ready = all(s.current for s in statuses)
        return statuses, list_providers(target, dep) if ready else None
    finally:
        target.close()


def _local_check(
    target: LocalTarget, signals: ActivitySignals
) -> tuple[list[DependencyStatus], list[str] | None]:
    p = target.platform()
    version = ".".join(map(str, p.python_version or ()))
    ok = p.python_version is not None and p.python_version[:2] >= (3, 9)
    python = DependencyStatus(
        "python",
        "Python ≥ 3.9",
        DependencyState.CURRENT if ok else DependencyState.UNAVAILABLE,
        f"{p.describe()} ({p.python} {version})",
    )
    signals.dependency.emit(1, 2, python)
    probe = target.run(
        [target.python, "-c", "import onnxruntime; print(onnxruntime.__version__)"], timeout=60
    )
    ort = DependencyStatus(
        "venv",
        "onnxruntime",
        DependencyState.CURRENT if probe.ok else DependencyState.UNAVAILABLE,
        probe.stdout.strip() if probe.ok else "not importable: pip install onnxruntime",
    )
    signals.dependency.emit(2, 2, ort)
    return [python, ort], list_providers(target) if probe.ok else None


def run_profile(
    conn: Connection | None,
    password: str | None,
    decide: HostKeyDecider,
    options: OrtProfileOptions,
    signals: ActivitySignals,
    token: CancelToken,
) -> Outcome:
    """Connect, deploy what is missing, profile, parse. Never raises for run-time failures:
    the outcome's result says what failed and keeps the log and any partial profile."""
    log: list[str] = []
    target = None
    try:
        target = _open(conn, password, decide)
        deployment = None
        if conn is not None:
            signals.status.emit("checking the deployment")
            deployment = ort_deployment(target, conn.deploy_dir)
            statuses = deployment.check(progress=signals.dependency.emit, cancel=token)
            if not all(s.current for s in statuses):
                signals.status.emit("deploying")
                deployment.deploy(
                    progress=signals.dependency.emit, log=signals.line.emit, cancel=token
                )
        result = run_ort_profile(
            target,
            options,
            deployment=deployment,
            on_log=signals.line.emit,
            on_status=signals.status.emit,
            cancel=token,
        )
    except Cancelled:
        result = ActivityResult("cancelled", None, log, "cancelled by the user")
    except DesignerError as exc:
        result = ActivityResult("failed", None, log, str(exc))
    finally:
        if target is not None:
            target.close()
    outcome = Outcome(result)
    if result.profile is not None and result.profile.is_file():
        try:
            from designer.core.io import read_model

            outcome.nodes = model_nodes(read_model(options.model))
            outcome.report = parse_ort_profile(
                result.profile, warmup=options.warmup, model_nodes=outcome.nodes
            )
        except DesignerError as exc:
            outcome.parse_error = str(exc)
    return outcome
