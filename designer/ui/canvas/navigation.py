"""Zoom and pan of the canvas view: Ctrl+wheel zoom about the pointer, middle-drag pan,
right-drag box zoom, fit, 100 %. A mixin for :class:`~designer.ui.canvas.view.CanvasView`."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QGraphicsView, QRubberBand

FIT_MARGIN = 24  # pixels around the graph after a fit


class NavigationMixin:
    """Needs ``self.settings`` (CanvasSettings) and ``_view_changed()`` on the view."""

    _pan_from: QPoint | None = None
    _zoom_from: QPoint | None = None
    _zoom_band: QRubberBand | None = None

    def current_zoom(self: QGraphicsView) -> float:  # type: ignore[misc]
        return float(self.transform().m11())

    def zoom_by(self, factor: float, anchor_under_mouse: bool = False) -> None:
        view: QGraphicsView = self  # type: ignore[assignment]
        settings = self.settings  # type: ignore[attr-defined]
        zoom = view.transform().m11()
        target = min(max(zoom * factor, settings.min_zoom), settings.max_zoom)
        if target == zoom:
            return
        anchor = (
            QGraphicsView.ViewportAnchor.AnchorUnderMouse
            if anchor_under_mouse
            else QGraphicsView.ViewportAnchor.AnchorViewCenter
        )
        view.setTransformationAnchor(anchor)
        view.scale(target / zoom, target / zoom)
        view.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self._view_changed()  # type: ignore[attr-defined]

    def zoom_in(self) -> None:
        """Zoom in one step about the centre of the view."""
        self.zoom_by(self.settings.zoom_step)  # type: ignore[attr-defined]

    def zoom_out(self) -> None:
        """Zoom out one step about the centre of the view."""
        self.zoom_by(1.0 / self.settings.zoom_step)  # type: ignore[attr-defined]

    def reset_zoom(self) -> None:
        """100 %: one scene unit per pixel, keeping the centre."""
        self.zoom_by(1.0 / self.transform().m11())  # type: ignore[attr-defined]

    def fit_rect(self, rect: QRectF) -> None:
        """Show ``rect`` whole, centred, within the zoom limits."""
        view: QGraphicsView = self  # type: ignore[assignment]
        settings = self.settings  # type: ignore[attr-defined]
        if rect.isEmpty():
            return
        size = view.viewport().size() - QSize(2 * FIT_MARGIN, 2 * FIT_MARGIN)
        sx = max(size.width(), 10) / rect.width()
        sy = max(size.height(), 10) / rect.height()
        zoom = min(max(min(sx, sy), settings.min_zoom), settings.max_zoom)
        view.resetTransform()
        view.scale(zoom, zoom)
        view.centerOn(rect.center())
        self._view_changed()  # type: ignore[attr-defined]

    # --- mouse ------------------------------------------------------------------------------
    def navigation_press(self, event: QMouseEvent) -> bool:
        view: QGraphicsView = self  # type: ignore[assignment]
        if event.button() == Qt.MouseButton.MiddleButton:
            self._pan_from = event.position().toPoint()
            view.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            return True
        if event.button() == Qt.MouseButton.RightButton:
            self._zoom_from = event.position().toPoint()
            if self._zoom_band is None:
                self._zoom_band = QRubberBand(QRubberBand.Shape.Rectangle, view.viewport())
            self._zoom_band.setGeometry(QRect(self._zoom_from, QSize()))
            self._zoom_band.show()
            return True
        return False

    def navigation_move(self, event: QMouseEvent) -> bool:
        view: QGraphicsView = self  # type: ignore[assignment]
        pos = event.position().toPoint()
        if self._pan_from is not None:
            delta = pos - self._pan_from
            self._pan_from = pos
            h, v = view.horizontalScrollBar(), view.verticalScrollBar()
            h.setValue(h.value() - delta.x())
            v.setValue(v.value() - delta.y())
            self._view_changed()  # type: ignore[attr-defined]
            return True
        if self._zoom_from is not None and self._zoom_band is not None:
            self._zoom_band.setGeometry(QRect(self._zoom_from, pos).normalized())
            return True
        return False

    def navigation_release(self, event: QMouseEvent) -> bool:
        """Ends a pan or box zoom; a right click without a drag asks for the context menu."""
        view: QGraphicsView = self  # type: ignore[assignment]
        if event.button() == Qt.MouseButton.MiddleButton and self._pan_from is not None:
            self._pan_from = None
            view.viewport().unsetCursor()
            return True
        if event.button() == Qt.MouseButton.RightButton and self._zoom_from is not None:
            box = QRect(self._zoom_from, event.position().toPoint()).normalized()
            self._zoom_from = None
            if self._zoom_band is not None:
                self._zoom_band.hide()
            if box.width() > 6 and box.height() > 6:
                self.fit_rect(view.mapToScene(box).boundingRect())
            else:
                self.context_menu_at(event.position().toPoint())  # type: ignore[attr-defined]
            return True
        return False

    def navigation_wheel(self, event: QWheelEvent) -> bool:
        if not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            return False
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom_by(self.settings.zoom_step**steps, anchor_under_mouse=True)  # type: ignore[attr-defined]
        return True
