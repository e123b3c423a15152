"""The canvas grid: lines every 20 scene units, thinned out as the view zooms away."""

from __future__ import annotations

import math

from PySide6.QtCore import QLineF, QRectF
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QStyleOptionGraphicsItem


def draw_grid(painter: QPainter, rect: QRectF, color: QColor, spacing: float = 20.0) -> None:
    """Grid lines over ``rect``: every ``spacing`` units, thinned out (5x the spacing) so
    that lines stay at least 12 device pixels apart; every 5th line a little darker."""
    scale = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
    while spacing * scale < 12.0:
        spacing *= 5.0
    x0, x1 = math.floor(rect.left() / spacing), math.ceil(rect.right() / spacing)
    y0, y1 = math.floor(rect.top() / spacing), math.ceil(rect.bottom() / spacing)
    minor: list[QLineF] = []
    major: list[QLineF] = []
    for i in range(x0, x1 + 1):
        x = i * spacing
        (major if i % 5 == 0 else minor).append(QLineF(x, rect.top(), x, rect.bottom()))
    for j in range(y0, y1 + 1):
        y = j * spacing
        (major if j % 5 == 0 else minor).append(QLineF(rect.left(), y, rect.right(), y))
    antialias = painter.testRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    for lines, shade in ((minor, 100), (major, 108)):
        pen = QPen(color.darker(shade), 0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.drawLines(lines)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, antialias)
