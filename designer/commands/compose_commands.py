"""``compose``: two models as one, outputs of A feeding inputs of B (issue 17, point 5)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _compose(args: argparse.Namespace) -> int:
    from designer.commands.outputs import refuse_input
    from designer.core.compose import ComposeError, compose_files

    refuse_input(args.output, args.a, args.b, error=ComposeError)  # a hard link too
    result, data_files = compose_files(
        args.a, args.b, args.output, args.map, prefix_a=args.prefix_a, prefix_b=args.prefix_b
    )
    if args.json:
        graph = result.model.graph
        payload = {
            "command": "compose",
            "a": str(args.a),
            "b": str(args.b),
            "output": str(args.output),
            "data_files": [str(p) for p in data_files],
            "inputs": [v.name for v in graph.input],
            "outputs": [v.name for v in graph.output],
            "nodes": len(graph.node),
            "notes": result.notes,
        }
        print(json.dumps(payload, indent=2))
    else:
        for note in result.notes:
            print(note)
        print(f"saved {args.output}")
    return 0


def _pair(text: str) -> str:
    """``--map OUT_A:IN_B``: a colon with a name on each side (names may hold colons
    themselves; which colon splits is decided against the models, in compose_files)."""
    if not any(c == ":" and 0 < i < len(text) - 1 for i, c in enumerate(text)):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not OUT_A:IN_B (an output of A, a colon, an input of B)"
        )
    return text


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "compose",
        help="compose two models: outputs of A feed inputs of B",
        description="Write one model in which the mapped outputs of A feed inputs of B "
        "(onnx.compose does the wiring). Checked first: the names exist, each pair's "
        "element types and shapes fit, the opsets can be reconciled (the older default-"
        "domain opset is converted up), names both models use get prefixes; the result "
        "must pass the type checker before it is written (atomically). Unmapped inputs "
        "stay inputs; B's outputs and A's unmapped outputs are the outputs.",
    )
    parser.add_argument("a", type=Path, metavar="A", help="the first model")
    parser.add_argument("b", type=Path, metavar="B", help="the model fed by A")
    parser.add_argument("output", type=Path, metavar="OUT", help="where to write the result")
    parser.add_argument(
        "--map",
        action="append",
        required=True,
        type=_pair,
        metavar="OUT_A:IN_B",
        help="connect output OUT_A of A to input IN_B of B (repeat for more)",
    )
    parser.add_argument("--prefix-a", default="", metavar="P", help="prefix for A's names")
    parser.add_argument("--prefix-b", default="", metavar="P", help="prefix for B's names")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.set_defaults(handler=_compose)
