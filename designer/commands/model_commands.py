"""``check``, ``info`` and ``resave``: open a model and report on it or write it back."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _check(args: argparse.Namespace) -> int:
    from designer.core.analysis import Severity, check_document
    from designer.core.errors import one_line
    from designer.core.io import open_document

    result = check_document(open_document(args.model))
    if args.json:
        payload = {
            "model": str(args.model),
            "errors": len(result.errors),
            "diagnostics": [d.to_json() for d in result.diagnostics],
        }
        print(json.dumps(payload, indent=2))
    else:
        for diagnostic in result.diagnostics:
            if diagnostic.severity >= Severity.WARNING or args.verbose:
                print(one_line(str(diagnostic)))  # a name may hold a line break
        counts = {s: sum(1 for d in result.diagnostics if d.severity == s) for s in Severity}
        print(
            f"{args.model}: {counts[Severity.ERROR]} error(s), {counts[Severity.WARNING]} "
            f"warning(s), {counts[Severity.INFO]} note(s)"
        )
    return 1 if result.has_errors else 0


def _info(args: argparse.Namespace) -> int:
    from designer.core.io import open_document
    from designer.core.summary import summarize

    summary = summarize(open_document(args.model))
    print(json.dumps(summary.to_json(), indent=2) if args.json else summary.to_text())
    return 0


def _resave(args: argparse.Namespace) -> int:
    from designer.core.io import open_document, write_model

    doc = open_document(args.input)
    report = write_model(doc.model, args.output, doc.base_dir)
    extra = f" and {len(report.data_files)} data file(s)" if report.data_files else ""
    print(f"saved {report.path}{extra}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    check = sub.add_parser(
        "check",
        help="type-check a model",
        description="Print the type checker's diagnostics (errors and warnings; notes with "
        "--verbose). Exits 1 if there is any error.",
    )
    check.add_argument("model", type=Path, help="the .onnx file")
    check.add_argument("--json", action="store_true", help="print JSON instead of text")
    check.add_argument("-v", "--verbose", action="store_true", help="also print notes")
    check.set_defaults(handler=_check)

    info = sub.add_parser(
        "info",
        help="summarize a model",
        description="IR version, opsets, producer, node counts per graph scope, "
        "initializers, functions, subgraphs, inputs and outputs.",
    )
    info.add_argument("model", type=Path, help="the .onnx file")
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.set_defaults(handler=_info)

    resave = sub.add_parser(
        "resave",
        help="open and save a model (the fidelity path)",
        description="Open IN as a document and save it to OUT atomically; external data "
        "is copied beside OUT.",
    )
    resave.add_argument("input", type=Path, help="the model to read")
    resave.add_argument("output", type=Path, help="where to write it")
    resave.set_defaults(handler=_resave)
