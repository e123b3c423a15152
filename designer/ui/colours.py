"""Colours as the renderer reads them, for the command line's checks (a tiny module: the
check loads QtGui only, not the canvas)."""

from __future__ import annotations

from PySide6.QtGui import QColor


def is_colour(text: str) -> bool:
    """Whether ``QColor(text)`` reads ``text`` (an SVG colour name such as ``white``,
    ``transparent``, or ``#rgb``, ``#rrggbb``, ``#aarrggbb``), as the image export does."""
    return QColor(text).isValid()
