"""Guard against PySide6 builds that drop a reference to None on every void-returning call
(6.12.0 on CPython 3.11 dies with ``none_dealloc`` after a few thousand of them)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QPointF
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene


def test_100k_void_calls_keep_none_alive(qapp) -> None:
    scene = QGraphicsScene()
    items = [QGraphicsRectItem(0, 0, 10, 10) for _ in range(200)]
    for item in items:
        scene.addItem(item)
    before = sys.getrefcount(None)
    pen = QPen()
    for k in range(100_000 // 3 + 1):
        item = items[k % len(items)]
        item.setPos(QPointF(k % 97, k % 89))
        item.setPen(pen)
        item.setZValue(k % 7)
    # A broken build loses one reference per call (~100k); allow small noise.
    assert sys.getrefcount(None) > before - 1000
