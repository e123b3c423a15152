"""``extract``: write a subgraph or a local function body as a standalone model (G-3)."""

from __future__ import annotations

import argparse
from pathlib import Path


def _extract(args: argparse.Namespace) -> int:
    from designer.commands.outputs import refuse_input
    from designer.core.extract import ExtractError, extract_function, extract_subgraph
    from designer.core.io import open_document, write_model

    if args.node is not None and not args.attribute:
        args.parser.error("--node needs --attribute")
    if args.function is not None and args.attribute:
        args.parser.error("--attribute goes with --node, not --function")
    if args.function is not None and args.index is not None:
        args.parser.error("--index goes with --node and --attribute, not --function")
    refuse_input(Path(args.output), Path(args.model), error=ExtractError)
    doc = open_document(args.model)
    if args.function is not None:
        domain, colon, name = args.function.rpartition(":")
        if not colon:  # a bare name: fine while only one domain has it
            matches = [f for f in doc.model.functions if f.name == name]
            if len(matches) != 1:
                raise ExtractError(
                    f"give the function as DOMAIN:NAME ('{name}' matches {len(matches)} "
                    "local functions)"
                )
            domain = matches[0].domain
        model = extract_function(doc, domain, name)
    else:
        index = -1 if args.index is None else args.index
        model = extract_subgraph(doc, args.node, args.attribute, index)
    report = write_model(model, args.output, doc.base_dir)
    graph = model.graph
    print(
        f"saved {report.path}: {len(graph.input)} input(s), {len(graph.output)} output(s), "
        f"{len(graph.node)} node(s)"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "extract",
        help="write a subgraph or local function as a standalone model",
        description="Write the graph attribute ATTR of node NODE, or the body of a local "
        "function, as a model that passes onnx's full check: outer-scope values become "
        "typed graph inputs, needed initializers are copied, opsets and the local functions "
        "it calls are carried. A function is typed from one of its call sites.",
    )
    parser.add_argument("model", type=Path, help="the .onnx file")
    parser.add_argument("output", type=Path, help="where to write the extracted model")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--node", help="name of the node holding the subgraph")
    which.add_argument("--function", metavar="DOMAIN:NAME", help="a local function")
    parser.add_argument("--attribute", help="the node's graph attribute (with --node)")
    parser.add_argument(
        "--index",
        type=int,
        default=None,
        help="element of a GRAPHS attribute (with --node; default: none)",
    )
    parser.set_defaults(handler=_extract, parser=parser)
