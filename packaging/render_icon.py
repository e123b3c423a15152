"""Render packaging/onnx-designer.svg to the 256 px PNG beside it (run after editing the SVG).

Uses Qt's SVG renderer, so nothing beyond the designer's own dependencies is needed:
``QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/render_icon.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

HERE = Path(__file__).resolve().parent


def render(svg: Path, png: Path, size: int = 256) -> None:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icon: {svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    if not image.save(str(png)):
        raise SystemExit(f"render_icon: cannot write {png}")


if __name__ == "__main__":
    app = QGuiApplication(sys.argv[:1])
    render(HERE / "onnx-designer.svg", HERE / "onnx-designer.png")
    print(f"wrote {HERE / 'onnx-designer.png'}")
