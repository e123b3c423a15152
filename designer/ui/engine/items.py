"""Canvas items of the engine graph: the canvas's node and link items with the engine's
colours. A layer box is tinted by its layer type (a stronger stripe on the left, the full
colour when zoomed far out), a reformat layer gets a dashed red border and a "⇄" mark, and
a link is drawn in the colour of its tensor's precision. Geometry and level-of-detail rules
are the canvas's own (``designer.ui.canvas.style``): terminal ``i`` of ``n`` at
``width * (i + 1) / (n + 1)``, inputs on top, outputs at the bottom.

These are their own QGraphicsItem classes with the attributes the canvas scene, overview and
export read (``key``, ``view``, ``width``, ``height``, ``input_xy``/``output_xy``; ``edge``,
``hovered``, ``set_path``), not subclasses of the canvas's items: PySide6 (6.11) crashes when a
class with ``__slots__`` derived from a Qt class is subclassed again."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from designer.activities.reports.engine_view import EngineNodeInfo
from designer.core.viewgraph import NodeKind, ViewEdge, ViewNode
from designer.ui.canvas import style as st
from designer.ui.canvas.items import EDGE_Z, NODE_Z

#: Layer-type colours (keys: EngineNodeInfo.category).
TYPE_COLORS: dict[str, QColor] = {
    "convolution": QColor("#3f7fd0"),
    "matmul": QColor("#2f5fa8"),
    "pooling": QColor("#2f9aa8"),
    "activation": QColor("#e0962b"),
    "normalization": QColor("#8a64c8"),
    "elementwise": QColor("#4e9a5b"),
    "reduction": QColor("#2f8f8a"),
    "softmax": QColor("#d0782f"),
    "shape": QColor("#7d8793"),
    "quantization": QColor("#b85c9e"),
    "reformat": QColor("#d62828"),
    "noop": QColor("#b0b5bd"),
    "plugin": QColor("#a08a3c"),
    "attention": QColor("#c0504d"),
    "other": QColor("#8c8c8c"),
}

#: Tensor-precision colours of links (keys: EngineViewGraph.precision values).
PRECISION_COLORS: dict[str, QColor] = {
    "FP32": QColor("#1c2f7a"),
    "TF32": QColor("#3b5bdb"),
    "FP16": QColor("#2b8a3e"),
    "BF16": QColor("#5c940d"),
    "FP8": QColor("#e8590c"),
    "INT8": QColor("#c2255c"),
    "INT4": QColor("#862e9c"),
    "INT32": QColor("#495057"),
    "INT64": QColor("#343a40"),
    "BOOL": QColor("#868e96"),
    "UINT8": QColor("#a61e4d"),
    "other": QColor("#868e96"),
}

_REFORMAT_PEN = QPen(TYPE_COLORS["reformat"], 1.8, Qt.PenStyle.DashLine)
_LATENCY = QColor("#d62828")

#: Lint finding marks (top-right corner of a layer), by severity.
FINDING_COLORS: dict[str, QColor] = {
    "error": st.ERROR,
    "warning": st.WARNING,
    "info": QColor("#1c7ed6"),
}


def type_color(category: str) -> QColor:
    return TYPE_COLORS.get(category, TYPE_COLORS["other"])


def precision_color(precision: str) -> QColor:
    return PRECISION_COLORS.get(precision, PRECISION_COLORS["other"])


def _tint(color: QColor, amount: float) -> QColor:
    """``color`` mixed with white (``amount`` 0 = white, 1 = the colour)."""
    r, g, b = color.redF(), color.greenF(), color.blueF()
    return QColor.fromRgbF(1 - (1 - r) * amount, 1 - (1 - g) * amount, 1 - (1 - b) * amount)


class EngineNodeItem(QGraphicsItem):
    """A layer (or an engine input/output). ``info.caption`` is the second line (layer
    kind, precision, latency share when a profile is loaded)."""

    __slots__ = (
        "_bounds",
        "caption",
        "color",
        "fill",
        "finding",
        "finding_text",
        "height",
        "info",
        "key",
        "label",
        "view",
        "width",
    )

    def __init__(self, view: ViewNode, size: tuple[float, float], info: EngineNodeInfo) -> None:
        super().__init__()
        self.key = view.key
        self.view = view
        self.info = info
        self.width, self.height = size
        self.label = st.elide(view.name, "name", self.width - 2 * st.TEXT_PAD + 4)
        self.caption = st.elide(info.caption, "type", self.width - 8.0)
        if view.kind == NodeKind.OP:
            self.color = type_color(info.category)
            self.fill = _tint(self.color, 0.2)
        else:
            self.color = st.IO_BORDER
            self.fill = st.INPUT_FILL if view.kind == NodeKind.INPUT else st.OUTPUT_FILL
        self._bounds = QRectF(
            -3.0,
            -st.TRIANGLE - 4.0,
            self.width + 6.0,
            self.height + st.TRIANGLE + 2 * st.CIRCLE + 8.0,
        )
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(NODE_Z)
        self.finding = ""  # severity of the worst lint finding on this layer ("" = none)
        self.finding_text = ""

    def set_finding(self, severity: str, text: str) -> None:
        """Mark the layer with its worst lint finding (``severity`` error/warning/info)."""
        if (severity, text) != (self.finding, self.finding_text):
            self.finding, self.finding_text = severity, text
            self.update()

    def rect(self) -> QRectF:
        return QRectF(0.0, 0.0, self.width, self.height)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def input_xy(self, slot: int) -> tuple[float, float]:
        """Scene point where a link enters input ``slot`` (tip of its triangle)."""
        n = len(self.view.inputs)
        return self.x() + self.width * (slot + 1) / (n + 1), self.y() - st.TRIANGLE

    def output_xy(self, slot: int) -> tuple[float, float]:
        n = len(self.view.outputs)
        return self.x() + self.width * (slot + 1) / (n + 1), self.y() + self.height + st.CIRCLE

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        selected = self.isSelected()
        is_op = self.view.kind == NodeKind.OP
        if lod < st.LOD_TERMINALS:  # far away: a plain box in the type colour
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(
                st.SELECTED if selected else self.color if is_op else self.fill.darker(130)
            )
            painter.drawRect(self.rect())
            return
        if selected:
            pen = QPen(st.SELECTED, 2.4)
        elif self.info.is_reformat:
            pen = _REFORMAT_PEN
        else:
            pen = QPen(st.NODE_BORDER, 1.0)
        painter.setPen(pen)
        painter.setBrush(self.fill)
        radius = 4.0 if is_op else self.height / 2
        painter.drawRoundedRect(self.rect(), radius, radius)
        if is_op:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self.color)
            painter.drawRect(QRectF(1.0, 1.0, 5.0, self.height - 2.0))
            if self.info.share is not None:  # latency bar: full width at 25 % of the engine
                painter.setBrush(_LATENCY)
                bar = max(2.0, (self.width - 10.0) * min(self.info.share / 0.25, 1.0))
                painter.drawRect(QRectF(7.0, self.height - 4.5, bar, 3.0))
        self._paint_terminals(painter)
        if lod < st.LOD_TEXT:
            return
        painter.setPen(st.TEXT)
        painter.setFont(st.name_font())
        if not is_op:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.label)
            return
        painter.drawText(
            QRectF(st.TEXT_PAD - 2, 4.0, self.width - 2 * st.TEXT_PAD + 4, 18.0),
            Qt.AlignmentFlag.AlignCenter,
            self.label,
        )
        painter.setPen(st.TEXT_DIM)
        painter.setFont(st.type_font())
        painter.drawText(
            QRectF(4.0, 21.0, self.width - 8.0, 16.0), Qt.AlignmentFlag.AlignCenter, self.caption
        )
        if self.finding:
            self._paint_finding(painter)

    def _paint_finding(self, painter: QPainter) -> None:
        center = QPointF(self.width - 1.0, 0.0)
        painter.setPen(QPen(QColor("white"), 1.0))
        painter.setBrush(FINDING_COLORS.get(self.finding, FINDING_COLORS["info"]))
        painter.drawEllipse(center, 6.5, 6.5)
        painter.setFont(st.type_font())
        mark = "i" if self.finding == "info" else "!"
        painter.drawText(
            QRectF(center.x() - 6.5, center.y() - 6.5, 13.0, 13.0),
            Qt.AlignmentFlag.AlignCenter,
            mark,
        )

    def _paint_terminals(self, painter: QPainter) -> None:
        painter.setPen(QPen(QColor(255, 255, 255), 0.8))
        inputs, outputs = self.view.inputs, self.view.outputs
        s = st.TRIANGLE
        for slot, terminal in enumerate(inputs):
            x = st.terminal_x(self.width, slot, len(inputs))
            painter.setBrush(st.TERMINAL_COLORS[terminal.state])
            painter.drawPolygon(
                [QPointF(x - s * 0.6, -s), QPointF(x + s * 0.6, -s), QPointF(x, 0.5)]
            )
        for slot, terminal in enumerate(outputs):
            x = st.terminal_x(self.width, slot, len(outputs))
            painter.setBrush(st.TERMINAL_COLORS[terminal.state])
            painter.drawEllipse(QPointF(x, self.height + st.CIRCLE - 0.5), st.CIRCLE, st.CIRCLE)


class EngineEdgeItem(QGraphicsItem):
    """A link in the colour of its tensor's precision (cosmetic pen, like every canvas link)."""

    __slots__ = ("_bounds", "_path", "_shape", "color", "edge", "hovered")

    def __init__(self, edge: ViewEdge, precision: str) -> None:
        super().__init__()
        self.edge = edge
        self.hovered = False
        self.color = precision_color(precision)
        self._path = QPainterPath()
        self._bounds = QRectF()
        self._shape: QPainterPath | None = None
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(EDGE_Z)

    def set_path(self, path: QPainterPath) -> None:
        self.prepareGeometryChange()
        self._path = path
        self._shape = None
        self._bounds = path.controlPointRect().adjusted(-3.0, -3.0, 3.0, 3.0)

    def path(self) -> QPainterPath:
        return self._path

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        if self._shape is None:
            stroker = QPainterPathStroker()
            stroker.setWidth(8.0)
            self._shape = stroker.createStroke(self._path)
        return self._shape

    def set_hovered(self, on: bool) -> None:
        if on != self.hovered:
            self.hovered = on
            self.update()

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        if self.isSelected():
            pen = QPen(st.SELECTED, 2.6)
        elif self.hovered:
            pen = QPen(st.EDGE_HOVER, 2.2)
        else:
            pen = QPen(self.color, 1.6)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._path)
