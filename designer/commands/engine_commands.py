"""``engine info|report|lint|compare|export-image``: TensorRT engine explorer without a GPU.

FILE… are one engine's files: its layer-information JSON (``trtexec --exportLayerInfo``,
TensorRT 8.x/10.x/11.x, any extension) and optionally its profile / timing / metadata JSON and
trtexec logs; files TREx names ``<engine>.<kind>.json`` beside the layer JSON are found
automatically. ``compare`` takes one layer JSON per engine. Exit codes: 0 success, 1 failure
or (lint) findings at or above ``--fail-on``, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from designer.commands.image_commands import colour

if TYPE_CHECKING:
    from designer.activities.reports.engine_bundle import EngineBundle
    from designer.activities.reports.table import Table


def _load(files: list[str], siblings: bool) -> EngineBundle:
    """The engine of ``files``; a profile of another engine (too few of its layers are the
    engine's, the rule the window's Load Profile… applies) fails with one line when given,
    and is left out with a note when found beside the layer JSON."""
    from designer.activities.reports.engine_bundle import load_engine, own_profile_only

    paths = [Path(f) for f in files]
    return own_profile_only(load_engine(paths, siblings=siblings), paths)


def _fmt(value: Any) -> str:
    if value is None:
        return "not recorded"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _print_table(table: Table, limit: int | None = None) -> None:
    """``table`` as aligned text; a column's unit follows its label (``Latency (ms)``), as
    the window's table headers show it."""
    labels = [f"{c.label} ({c.unit})" if c.unit else c.label for c in table.columns]
    rows = [[_fmt(v) if v is not None else "" for v in row] for row in table.rows[:limit]]
    widths = [max([len(label)] + [len(r[i]) for r in rows]) for i, label in enumerate(labels)]
    widths = [min(w, 60) for w in widths]
    print(f"{table.title}:")
    print("  " + "  ".join(label.ljust(w)[:w] for label, w in zip(labels, widths, strict=True)))
    for row in rows:
        print("  " + "  ".join(cell.ljust(w)[:w] for cell, w in zip(row, widths, strict=True)))
    if limit is not None and len(table.rows) > limit:
        print(f"  … {len(table.rows) - limit} more (use --json or --output for all)")


def _info_dict(bundle: EngineBundle) -> dict[str, Any]:
    g = bundle.graph
    device = bundle.device
    kinds: dict[str, int] = {}
    for layer in g.layers:
        kinds[layer.kind] = kinds.get(layer.kind, 0) + 1
    return {
        "engine": bundle.name,
        "tensorrt_version": bundle.trt_version,
        "schema": g.version_family,
        "detailed": g.detailed,
        "device": device.name if device else None,
        "compute_capability": device.compute_capability if device else None,
        "precision_allowed": bundle.build.precision if bundle.build else None,
        "layers": len(g.layers),
        "layer_types": kinds,
        "io_tensors": [
            {
                "name": t.name,
                "mode": t.mode,
                "precision": t.precision,
                "dims": list(t.dims) if t.dims is not None else None,
                "format": t.format,
                "profiles": [
                    {"min": p.min_shape, "opt": p.opt_shape, "max": p.max_shape} for p in t.profiles
                ],
            }
            for t in g.io_tensors
        ],
        "memory_bytes": {k: v for log in bundle.logs for k, v in log.memory_bytes.items()},
        "engine_size_mib": next(
            (log.engine_size_mib for log in bundle.logs if log.engine_size_mib is not None), None
        ),
        "files": {kind: [str(p) for p in paths] for kind, paths in bundle.sources.items()},
        "profiled": bundle.profile is not None,
        "skipped": list(bundle.skipped),
    }


def _info(args: argparse.Namespace) -> int:
    bundle = _load(args.files, not args.no_siblings)
    info = _info_dict(bundle)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"engine: {info['engine']}")
    print(f"TensorRT: {_fmt(info['tensorrt_version'])} (layer JSON schema {info['schema']})")
    print(f"device: {_fmt(info['device'])}  compute capability: {_fmt(info['compute_capability'])}")
    print(f"precision allowed: {_fmt(info['precision_allowed'])}")
    detail = "" if info["detailed"] else " (names only: build with --profilingVerbosity=detailed)"
    print(f"layers: {info['layers']}{detail}")
    for kind, count in sorted(info["layer_types"].items(), key=lambda kv: -kv[1]):
        print(f"  {kind}: {count}")
    for t in info["io_tensors"]:
        dims = "x".join(str(d) for d in t["dims"]) if t["dims"] else "?"
        print(f"{(t['mode'] or 'I/O').lower()}: {t['name']} {_fmt(t['precision'])} {dims}")
    if info["engine_size_mib"] is not None:
        print(f"engine size: {info['engine_size_mib']:g} MiB")
    for key, size in info["memory_bytes"].items():
        print(f"{key}: {size} bytes")
    for kind, paths in info["files"].items():
        print(f"{kind}: {', '.join(paths)}")
    for line in info["skipped"]:  # a damaged file beside the engine
        print(f"onnx-designer: note: {line}", file=sys.stderr)
    return 0


def _report(args: argparse.Namespace) -> int:
    from designer.activities.reports.engine_report import build_report, report_tables
    from designer.activities.reports.table import write_tables

    bundle = _load(args.files, not args.no_siblings)
    report = build_report(bundle)
    tables = report_tables(report, top_n=args.top)
    if args.output:
        formats: tuple[Literal["csv", "json"], ...] = tuple(
            f for f in args.format.split(",") if f in ("csv", "json")
        )
        given = [f for f in args.format.split(",") if f]
        bad = [f for f in given if f not in ("csv", "json")]
        if bad or not formats:
            print(
                f"onnx-designer: error: --format takes csv, json or csv,json (got {args.format!r})",
                file=sys.stderr,
            )
            return 2
        written = write_tables(tables, Path(args.output), bundle.name, formats)
        if not args.json:
            print(f"wrote {len(written)} files to {args.output}")
    if args.json:
        print(
            json.dumps(
                {
                    "engine": bundle.name,
                    "notes": report.notes,
                    "tables": {t.name: t.to_json() for t in tables},
                },
                indent=2,
            )
        )
        return 0
    by_name = {t.name: t for t in tables}
    _print_table(by_name["summary"])
    for name in ("layer_types", "precision", "reformats", "top_layers"):
        print()
        _print_table(by_name[name], limit=args.top)
    for note in report.notes:
        print(f"note: {note}")
    return 0


def _lint(args: argparse.Namespace) -> int:
    from designer.activities.reports.engine_lint import lint, severity_rank

    bundle = _load(args.files, not args.no_siblings)
    findings = lint(bundle)
    if args.json:
        print(
            json.dumps(
                {"engine": bundle.name, "findings": [f.as_dict() for f in findings]}, indent=2
            )
        )
    else:
        for f in findings:
            layers = f.layers[0] + (f" (+{len(f.layers) - 1} more)" if len(f.layers) > 1 else "")
            print(f"{f.severity}: [{f.rule}] {layers}: {f.found}")
            print(f"    fix: {f.fix}")
        counts = {
            s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")
        }
        print(
            f"{bundle.name}: {len(findings)} findings "
            f"({counts['error']} errors, {counts['warning']} warnings, {counts['info']} info)"
        )
    if args.fail_on == "never":
        return 0
    threshold = severity_rank(args.fail_on)
    return 1 if any(severity_rank(f.severity) >= threshold for f in findings) else 0


def _compare(args: argparse.Namespace) -> int:
    from designer.activities.reports.engine_compare import compare_engines, comparison_tables
    from designer.activities.reports.table import write_tables

    if len(args.engines) < 2:
        print(
            "onnx-designer engine compare: error: give at least two engines (layer JSON files)",
            file=sys.stderr,
        )
        return 2
    bundles = [_load([e], True) for e in args.engines]
    cmp = compare_engines(bundles)
    tables = comparison_tables(cmp)
    if args.output:
        write_tables(tables, Path(args.output), "compare")
        if not args.json:
            print(f"wrote {len(tables) * 2} files to {args.output}")
    if args.json:
        print(
            json.dumps(
                {
                    "engines": cmp.names,
                    "tables": {t.name: t.to_json() for t in tables},
                    "chart": cmp.chart_data(),
                },
                indent=2,
            )
        )
        return 0
    _print_table(tables[0])
    print()
    _print_table(tables[1])
    print()
    matched = tables[2]
    print(
        f"{len(matched.rows)} layer groups matched through ONNX node names"
        + ("" if matched.rows else " (the engines come from different ONNX exports)")
    )
    if matched.rows:
        _print_table(matched, limit=args.top)
    return 0


def _export_image(args: argparse.Namespace) -> int:
    from designer.ui.engine.export import export_engine_image

    width, height, message = export_engine_image(
        Path(args.file),
        Path(args.out),
        profile=Path(args.profile) if args.profile else None,
        background=args.background,
        grid=args.grid,
        scale=args.scale,
    )
    if args.json:
        print(json.dumps({"out": args.out, "width": width, "height": height, "note": message}))
        return 0
    if message:
        print(message, file=sys.stderr)
    print(f"wrote {args.out}" + (f" ({width}×{height})" if width else ""))
    return 0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="the layer JSON, plus optional profile/timing/metadata JSON and logs",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--no-siblings",
        action="store_true",
        help="do not pick up <engine>.<kind>.json files beside the layer JSON",
    )


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    engine = sub.add_parser(
        "engine",
        help="explore TensorRT engines from their JSON files (no GPU needed)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    verbs = engine.add_subparsers(dest="verb", metavar="VERB", required=True)

    p = verbs.add_parser("info", help="what the files say about the engine")
    _common(p)
    p.set_defaults(handler=_info)

    p = verbs.add_parser("report", help="report card: latency by type, precision, reformats")
    _common(p)
    p.add_argument("--output", metavar="DIR", help="write the tables as <engine>_<table>.csv/json")
    p.add_argument("--format", default="csv,json", help="csv, json or csv,json (default both)")
    p.add_argument("--top", type=int, default=10, help="rows in the top-layers table (default 10)")
    p.set_defaults(handler=_report)

    p = verbs.add_parser("lint", help="performance hazards with one fix each")
    _common(p)
    p.add_argument(
        "--fail-on",
        choices=("info", "warning", "error", "never"),
        default="warning",
        help="exit 1 when a finding is at least this severe (default warning)",
    )
    p.set_defaults(handler=_lint)

    p = verbs.add_parser("compare", help="two or more engines side by side (first = baseline)")
    p.add_argument("engines", nargs="+", metavar="ENGINE", help="one layer JSON per engine")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--output", metavar="DIR", help="write the tables as compare_<table>.csv/json")
    p.add_argument("--top", type=int, default=20, help="matched-layer rows to print (default 20)")
    p.set_defaults(handler=_compare)

    p = verbs.add_parser("export-image", help="render the engine graph to PNG, JPEG or SVG")
    p.add_argument("file", metavar="FILE", help="the engine's layer JSON")
    p.add_argument("out", metavar="OUT", help="the image to write (.png, .jpg or .svg)")
    p.add_argument("--profile", metavar="PROFILE", help="a --exportProfile JSON for latencies")
    p.add_argument(
        "--background",
        type=colour,
        default="white",
        metavar="C",
        help="background colour: a name or #rrggbb (default white)",
    )
    p.add_argument("--grid", action="store_true", help="draw the background grid")
    p.add_argument("--scale", type=float, default=1.0, help="pixels per canvas unit (default 1.0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(handler=_export_image)
