"""``transform NAME IN OUT`` (a plug-in transform without the GUI) and ``plugins`` (what is
installed in each entry-point group, and what failed to load)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _transform(args: argparse.Namespace) -> int:
    from designer.activities.plugin_transforms import find_transform, run_transform
    from designer.commands.transform_commands import (
        _emit,
        _has_external,
        _interruptible,
        _prepare,
        _save,
        _verify,
    )

    transform = find_transform(args.name)
    with _interruptible():
        model = _prepare(args)
        result, log = run_transform(transform, model, Path(args.input).resolve().parent)
        _verify(result, args)
        saved = _save(result, args, _has_external(model))
    _emit(args, log.to_json(), log.text(), saved)
    return 1 if args.forced else 0


def _plugins(args: argparse.Namespace) -> int:
    from designer import plugins
    from designer.activities.analysis.detectors.base import load_detectors
    from designer.activities.custom_tools import plugin_tools
    from designer.activities.plugin_transforms import transform_plugins

    # Load what can be loaded here (docks need the window), so their failures are known.
    transform_plugins()
    load_detectors()
    plugin_tools()
    rows = []
    for group, what in plugins.GROUPS.items():
        for plugin in plugins.load(group):
            rows.append(
                {
                    "group": group,
                    "name": plugin.name,
                    "value": plugin.value,
                    "distribution": plugin.distribution,
                    "expects": what,
                }
            )
    failed = plugins.failures()
    rows = [
        r for r in rows if not any(f.name == r["name"] and f.group == r["group"] for f in failed)
    ]
    if args.json:
        problems = [vars(f) | {"message": f.line()} for f in failed]
        print(json.dumps({"plugins": rows, "failures": problems}, indent=2))
    else:
        for row in rows:
            source = f"  ({row['distribution']})" if row["distribution"] else ""
            print(f"{row['group']:<26} {row['name']:<24} {row['value']}{source}")
        if not rows and not failed:
            print("no plug-ins installed", file=sys.stderr)
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from designer.commands.transform_commands import _common

    transform = sub.add_parser(
        "transform",
        help="run a transform plug-in (onnx_designer.transforms) on a model",
        description="Run the transform plug-in NAME on IN and write OUT (as the GUI's Tools > "
        "Global Model Modification does). 'onnx-designer plugins' lists the installed ones.",
    )
    transform.add_argument("name", metavar="NAME", help="the plug-in's entry-point name")
    _common(transform)
    transform.set_defaults(handler=_transform)

    listing = sub.add_parser(
        "plugins",
        help="list installed plug-ins by entry-point group and report broken ones",
        description="List the plug-ins of every onnx_designer.* entry-point group. Exits 1 "
        "when one failed to load (each failure is one line on stderr).",
    )
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=_plugins)
