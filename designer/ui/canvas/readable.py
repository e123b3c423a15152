"""What keeps the canvas readable: the first view of a model and the colour legend.

A model opens at a zoom where node names are legible (:func:`style.readable_zoom`), showing
the graph inputs and as much of the graph below them as fits; only a graph that fits whole
at that zoom is shown whole (F still fits everything). When the view is zoomed out so far
that boxes carry no text, a legend names the category colours they are drawn in.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from designer.core.schema import category_of
from designer.core.viewgraph import NodeKind
from designer.ui.canvas import style as st
from designer.ui.canvas.scene import CanvasScene

MARGIN = 24.0  # device pixels between the first view's top and the topmost box


def first_view(
    canvas: CanvasScene, viewport: QSizeF, max_zoom: float
) -> tuple[float, QPointF] | None:
    """(zoom, scene centre) of the first view, or None to fit the whole graph (it fits at a
    readable zoom, or is empty). Costs one pass over the node boxes (numpy)."""
    content = canvas.content_rect()
    if content.isEmpty() or viewport.isEmpty():
        return None
    zoom = min(st.readable_zoom(), max_zoom)
    fit = min(viewport.width() / content.width(), viewport.height() / content.height())
    if fit >= zoom:
        return None
    width, height = viewport.width() / zoom, viewport.height() / zoom
    top = content.top() - MARGIN / zoom
    band = top + height
    # Centre on the boxes in the first screenful (the graph inputs and what follows them);
    # when they are wider than the view, on the graph inputs, and when those are too, start
    # at the first input. Clamped so that the view does not leave the graph's sides.
    geometry = canvas.geometry()  # (no items: a big scene builds them as they show)
    boxes = geometry.boxes
    first = (boxes[:, 1] < band) & (boxes[:, 1] + boxes[:, 3] > content.top())
    xs = boxes[first, 0] + boxes[first, 2] / 2
    x = (float(xs.min()) + float(xs.max())) / 2 if len(xs) else content.center().x()
    if len(xs) and float(xs.max()) - float(xs.min()) > width * 0.9:
        x = _on_inputs(canvas, boxes[first], geometry.rows, boxes, width, MARGIN / zoom, x)
    if content.width() > width:
        x = min(max(x, content.left() + width / 2), content.right() - width / 2)
    else:
        x = content.center().x()
    return zoom, QPointF(x, top + height / 2)


def _on_inputs(
    canvas: CanvasScene,
    band: np.ndarray,
    rows: dict[int, int],
    boxes: np.ndarray,
    width: float,
    margin: float,
    x: float,
) -> float:
    """The first view's centre x when its first screenful (``band``: its boxes) is wider
    than the view: the middle of the graph inputs if they fit in it, else where the first
    input (in the model's order) and the boxes just left of it, within a third of the view,
    start ``margin`` in from the view's left; ``x`` when there is no input."""
    found = [rows[n.key] for n in canvas.graph.nodes if n.kind is NodeKind.INPUT and n.key in rows]
    if not found:
        return x
    lefts, rights = boxes[found, 0], boxes[found, 0] + boxes[found, 2]
    if float(rights.max()) - float(lefts.min()) <= width * 0.9:
        return (float(lefts.min()) + float(rights.max())) / 2
    start = float(lefts[0])
    near = band[(band[:, 0] < start) & (band[:, 0] >= start - width / 3), 0]
    if len(near):
        start = float(near.min())
    return start - margin + width / 2


def text_free_zoom() -> float:
    """Below this zoom an operator box is too small on screen for even its compact label."""
    return (st.COMPACT_TEXT_PX + 2) / st.OP_HEIGHT


def legend_entries(canvas: CanvasScene) -> list[tuple[str, QColor]]:
    """(category, colour) of the operator boxes in the scene, most frequent first."""
    counts: dict[str, int] = {}
    for view in canvas.node_items.views.values():
        if view.kind != NodeKind.OP:
            continue
        name = "local function" if view.is_function_call else category_of(view.op_type, view.domain)
        counts[name] = counts.get(name, 0) + 1
    ordered = sorted(counts, key=lambda name: (-counts[name], name))
    return [
        (
            name,
            st.CATEGORY_COLORS["control flow"]
            if name == "local function"
            else st.CATEGORY_COLORS.get(name, st.CATEGORY_COLORS["other"]),
        )
        for name in ordered
    ]


def paint_legend(painter: QPainter, viewport: QRectF, entries: list[tuple[str, QColor]]) -> None:
    """The legend in the bottom-left corner of ``viewport``, in device pixels."""
    if not entries:
        return
    font = st.compact_font()
    painter.setFont(font)
    metrics = painter.fontMetrics()
    row = max(metrics.height(), 12) + 3
    width = 22 + max(metrics.horizontalAdvance(name) for name, _c in entries) + 10
    height = row * len(entries) + 8
    box = QRectF(viewport.left() + 10, viewport.bottom() - height - 10, width, height)
    painter.setPen(QPen(st.NODE_BORDER, 1.0))
    painter.setBrush(QColor(255, 255, 255, 230))
    painter.drawRoundedRect(box, 4, 4)
    for n, (name, color) in enumerate(entries):
        y = box.top() + 4 + n * row
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRect(QRectF(box.left() + 6, y + 2, 12, row - 5))
        painter.setPen(st.TEXT)
        painter.drawText(
            QRectF(box.left() + 22, y, width - 24, row),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
            name,
        )
