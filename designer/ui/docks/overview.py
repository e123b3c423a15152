"""The Overview window (SPEC C-1): the whole graph of the current canvas with the visible
part outlined; click or drag in it to move the view there.

The picture is drawn from the canvas's overview arrays (node boxes and link segments, numpy,
built once per scene geometry) into one cached image, so a 100,000-node model costs one
render per change, not one per frame; the outline is painted over it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QDockWidget, QSizePolicy, QWidget

from designer.ui.canvas import style as st
from designer.ui.canvas.overview import snapped

if TYPE_CHECKING:
    from designer.ui.canvas.view import CanvasView
    from designer.ui.main_window import MainWindow

_PAD = 6.0
_OUTLINE = QColor("#ff9f1a")


class OverviewWidget(QWidget):
    """Draws the current view's graph scaled to fit, with the visible rectangle."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__()
        self.window_ = window
        self.view: CanvasView | None = None
        self._image: QImage | None = None
        self._key: tuple[int, int, int, int] | None = None  # (view id, generation, w, h)
        self._scale = 1.0
        self._origin = QPointF()
        self.setMinimumSize(120, 90)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("The whole graph; click or drag to move the canvas there")
        self._later = QTimer(self, singleShot=True, interval=150)
        self._later.timeout.connect(self.update)
        window.currentTabChanged.connect(lambda _tab: self.follow(window.current_view()))
        self.follow(window.current_view())

    def follow(self, view: CanvasView | None) -> None:
        """Show ``view``'s graph (None: nothing open)."""
        if view is self.view:
            return
        if self.view is not None:
            self.view.viewChanged.disconnect(self.update)
            self.view.session.changed.disconnect(self._later.start)
        self.view = view
        self._image = None
        if view is not None:
            view.viewChanged.connect(self.update)
            view.session.changed.connect(self._later.start)
        self.update()

    # --- geometry ---------------------------------------------------------------------------
    def _fit(self, content: QRectF) -> None:
        width, height = self.width() - 2 * _PAD, self.height() - 2 * _PAD
        self._scale = min(width / max(content.width(), 1.0), height / max(content.height(), 1.0))
        used_w, used_h = content.width() * self._scale, content.height() * self._scale
        self._origin = QPointF(
            _PAD + (width - used_w) / 2 - content.left() * self._scale,
            _PAD + (height - used_h) / 2 - content.top() * self._scale,
        )

    def to_widget(self, scene: QPointF) -> QPointF:
        return QPointF(scene.x() * self._scale, scene.y() * self._scale) + self._origin

    def to_scene(self, point: QPointF) -> QPointF:
        p = point - self._origin
        return QPointF(p.x() / self._scale, p.y() / self._scale)

    def _render(self, view: CanvasView) -> QImage:
        canvas = view.canvas
        self._fit(canvas.content_rect())
        image = QImage(self.width(), self.height(), QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(st.BACKGROUND)
        if not canvas.node_items:
            return image
        data = view.overview.data()
        painter = QPainter(image)
        painter.translate(self._origin)
        painter.scale(self._scale, self._scale)
        pen = QPen(st.EDGE, 0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        # rounded to a quarter pixel with duplicates dropped (100k links become a few thousand
        # lines at this scale: one Qt object per row is the cost of the picture)
        painter.drawLines([QLineF(*row) for row in snapped(data.segments, self._scale).tolist()])
        painter.setPen(Qt.PenStyle.NoPen)
        for flag, color in ((False, st.OVERVIEW_NODE), (True, st.INPUT_FILL.darker(140))):
            rows = data.boxes[data.is_io == flag].copy()
            if len(rows):
                rows[:, 2:] = np.maximum(rows[:, 2:], 1.5 / self._scale)  # >= 1.5 pixels
                painter.setBrush(color)
                painter.drawRects([QRectF(*row) for row in snapped(rows, self._scale).tolist()])
        painter.end()
        return image

    # --- Qt events --------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        view = self.view
        if view is None:
            painter.fillRect(self.rect(), st.BACKGROUND)
            painter.setPen(st.TEXT_DIM)
            text = self.window_.idle_text("see its overview")
            flags = Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap
            painter.drawText(QRectF(self.rect()).adjusted(8, 8, -8, -8), flags, text)
            return
        key = (id(view.canvas), view.canvas.generation, self.width(), self.height())
        if self._image is None or key != self._key:
            self._image = self._render(view)
            self._key = key
        painter.drawImage(0, 0, self._image)
        shown = view.mapToScene(view.viewport().rect()).boundingRect()
        outline = QRectF(self.to_widget(shown.topLeft()), self.to_widget(shown.bottomRight()))
        painter.setPen(QPen(_OUTLINE, 2.0))
        painter.setBrush(QColor(255, 159, 26, 40))
        painter.drawRect(outline.intersected(QRectF(self.rect()).adjusted(1, 1, -1, -1)))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._go(event.position())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._go(event.position())

    def _go(self, point: QPointF) -> None:
        if self.view is not None and self._image is not None:
            self.view.centerOn(self.to_scene(point))


def create_dock(window: MainWindow) -> QDockWidget:
    dock = QDockWidget("Overview", window)
    dock.setObjectName("dock_overview")
    dock.setWidget(OverviewWidget(window))
    return dock
