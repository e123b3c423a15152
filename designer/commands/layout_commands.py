"""``layout``: write what the canvas would draw for a model as JSON, without the GUI."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from designer.commands.arg_types import collapse_depth


def _layout(args: argparse.Namespace) -> int:
    from designer.commands.outputs import check_output, refuse_model_output
    from designer.core.io.atomic import write_output
    from designer.ui.canvas.headless import ensure_app, headless_scene
    from designer.ui.canvas.layout_json import scene_layout

    to_stdout = str(args.out) == "-"
    if not to_stdout:  # before the (slow) layout
        check_output(Path(args.out), Path(args.model))
        refuse_model_output(Path(args.out), Path(args.model))  # nor its weights or layout
    ensure_app()
    scene, notes = headless_scene(
        Path(args.model),
        scope=args.scope,
        show_constants=args.show_constants,
        collapse=args.collapse,
    )
    data = scene_layout(scene, args.scope or "main")
    text = json.dumps(data, indent=1 if args.indent else None, ensure_ascii=False)
    for note in notes:
        print(note, file=sys.stderr)
    if to_stdout:
        print(text)
        return 0
    write_output(Path(args.out), (text + "\n").encode("utf-8"))
    boxes, links = len(data["boxes"]), len(data["links"])  # type: ignore[arg-type]
    print(f"wrote {args.out} ({boxes} boxes, {links} links)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "layout",
        help="write the canvas layout (boxes and links) as JSON",
        description="Lay MODEL out as the canvas would (or use the positions saved beside it) "
        "and write every box (id, kind, label, x, y, w, h) and link (source, target, points "
        "from the output terminal to the input terminal) in scene units, y down. Stubs and "
        "graph-input proxies drawn above a reader are boxes of kind 'stub' and 'proxy'.",
    )
    parser.add_argument("model", help="the .onnx model")
    parser.add_argument(
        "out",
        help="the .json file to write ('-' for standard output); written atomically, never "
        "over MODEL",
    )
    parser.add_argument(
        "--scope",
        metavar="PATH",
        help="a subgraph or function body, as the layout file names it "
        "(e.g. main/If_0/then_branch); default the main graph",
    )
    parser.add_argument(
        "--show-constants", action="store_true", help="draw Constant nodes (hidden by default)"
    )
    parser.add_argument("--indent", action="store_true", help="indent the JSON")
    parser.add_argument(
        "--collapse",
        type=collapse_depth,
        metavar="DEPTH|auto",
        help="keep DEPTH levels of the model's module-scope tree open (from scoped node "
        "names or the exporter's name_scopes metadata) and draw each deeper module as one "
        "box labelled with its scope name; 'auto' picks the deepest level that keeps the "
        "view to a few dozen boxes (the next one when that shows only a handful)",
    )
    parser.set_defaults(handler=_layout)
