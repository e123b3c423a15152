"""``onnx-designer profile trt``: profile with TensorRT here or on an SSH target (SPEC X-4).

Added to the ``profile`` parser by :mod:`designer.commands.activity_commands` (this module has
no ``register``). The build options and the target flags are ``trt build``'s
(:mod:`designer.commands.trt_build_verbs`), so the same flags give the same engine; with
``--use-engine`` a prebuilt engine is copied to the target and only measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["ENGINE_FLAGS", "add_profile_trt", "build_only_flags"]

# The build flags (``trt build``'s) that still apply to a prebuilt engine: its input shapes
# (--shapes), the layer JSON (--exportLayerInfo, a reporting option) and the system options
# (--device, plugins, --verbose). trtexec ignores every other build flag with --loadEngine
# ("if loadEngine is specified, BuildOptions are N/A": samples/common/sampleOptions.cpp), so
# ``--use-engine`` refuses them. --ignore-layer-precisions is what a prebuilt engine does anyway.
ENGINE_FLAGS = frozenset(
    {
        "shape",
        "free_dims_as_one",
        "layer_json",
        "device",
        "plugin",
        "dynamic_plugin",
        "trt_verbose",
        "ignore_layer_precisions",
    }
)


def build_only_flags(args: argparse.Namespace) -> list[str]:
    """The flags in ``args`` that only apply when an engine is built (set to something else
    than their default), in the order ``--help`` lists them; ``--save-engine`` last."""
    from designer.commands.trt_build_verbs import add_build_arguments

    parser = argparse.ArgumentParser(add_help=False)
    add_build_arguments(parser)
    flags = [
        action.option_strings[0]
        for action in parser._actions
        if action.dest not in ENGINE_FLAGS and getattr(args, action.dest) != action.default
    ]
    if args.save_engine is not None:
        flags.append("--save-engine")
    return flags


def _engine_shapes(texts: list[str]) -> list[Any]:
    """``--shape`` values for a prebuilt engine → one profile of the shapes to run: each
    ``NAME:DIMS`` (the shape itself) or ``NAME:MIN:OPT:MAX`` (as for a build; opt is run)."""
    from designer.core.errors import DesignerError
    from designer.core.trt.settings import TrtSettingsError, parse_dims

    profile: dict[str, tuple[list[int], list[int], list[int]]] = {}
    for text in texts:
        parts = text.split(":")
        try:
            if len(parts) >= 4 and parts[0]:
                name = ":".join(parts[:-3])
                lo, opt, hi = (list(parse_dims(d)) for d in parts[-3:])
            elif len(parts) >= 2 and parts[0]:
                name = ":".join(parts[:-1])
                lo = opt = hi = list(parse_dims(parts[-1]))
            else:
                raise TrtSettingsError("no input name")
        except TrtSettingsError as exc:
            raise DesignerError(
                f"--shape {text!r}: with --use-engine write NAME:DIMS (or NAME:MIN:OPT:MAX,"
                f" of which opt is run), dims like 1x3x224x224 ({exc})"
            ) from None
        profile[name] = (lo, opt, hi)
    return [profile] if profile else []


def _engine_build_options(args: argparse.Namespace) -> Any:
    """The build options that still apply to the prebuilt ``--use-engine`` (the system
    options and the shapes to run). Nothing stored in the model is required or used: the
    engine holds its own profiles and precisions. Says on stderr which shapes trtexec takes
    for the dynamic inputs given no ``--shape``."""
    from designer.activities.trt.model_settings import (
        prebuilt_engine_shapes_note,
        with_model_settings,
    )
    from designer.activities.trt.options import TrtBuildOptions
    from designer.core.io import read_model

    proto = read_model(args.model)
    options = TrtBuildOptions(
        model=str(args.model),
        layer_info=str(args.layer_json) if args.layer_json else None,
        device=args.device,
        plugins=list(args.plugin),
        dynamic_plugins=list(args.dynamic_plugin),
        profiles=_engine_shapes(args.shape),
        verbose=args.trt_verbose,
    )
    options = with_model_settings(
        options, proto, free_dims_as_one=args.free_dims_as_one, prebuilt_engine=True
    )
    note = prebuilt_engine_shapes_note(proto, options.profiles[0] if options.profiles else {})
    if note is not None:
        print(
            f"onnx-designer: note: {note} (--shape NAME:DIMS, or --free-dims-as-one for 1s)",
            file=sys.stderr,
        )
    return options


def _profile_options(args: argparse.Namespace) -> Any:
    from designer.activities.trt.options import TrtProfileOptions
    from designer.commands.trt_build_verbs import build_options_from_model
    from designer.core.io import read_model

    if args.use_engine is not None:
        build = _engine_build_options(args)
    else:  # the layer precisions are checked once the TensorRT version is known
        proto = read_model(args.model)
        build = build_options_from_model(args, args.model, proto, defer_precision_check=True)
    layer_json = build.layer_info
    build.layer_info = None
    if args.use_engine is not None or not args.save_engine:
        build.engine = None
    else:
        build.engine = str(args.save_engine)
    return TrtProfileOptions(
        build=build,
        use_engine=str(args.use_engine) if args.use_engine else None,
        iterations=args.iterations,
        duration_s=args.duration,
        warmup_ms=args.warmup_ms,
        avg_runs=args.avg_runs,
        hide_non_compute=not args.include_data_transfers,
        spin_wait=args.spin_wait,
        cuda_graph=args.cuda_graph,
        separate_profile_run=args.separate_profile_run,
        lock_clocks=args.lock_clocks,
        export_profile=str(args.profile_json) if args.profile_json else None,
        export_times=str(args.times_json) if args.times_json else None,
        export_layer_info=layer_json,
    )


def _print_command(args: argparse.Namespace, options: Any) -> int:
    from designer.activities.trt.command import format_command, trtexec_profile_argv
    from designer.activities.trt.run import preview_trt_profile
    from designer.commands.trt_build_verbs import (
        check_layer_precisions,
        open_target,
        preview_version,
        resolve_detection,
    )

    version = preview_version(args)
    if version is not None:
        argv = trtexec_profile_argv(options, version, trtexec=args.trtexec or "trtexec")
    else:
        target, deploy_dir = open_target(args)
        try:
            det = resolve_detection(args, target, deploy_dir)
            if options.use_engine is None:  # deferred by _profile_options until now
                check_layer_precisions(options.build, det.version)
            argv = preview_trt_profile(target, options, det, deploy_dir=deploy_dir)
            print(f"# {det.summary}", file=sys.stderr)
        finally:
            target.close()
    print(format_command(argv))
    return 0


def _summary(report: Any) -> None:
    perf = report.performance
    if perf is not None and perf.throughput_qps is not None:
        print(f"throughput {perf.throughput_qps:,.1f} qps")
    for label, stats in (
        ("latency", perf and perf.latency),
        ("GPU compute", perf and perf.gpu_compute),
    ):
        if stats is not None and stats.median is not None:
            p99 = stats.percentile(99)
            tail = f", p99 {p99:.4f} ms" if p99 is not None else ""
            print(f"{label}: median {stats.median:.4f} ms, mean {stats.mean:.4f} ms{tail}")
    print(f"{len(report.layers)} layers, {report.total_ms:.4f} ms per inference")
    for row in sorted(report.layers, key=lambda r: -r.percent)[:5]:
        print(f"  {row.percent:5.1f}%  {(row.precision or '—'):<6} {row.name}")


def _profile_trt(args: argparse.Namespace) -> int:
    from designer.core.errors import DesignerError

    unused = build_only_flags(args) if args.use_engine is not None else []
    if unused:
        print(
            f"onnx-designer: error: {', '.join(unused)} only apply when an engine is built, and"
            f" --use-engine profiles the prebuilt {args.use_engine}: drop them, or drop"
            " --use-engine to build the model with them",
            file=sys.stderr,
        )
        return 2
    options = _profile_options(args)
    if args.print_command:
        return _print_command(args, options)
    if args.trt_version:
        raise DesignerError("--trt-version only previews (with --print-command): drop one")
    from designer.activities.reports.trt_tables import load_run_report
    from designer.activities.trt.run import run_trt_profile
    from designer.commands.activity_commands import (
        VerboseLog,
        _run_cancellable,
        report_cancelled,
    )
    from designer.commands.trt_build_verbs import open_target

    target, deploy_dir = open_target(args)
    log = VerboseLog() if args.verbose else None
    try:
        result = _run_cancellable(
            lambda token: run_trt_profile(
                target,
                options,
                custom=args.trtexec,
                source=args.trt_source,
                deploy_dir=deploy_dir,
                log_path=args.log,
                passes=args.passes,
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
    for role in ("profile", *[k for k in result.outputs if k.startswith("profile_")],
                 "times", "layer_info", "engine", "log"):  # fmt: skip
        if role in result.outputs:
            print(f"{role}: {result.outputs[role]}")
    report = load_run_report(result)
    _summary(report)
    if args.report_dir:
        from designer.activities.reports import write_tables

        assert result.profile is not None
        name = result.profile.name.removesuffix(".json")
        for path in write_tables(report.tables(), args.report_dir, name):
            print(f"wrote {path}")
    return 0


def add_profile_trt(kinds: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """The ``trt`` profiler of ``onnx-designer profile``."""
    from designer.commands.trt_build_verbs import add_build_arguments, add_target_arguments

    p = kinds.add_parser(
        "trt",
        help="profile with TensorRT (trtexec) here or on an SSH target",
        description="Build MODEL into a TensorRT engine (or load --use-engine) on the target, "
        "measure it with trtexec and print the engine summary and the slowest layers; "
        "--report-dir writes the report tables as CSV and JSON. The build options are those "
        "of 'trt build'.",
    )
    p.add_argument("model", type=Path, help="the .onnx file (its stored TensorRT settings apply)")
    add_target_arguments(p)
    add_build_arguments(p)
    g = p.add_argument_group("profiling")
    g.add_argument(
        "--use-engine",
        type=Path,
        metavar="ENGINE",
        help="profile this prebuilt engine (of the build options only --shape,"
        " --free-dims-as-one, --layer-json, --device, plugins and --trt-verbose apply;"
        " --shape NAME:DIMS gives a shape to run, and no optimization profile is needed"
        " in MODEL: without --shape trtexec sets free dims to 1)",
    )
    g.add_argument("--save-engine", type=Path, metavar="OUT", help="keep the engine built here")
    g.add_argument(
        "--passes",
        type=int,
        default=1,
        metavar="N",
        help="measurement passes (per-layer min/max over them; default 1)",
    )
    g.add_argument("--iterations", type=int, metavar="N", help="trtexec --iterations")
    g.add_argument("--duration", type=float, metavar="S", help="measure at least S seconds")
    g.add_argument("--warmup-ms", type=int, metavar="MS", help="warm-up time")
    g.add_argument("--avg-runs", type=int, metavar="N", help="runs averaged per reported value")
    g.add_argument("--lock-clocks", action="store_true", help="lock GPU clocks where permitted")
    g.add_argument(
        "--include-data-transfers",
        action="store_true",
        help="time host/device copies too (default: hide non-compute operations)",
    )
    g.add_argument("--spin-wait", action="store_true")
    g.add_argument("--cuda-graph", action="store_true")
    g.add_argument("--separate-profile-run", action="store_true")
    out = p.add_argument_group("outputs")
    out.add_argument(
        "--profile-json", type=Path, metavar="FILE", help="default MODEL.trt-profile.json"
    )
    out.add_argument("--times-json", type=Path, metavar="FILE", help="per-inference timings")
    out.add_argument("--log", type=Path, metavar="FILE", help="default PROFILE.log")
    out.add_argument("--report-dir", type=Path, metavar="DIR")
    p.add_argument("--print-command", action="store_true", help="print the trtexec line and exit")
    p.add_argument("--trt-version", metavar="V", help="with --print-command: preview for V")
    p.add_argument("-v", "--verbose", action="store_true", help="stream the log to stderr")
    p.set_defaults(handler=_profile_trt)
