"""``report`` and ``compare``: DLProf-style reports of any profile on disk, and two runs
compared (SPEC E-1..E-3, B-3). Exit 0 = written / compared, 1 = a file that is no profile
or an impossible range (one line on stderr), 2 = usage."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPORT_CHOICES = ("summary", "detail", "op_type", "iteration", "kernel", "expert")


def _list(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if items == ["all"]:
        return list(allowed)
    bad = [x for x in items if x not in allowed]
    if bad or not items:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(bad) or '(none)'}; choose from {', '.join(allowed)} or all"
        )
    return items


def _fail(message: str) -> int:
    print(f"onnx-designer: error: {message}", file=sys.stderr)
    return 1


def _report(args: argparse.Namespace) -> int:
    from designer.activities.analysis.analyze import analyze
    from designer.activities.analysis.detectors import DetectorError, load_detectors
    from designer.core.errors import DesignerError

    try:
        detectors = load_detectors(args.detectors)
    except DetectorError as exc:
        return _fail(str(exc))
    output: Path = args.output
    written_all: list[Path] = []
    for profile in args.profiles:
        try:
            analysis = analyze(
                profile,
                model=args.model,
                iter_start=args.iter_start,
                iter_stop=args.iter_stop,
                key_node=args.key_node,
                extra=args.with_files,
                detectors=detectors,
            )
            written = analysis.write(output, args.reports, args.formats)
        except (DesignerError, ValueError) as exc:
            return _fail(str(exc))
        except OSError as exc:
            return _fail(f"{output}: cannot write ({exc.strerror or exc})")
        written_all += written
        for warning in analysis.profile.warnings:
            print(f"onnx-designer: warning: {profile}: {warning}", file=sys.stderr)
        s = analysis.stats
        rng = "" if s.range is None else f", iterations {s.range.start}..{s.range.stop}"
        print(
            f"{profile}: {len(s.nodes)} nodes, {s.per_iteration_us:,.1f} µs node time per "
            f"iteration{rng}, {len(analysis.findings)} finding(s)"
        )
        for f in analysis.findings[:5]:
            gain = "" if f.gain_us is None else f" (gain ~{f.gain_us:,.1f} µs/iteration)"
            print(f"  [{f.severity}] {f.problem}{gain}\n      fix: {f.fix}")
    for path in written_all:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from designer.activities.analysis.analyze import read_model_for_analysis
    from designer.activities.analysis.compare import compare_stats
    from designer.activities.analysis.profile import load_profile
    from designer.activities.analysis.stats import compute_stats
    from designer.core.errors import DesignerError

    try:
        model_a = read_model_for_analysis(args.model) if args.model else None
        model_b = read_model_for_analysis(args.model_b) if args.model_b else model_a
        sa = compute_stats(load_profile(args.a, model=model_a), args.iter_start, args.iter_stop)
        sb = compute_stats(load_profile(args.b, model=model_b), args.iter_start, args.iter_stop)
    except (DesignerError, ValueError) as exc:
        return _fail(str(exc))
    for path, stats in ((args.a, sa), (args.b, sb)):
        for warning in stats.profile.warnings:
            print(f"onnx-designer: warning: {path}: {warning}", file=sys.stderr)
    cmp = compare_stats(sa, sb)
    tables = cmp.tables()
    if args.json:
        print(json.dumps({k: t.to_json() for k, t in tables.items()}, indent=2))
        return 0
    a, b = cmp.total_a_us, cmp.total_b_us
    ratio = f" ({b / a:.3f}x)" if a > 0 else ""
    print(f"A {args.a}\nB {args.b}")
    print(f"node time per iteration: A {a:,.1f} µs, B {b:,.1f} µs, B-A {b - a:+,.1f} µs{ratio}")
    print(
        f"{sum(d.status == 'both' for d in cmp.nodes)} nodes in both, "
        f"{len(cmp.removed)} removed, {len(cmp.added)} added"
    )
    print(f"{'node':<48} {'status':<8} {'A µs':>10} {'B µs':>10} {'B-A µs':>10} {'B/A':>7}")
    for d in cmp.nodes[: args.top]:
        r = "" if d.ratio is None else f"{d.ratio:.3f}"
        av = "" if d.a_us is None else f"{d.a_us:,.1f}"
        bv = "" if d.b_us is None else f"{d.b_us:,.1f}"
        print(f"{d.key[:48]:<48} {d.status:<8} {av:>10} {bv:>10} {d.delta_us:>+10,.1f} {r:>7}")
    print("per op type:")
    for d in cmp.op_types[: args.top]:
        r = "" if d.ratio is None else f"{d.ratio:.3f}"
        print(f"  {d.key:<30} {d.delta_us:>+12,.1f} µs {r:>7}")
    return 0


def _range_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--iter-start",
        type=int,
        metavar="N",
        help="first iteration aggregated (0-based, inclusive; default 1 when there are two "
        "or more, leaving out the warm-up run)",
    )
    p.add_argument(
        "--iter-stop", type=int, metavar="M", help="last iteration aggregated (inclusive)"
    )


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rep = sub.add_parser(
        "report",
        help="DLProf-style reports and expert-system findings of ORT/TensorRT profiles",
        description="Write <profile_name>_<report>.<ext> for each PROFILE (ONNX Runtime "
        "profile JSON, trtexec --exportProfile JSON, TREx <engine>.profile.json or a trtexec "
        "log with --dumpProfile) into --output.",
    )
    rep.add_argument("profiles", type=Path, nargs="+", metavar="PROFILE")
    rep.add_argument(
        "--model", type=Path, help="the profiled .onnx (maps nodes, enables graph detectors)"
    )
    rep.add_argument(
        "--reports",
        type=lambda t: _list(t, REPORT_CHOICES, "report"),
        default=list(REPORT_CHOICES),
        help=f"comma-separated: {','.join(REPORT_CHOICES)} or all (default all)",
    )
    rep.add_argument(
        "--formats",
        type=lambda t: _list(t, ("csv", "json"), "format"),
        default=["csv", "json"],
        help="csv,json (default both)",
    )
    rep.add_argument("--output", type=Path, default=Path("."), help="folder (default: here)")
    _range_args(rep)
    rep.add_argument(
        "--key-node",
        metavar="NAME",
        help="node that starts each iteration (ORT; default: the model_run events, else the "
        "first node that ran)",
    )
    rep.add_argument(
        "--with",
        dest="with_files",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a TensorRT companion: layer JSON, --exportTimes JSON or trtexec log "
        "(repeatable; files beside the profile are found by themselves)",
    )
    rep.add_argument(
        "--detectors",
        type=Path,
        action="append",
        default=[],
        metavar="FILE.py",
        help="an extra detector plug-in: a Python file defining Detector subclasses (repeatable)",
    )
    rep.set_defaults(handler=_report)

    cmp = sub.add_parser(
        "compare",
        help="compare two profiles of one model: per-node and per-op-type deltas",
        description="Deltas B - A per ONNX node (matched by name, TensorRT layers through "
        "their ONNX metadata) and per op type, per iteration.",
    )
    cmp.add_argument("a", type=Path, metavar="A", help="the baseline profile")
    cmp.add_argument("b", type=Path, metavar="B", help="the profile compared with A")
    cmp.add_argument("--model", type=Path, help="A's model (maps fused nodes to ONNX nodes)")
    cmp.add_argument("--model-b", type=Path, help="B's model (default: --model)")
    _range_args(cmp)
    cmp.add_argument("--top", type=int, default=20, help="rows printed (default 20)")
    cmp.add_argument("--json", action="store_true", help="print the tables as JSON")
    cmp.set_defaults(handler=_compare)
