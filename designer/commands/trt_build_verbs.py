"""``onnx-designer trt build``: build a TensorRT engine here or on an SSH target (SPEC X-3).

Profiles and layer precisions come from the model's stored settings
(:func:`designer.core.trt.settings.read_settings`) with ``--shape``/``--precision`` overrides.
``--print-command`` prints the exact trtexec line for the target's detected TensorRT (or, with
``--trt-version``, for a version that is not installed) and runs nothing.

The helpers here are shared with ``profile trt``: :func:`add_build_arguments`,
:func:`add_target_arguments`, :func:`build_options_from_args`, :func:`open_target`,
:func:`resolve_detection`, :func:`check_layer_precisions`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from designer.core.errors import DesignerError

__all__ = [
    "add_build_arguments",
    "add_target_arguments",
    "add_verbs",
    "build_options_from_args",
    "build_options_from_model",
    "check_layer_precisions",
    "open_target",
    "preview_version",
    "resolve_detection",
]

_TOGGLE = {"on": True, "off": False, "+": True, "-": False, "enable": True, "disable": False}


def _tactic(text: str) -> tuple[str, bool]:
    from designer.activities.trt.options import TACTIC_SOURCES

    name, sep, state = text.partition("=")
    if not sep or state not in _TOGGLE or name not in TACTIC_SOURCES:
        raise argparse.ArgumentTypeError(
            f"{text!r}: write SOURCE=on|off with SOURCE one of {', '.join(TACTIC_SOURCES)}"
        )
    return name, _TOGGLE[state]


def add_build_arguments(p: argparse.ArgumentParser) -> None:
    """Every build option (X-3) of ``trt build`` (also used by ``profile trt``)."""
    from designer.activities.trt.options import (
        HARDWARE_COMPATIBILITY,
        PROFILING_VERBOSITY,
        TYPING_MODES,
        WEIGHTS_MODES,
    )

    g = p.add_argument_group("typing and precision")
    g.add_argument(
        "--typing",
        choices=TYPING_MODES,
        default="default",
        help="TensorRT defaults, strongly typed, obey or prefer the layer precisions",
    )
    g.add_argument("--no-tf32", action="store_true", help="do not allow TF32")
    for name in ("fp16", "bf16", "int8", "fp8"):
        g.add_argument(f"--{name}", action="store_true", help=f"allow {name.upper()} (10.x)")
    g.add_argument(
        "--precision",
        action="append",
        default=[],
        metavar="NODE=PREC",
        help="override a node's stored layer precision ('none' clears it, not its output types);"
        " repeatable",
    )
    g.add_argument(
        "--ignore-layer-precisions",
        action="store_true",
        help="build without the layer precisions stored in the model",
    )
    g = p.add_argument_group("shapes")
    g.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME:MIN:OPT:MAX",
        help="override an input of profile 0, dims like 1x3x224x224; repeatable",
    )
    g.add_argument(
        "--free-dims-as-one",
        action="store_true",
        help="use 1 for the free dims of dynamic inputs that have no profile",
    )
    g = p.add_argument_group("tactics and optimizer")
    g.add_argument("--sparsity", action="store_true", help="allow sparse-weight tactics")
    g.add_argument(
        "--tactic-source",
        action="append",
        type=_tactic,
        default=[],
        metavar="SOURCE=on|off",
        help="enable/disable a tactic source (cublas, cublasLt, cudnn, ...); repeatable",
    )
    g.add_argument(
        "--plugin-instance-norm",
        action="store_true",
        help="use the InstanceNorm plugin instead of native instance norm",
    )
    g.add_argument("--opt-level", type=int, metavar="0-5", help="builder optimization level")
    g.add_argument("--max-aux-streams", type=int, metavar="N", help="max auxiliary streams")
    g.add_argument("--hardware-compat", choices=HARDWARE_COMPATIBILITY, default="none")
    g.add_argument("--version-compatible", action="store_true")
    g.add_argument("--workspace-mib", type=int, metavar="MIB", help="workspace pool limit")
    g.add_argument("--calib", metavar="FILE", help="INT8 calibration cache (10.x)")
    g.add_argument("--weights", choices=WEIGHTS_MODES, default="none", help="refitting")
    g.add_argument("--timing-cache", metavar="FILE", help="timing cache file on the target")
    g = p.add_argument_group("metadata and system")
    g.add_argument("--profiling-verbosity", choices=PROFILING_VERBOSITY, default="detailed")
    g.add_argument("--layer-json", type=Path, metavar="FILE", help="write the layer JSON here")
    g.add_argument("--device", type=int, default=0, metavar="N", help="CUDA device index")
    g.add_argument("--plugin", action="append", default=[], metavar="LIB", help="repeatable")
    g.add_argument(
        "--dynamic-plugin", action="append", default=[], metavar="LIB", help="repeatable"
    )
    g.add_argument("--trt-verbose", action="store_true", help="trtexec --verbose")


def add_target_arguments(p: argparse.ArgumentParser) -> None:
    """``--target`` + SSH options + where TensorRT is (``--trt-source``, ``--trtexec``)."""
    from designer.activities.trt.detect import SOURCES
    from designer.commands.activity_commands import _ssh_options

    p.add_argument(
        "--target",
        default="local",
        help="local (default), a saved connection name, or ssh://user@host:port[/DIR]",
    )
    _ssh_options(p)
    p.add_argument("--trt-source", choices=SOURCES, help="TensorRT to use (default: automatic)")
    p.add_argument(
        "--trtexec", metavar="PATH", help="custom trtexec (relative to the deployment folder ok)"
    )


def _precision_flags(args: argparse.Namespace) -> tuple[dict[str, str], set[str]]:
    """``--precision NODE=PREC`` → (overrides, nodes cleared with ``none``)."""
    from designer.activities.trt.options import PRECISIONS

    overrides: dict[str, str] = {}
    cleared: set[str] = set()
    for item in args.precision:
        node, sep, prec = item.rpartition("=")
        if not sep or not node:
            raise DesignerError(f"--precision {item!r}: write NODE=PRECISION")
        if prec == "none":
            cleared.add(node)
            overrides.pop(node, None)
        elif prec not in PRECISIONS:
            raise DesignerError(f"--precision {item!r}: one of {', '.join(PRECISIONS)} or none")
        else:
            overrides[node] = prec
            cleared.discard(node)
    return overrides, cleared


def _shape_flags(args: argparse.Namespace) -> list[Any]:
    """``--shape NAME:MIN:OPT:MAX`` → one profile-0 override (empty list when none)."""
    from designer.core.trt.settings import parse_dims

    profile: dict[str, tuple[list[int], list[int], list[int]]] = {}
    for text in args.shape:
        parts = text.split(":")
        if len(parts) < 4 or not parts[0]:
            raise DesignerError(f"--shape {text!r}: write NAME:MIN:OPT:MAX, dims like 1x3x224x224")
        name = ":".join(parts[:-3])
        lo, opt, hi = (list(parse_dims(d)) for d in parts[-3:])
        profile[name] = (lo, opt, hi)
    return [profile] if profile else []


def build_options_from_args(args: argparse.Namespace, model: Path) -> Any:
    """A TrtBuildOptions with HOST paths: the flags, then the model's stored settings
    (through :func:`designer.activities.trt.model_settings.with_model_settings`).
    Cost: one read of the model file (external data stays on disk)."""
    from designer.core.io import read_model

    return build_options_from_model(args, model, read_model(model))


def build_options_from_model(
    args: argparse.Namespace, model: Path, proto: Any, *, defer_precision_check: bool = False
) -> Any:
    """:func:`build_options_from_args` for a model already read (``proto``, the ModelProto
    of ``model``), for a caller that needs the proto too.

    The layer precisions are checked (:func:`check_layer_precisions`) for ``--trt-version``
    when given; otherwise for an unknown version, unless ``defer_precision_check``: the
    caller then checks them once it has detected the target's version (TensorRT 11 has no
    layer precisions, so the way out depends on it)."""
    from designer.activities.trt.model_settings import with_model_settings
    from designer.activities.trt.options import TrtBuildOptions

    overrides, cleared = _precision_flags(args)
    options = TrtBuildOptions(
        model=str(model),
        engine=str(getattr(args, "engine", None) or model.with_suffix(".engine")),
        typing=args.typing,
        tf32=not args.no_tf32,
        fp16=args.fp16,
        bf16=args.bf16,
        int8=args.int8,
        fp8=args.fp8,
        sparsity=args.sparsity,
        tactic_sources=dict(args.tactic_source),
        native_instance_norm=not args.plugin_instance_norm,
        builder_optimization_level=args.opt_level,
        max_aux_streams=args.max_aux_streams,
        hardware_compatibility=args.hardware_compat,
        version_compatible=args.version_compatible,
        workspace_mib=args.workspace_mib,
        calibration_cache=args.calib,
        weights=args.weights,
        profiling_verbosity=args.profiling_verbosity,
        layer_info=str(args.layer_json) if args.layer_json else None,
        device=args.device,
        plugins=list(args.plugin),
        dynamic_plugins=list(args.dynamic_plugin),
        timing_cache=args.timing_cache,
        profiles=_shape_flags(args),
        layer_precisions=overrides,
        verbose=args.trt_verbose,
    )
    try:
        options = with_model_settings(
            options,
            proto,
            free_dims_as_one=args.free_dims_as_one,
            ignore_stored_precisions=args.ignore_layer_precisions,
            cleared_precisions=cleared,
        )
    except DesignerError as exc:
        text = str(exc)
        if text.startswith("dynamic input"):
            text = text.replace("(trt set-profile)", "(trt set-profile, or --shape)")
            text += " (--free-dims-as-one)"
        raise DesignerError(text) from None
    version = preview_version(args)
    if version is not None or not defer_precision_check:
        check_layer_precisions(options, version)
    return options


def check_layer_precisions(options: Any, version: Any) -> None:
    """Refuse (DesignerError, one line) layer precisions or output types ``options`` carry
    that TensorRT ``version`` (a TrtVersion; None when unknown) cannot use, naming the
    command line's ways out: on 11.x (none at all) --ignore-layer-precisions, not a typing
    mode 11.x refuses; on 10.x obey/prefer, the flag, or clearing them."""
    problem = options.precision_problem(
        version, ignore="--ignore-layer-precisions", clear="--precision NODE=none"
    )
    if problem:
        raise DesignerError(problem)


def preview_version(args: argparse.Namespace) -> Any:
    """The TrtVersion of ``--trt-version`` (None when not given)."""
    from designer.activities.trt.version import TrtVersion

    if not getattr(args, "trt_version", None):
        return None
    try:
        return TrtVersion.parse(args.trt_version)
    except ValueError as exc:
        raise DesignerError(f"--trt-version: {exc}") from None


def open_target(args: argparse.Namespace) -> tuple[Any, str]:
    """(target, deploy_dir) for ``--target``."""
    from designer.activities.targets import LocalTarget
    from designer.commands.activity_commands import _open_ssh

    if args.target == "local":
        return LocalTarget(), ".onnx-designer"
    conn, target = _open_ssh(args)
    return target, conn.deploy_dir


def resolve_detection(args: argparse.Namespace, target: Any, deploy_dir: str) -> Any:
    """Detect TensorRT on ``target`` as the flags say; DesignerError when none is usable."""
    from designer.activities.trt.detect import detect_tensorrt

    det = detect_tensorrt(
        target, deploy_dir=deploy_dir, custom=args.trtexec, source=args.trt_source
    )
    if not det.found:
        raise DesignerError(f"{target.name}: {det.summary}")
    return det


def _print_command(args: argparse.Namespace, options: Any) -> int:
    from designer.activities.trt.command import format_command, trtexec_argv
    from designer.activities.trt.python_builder import python_builder_settings

    version = preview_version(args)
    if version is not None:
        trtexec, method = args.trtexec or "trtexec", "trtexec"
        argv = trtexec_argv(options, version, trtexec=trtexec)
    else:
        target, deploy_dir = open_target(args)
        try:
            try:
                det = resolve_detection(args, target, deploy_dir)
            except DesignerError as exc:
                raise DesignerError(f"{exc} (or preview with --trt-version 10.16|11.1)") from None
            version, method = det.version, det.method
            if version is None:
                raise DesignerError(f"{target.name}: {det.reason or 'no TensorRT version'}")
            check_layer_precisions(options, version)  # deferred by _build until now
            argv = _target_argv(target, options, det, deploy_dir)
            print(f"# {det.summary}", file=sys.stderr)
        finally:
            target.close()
    if args.python_builder or method == "python":
        print(json.dumps(python_builder_settings(options, version), indent=1, sort_keys=True))
    else:
        print(format_command(argv))
    return 0


def _target_argv(target: Any, options: Any, det: Any, deploy_dir: str) -> list[str]:
    """The argv with the paths the activity will use on the target (E2's plan)."""
    from designer.activities.trt import run

    preview = getattr(run, "preview_trt_build", None)
    if preview is not None:
        return list(preview(target, options, det, deploy_dir=deploy_dir))
    from designer.activities.trt.command import trtexec_argv

    if target.name != "local":
        raise DesignerError("previewing a remote build's paths needs the TensorRT activity")
    return trtexec_argv(options, det.version, trtexec=det.trtexec or "trtexec")


def _refuse_model_as_output(options: Any, proto: Any) -> None:
    """Refuse (DesignerError, one line) an engine or layer JSON path that is the model or
    one of its files (external data, layout), before anything runs: the build would
    overwrite what it reads (:mod:`designer.core.io.model_files`)."""
    from designer.core.io.model_files import refuse_model_files

    for output in (options.engine, options.layer_info):
        if output:  # the runner expands ~ too
            refuse_model_files(Path(output).expanduser(), proto, Path(options.model))


def _build(args: argparse.Namespace) -> int:
    from designer.core.io import read_model

    if args.trt_version and not args.print_command:
        raise DesignerError("--trt-version only previews (with --print-command): drop one")
    proto = read_model(args.model)
    # Without --trt-version the precisions are checked once the target's version is known.
    options = build_options_from_model(args, args.model, proto, defer_precision_check=True)
    _refuse_model_as_output(options, proto)
    del proto  # the options hold what the build needs; the proto may be large
    if args.print_command:
        return _print_command(args, options)
    from designer.activities.trt.run import run_trt_build
    from designer.commands.activity_commands import (
        VerboseLog,
        _run_cancellable,
        report_cancelled,
    )

    target, deploy_dir = open_target(args)
    log = VerboseLog() if args.verbose else None
    try:
        detection = resolve_detection(args, target, deploy_dir)
        check_layer_precisions(options, detection.version)
        result = _run_cancellable(
            lambda token: run_trt_build(
                target,
                options,
                detection=detection,
                custom=args.trtexec,
                deploy_dir=deploy_dir,
                on_log=log,
                cancel=token,
            )
        )
    finally:
        target.close()
    if log is not None:
        log.finish(result.error)
    kept = result.outputs.get("log")
    if result.status == "cancelled":
        return report_cancelled(f"log kept: {kept}" if kept else None)
    if result.status != "ok":
        print(
            f"onnx-designer: error: {result.error}" + (f" (log: {kept})" if kept else ""),
            file=sys.stderr,
        )
        return 1
    for role in ("engine", "layer_info", "log"):
        if role in result.outputs:
            print(f"{role}: {result.outputs[role]}")
    return 0


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's verbs to the ``trt`` parser."""
    p = verbs.add_parser(
        "build",
        help="build a TensorRT engine here or on an SSH target",
        description="Build MODEL into a TensorRT engine with trtexec (or the Python builder) on "
        "this machine or an SSH target, using the model's stored optimization profiles and "
        "layer precisions. Options a TensorRT version lacks are refused with what to do "
        "instead. --print-command shows the exact command line and runs nothing.",
    )
    p.add_argument("model", type=Path, help="the .onnx file")
    p.add_argument("--engine", type=Path, metavar="OUT", help="engine file (default MODEL.engine)")
    add_target_arguments(p)
    add_build_arguments(p)
    p.add_argument(
        "--print-command",
        action="store_true",
        help="print the trtexec command line for the target's TensorRT and exit",
    )
    p.add_argument(
        "--trt-version",
        metavar="V",
        help="with --print-command: preview for this version (e.g. 10.16, 11.1), no target",
    )
    p.add_argument(
        "--python-builder",
        action="store_true",
        help="with --print-command: print the Python builder settings instead",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="stream the log to stderr")
    p.set_defaults(handler=_build)
