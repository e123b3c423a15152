"""Example CLI subcommand plug-in: ``onnx-designer ops MODEL`` prints the operator counts.

Install it with an entry point in a package's ``pyproject.toml``::

    [project.entry-points."onnx_designer.commands"]
    ops = "ops_command:register"

``register(subparsers)`` adds parsers as the built-in subcommands do (one module each in
``designer/commands``) and sets ``handler=`` to a function ``(args) -> exit code``. Import
heavy things inside the handler so that ``onnx-designer --help`` stays fast. Plug-in
commands are listed after the built-in ones, by plug-in name.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _ops(args: argparse.Namespace) -> int:
    import onnx
    from op_histogram import histogram

    try:
        model = onnx.load(str(args.model), load_external_data=False)
    except Exception as exc:  # any unreadable file: one line, exit 1
        print(f"onnx-designer: error: cannot read {args.model}: {exc}", file=sys.stderr)
        return 1
    counts = histogram(model)
    if args.json:
        print(json.dumps(dict(counts.most_common()), indent=2))
    else:
        for op, count in counts.most_common():
            print(f"{count:>6}  {op}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "ops", help="count the operators of a model (example plug-in)", description=__doc__
    )
    parser.add_argument("model", type=Path, metavar="MODEL", help="the .onnx file")
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.set_defaults(handler=_ops)
