"""The read-only canvas view of an engine graph: the model canvas's zoom, pan, box zoom,
level of detail, far-zoom overview and image export, with selection and tooltips but no
editing gestures (an engine cannot be changed)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QPainter, QResizeEvent, QShowEvent, QWheelEvent
from PySide6.QtWidgets import QGraphicsView, QToolTip, QWidget

from designer.activities.reports.engine_view import EngineViewGraph
from designer.ui.canvas.export import ExportOptions, render_scene_to_file
from designer.ui.canvas.navigation import NavigationMixin
from designer.ui.canvas.overview import OverviewController
from designer.ui.canvas.settings import CanvasSettings
from designer.ui.engine.items import EngineEdgeItem, EngineNodeItem
from designer.ui.engine.scene import EngineScene

NAVIGATION_HELP = (
    "Engine graph (read-only):\n"
    "  Ctrl + mouse wheel: zoom around the pointer\n"
    "  Mouse wheel / Shift + wheel: scroll\n"
    "  Middle-button drag: pan; right-button drag: zoom into the box\n"
    "  Click a layer: its record in the Parameters window; drag: rubber-band selection\n"
    "  F: whole graph; Ctrl+0: 100 %\n"
    "  Hover a link: tensor, shape, format and precision"
)


class EngineView(NavigationMixin, QGraphicsView):
    """Shows ``engine``; emits the selected node keys (layers and bindings)."""

    selectionChanged = Signal(list)
    canvas: EngineScene

    def __init__(
        self,
        engine: EngineViewGraph,
        path: Path | None,
        settings: CanvasSettings | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings or CanvasSettings()
        self.canvas = EngineScene(path, parent=self)
        self.canvas.show_grid = self.settings.show_grid
        self.overview = OverviewController(self)  # type: ignore[arg-type]
        self.setScene(self.canvas)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.ItemSelectionMode.IntersectsItemShape)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.PreventContextMenu)
        self.setMouseTracking(True)
        self._hovered: EngineEdgeItem | None = None
        self._first_view_pending = True
        self._selection_pending = False
        self.canvas.selectionChanged.connect(self._schedule_selection)
        self.canvas.show(engine)

    @property
    def engine(self) -> EngineViewGraph:
        return self.canvas.engine

    def set_engine(self, engine: EngineViewGraph) -> None:
        """Draw a new view of the engine (e.g. with a profile loaded), keeping the zoom."""
        keys = self.selected_keys()
        center = self.mapToScene(self.viewport().rect().center())
        self.canvas.show(engine)
        self.overview.invalidate()
        self.select_keys(keys)
        self.centerOn(center)

    def set_findings(self, findings: dict[int, tuple[str, str]]) -> None:
        """Mark layers (key -> (worst severity, text)) with their lint findings."""
        for key, item in self.canvas.node_items.items():
            severity, text = findings.get(key, ("", ""))
            item.set_finding(severity, text)  # type: ignore[attr-defined]

    # --- selection ------------------------------------------------------------------------
    def _schedule_selection(self) -> None:
        if not self._selection_pending:
            self._selection_pending = True
            QTimer.singleShot(0, self._emit_selection)

    def _emit_selection(self) -> None:
        self._selection_pending = False
        self.selectionChanged.emit(self.selected_keys())

    def selected_keys(self) -> list[int]:
        return [i.key for i in self.canvas.selectedItems() if isinstance(i, EngineNodeItem)]

    def select_keys(self, keys: Iterable[int]) -> None:
        self.canvas.clearSelection()
        for key in keys:
            item = self.canvas.node_items.get(key)
            if item is not None:
                item.setSelected(True)

    def center_on(self, key: int) -> None:
        item = self.canvas.node_items.get(key)
        if item is not None:
            self.centerOn(item)
            self._view_changed()

    # --- zoom -----------------------------------------------------------------------------
    def settings_help(self) -> str:
        return NAVIGATION_HELP

    def set_show_grid(self, on: bool) -> None:
        self.settings.show_grid = self.canvas.show_grid = on
        self.canvas.invalidate(self.canvas.sceneRect(), self.canvas.SceneLayer.BackgroundLayer)
        self.overview.invalidate()

    def export_image(self, path: Path, options: ExportOptions) -> str:
        """Write the whole engine graph to ``path`` (PNG, JPEG or SVG); returns '' or a note
        about scaling; raises DesignerError."""
        return render_scene_to_file(self.canvas, Path(path), options)

    # --- tooltips -------------------------------------------------------------------------
    def tooltip_at(self, pos: QPoint) -> str:
        for item in self.items(pos):
            if isinstance(item, EngineEdgeItem):
                return self.engine.edge_tooltip(item.edge)
            if isinstance(item, EngineNodeItem):
                text = self.engine.node_tooltip(item.key)
                return text + (f"\n\n{item.finding_text}" if item.finding_text else "")
        return ""

    def _track_hover(self, pos: QPoint) -> None:
        edge = None
        if self.scene() is self.canvas:
            edge = next((i for i in self.items(pos) if isinstance(i, EngineEdgeItem)), None)
        if edge is not self._hovered:
            if self._hovered is not None and self._hovered.scene() is not None:
                self._hovered.set_hovered(False)
            if edge is not None:
                edge.set_hovered(True)
            self._hovered = edge

    # --- Qt events --------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._first_view_pending:
            self._first_view_pending = False
            self.show_first_view()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._view_changed()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        self._view_changed()

    def wheelEvent(self, event: QWheelEvent) -> None:
        if not self.navigation_wheel(event):
            super().wheelEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_F and not event.modifiers():
            self.fit_to_view()
        elif (
            event.key() == Qt.Key.Key_0 and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.reset_zoom()
        else:
            super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if not self.navigation_press(event):
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self.navigation_move(event):
            return
        if not event.buttons():
            self._track_hover(event.position().toPoint())
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if not self.navigation_release(event):
            super().mouseReleaseEvent(event)

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            text = self.tooltip_at(event.pos())  # type: ignore[attr-defined]
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())  # type: ignore[attr-defined]
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)
