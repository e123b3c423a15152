"""``export-image``: render a model's canvas to PNG, JPEG or SVG without the GUI."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from designer.commands.arg_types import collapse_depth, image_file, image_scale

DEFAULT_GRID_COLOUR = "#e2e5ea"


def colour(text: str) -> str:
    """``--background`` / ``--grid-color`` (also ``engine export-image --background``): a
    colour read exactly as the renderer will read it, ``QColor(text)`` (an SVG colour name
    such as ``white``, or ``#rgb``, ``#rrggbb``, ``#aarrggbb``), so that a typo is a usage
    error (exit 2) before any layout or file rather than an error after the model loaded.

    Qt is imported here, lazily: only a command that renders with Qt anyway parses a
    colour, and ``onnx-designer --help`` or any other command never loads it. Returns
    ``text`` unchanged."""
    from designer.ui.colours import is_colour

    if not is_colour(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a colour: use a name (white, red) or #rgb / #rrggbb"
        )
    return text


def _export_image(args: argparse.Namespace) -> int:
    from designer.commands.outputs import check_output, refuse_model_output
    from designer.core.io.atomic import render_output
    from designer.ui.canvas.headless import export_model_image

    model, out = Path(args.model), Path(args.out)
    check_output(out, model)  # before the (slow) layout, and Qt never sees a bad path
    refuse_model_output(out, model)  # nor over the model's weights or layout
    grid = args.grid or args.grid_color is not None  # a grid colour asks for the grid

    def render(path: Path) -> tuple[int, int, str]:
        return export_model_image(
            model,
            path,
            background=args.background,
            grid=grid,
            grid_color=args.grid_color or DEFAULT_GRID_COLOUR,
            scale=args.scale,
            show_constants=args.show_constants,
            collapse=args.collapse,
        )

    width, height, message = render_output(out, render)
    if message:
        print(message, file=sys.stderr)
    size = f" ({width}×{height})" if width else ""
    print(f"wrote {args.out}{size}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "export-image",
        help="render the model canvas to PNG, JPEG or SVG",
        description="Lay the model out (or use the positions saved beside it) and render the "
        "whole canvas to an image. The format follows OUT's suffix (.png, .jpg, .svg). SVG "
        "stays sharp at any size; a PNG/JPEG larger than 32,000 pixels a side or 150 "
        "megapixels is scaled down, with a message.",
    )
    parser.add_argument("model", help="the .onnx model")
    parser.add_argument(
        "out",
        type=image_file(".png", ".jpg", ".jpeg", ".svg"),
        help="the image file to write (.png, .jpg or .svg); written atomically, never over MODEL",
    )
    parser.add_argument(
        "--background",
        type=colour,
        default="white",
        metavar="C",
        help="background colour: a name or #rrggbb (default white)",
    )
    parser.add_argument("--grid", action="store_true", help="draw the background grid")
    parser.add_argument(
        "--grid-color",
        type=colour,
        metavar="C",
        help=f"grid colour (default {DEFAULT_GRID_COLOUR}); implies --grid",
    )
    parser.add_argument(
        "--scale",
        type=image_scale,
        default=1.0,
        metavar="S",
        help="pixels per canvas unit, above 0 (default 1.0)",
    )
    parser.add_argument(
        "--show-constants", action="store_true", help="draw Constant nodes (hidden by default)"
    )
    parser.add_argument(
        "--collapse",
        type=collapse_depth,
        metavar="DEPTH|auto",
        help="keep DEPTH levels of the model's module-scope tree open (from scoped node "
        "names or the exporter's name_scopes metadata) and draw each deeper module as one "
        "box labelled with its scope name; 'auto' picks the deepest level that keeps the "
        "view to a few dozen boxes (the next one when that shows only a handful)",
    )
    parser.set_defaults(handler=_export_image)
