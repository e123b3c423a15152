"""Zoom and pan of the canvas view: Ctrl+wheel zoom about the pointer, middle-drag pan,
right-drag box zoom, fit, 100 %. The lowest layer of :class:`~designer.ui.canvas.view.CanvasView`
(see :mod:`designer.ui.canvas.view_base`), also used by the engine view."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize, QSizeF, Qt, Signal
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QGraphicsView, QRubberBand

from designer.ui.canvas.settings import CanvasSettings

if TYPE_CHECKING:
    from designer.ui.canvas.overview import OverviewController
    from designer.ui.canvas.scene import CanvasScene

FIT_MARGIN = 24  # pixels around the graph after a fit


class NavigationMixin(QGraphicsView):
    """Zoom and pan of a graph view; limits and steps come from ``settings``."""

    contextMenuRequested = Signal(QPoint, QPointF)  # global position, scene position

    # Set by the view's __init__.
    settings: CanvasSettings
    overview: OverviewController
    canvas: CanvasScene

    _pan_from: QPoint | None = None
    _zoom_from: QPoint | None = None
    _zoom_band: QRubberBand | None = None

    def _view_changed(self) -> None:
        """Zoomed, scrolled or resized: the far-zoom overview follows (views add more)."""
        self.overview.view_changed()

    def context_menu_at(self, pos: QPoint) -> None:
        """Ask for the context menu at viewport position ``pos`` (a right click)."""
        self.contextMenuRequested.emit(self.viewport().mapToGlobal(pos), self.mapToScene(pos))

    def fit_to_view(self) -> None:
        self.fit_rect(self.canvas.content_rect())

    def show_first_view(self) -> None:
        """The view a graph opens with: names legible, the graph inputs at the top (the
        whole graph when it fits at a readable zoom); F fits everything."""
        from designer.ui.canvas import readable

        size = self.viewport().size()
        first = readable.first_view(
            self.canvas, QSizeF(size.width(), size.height()), self.settings.max_zoom
        )
        if first is None:
            self.fit_to_view()
            return
        zoom, centre = first
        self.resetTransform()
        self.scale(zoom, zoom)
        self.centerOn(centre)
        self._view_changed()

    def current_zoom(self) -> float:
        return float(self.transform().m11())

    def zoom_by(self, factor: float, anchor_under_mouse: bool = False) -> None:
        settings = self.settings
        zoom = self.transform().m11()
        target = min(max(zoom * factor, settings.min_zoom), settings.max_zoom)
        if target == zoom:
            return
        anchor = (
            QGraphicsView.ViewportAnchor.AnchorUnderMouse
            if anchor_under_mouse
            else QGraphicsView.ViewportAnchor.AnchorViewCenter
        )
        self.setTransformationAnchor(anchor)
        self.scale(target / zoom, target / zoom)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self._view_changed()

    def zoom_in(self) -> None:
        """Zoom in one step about the centre of the self."""
        self.zoom_by(self.settings.zoom_step)

    def zoom_out(self) -> None:
        """Zoom out one step about the centre of the self."""
        self.zoom_by(1.0 / self.settings.zoom_step)

    def reset_zoom(self) -> None:
        """100 %: one scene unit per pixel, keeping the centre."""
        self.zoom_by(1.0 / self.transform().m11())

    def fit_rect(self, rect: QRectF) -> None:
        """Show ``rect`` whole, centred, within the zoom limits."""
        settings = self.settings
        if rect.isEmpty():
            return
        size = self.viewport().size() - QSize(2 * FIT_MARGIN, 2 * FIT_MARGIN)
        sx = max(size.width(), 10) / rect.width()
        sy = max(size.height(), 10) / rect.height()
        zoom = min(max(min(sx, sy), settings.min_zoom), settings.max_zoom)
        self.resetTransform()
        self.scale(zoom, zoom)
        self.centerOn(rect.center())
        self._view_changed()

    # --- mouse ------------------------------------------------------------------------------
    def navigation_press(self, event: QMouseEvent) -> bool:
        if event.button() == Qt.MouseButton.MiddleButton:
            self._pan_from = event.position().toPoint()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            return True
        if event.button() == Qt.MouseButton.RightButton:
            self._zoom_from = event.position().toPoint()
            if self._zoom_band is None:
                self._zoom_band = QRubberBand(QRubberBand.Shape.Rectangle, self.viewport())
            self._zoom_band.setGeometry(QRect(self._zoom_from, QSize()))
            self._zoom_band.show()
            return True
        return False

    def navigation_move(self, event: QMouseEvent) -> bool:
        pos = event.position().toPoint()
        if self._pan_from is not None:
            delta = pos - self._pan_from
            self._pan_from = pos
            h, v = self.horizontalScrollBar(), self.verticalScrollBar()
            h.setValue(h.value() - delta.x())
            v.setValue(v.value() - delta.y())
            self._view_changed()
            return True
        if self._zoom_from is not None and self._zoom_band is not None:
            self._zoom_band.setGeometry(QRect(self._zoom_from, pos).normalized())
            return True
        return False

    def navigation_release(self, event: QMouseEvent) -> bool:
        """Ends a pan or box zoom; a right click without a drag asks for the context menu."""
        if event.button() == Qt.MouseButton.MiddleButton and self._pan_from is not None:
            self._pan_from = None
            self.viewport().unsetCursor()
            return True
        if event.button() == Qt.MouseButton.RightButton and self._zoom_from is not None:
            box = QRect(self._zoom_from, event.position().toPoint()).normalized()
            self._zoom_from = None
            if self._zoom_band is not None:
                self._zoom_band.hide()
            if box.width() > 6 and box.height() > 6:
                self.fit_rect(self.mapToScene(box).boundingRect())
            else:
                self.context_menu_at(event.position().toPoint())
            return True
        return False

    def navigation_wheel(self, event: QWheelEvent) -> bool:
        if not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            return False
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom_by(self.settings.zoom_step**steps, anchor_under_mouse=True)
        return True
