"""How one TensorRT activity run is carried out on a target (see :mod:`.run` for the API).

A :class:`Plan` says what to upload, what comes back and how to make the command; the layout
of the paths on the target is deterministic (:func:`layout`), so ``--print-command`` can show
the exact line without running anything.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from designer.activities.deploy import Deployment
from designer.activities.runner import ActivityResult, model_files, upload_changed
from designer.activities.targets.base import (
    Cancelled,
    CancelToken,
    LineCallback,
    Target,
    TargetError,
)
from designer.activities.targets.local import LocalTarget
from designer.activities.trt.options import TrtOptionError
from designer.activities.trt.run_support import (
    explain_failure,
    local_timing_cache,
    timing_cache_name,
)
from designer.core.errors import DesignerError

TOOL = "trtexec"
# Names of the outputs (roles) inside <job>/out/ on the target.
OUT_NAMES = {
    "engine": "engine.trt",
    "layer_info": "layers.json",
    "profile": "profile.json",
    "times": "times.json",
}
Finder = tuple[Any, str | None, str | None]  # (detection or None, custom trtexec, source)


@dataclass
class Plan:
    """One run: host inputs to upload, host outputs to bring back, the command makers."""

    kind: str  # "build" | "profile"
    uploads: dict[str, Path]  # role → host file ("model", "engine_in", "calib")
    outputs: dict[str, Path]  # role → host destination
    argv: Callable[[dict[str, str], str, Any], list[str]]  # (target paths, trtexec, version)
    settings: Callable[[dict[str, str], Any], dict[str, Any]] | None = None  # Python builder
    lock_clocks: bool = False
    passes: int = 1  # measurement passes (profile): pass k ≥ 2 runs pass_argv(…, k)
    pass_argv: Callable[[dict[str, str], str, Any, int], list[str]] | None = None
    log_path: Path = field(default=Path())


class RunLog:
    """Every line to the callback, to memory and to the host log file (flushed per line)."""

    def __init__(self, path: Path, on_log: LineCallback | None) -> None:
        self.lines: list[str] = []
        self.on_log = on_log
        self.file: TextIO | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed in close())
        except OSError as exc:
            self.emit(f"warning: cannot write the log file {path}: {exc.strerror or exc}")

    def emit(self, line: str) -> None:
        self.lines.append(line)
        if self.file is not None:
            self.file.write(line + "\n")
            self.file.flush()
        if self.on_log is not None:
            self.on_log(line)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def job_key(target: Target, plan: Plan) -> str:
    first = plan.uploads.get("model") or plan.uploads.get("engine_in")
    text = f"{target.name}\0{plan.kind}\0{first.resolve() if first else ''}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def layout(
    target: Target, plan: Plan, version: Any, root: str | None
) -> tuple[dict[str, str], str]:
    """(role → path on the target, job folder). ``root`` None: this machine (inputs where
    they lie, outputs in ``<user cache>/trt/work/<key>/out``)."""
    key = job_key(target, plan)
    paths: dict[str, str] = {}
    if root is None:
        job = str(local_timing_cache(str(version)).parent / "work" / key)
        for role, src in plan.uploads.items():
            paths[role] = str(src.resolve())
        paths["timing_cache"] = str(local_timing_cache(str(version)))
    else:
        job = f"{root}/work/trt/{key}"
        for role, src in plan.uploads.items():
            paths[role] = f"{job}/{'model' if role == 'model' else role}/{src.name}"
        paths["timing_cache"] = f"{root}/trt/{timing_cache_name(str(version))}"
    for role in plan.outputs:
        paths[role] = f"{job}/out/{OUT_NAMES.get(role, role + '.json')}"
    paths["settings"] = f"{job}/settings.json"
    paths["pass_engine"] = f"{job}/out/pass-engine.trt"  # engine of pass 1 for passes ≥ 2
    paths["result"] = f"{job}/out/result.json"
    return paths, job


def command(plan: Plan, found: Any, paths: dict[str, str], runner: str) -> list[str]:
    """trtexec's argv, or the Python builder's (``runner`` = trt_build.py on the target)."""
    if found.trtexec is not None:
        return plan.argv(paths, found.trtexec, found.version)
    if plan.settings is None:
        raise TrtOptionError(
            "profiling needs trtexec, which the TensorRT wheels do not ship: use a system "
            "TensorRT (JetPack, /usr/src/tensorrt) or a custom trtexec path"
        )
    plan.settings(paths, found.version)  # refusals before anything runs
    return [found.python, runner, "--settings", paths["settings"], "--result", paths["result"]]


def execute(
    target: Target,
    plan: Plan,
    found: Any,
    deploy_dir: str,
    deployment: Deployment | None,
    tmp: Path,
    log: RunLog,
    status: Callable[[str], None],
    cancel: CancelToken | None,
    result: ActivityResult,
) -> None:
    """Deploy (SSH), upload, run, bring back; sets status/error/outputs of ``result``."""
    local = isinstance(target, LocalTarget)
    root = None
    if not local:
        from designer.activities.trt.deps import trt_deployment

        dep = deployment or trt_deployment(target, deploy_dir, found)
        status("checking deployment")
        if not all(s.current for s in dep.check(cancel=cancel)):
            status("deploying")
            dep.deploy(log=log.emit, cancel=cancel)
            result.copied.extend(dep.copied)
        root = dep.context().root
    paths, job = layout(target, plan, found.version, root)
    result.details["timing_cache"] = paths["timing_cache"]
    from designer.activities.runners import runner_path

    runner = str(runner_path("trt_build")) if local else f"{root}/runners/trt_build.py"
    try:
        argv = command(plan, found, paths, runner)
    except TrtOptionError as exc:
        raise TrtOptionError(f"TensorRT {found.version} on {target.name}: {exc}") from None
    result.details["argv"] = argv
    _prepare(target, local, plan, found, paths, job, tmp, log, status, cancel, result)
    from designer.activities.trt.command import format_command

    log.emit(f"$ {format_command(argv)}")
    restore = _lock_clocks(target, found, root, log, cancel) if plan.lock_clocks else None
    status("building" if plan.kind == "build" else "profiling")
    run_lines: list[str] = []

    def line(text: str) -> None:
        run_lines.append(text)
        log.emit(text)

    try:
        run = target.run(argv, on_stdout=line, on_stderr=line, cancel=cancel)
        for k in range(2, plan.passes + 1):
            if not run.ok or plan.pass_argv is None or found.trtexec is None:
                break
            status(f"measurement pass {k} of {plan.passes}")
            argv_k = plan.pass_argv(paths, found.trtexec, found.version, k)
            log.emit(f"$ {format_command(argv_k)}")
            run_lines.clear()
            run = target.run(argv_k, on_stdout=line, on_stderr=line, cancel=cancel)
    finally:
        if restore is not None:
            _restore_clocks(target, restore, log)
    status("copying results")
    fetch = {role: paths[role] for role in plan.outputs}
    _bring_home(target, local, fetch, plan.outputs, log, result)
    tool = TOOL if found.trtexec is not None else "the TensorRT Python builder"
    if run.cancelled:
        result.status, result.error = "cancelled", "cancelled by the user"
    elif run.exit_code != 0:
        result.status = "failed"
        result.error = explain_failure(run_lines, run.exit_code, tool, target.name)
    elif plan.kind == "build" and "engine" not in result.outputs:
        result.status = "failed"
        result.error = f"{tool} on {target.name} finished but wrote no engine (see the log)"
    elif plan.kind == "profile" and "profile" not in result.outputs:
        result.status = "failed"
        result.error = f"{tool} on {target.name} finished but wrote no profile (see the log)"
    else:
        result.status = "ok"


def _prepare(
    target: Target,
    local: bool,
    plan: Plan,
    found: Any,
    paths: dict[str, str],
    job: str,
    tmp: Path,
    log: RunLog,
    status: Callable[[str], None],
    cancel: CancelToken | None,
    result: ActivityResult,
) -> None:
    """A fresh ``out`` folder, the inputs (SSH: copied when changed), the builder settings."""
    settings_file = None
    if found.trtexec is None and plan.settings is not None:
        settings_file = tmp / "settings.json"
        settings_file.write_text(json.dumps(plan.settings(paths, found.version), indent=1))
    if local:
        out = Path(job) / "out"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        if settings_file is not None:
            shutil.copy(settings_file, paths["settings"])
        return
    uploads: list[tuple[Path, str]] = []
    for role, src in plan.uploads.items():
        if role == "model":
            for path in model_files(src):
                rel = path.relative_to(src.parent).as_posix()
                uploads.append((path, f"{job}/model/{rel}"))
        else:
            uploads.append((src, paths[role]))
    if settings_file is not None:
        uploads.append((settings_file, paths["settings"]))
    status("copying inputs")
    copied = upload_changed(target, uploads, log.emit, cancel)
    result.copied.extend(c for c in copied if c != paths["settings"])
    target.remove(f"{job}/out")
    target.mkdir(f"{job}/out")
    target.mkdir(paths["timing_cache"].rsplit("/", 1)[0])


def _bring_home(
    target: Target,
    local: bool,
    fetch: dict[str, str],
    outputs: dict[str, Path],
    log: RunLog,
    result: ActivityResult,
) -> None:
    """Move (local) or copy (SSH) every output that exists to its host destination."""
    for role, where in fetch.items():
        dest = outputs[role]
        try:
            if local:
                if not Path(where).is_file():
                    continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(where, dest)
            else:
                if not target.exists(where):
                    continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                target.get(where, dest)
        except (OSError, TargetError) as exc:
            log.emit(f"could not bring {role} home to {dest}: {exc}")
            continue
        result.outputs[role] = dest
        log.emit(f"{role}: {dest}")


def _lock_clocks(
    target: Target, found: Any, root: str | None, log: RunLog, cancel: CancelToken | None
) -> list[str]:
    """Lock the clocks where the detection allows it (else TrtOptionError saying why);
    returns the restore argv."""
    from designer.activities.trt.detect import lock_clocks_argv

    store = f"{root}/trt/clocks.conf" if root else str(local_timing_cache("x").parent / "clocks")
    lock, restore = lock_clocks_argv(found, store)
    run = target.run(lock, on_stdout=log.emit, on_stderr=log.emit, cancel=cancel, timeout=60)
    if not run.ok:
        raise TargetError(f"locking the clocks on {target.name} failed: {run.last_error_line()}")
    log.emit("clocks locked")
    return restore


def _restore_clocks(target: Target, restore: list[str], log: RunLog) -> None:
    try:
        run = target.run(restore, on_stdout=log.emit, on_stderr=log.emit, timeout=60)
        log.emit("clocks restored" if run.ok else f"restoring clocks: {run.last_error_line()}")
    except TargetError as exc:
        log.emit(f"could not restore the clocks: {exc}")


def detect(target: Target, finder: Finder, deploy_dir: str, cancel: CancelToken | None) -> Any:
    detection, custom, source = finder
    if detection is not None:
        return detection
    from designer.activities.trt.detect import detect_tensorrt

    return detect_tensorrt(
        target, deploy_dir=deploy_dir, custom=custom, source=source, cancel=cancel
    )


def usable(found: Any, target: Target, need_gpu: bool = True) -> None:
    """TargetError (one line, what to do) unless ``found`` can run this activity: TensorRT
    found, its version read, and (``need_gpu``) a GPU seen by the probe."""
    if not found.found:
        raise TargetError(f"no TensorRT on {target.name}: {found.reason}")
    if found.version is None:
        raise TargetError(
            f"cannot read the TensorRT version on {target.name} ({found.trtexec or found.python})"
            ": check that it runs (trtexec --help)"
        )
    if need_gpu and not found.gpu:
        raise TargetError(
            f"no GPU on {target.name} ({found.gpu_detail}): TensorRT builds and profiles on an "
            "NVIDIA GPU; run on a machine with one and a working driver (check nvidia-smi)"
        )


def run_plan(
    target: Target,
    plan: Plan,
    finder: Finder,
    deploy_dir: str,
    deployment: Deployment | None,
    on_log: LineCallback | None,
    on_status: Callable[[str], None] | None,
    cancel: CancelToken | None,
) -> ActivityResult:
    """Detect, execute, keep the log; never raises for run-time failures."""
    import tempfile

    log = RunLog(plan.log_path, on_log)
    status = on_status or (lambda _: None)
    start = time.monotonic()
    result = ActivityResult("failed", None, log.lines)
    try:
        with tempfile.TemporaryDirectory(prefix="designer-trt-") as tmp:
            try:
                status("detecting TensorRT")
                found = detect(target, finder, deploy_dir, cancel)
                usable(found, target)
                result.details.update(
                    {"version": str(found.version), "source": found.source, "target": target.name}
                )
                log.emit(
                    f"TensorRT {found.version} ({found.source}): {found.trtexec or found.python}"
                )
                execute(target, plan, found, deploy_dir, deployment, Path(tmp), log, status,
                        cancel, result)  # fmt: skip
            except Cancelled:
                result.status, result.error = "cancelled", "cancelled by the user"
            except DesignerError as exc:  # ConnectionLost, TargetError, TrtOptionError, …
                result.status, result.error = "failed", str(exc)
    finally:
        result.seconds = time.monotonic() - start
        if result.error:
            kept = ", ".join(f"{k} {v}" for k, v in result.outputs.items())
            if kept:
                log.emit(f"kept: {kept}, log {plan.log_path}")
            log.emit(f"error: {result.error}")
        log.close()
        if plan.log_path.is_file():
            result.outputs["log"] = plan.log_path
        result.profile = result.outputs.get("profile")
    return result
