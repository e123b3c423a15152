"""The far-zoom overview of big graphs.

Painting every item costs a Python call per visible item: fine for a few hundred, too slow
when tens of thousands are in view. When more than ``settings.overview_items`` nodes would
be visible, the view swaps in a light scene whose single item draws pre-rendered tiles: node
boxes and straight link segments rendered with numpy-selected batches into 512-pixel
QImages at power-of-two zoom levels, cached (LRU) until the geometry changes. Swapping
scenes is O(1); the per-frame cost is a handful of drawImage calls at any graph size.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QEvent, QLineF, QObject, QRect, QRectF, Qt
from PySide6.QtGui import QImage, QPainter, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsScene,
    QStyleOptionGraphicsItem,
    QWidget,
)

from designer.core.gcpause import gc_paused
from designer.ui.canvas import style as st
from designer.ui.canvas.grid import draw_grid
from designer.ui.canvas.lazy import bounds_in, boxes_in
from designer.ui.canvas.scene import CanvasScene

if TYPE_CHECKING:
    from designer.ui.canvas.view_base import CanvasViewBase

TILE = 512
CACHE_TILES = 96
HYSTERESIS = 0.7
SNAP_ROWS = 2_000  # tiles with more boxes or segments than this draw them deduplicated


class OverviewData:
    """Node boxes (n, 4: x, y, w, h) and link segments (m, 4: x0, y0, x1, y1) of a scene,
    from its geometry arrays (no items: a big scene builds those only as they show)."""

    def __init__(self, canvas: CanvasScene) -> None:
        geo = canvas.geometry()
        self.boxes = geo.boxes.copy()
        self.is_io = geo.is_io.copy()
        self.segments = geo.segments()
        self._seg_lo = np.minimum(self.segments[:, :2], self.segments[:, 2:])
        self._seg_hi = np.maximum(self.segments[:, :2], self.segments[:, 2:])
        self.centers = self.boxes[:, :2] + self.boxes[:, 2:] / 2

    def count_in(self, rect: QRectF) -> int:
        c = self.centers
        inside = (
            (c[:, 0] >= rect.left())
            & (c[:, 0] <= rect.right())
            & (c[:, 1] >= rect.top())
            & (c[:, 1] <= rect.bottom())
        )
        return int(np.count_nonzero(inside))

    def boxes_in(self, rect: QRectF) -> np.ndarray:
        return boxes_in(self.boxes, rect)

    def segments_in(self, rect: QRectF) -> np.ndarray:
        return bounds_in(self._seg_lo, self._seg_hi, rect)


def snapped(rows: np.ndarray, scale: float) -> np.ndarray:
    """``rows`` (boxes or segments) rounded to a quarter pixel with duplicates dropped, when
    there are many: far out, thousands of nodes share a pixel (at fit zoom 100k boxes become
    a few thousand, and building one Qt object per row is the cost of a tile)."""
    if len(rows) <= SNAP_ROWS:
        return rows
    grid = 4.0 * scale
    rounded = np.round(rows * grid)
    if np.abs(rounded).max() < 2**15:  # pack each row into one int64 (a 1-D unique is 10x faster)
        packed = (rounded.astype(np.int64) + 2**15) << np.array([48, 32, 16, 0], dtype=np.int64)
        _keys, first = np.unique(packed.sum(axis=1), return_index=True)
        return rounded[first] / grid
    return np.unique(rounded, axis=0) / grid


class OverviewItem(QGraphicsItem):
    """Draws the cached tiles covering the exposed area at the current zoom level."""

    def __init__(self, owner: OverviewController) -> None:
        super().__init__()
        self.owner = owner
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self._bounds = QRectF()

    def set_bounds(self, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self._bounds = rect

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        scale = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        level = round(math.log2(max(scale, 1e-9)))
        span = TILE / 2.0**level  # scene units per tile
        rect = option.exposedRect
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        for j in range(math.floor(rect.top() / span), math.floor(rect.bottom() / span) + 1):
            for i in range(math.floor(rect.left() / span), math.floor(rect.right() / span) + 1):
                image = self.owner.tile(level, i, j)
                if image is not None:
                    painter.drawImage(QRectF(i * span, j * span, span, span), image)


class OverviewScene(QGraphicsScene):
    def __init__(self, canvas: CanvasScene, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.canvas = canvas

    def drawBackground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        painter.fillRect(rect, self.canvas.background)
        if self.canvas.show_grid:
            draw_grid(painter, QRectF(rect), self.canvas.grid_color)


class _ActivationFilter(QObject):
    """Swallows window (de)activation events (see OverviewController._set_scene)."""

    _KINDS = (QEvent.Type.WindowActivate, QEvent.Type.WindowDeactivate)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        return event.type() in self._KINDS


class OverviewController:
    """Decides when the view shows the overview and renders its tiles."""

    def __init__(self, view: CanvasViewBase) -> None:
        self.view = view
        self.active = False
        self.scene: OverviewScene | None = None
        self.item: OverviewItem | None = None
        self._data: OverviewData | None = None
        self._generation = -1
        self._tiles: OrderedDict[tuple[int, int, int], QImage | None] = OrderedDict()
        self.tiles_rendered = 0
        self._activation = _ActivationFilter(view)

    def invalidate(self) -> None:
        self._tiles.clear()
        if self.active and self.item is not None:
            self.item.update()

    def data(self) -> OverviewData:
        canvas = self.view.canvas
        if self._data is None or self._generation != canvas.generation:
            with gc_paused():  # full collections over a big heap would dominate
                self._data = OverviewData(canvas)
            self._generation = canvas.generation
            self._tiles.clear()
        return self._data

    def view_changed(self) -> None:
        """Called after every zoom, scroll or resize: switch mode when the estimated number
        of visible nodes crosses ``settings.overview_items`` (O(n) numpy, ~1 ms at 100k)."""
        canvas = self.view.canvas
        limit = self.view.settings.overview_items
        if len(canvas.node_items) <= limit and not self.active:
            return
        visible = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        count = self._estimate(visible)
        if not self.active and count > limit:
            self._switch(True)
        elif self.active and count < limit * HYSTERESIS:
            self._switch(False)

    def _estimate(self, visible: QRectF) -> float:
        """Nodes in ``visible``: exact from the arrays when they exist, else by area."""
        if self._data is not None and self._generation == self.view.canvas.generation:
            return self._data.count_in(visible)
        content = self.view.canvas.sceneRect()
        area = content.width() * content.height()
        overlap = visible.intersected(content)
        share = overlap.width() * overlap.height() / area if area > 0 else 1.0
        return len(self.view.canvas.node_items) * share

    def _switch(self, on: bool) -> None:
        view = self.view
        center = view.mapToScene(view.viewport().rect().center())
        if on:
            if self.scene is None:
                self.scene = OverviewScene(view.canvas, view)
                self.item = OverviewItem(self)
                self.scene.addItem(self.item)
            assert self.item is not None
            self.scene.setSceneRect(view.canvas.sceneRect())
            self.item.set_bounds(view.canvas.sceneRect())
            self._set_scene(self.scene)
        else:
            self._set_scene(view.canvas)
        self.active = on
        view.centerOn(center)

    def _set_scene(self, scene: QGraphicsScene) -> None:
        """``view.setScene`` without telling the canvas scene that its window (de)activated:
        Qt answers that by sorting every item and sending each one an event (a second at
        100,000 nodes, on every switch). The canvas stays "active" while the overview shows."""
        canvas = self.view.canvas
        canvas.installEventFilter(self._activation)
        try:
            self.view.setScene(scene)
        finally:
            canvas.removeEventFilter(self._activation)

    def tile(self, level: int, i: int, j: int) -> QImage | None:
        key = (level, i, j)
        if key in self._tiles:
            self._tiles.move_to_end(key)
            return self._tiles[key]
        with gc_paused():  # thousands of Qt rows per tile: no collector passes meanwhile
            image = self._render(level, i, j)
        self._tiles[key] = image
        if len(self._tiles) > CACHE_TILES:
            self._tiles.popitem(last=False)
        return image

    def _render(self, level: int, i: int, j: int) -> QImage | None:
        data = self.data()
        scale = 2.0**level
        span = TILE / scale
        rect = QRectF(i * span, j * span, span, span)
        boxes = data.boxes_in(rect)
        segments = data.segments_in(rect)
        if not len(boxes) and not len(segments):
            return None
        self.tiles_rendered += 1
        image = QImage(TILE, TILE, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.scale(scale, scale)
        painter.translate(-rect.left(), -rect.top())
        pen = QPen(st.EDGE, 0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        lines = snapped(data.segments[segments], scale)
        painter.drawLines([QLineF(*row) for row in lines.tolist()])
        painter.setPen(Qt.PenStyle.NoPen)
        for flag, color in ((False, st.OVERVIEW_NODE), (True, st.INPUT_FILL.darker(140))):
            chosen = boxes[data.is_io[boxes] == flag]
            if len(chosen):
                painter.setBrush(color)
                rows = data.boxes[chosen].copy()
                rows[:, 2:] = np.maximum(rows[:, 2:], 1.5 / scale)  # at least 1.5 pixels
                rows = snapped(rows, scale)
                painter.drawRects([QRectF(*row) for row in rows.tolist()])
        painter.end()
        return image
