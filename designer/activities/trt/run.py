"""Run the TensorRT activities on a target (SPEC X-3, X-4, A-4): build an engine, or build/load
one and profile it, with trtexec (or, for builds, the Python builder of deployed wheels) on
this machine or an SSH host.

The options name host paths (the model, the engine to write, the layer JSON …); this module
maps them onto the target. Local target: trtexec reads the model where it lies and writes into
``<user cache>/trt/work/<key>/out``, whose files are then moved into place. SSH target: the
deployment is checked (and brought up to date), the model with its external data (and a
prebuilt engine or a calibration cache) are copied into ``<deploy>/work/trt/<key>/`` only when
their SHA-256 differs, and whatever trtexec wrote there is copied back — also after a failure
or Cancel.

The timing cache lives on the target, per TensorRT version: ``<deploy>/trt/timing-<v>.cache``
(local: ``<user cache>/trt/``). Every line goes to ``on_log`` and to the log file on the host
(``<engine stem>.build.log`` / ``<profile stem>.log``), kept whatever happens. Run-time
failures never raise: the result says "failed"/"cancelled" with one line of what went wrong
and what to do. :func:`preview_trt_build` / :func:`preview_trt_profile` give the exact command
without running anything.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from designer.activities.deploy import Deployment
from designer.activities.runner import ActivityResult
from designer.activities.targets.base import CancelToken, LineCallback, Target
from designer.activities.targets.local import LocalTarget
from designer.activities.trt.options import TrtBuildOptions, TrtProfileOptions
from designer.activities.trt.run_exec import Plan, command, layout, run_plan, usable
from designer.core.errors import DesignerError

__all__ = [
    "default_engine_path",
    "default_log_path",
    "default_profile_path",
    "preview_trt_build",
    "preview_trt_profile",
    "run_trt_build",
    "run_trt_profile",
]


def default_engine_path(model: Path) -> Path:
    """``a.onnx`` → ``a.engine`` beside the model."""
    return model.with_suffix(".engine")


def default_profile_path(base: Path) -> Path:
    """``a.onnx`` / ``a.engine`` → ``a.trt-profile.json`` beside it."""
    return base.with_name(f"{base.stem}.trt-profile.json")


def default_log_path(output: Path, kind: str) -> Path:
    """The host log of a run: ``a.engine`` → ``a.build.log``, ``p.json`` → ``p.log``."""
    if kind == "profile":
        return output.with_suffix(".log")
    return output.with_name(f"{output.stem}.{kind}.log")


def _host(path: str | None) -> Path | None:
    return Path(path).expanduser() if path else None


def build_plan(options: TrtBuildOptions, log_path: Path | None = None) -> Plan:
    """What a build uploads and brings back. DesignerError for bad options / missing model."""
    options.validate()
    model = Path(options.model).expanduser()
    if not model.is_file():
        raise DesignerError(f"{model}: model file not found")
    engine = _host(options.engine) or default_engine_path(model)
    outputs = {"engine": engine}
    if options.layer_info:
        outputs["layer_info"] = Path(options.layer_info).expanduser()
    uploads = {"model": model}
    calib = _host(options.calibration_cache)
    if calib is not None and calib.is_file():
        uploads["calib"] = calib

    def mapped(paths: dict[str, str]) -> TrtBuildOptions:
        return dataclasses.replace(
            options,
            model=paths["model"],
            engine=paths["engine"],
            layer_info=paths.get("layer_info"),
            timing_cache=options.timing_cache or paths["timing_cache"],
            calibration_cache=paths.get("calib", options.calibration_cache),
        )

    def argv(paths: dict[str, str], trtexec: str, version: Any) -> list[str]:
        from designer.activities.trt.command import trtexec_argv

        return trtexec_argv(mapped(paths), version, trtexec=trtexec)

    def settings(paths: dict[str, str], version: Any) -> dict[str, Any]:
        from designer.activities.trt.python_builder import python_builder_settings

        return python_builder_settings(mapped(paths), version)

    plan = Plan("build", uploads, outputs, argv, settings)
    plan.log_path = log_path or default_log_path(engine, "build")
    return plan


def profile_plan(options: TrtProfileOptions, log_path: Path | None = None, passes: int = 1) -> Plan:
    """What a profiling run uploads and brings back; ``passes`` measurement passes (the
    first builds or loads the engine, the others load it) give per-layer min/max."""
    options.validate()
    if passes < 1:
        raise DesignerError("measurement passes must be 1 or more")
    build = options.build
    model = Path(build.model).expanduser() if build.model else None
    engine_in = _host(options.use_engine)
    uploads: dict[str, Path] = {}
    if engine_in is not None:
        if not engine_in.is_file():
            raise DesignerError(f"{engine_in}: engine file not found")
        uploads["engine_in"] = engine_in
    elif model is None or not model.is_file():
        raise DesignerError(f"{model}: model file not found")
    else:
        uploads["model"] = model
    base = engine_in if engine_in is not None else model
    assert base is not None
    profile = _host(options.export_profile) or default_profile_path(base)
    outputs = {"profile": profile}
    if options.export_times:
        outputs["times"] = Path(options.export_times).expanduser()
    if options.export_layer_info:
        outputs["layer_info"] = Path(options.export_layer_info).expanduser()
    if engine_in is None and build.engine:
        outputs["engine"] = Path(build.engine).expanduser()
    for k in range(2, passes + 1):
        outputs[f"profile_{k}"] = profile.with_name(f"{profile.stem}.pass{k}.json")

    def argv(paths: dict[str, str], trtexec: str, version: Any) -> list[str]:
        from designer.activities.trt.command import trtexec_profile_argv

        engine = paths.get("engine") or (paths["pass_engine"] if passes > 1 else None)
        mapped_build = dataclasses.replace(
            build,
            model=paths.get("model", build.model),
            engine=engine,
            layer_info=None,
            timing_cache=build.timing_cache or paths["timing_cache"],
        )
        mapped = dataclasses.replace(
            options,
            build=mapped_build,
            use_engine=paths.get("engine_in"),
            export_profile=paths["profile"],
            export_times=paths.get("times"),
            export_layer_info=paths.get("layer_info"),
        )
        return trtexec_profile_argv(mapped, version, trtexec=trtexec)

    def pass_argv(paths: dict[str, str], trtexec: str, version: Any, k: int) -> list[str]:
        from designer.activities.trt.command import trtexec_profile_argv

        mapped = dataclasses.replace(
            options,
            build=dataclasses.replace(build, engine=None, layer_info=None),
            use_engine=paths.get("engine_in") or paths.get("engine") or paths["pass_engine"],
            export_profile=paths[f"profile_{k}"],
            export_times=None,
            export_layer_info=None,
        )
        return trtexec_profile_argv(mapped, version, trtexec=trtexec)

    plan = Plan(
        "profile",
        uploads,
        outputs,
        argv,
        lock_clocks=options.lock_clocks,
        passes=passes,
        pass_argv=pass_argv,
    )
    plan.log_path = log_path or default_log_path(profile, "profile")
    return plan


def run_trt_build(
    target: Target,
    options: TrtBuildOptions,
    *,
    detection: Any = None,
    custom: str | None = None,
    source: str | None = None,
    deploy_dir: str = ".onnx-designer",
    deployment: Deployment | None = None,
    log_path: Path | None = None,
    on_log: LineCallback | None = None,
    on_status: Callable[[str], None] | None = None,
    cancel: CancelToken | None = None,
) -> ActivityResult:
    """Build an engine from ``options.model`` (a host path) on ``target``.

    ``options.engine`` / ``options.layer_info`` are host destinations (engine default:
    ``<model>.engine``). ``detection`` is a TrtDetection of that target (detected when None,
    with ``custom`` — a trtexec path on the target — and ``source``: "system", "deployed",
    "custom" or None for automatic). Raises DesignerError only for bad options before
    anything starts."""
    plan = build_plan(options, log_path)
    finder = (detection, custom, source)
    return run_plan(target, plan, finder, deploy_dir, deployment, on_log, on_status, cancel)


def run_trt_profile(
    target: Target,
    options: TrtProfileOptions,
    *,
    detection: Any = None,
    custom: str | None = None,
    source: str | None = None,
    deploy_dir: str = ".onnx-designer",
    deployment: Deployment | None = None,
    log_path: Path | None = None,
    passes: int = 1,
    on_log: LineCallback | None = None,
    on_status: Callable[[str], None] | None = None,
    cancel: CancelToken | None = None,
) -> ActivityResult:
    """Profile with trtexec: load ``options.use_engine`` (a host engine file, copied to the
    target) or build from ``options.build.model``, then measure. Outputs (host paths): the
    profile JSON (default ``<model or engine>.trt-profile.json``), the timing JSON, the layer
    JSON and, when building, the engine. ``result.profile`` is the profile JSON; with
    ``passes`` > 1 the other passes' profiles are ``outputs["profile_2"]`` … (beside it,
    ``<profile stem>.pass<k>.json``)."""
    plan = profile_plan(options, log_path, passes)
    finder = (detection, custom, source)
    return run_plan(target, plan, finder, deploy_dir, deployment, on_log, on_status, cancel)


def _preview(target: Target, plan: Plan, detection: Any, deploy_dir: str) -> list[str]:
    usable(detection, target, need_gpu=False)  # a preview runs nothing
    root = None if isinstance(target, LocalTarget) else target.resolve(deploy_dir)
    paths, _job = layout(target, plan, detection.version, root)
    runner = f"{root}/runners/trt_build.py" if root else "trt_build.py"
    return command(plan, detection, paths, runner)


def preview_trt_build(
    target: Target, options: TrtBuildOptions, detection: Any, *, deploy_dir: str = ".onnx-designer"
) -> list[str]:
    """The exact argv :func:`run_trt_build` would run (nothing is copied or run).
    TrtOptionError for what the detected version refuses."""
    return _preview(target, build_plan(options), detection, deploy_dir)


def preview_trt_profile(
    target: Target,
    options: TrtProfileOptions,
    detection: Any,
    *,
    deploy_dir: str = ".onnx-designer",
) -> list[str]:
    """The exact argv :func:`run_trt_profile` would run (nothing is copied or run)."""
    return _preview(target, profile_plan(options), detection, deploy_dir)
