"""Run the ONNX Runtime profiling activity on a target (SPEC A-4, R-1).

Local target: the runner script runs from the package with the designer's own Python, on the
model where it lies; nothing is copied. SSH target: the deployment is brought up to date, the
model (with its external data) and the inputs are copied into
``<deploy>/work/ort_profile/<key>/`` only when their SHA-256 differs, the runner runs with the
deployment venv's Python, and ``profile.json``/``result.json`` are copied back. Output streams
live into the log callback; Cancel kills the remote process group; a dropped connection or a
failing runner gives a result with ``status`` "failed" and a one-line ``error``, keeping the log
and whatever profile was produced.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from designer.activities.deploy import Deployment, PythonDependency, PythonPackages, RunnerScripts
from designer.activities.runners import runner_path
from designer.activities.targets.base import (
    Cancelled,
    CancelToken,
    LineCallback,
    Target,
    TargetError,
    sha256_file,
)
from designer.activities.targets.local import LocalTarget
from designer.core.errors import DesignerError

__all__ = [
    "ActivityResult",
    "OrtProfileOptions",
    "default_profile_path",
    "model_files",
    "ort_deployment",
    "prepare_inputs",
    "run_ort_profile",
    "upload_changed",
]

CPU = "CPUExecutionProvider"
ORT_REQUIREMENTS = ("onnxruntime>=1.16",)


def default_profile_path(model: Path) -> Path:
    """``<model>.ort-profile.json`` beside the model (``a.onnx`` → ``a.ort-profile.json``)."""
    return model.with_name(f"{model.stem}.ort-profile.json")


@dataclass
class OrtProfileOptions:
    """R-1 options of one ONNX Runtime profiling run."""

    model: Path
    iterations: int = 10
    warmup: int = 1
    provider: str = CPU
    optimize: bool = False
    threads: int = 0
    inputs_dir: Path | None = None
    dims: dict[str, int] = field(default_factory=dict)
    output: Path | None = None

    @property
    def output_path(self) -> Path:
        return self.output if self.output is not None else default_profile_path(self.model)

    def runner_args(self) -> list[str]:
        args = [
            "--iterations",
            str(self.iterations),
            "--warmup",
            str(self.warmup),
            "--provider",
            self.provider,
            "--threads",
            str(self.threads),
        ]
        if self.optimize:
            args.append("--optimize")
        for name, value in self.dims.items():
            args += ["--dim", f"{name}={value}"]
        return args


@dataclass
class ActivityResult:
    """How an activity ended. ``profile`` is set whenever a (maybe partial) profile came back."""

    status: Literal["ok", "failed", "cancelled"]
    profile: Path | None
    log: list[str]
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)  # the runner's result.json
    copied: list[str] = field(default_factory=list)  # remote paths uploaded this time
    seconds: float = 0.0
    outputs: dict[str, Path] = field(default_factory=dict)  # role → host file (engine, log…)


def ort_deployment(target: Target, deploy_dir: str, **kwargs: Any) -> Deployment:
    """The dependencies of ORT profiling on an SSH target: Python ≥3.9, onnxruntime in the
    deployment venv, the runner script."""
    return Deployment(
        target,
        deploy_dir,
        [
            PythonDependency((3, 9)),
            PythonPackages(ORT_REQUIREMENTS),
            RunnerScripts(("ort_profile",)),
        ],
        **kwargs,
    )


def prepare_inputs(model: Path, inputs_dir: Path, dest: Path) -> Path:
    """Convert an inputs folder of TensorProto ``.pb`` files (named after the inputs, or
    ONNX-test style ``input_N.pb`` carrying the name inside) into ``dest/N.npy`` plus
    ``dest/inputs.json``. Raises DesignerError naming a missing or mismatched input."""
    import onnx
    from onnx import numpy_helper

    from designer.core.io import read_model

    graph = read_model(model).graph
    init = {i.name for i in graph.initializer}
    wanted = [i.name for i in graph.input if i.name not in init]
    found: dict[str, Any] = {}
    for pb in sorted(inputs_dir.glob("*.pb")):
        tensor = onnx.TensorProto()
        try:
            tensor.ParseFromString(pb.read_bytes())
        except Exception:
            raise DesignerError(f"{pb}: not a TensorProto .pb file") from None
        name = pb.stem if pb.stem in wanted else tensor.name
        if name in wanted:
            found[name] = numpy_helper.to_array(tensor)
    missing = [n for n in wanted if n not in found]
    if missing:
        raise DesignerError(f"{inputs_dir}: no .pb file for input(s) {', '.join(missing)}")
    import numpy as np

    dest.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for i, name in enumerate(wanted):
        np.save(dest / f"{i}.npy", found[name], allow_pickle=False)
        manifest[name] = f"{i}.npy"
    (dest / "inputs.json").write_text(json.dumps(manifest))
    return dest / "inputs.json"


def _model_files(model: Path) -> list[Path]:
    """The model and its external data files (relative locations kept). Each data file is
    checked to lie inside the model's folder after resolving symbolic links (a link to a
    file elsewhere is refused with DesignerError, never uploaded)."""
    from designer.core.io import read_model
    from designer.core.io.external import (
        ExternalRef,
        is_external,
        iter_model_tensors,
        resolve_location,
    )

    files = [model]
    seen: set[Path] = {model}
    for tensor in iter_model_tensors(read_model(model)):
        if is_external(tensor):
            location = ExternalRef.of(tensor).location
            resolve_location(location, model.parent, tensor.name)
            path = model.parent / location
            if path not in seen:
                seen.add(path)
                files.append(path)
    return files


def run_ort_profile(
    target: Target,
    options: OrtProfileOptions,
    *,
    deploy_dir: str = ".onnx-designer",
    deployment: Deployment | None = None,
    on_log: LineCallback | None = None,
    on_status: Callable[[str], None] | None = None,
    cancel: CancelToken | None = None,
) -> ActivityResult:
    """Profile ``options.model`` on ``target``; never raises for run-time failures (see
    module doc), only DesignerError for bad options before anything starts."""
    if not options.model.is_file():
        raise DesignerError(f"{options.model}: model file not found")
    if options.iterations < 1 or options.warmup < 0:
        raise DesignerError("iterations must be ≥ 1 and warm-up runs ≥ 0")
    log: list[str] = []

    def emit(line: str) -> None:
        log.append(line)
        if on_log is not None:
            on_log(line)

    status = on_status or (lambda _: None)
    start = time.monotonic()
    result = ActivityResult("failed", None, log)
    with tempfile.TemporaryDirectory(prefix="designer-ort-") as tmp_name:
        tmp = Path(tmp_name)
        inputs = None
        if options.inputs_dir is not None:  # bad inputs: raised before anything starts
            inputs = prepare_inputs(options.model, options.inputs_dir, tmp / "inputs")
        try:
            if isinstance(target, LocalTarget):
                _run_local(target, options, tmp, inputs, emit, status, cancel, result)
            else:
                dep = deployment or ort_deployment(target, deploy_dir)
                _run_remote(target, dep, options, tmp, inputs, emit, status, cancel, result)
        except Cancelled:
            result.status, result.error = "cancelled", "cancelled by the user"
        except DesignerError as exc:  # ConnectionLost, TargetError, DeployError, …
            result.status, result.error = "failed", str(exc)
    result.seconds = time.monotonic() - start
    if result.error:
        emit(f"error: {result.error}")
    return result


def _finish(run: Any, out_dir: Path, options: OrtProfileOptions, result: ActivityResult) -> None:
    """Move the profile home and read result.json; decide status and error."""
    meta = out_dir / "result.json"
    if meta.is_file():
        try:
            result.details = json.loads(meta.read_text(encoding="utf-8"))
        except ValueError:
            result.details = {}
    profile = out_dir / "profile.json"
    if profile.is_file():
        dest = options.output_path
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(profile), str(dest))
        except OSError as exc:
            raise DesignerError(
                f"cannot write the profile to {dest}: {exc.strerror or exc}"
            ) from None
        result.profile = dest
    if run.cancelled:
        result.status, result.error = "cancelled", "cancelled by the user"
    elif run.exit_code != 0:
        result.status = "failed"
        result.error = f"the profiler failed on {options.model.name}: {run.last_error_line()}"
    else:
        result.status = "ok"


def _run_local(
    target: LocalTarget,
    options: OrtProfileOptions,
    tmp: Path,
    inputs: Path | None,
    emit: LineCallback,
    status: Callable[[str], None],
    cancel: CancelToken | None,
    result: ActivityResult,
) -> None:
    out_dir = tmp / "out"
    argv = [
        target.python,
        str(runner_path("ort_profile")),
        "--model",
        str(options.model.resolve()),
        "--out-dir",
        str(out_dir),
        *options.runner_args(),
    ]
    if inputs is not None:
        argv += ["--inputs", str(inputs)]
    status("running")
    run = target.run(argv, on_stdout=emit, on_stderr=emit, cancel=cancel)
    _finish(run, out_dir, options, result)


def upload_changed(
    target: Target,
    uploads: list[tuple[Path, str]],
    emit: LineCallback,
    cancel: CancelToken | None = None,
) -> list[str]:
    """Copy each (local, remote) pair whose remote SHA-256 differs (one hash round trip);
    returns the remote paths copied. Shared by every activity (ORT, TensorRT)."""
    copied: list[str] = []
    remote_hashes = target.hashes([r for _, r in uploads])
    for local, remote in uploads:
        if cancel is not None:
            cancel.raise_if_cancelled()
        if remote_hashes.get(remote) != sha256_file(local):
            target.mkdir(remote.rsplit("/", 1)[0])
            emit(f"copying {local.name}")
            target.put(local, remote)
            copied.append(remote)
    return copied


model_files = _model_files  # the model and its external data files (public for activities)


def _job_key(target: Target, model: Path) -> str:
    text = f"{target.name}\0{model.resolve()}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _run_remote(
    target: Target,
    dep: Deployment,
    options: OrtProfileOptions,
    tmp: Path,
    inputs: Path | None,
    emit: LineCallback,
    status: Callable[[str], None],
    cancel: CancelToken | None,
    result: ActivityResult,
) -> None:
    status("checking deployment")
    statuses = dep.check(cancel=cancel)
    if not all(s.current for s in statuses):
        status("deploying")
        dep.deploy(log=emit, cancel=cancel)
    result.copied.extend(dep.copied)
    ctx = dep.context()
    job = ctx.path("work", "ort_profile", _job_key(target, options.model))
    uploads: list[tuple[Path, str]] = []
    for path in _model_files(options.model):
        rel = path.relative_to(options.model.parent).as_posix()
        uploads.append((path, f"{job}/model/{rel}"))
    inputs_arg: list[str] = []
    if inputs is not None:
        for path in sorted(inputs.parent.iterdir()):
            uploads.append((path, f"{job}/inputs/{path.name}"))
        inputs_arg = ["--inputs", f"{job}/inputs/inputs.json"]
    status("copying inputs")
    result.copied.extend(upload_changed(target, uploads, emit, cancel))
    out = f"{job}/out"
    target.remove(out)
    target.mkdir(out)
    status("running")
    argv = [
        ctx.venv_python,
        ctx.path("runners", "ort_profile.py"),
        "--model",
        uploads[0][1],
        "--out-dir",
        out,
        *options.runner_args(),
        *inputs_arg,
    ]
    run = target.run(argv, on_stdout=emit, on_stderr=emit, cancel=cancel)
    status("copying results")
    local_out = tmp / "out"
    local_out.mkdir()
    for name in ("result.json", "profile.json"):
        if target.exists(f"{out}/{name}"):
            try:
                target.get(f"{out}/{name}", local_out / name)
            except TargetError as exc:
                emit(f"could not copy {name} back: {exc}")
    _finish(run, local_out, options, result)


def list_providers(target: Target, deployment: Deployment | None = None) -> list[str]:
    """Execution providers the target's onnxruntime offers (CPU always first)."""
    if isinstance(target, LocalTarget):
        python, script = target.python, str(runner_path("ort_profile"))
    else:
        if deployment is None:
            raise DesignerError("an SSH target needs its deployment to list providers")
        deployment.deploy()
        ctx = deployment.context()
        python, script = ctx.venv_python, ctx.path("runners", "ort_profile.py")
    run = target.run([python, script, "--list-providers"], timeout=120)
    if not run.ok:
        raise TargetError(f"{target.name}: cannot list providers: {run.last_error_line()}")
    providers = list(json.loads(run.stdout.strip().splitlines()[-1]).get("providers", []))
    return [CPU] + [p for p in providers if p != CPU]
