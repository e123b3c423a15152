"""``screenshot``: render the main window with a model, offscreen (tests and docs)."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from designer.commands.arg_types import image_file


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        message = f"expected WIDTHxHEIGHT, e.g. 1600x1000, not {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if not (200 <= width <= 8000 and 200 <= height <= 8000):
        raise argparse.ArgumentTypeError("width and height must be between 200 and 8000")
    return width, height


def _view(text: str) -> str:
    if text in ("first", "fit"):
        return text
    try:
        zoom = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected first, fit or a zoom, not {text!r}") from None
    if not 0.01 <= zoom <= 16:
        raise argparse.ArgumentTypeError("a zoom must be between 0.01 and 16")
    return text


def _screenshot(args: argparse.Namespace) -> int:
    from designer.commands.outputs import check_output, refuse_model_output
    from designer.core.io.atomic import render_output

    check_output(args.output, args.model)
    refuse_model_output(args.output, args.model)  # nor over its weights or layout
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory() as config:
        os.environ["ONNX_DESIGNER_CONFIG_DIR"] = config  # leave the user's settings alone
        os.environ.setdefault("ONNX_DESIGNER_RECOVERY_DIR", str(Path(config) / "recovery"))
        from designer.ui.screenshot import render_window

        render_output(
            args.output, lambda path: render_window(args.model, path, args.size, view=args.view)
        )
    print(f"wrote {args.output}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    shot = sub.add_parser(
        "screenshot",
        help="render the designer window with a model to a PNG",
        description="Open MODEL in the designer window offscreen, lay it out, and save the "
        "window as an image.",
    )
    shot.add_argument("model", type=Path, help="the .onnx file")
    shot.add_argument(
        "output",
        type=image_file(".png", ".jpg", ".jpeg"),
        help="the .png (or .jpg) file to write (atomically, never over MODEL)",
    )
    shot.add_argument("--size", type=_size, default=(1600, 1000), help="WIDTHxHEIGHT")
    shot.add_argument(
        "--view",
        type=_view,
        default="first",
        metavar="first|fit|ZOOM",
        help="the canvas as the model opens (default), after F (fit), or at ZOOM (1 = 100 %%)",
    )
    shot.set_defaults(handler=_screenshot)
