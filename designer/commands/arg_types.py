"""argparse ``type=`` functions shared by commands: a bad value is a usage error (exit 2,
``argument --X: <reason>``), told in plain words."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path


def collapse_depth(text: str) -> str:
    """``--collapse DEPTH|auto``: ``auto`` or a whole number of 0 or more (kept as text:
    :func:`designer.core.collapse.parse_depth` resolves ``auto`` once the graph is known)."""
    if text == "auto":
        return text
    try:
        depth = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"takes a depth (0, 1, 2, …) or 'auto', not {text!r}"
        ) from None
    if depth < 0:
        raise argparse.ArgumentTypeError(f"the depth must be 0 or more, not {depth}")
    return text


def positive_number(text: str) -> float:
    """A finite number above 0 (``--scale``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number above 0, not {text!r}")
    return value


def image_file(*suffixes: str) -> Callable[[str], Path]:
    """An argparse type: a file name ending in one of ``suffixes`` (the formats the writer
    has), so that a wrong one is a usage error before the model is even read."""

    def parse(text: str) -> Path:
        path = Path(text)
        if path.suffix.lower() not in suffixes:
            named = ", ".join(suffixes)
            raise argparse.ArgumentTypeError(
                f"{text!r}: the image format comes from the file name; use one ending in {named}"
            )
        return path

    return parse


#: The smallest ``--scale`` of an image: below it a whole graph fits in a few pixels.
MIN_IMAGE_SCALE = 0.01


def image_scale(text: str) -> float:
    """``--scale`` of an image export: a number of at least :data:`MIN_IMAGE_SCALE` (1e-9
    wrote a 1×1 image without a word)."""
    value = positive_number(text)
    if value < MIN_IMAGE_SCALE:
        raise argparse.ArgumentTypeError(
            f"{text!r} is too small: the image would be a few pixels; use {MIN_IMAGE_SCALE} or more"
        )
    return value
