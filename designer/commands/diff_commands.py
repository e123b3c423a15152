"""``diff``: what differs between two models (SPEC B-2), as text or JSON.

Exit status as diff(1): 0 identical, 1 differences found, 2 usage or a file that cannot be
read (one line on stderr)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _diff(args: argparse.Namespace) -> int:
    from designer.core.diff import diff_files, summary_text
    from designer.core.errors import DesignerError

    try:
        diff = diff_files(args.a, args.b)
    except DesignerError as exc:
        print(f"onnx-designer diff: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(diff.to_json(), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        print(summary_text(diff))
    return 0 if diff.identical else 1


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "diff",
        help="list what differs between two models",
        description="Compare model A (before) with model B (after): nodes added, removed "
        "and changed (matched by name, then by structure: op type, domain and the tensors "
        "they read), attribute changes, initializers (type, shape, largest absolute value "
        "difference; external data read one tensor at a time), graph inputs/outputs, "
        "opsets, metadata, subgraphs and local functions. Exit status: 0 identical, "
        "1 differences found, 2 usage or an unreadable file.",
    )
    parser.add_argument("a", type=Path, help="model A (before)")
    parser.add_argument("b", type=Path, help="model B (after)")
    parser.add_argument(
        "--json",
        action="store_true",
        help='print the differences as JSON (schema: docs/transforms.md, "Model diff")',
    )
    parser.set_defaults(handler=_diff)
