"""Canvas items. They only paint: geometry is set by the scene (``set_view``, ``set_path``)
and every user intent is handled by the view, so no item ever changes the Document.

One Python item per node and per link (a big scene builds them only as they come into view,
designer.ui.canvas.lazy); terminals, problem icons, subgraph buttons and per-consumer input
proxies are painted by the node item itself instead of being child items.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from designer.core.viewgraph import NodeKind, TerminalState, ViewEdge, ViewNode
from designer.ui.canvas import style as st
from designer.ui.canvas.precision_menu import BADGE_COLORS as _BADGE_COLORS

NODE_Z = 1.0
EDGE_Z = 0.0
_TRI = {True: st.TRIANGLE_OPTIONAL, False: st.TRIANGLE}
_NO_PEN = QPen(Qt.PenStyle.NoPen)
_LIGHT_TEXT = QColor("#ffffff")
_NO_TAGS: list[tuple[int, str, str, bool]] = []  # shared empty list (never mutated)
_NO_ROWS: dict[int, int] = {}  # shared empty table (never mutated)
_NO_BADGE = QRectF()


_SELECTABLE = QGraphicsItem.GraphicsItemFlag.ItemIsSelectable


# Node items share these (never changed in place): one QRectF costs about 1 µs to make and
# ~50 bytes to keep, per item of a 100,000-node scene.
@lru_cache(maxsize=4096)
def _type_rect(width: float) -> QRectF:
    return QRectF(0.0, 21.0, width, 16.0)


@lru_cache(maxsize=4096)
def _plain_bounds(width: float, height: float) -> QRectF:
    """Bounds of a node without tags or badge (see NodeItem._update_bounds)."""
    top = -st.TRIANGLE - 2.0
    right = max(width + 8.0, _NO_BADGE.right() + 2.0)
    return QRectF(-2.0, top - 6.0, right + 2.0, height - top + 2 * st.CIRCLE + 8)


@lru_cache(maxsize=4096)
def _category_color(op_type: str, domain: str, is_function_call: bool) -> QColor:
    view = ViewNode(0, NodeKind.OP, "", op_type, domain, is_function_call=is_function_call)
    return st.category_color(view)


def _lod(painter: QPainter) -> float:
    return QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())


class NodeItem(QGraphicsItem):
    """A node: box with name and operator type, input triangles on top, output circles at
    the bottom, a problem icon, a subgraph button, and graph-input proxies above inputs fed
    by a high fan-out graph input (``tags``)."""

    __slots__ = (
        "_badge",
        "_bounds",
        "_tag_rows",
        "_tag_width",
        "_type_rect",
        "badge_label",
        "color",
        "heat",
        "heat_fill",
        "heat_label",
        "height",
        "key",
        "label",
        "problem",
        "problem_text",
        "tags",
        "view",
        "width",
    )

    def __init__(self, view: ViewNode, size: tuple[float, float]) -> None:
        super().__init__()
        self.key = view.key
        self.problem = 0  # 0 none, 1 warning, 2 error
        self.problem_text = ""
        # (input slot, tensor, label, is a stub): graph-input proxies and stubs of outputs
        self.tags: list[tuple[int, str, str, bool]] = _NO_TAGS
        self._tag_rows: dict[int, int] = _NO_ROWS  # input slot → row of its tag (stacked)
        self._tag_width = st.PROXY_W
        self.heat = -1.0  # profile overlay: 0..1 of the hottest node, -1 when none
        self.heat_label = ""
        self.heat_fill: QColor | None = None  # comparison overlay: faster/slower colour
        self.setFlags(_SELECTABLE)  # setFlags: half the cost of setFlag (no read-modify-write)
        self.setZValue(NODE_Z)
        self._take_view(view, size)  # not in a scene yet: no geometry change to announce

    # --- geometry (set by the scene) ------------------------------------------------------
    def set_view(self, view: ViewNode, size: tuple[float, float]) -> None:
        """Take a new ViewNode (terminals, name) and box size; recomputes cached geometry."""
        self.prepareGeometryChange()
        self._take_view(view, size)

    def _take_view(self, view: ViewNode, size: tuple[float, float]) -> None:
        self.view = view
        self.width, self.height = size
        self.label = st.elide(view.name, "name", self.width - 2 * st.TEXT_PAD + 4)
        kind = view.kind
        self.color = (
            _category_color(view.op_type, view.domain, view.is_function_call)
            if kind is NodeKind.OP
            else st.GROUP_COLOR
            if kind is NodeKind.GROUP
            else st.IO_BORDER
        )
        self.badge_label = view.precision.upper() if view.precision else ""
        self._badge = _NO_BADGE
        self._type_rect = _type_rect(self.width)
        if view.precision:  # a pill on the right edge beside the op type, half outside (C-8)
            w = st.text_width(self.badge_label, "small") + 10.0
            self._badge = QRectF(self.width - w + 9.0, self.height / 2 - 1.0, w, 14.0)
            inset = w - 7.0  # the op type stays centred and clear of the badge
            self._type_rect = QRectF(inset, 21.0, self.width - 2 * inset, 16.0)
        self._update_bounds()

    def set_tags(self, tags: Sequence[tuple[int, str, bool]]) -> None:
        """Inputs (slot, tensor, stub) drawn as a small proxy of a graph input, or as the
        stub of a far or widely read producer's output (``stub``)."""
        self.prepareGeometryChange()
        n = len(self.view.inputs)
        rows, self._tag_width = _tag_rows(
            [st.terminal_x(self.width, slot, n) for slot, _n, _s in tags]
        )
        if self.view.kind is NodeKind.GROUP:  # sized for its tags: none covers a neighbour link
            self._tag_width = min(self._tag_width, max(self.width / (n + 1) - 4.0, 12.0))
        self._tag_rows = {tags[index][0]: row for index, row in rows.items()}
        self.tags = [
            (slot, name, _tag_label(name, self._tag_width - 8), stub) for slot, name, stub in tags
        ]
        self._update_bounds()
        self.update()

    def tag_name(self, slot: int) -> str:
        """Name of the graph input drawn as a proxy above input ``slot``."""
        return next(name for s, name, _label, _stub in self.tags if s == slot)

    def tag_is_stub(self, slot: int) -> bool:
        """Whether the tag above input ``slot`` is a stub (else a graph-input proxy)."""
        return next(stub for s, _name, _label, stub in self.tags if s == slot)

    def set_problem(self, level: int, text: str) -> None:
        if (level, text) != (self.problem, self.problem_text):
            self.problem, self.problem_text = level, text
            self.update()

    def set_heat(self, heat: float, label: str = "", fill: QColor | None = None) -> None:
        """Profile overlay: tint by ``heat`` (0..1, -1 clears) and show ``label`` (a share);
        ``fill`` replaces the heat colour (the comparison overlay's faster/slower colours)."""
        if (heat, label, fill) != (self.heat, self.heat_label, self.heat_fill):
            self.heat, self.heat_label, self.heat_fill = heat, label, fill
            self.update()

    def _update_bounds(self) -> None:
        if not self.tags and self._badge is _NO_BADGE:  # the common case: a shared rect
            self._bounds = _plain_bounds(self.width, self.height)
            return
        top = -st.TRIANGLE - 2.0
        left, right = -2.0, max(self.width + 8.0, self._badge.right() + 2.0)
        if self.tags:
            top = self._tag_top(max(self._tag_rows.values(), default=0)) - 2.0
            n = len(self.view.inputs)
            xs = [st.terminal_x(self.width, slot, n) for slot, _n, _l, _s in self.tags]
            left = min(left, min(xs) - st.PROXY_W / 2 - 2)
            right = max(right, max(xs) + st.PROXY_W / 2 + 2)
        self._bounds = QRectF(left, top - 6.0, right - left, self.height - top + 2 * st.CIRCLE + 8)

    def rect(self) -> QRectF:
        return QRectF(0.0, 0.0, self.width, self.height)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def input_pos(self, slot: int) -> QPointF:
        """Scene point where a link enters input ``slot`` (top of its triangle); a value read
        inside the node's subgraphs (``slot`` < 0) enters at the top right corner."""
        if slot < 0:
            return self.pos() + QPointF(self.width - st.IMPLICIT_INSET, 0.0)
        x = st.terminal_x(self.width, slot, len(self.view.inputs))
        tri = _TRI[self.view.inputs[slot].optional] if slot < len(self.view.inputs) else 0.0
        return self.pos() + QPointF(x, -tri)

    def output_pos(self, slot: int) -> QPointF:
        """Scene point where a link leaves output ``slot`` (bottom of its circle)."""
        x = st.terminal_x(self.width, slot, len(self.view.outputs))
        return self.pos() + QPointF(x, self.height + st.CIRCLE)

    def input_xy(self, slot: int) -> tuple[float, float]:
        """:meth:`input_pos` as plain numbers (bulk path building)."""
        if slot < 0:
            return self.x() + self.width - st.IMPLICIT_INSET, self.y()
        inputs = self.view.inputs
        tri = _TRI[inputs[slot].optional] if slot < len(inputs) else 0.0
        return self.x() + self.width * (slot + 1) / (len(inputs) + 1), self.y() - tri

    def output_xy(self, slot: int) -> tuple[float, float]:
        x = self.x() + self.width * (slot + 1) / (len(self.view.outputs) + 1)
        return x, self.y() + self.height + st.CIRCLE

    def terminal_at(self, scene_pos: QPointF) -> tuple[str, int] | None:
        """("in" | "out" | "tag", slot) of the terminal under ``scene_pos``, if any."""
        p = scene_pos - self.pos()
        r = st.TERMINAL_HIT
        n_in, n_out = len(self.view.inputs), len(self.view.outputs)
        if -st.TRIANGLE - r <= p.y() <= r and n_in:
            slot = _nearest(p.x(), self.width, n_in)
            if abs(p.x() - st.terminal_x(self.width, slot, n_in)) <= r:
                return "in", slot
        if self.height - r <= p.y() <= self.height + 2 * st.CIRCLE + r and n_out:
            slot = _nearest(p.x(), self.width, n_out)
            if abs(p.x() - st.terminal_x(self.width, slot, n_out)) <= r:
                return "out", slot
        for slot, _name, _label, _stub in self.tags:
            if self._tag_rect(slot).adjusted(-2, -2, 2, 2).contains(p):
                return "tag", slot
        return None

    def precision_badge(self) -> QRectF:
        """Local rect of the precision badge (empty when the node has no constraint)."""
        return self._badge

    def subgraph_button(self) -> QRectF:
        """Local rect of the subgraph button (meaningful when the node has subgraphs)."""
        return QRectF(6.0, self.height - 15.0, 16.0, 12.0)

    def _tag_rect(self, slot: int) -> QRectF:
        x = st.terminal_x(self.width, slot, len(self.view.inputs))
        width = self._tag_width
        return QRectF(x - width / 2, self._tag_top(self._tag_rows.get(slot, 0)), width, st.PROXY_H)

    @staticmethod
    def _tag_top(row: int) -> float:
        """Top of a tag in ``row`` (0: just above the input terminals; tags too close to
        sit side by side are stacked, see :func:`_tag_rows`)."""
        return -st.TRIANGLE - st.PROXY_GAP - st.PROXY_H - row * (st.PROXY_H + TAG_ROW_GAP)

    # --- painting ---------------------------------------------------------------------------
    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        lod = _lod(painter)
        selected = self.isSelected()
        view = self.view
        is_op = view.kind == NodeKind.OP or view.kind == NodeKind.GROUP  # boxes with a type line
        fill = (
            st.GROUP_FILL
            if view.kind == NodeKind.GROUP
            else st.NODE_FILL
            if is_op
            else st.INPUT_FILL
            if view.kind == NodeKind.INPUT
            else st.OUTER_FILL
            if view.kind == NodeKind.OUTER
            else st.OUTPUT_FILL
        )
        hot = self.heat >= 0.0 and is_op
        if hot:
            fill = heat_color(self.heat) if self.heat_fill is None else self.heat_fill
        if lod < st.LOD_TERMINALS:  # far away: a plain box in the category colour
            painter.setPen(_NO_PEN)
            box = fill if hot else self.color if is_op else fill.darker(130)
            painter.setBrush(st.SELECTED if selected else box)
            painter.drawRect(self.rect())
            self._paint_compact_label(painter, light=is_op and not hot)
            return
        pen = QPen(st.SELECTED if selected else st.NODE_BORDER, 2.2 if selected else 1.0)
        if view.kind == NodeKind.OUTER and not selected:
            pen = QPen(st.TERMINAL_COLORS[TerminalState.OUTER], 1.4, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(fill)
        radius = 4.0 if is_op else self.height / 2
        painter.drawRoundedRect(self.rect(), radius, radius)
        if is_op:
            painter.setPen(_NO_PEN)
            painter.setBrush(self.color)
            painter.drawRect(QRectF(1.0, 1.0, 4.0, self.height - 2.0))
        self._paint_terminals(painter)
        if self.tags:
            self._paint_tags(painter, lod)
        if self.badge_label:
            self._paint_badge(painter, lod >= st.LOD_TEXT)
        if lod < st.readable_zoom() * 0.99:  # name and type too small: the type alone
            self._paint_compact_label(painter, light=hot and self.heat > 0.55)
            if self.problem:
                self._paint_problem(painter)
            return
        light = hot and self.heat > 0.55  # white text on the hottest (red) boxes
        painter.setPen(_LIGHT_TEXT if light else st.TEXT)
        painter.setFont(st.name_font())
        if is_op:
            painter.drawText(
                QRectF(st.TEXT_PAD - 2, 4.0, self.width - 2 * st.TEXT_PAD + 4, 18.0),
                Qt.AlignmentFlag.AlignCenter,
                self.label,
            )
            painter.setPen(_LIGHT_TEXT if light else st.TEXT_DIM)
            painter.setFont(st.type_font())
            kind = f"ƒ {view.op_type}" if view.function is not None else view.op_type
            if hot:
                kind = f"{kind}  {self.heat_label}"
            painter.drawText(self._type_rect, Qt.AlignmentFlag.AlignCenter, kind)
        else:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.label)
        if view.subgraphs:
            self._paint_subgraph_button(painter)
        if self.problem:
            self._paint_problem(painter)

    def _paint_compact_label(self, painter: QPainter, light: bool) -> None:
        """The operator type (a graph input/output's name) in a font of COMPACT_TEXT_PX
        screen pixels, drawn in device space so it stays legible as the view zooms out;
        nothing when the box is too small on screen for it."""
        transform = painter.worldTransform()
        box = transform.mapRect(self.rect())
        if box.height() < st.COMPACT_TEXT_PX + 2 or box.width() < 3 * st.COMPACT_TEXT_PX:
            return
        view = self.view
        if view.kind != NodeKind.OP:
            text = view.name
        else:
            text = f"ƒ {view.op_type}" if view.function is not None else view.op_type
        label = st.compact_label(text, int(box.width()) - 6)
        if not label:
            return
        painter.save()
        painter.resetTransform()
        painter.setFont(st.compact_font())
        painter.setPen(_LIGHT_TEXT if light else st.TEXT)
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, label)
        painter.restore()

    def _paint_terminals(self, painter: QPainter) -> None:
        painter.setPen(QPen(QColor(255, 255, 255), 0.8))
        inputs, outputs = self.view.inputs, self.view.outputs
        n = len(inputs)
        for slot, terminal in enumerate(inputs):
            x = st.terminal_x(self.width, slot, n)
            s = _TRI[terminal.optional]
            painter.setBrush(st.TERMINAL_COLORS[terminal.state])
            painter.drawPolygon(
                [QPointF(x - s * 0.6, -s), QPointF(x + s * 0.6, -s), QPointF(x, 0.5)]
            )
        n = len(outputs)
        for slot, terminal in enumerate(outputs):
            x = st.terminal_x(self.width, slot, n)
            r = st.CIRCLE * (0.75 if terminal.optional else 1.0)
            painter.setBrush(st.TERMINAL_COLORS[terminal.state])
            painter.drawEllipse(QPointF(x, self.height + r - 0.5), r, r)

    def _paint_tags(self, painter: QPainter, lod: float) -> None:
        n = len(self.view.inputs)
        painter.setPen(QPen(st.EDGE, 0))
        for slot, _name, _label, _stub in self.tags:  # the lines first: stacked tags cover none
            rect = self._tag_rect(slot)
            x = st.terminal_x(self.width, slot, n)
            painter.drawLine(QPointF(x, rect.bottom() + st.CIRCLE), QPointF(x, -st.TRIANGLE))
        for slot, _name, label, stub in self.tags:
            rect = self._tag_rect(slot)
            x = st.terminal_x(self.width, slot, n)
            painter.setPen(QPen(st.EDGE if stub else st.IO_BORDER, 0.8))
            painter.setBrush(st.STUB_FILL if stub else st.INPUT_FILL)
            radius = 3.0 if stub else st.PROXY_H / 2  # stubs square-ish, graph inputs round
            painter.drawRoundedRect(rect, radius, radius)
            painter.setBrush(st.TERMINAL_COLORS[TerminalState.LINKED])
            painter.drawEllipse(QPointF(x, rect.bottom() + 2.5), 2.5, 2.5)
            if lod >= st.LOD_TEXT:
                painter.setPen(st.TEXT)
                painter.setFont(st.small_font())
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)

    def _paint_subgraph_button(self, painter: QPainter) -> None:
        rect = self.subgraph_button()
        painter.setPen(QPen(st.NODE_BORDER, 0.8))
        painter.setBrush(QColor("#e9edf5"))
        painter.drawRoundedRect(rect, 2.0, 2.0)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(rect.adjusted(3.0, 2.5, -7.0, -5.5))
        painter.drawRect(rect.adjusted(7.0, 5.5, -3.0, -2.5))

    def _paint_badge(self, painter: QPainter, with_text: bool) -> None:
        painter.setPen(QPen(QColor("white"), 1.0))
        painter.setBrush(_BADGE_COLORS.get(self.view.precision, st.NODE_BORDER))
        painter.drawRoundedRect(self._badge, 7.0, 7.0)
        if with_text:
            painter.setFont(st.small_font())
            painter.drawText(self._badge, Qt.AlignmentFlag.AlignCenter, self.badge_label)

    def _paint_problem(self, painter: QPainter) -> None:
        center = QPointF(self.width - 1.0, 0.0)
        painter.setPen(QPen(QColor("white"), 1.0))
        painter.setBrush(st.ERROR if self.problem >= 2 else st.WARNING)
        painter.drawEllipse(center, 6.5, 6.5)
        painter.setFont(st.type_font())
        painter.drawText(
            QRectF(center.x() - 6.5, center.y() - 6.5, 13.0, 13.0),
            Qt.AlignmentFlag.AlignCenter,
            "!",
        )


def diff_color(change: float) -> QColor:
    """Comparison overlay fill for ``change`` in -1..1: green (faster) through pale grey
    (unchanged) to red (slower); strong colours (|change| > 0.55) take white text."""
    c = min(max(change, -1.0), 1.0)
    hue = 0.33 if c < 0 else 0.0
    m = abs(c)
    return QColor.fromHsvF(hue, 0.08 + 0.72 * m, 1.0 - 0.42 * m)


def heat_color(heat: float) -> QColor:
    """Overlay fill for ``heat`` in 0..1: pale yellow through orange to red."""
    h = min(max(heat, 0.0), 1.0)
    return QColor.fromHsvF(0.16 * (1.0 - h), 0.12 + 0.68 * h, 1.0 - 0.08 * h)


def _nearest(x: float, width: float, count: int) -> int:
    slot = round(x * (count + 1) / width - 1) if width > 0 else 0
    return min(max(slot, 0), count - 1)


def edge_path(
    start: QPointF, end: QPointF, bends: Sequence[tuple[float, float]] = ()
) -> QPainterPath:
    """A link from an output point down to an input point through ``bends``: cubic pieces
    with vertical tangents, so links leave and enter terminals straight."""
    return edge_path_xy(start.x(), start.y(), end.x(), end.y(), bends)


def edge_path_xy(
    x0: float, y0: float, x1: float, y1: float, bends: Sequence[tuple[float, float]] = ()
) -> QPainterPath:
    """:func:`edge_path` on plain numbers (no QPointF objects: ~2x faster in bulk)."""
    path = QPainterPath()
    path.moveTo(x0, y0)
    ax, ay = x0, y0
    for bx, by in (*bends, (x1, y1)):
        dy = by - ay
        d = max(dy * 0.5, 24.0) if dy > 0 else 60.0 + abs(dy) * 0.1
        path.cubicTo(ax, ay + d, bx, by - d, bx, by)
        ax, ay = bx, by
    return path


class EdgeItem(QGraphicsItem):
    """A link between an output terminal and an input terminal (cosmetic pen, so it stays
    visible at any zoom). The hit shape is a wider stroke, computed on first hit test."""

    __slots__ = ("_bounds", "_path", "_shape", "edge", "hovered")

    def __init__(self, edge: ViewEdge) -> None:
        super().__init__()
        self.edge = edge
        self.hovered = False
        self._path = QPainterPath()
        self._bounds = QRectF()
        self._shape: QPainterPath | None = None
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)  # z stays EDGE_Z (0)

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

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        if self.isSelected():
            pen = QPen(st.SELECTED, 2.6)
        elif self.hovered:
            pen = QPen(st.EDGE_HOVER, 2.0)
        else:
            pen = QPen(st.EDGE, 1.2)
        if self.edge.implicit:  # read inside the target's subgraphs, not an input
            pen.setStyle(Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._path)

    def set_hovered(self, on: bool) -> None:
        """Highlight (the view tracks the link under the pointer; items get no hover
        events, which keeps 100k links cheap to build and to move the mouse over)."""
        if on != self.hovered:
            self.hovered = on
            self.update()


class LinkPreviewItem(QGraphicsItem):
    """The dashed link that follows the pointer while the user drags a new connection."""

    def __init__(self) -> None:
        super().__init__()
        self._path = QPainterPath()
        self._bounds = QRectF()
        self.setZValue(10.0)

    def set_ends(self, start: QPointF, end: QPointF) -> None:
        self.prepareGeometryChange()
        self._path = edge_path(start, end) if end.y() >= start.y() else edge_path(end, start)
        self._bounds = self._path.controlPointRect().adjusted(-3, -3, 3, 3)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        pen = QPen(st.EDGE_HOVER, 1.8, Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(QBrush())
        painter.drawPath(self._path)


#: What a small tag shows of a tensor name (``/m/model/rotary_emb/Cast_output_0`` →
#: ``Cast``); the whole name is in the tooltip.
_tail = st.tag_text


#: Space between stacked rows of tags.
TAG_ROW_GAP = 3.0
#: At most this many rows of tags above a box; closer tags get narrower. One: the layout
#: leaves room for one row between a box and the one above it.
MAX_TAG_ROWS = 1


def _tag_label(tensor: str, width: float) -> str:
    """The text of a tag ``width`` pixels wide: :func:`_tail` of the name, elided in the
    middle when it fits a tag of full width, else at its start (a narrowed tag keeps the
    end, which tells ``Unsqueeze_6`` from ``Unsqueeze_7``)."""
    tail = _tail(tensor)
    if width >= st.PROXY_W - 8:
        return st.elide(tail, "small", width)
    return st.elide(tail, "small", width, Qt.TextElideMode.ElideLeft)


def _tag_rows(xs: Sequence[float]) -> tuple[dict[int, int], float]:
    """Rows and width of tags centred at ``xs`` (by position in ``xs``) so that none
    covers another: side by side when they fit, else stacked in up to ``MAX_TAG_ROWS``
    rows (neighbours on different rows), narrowed when even that is not enough."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    gaps = [xs[b] - xs[a] for a, b in itertools.pairwise(order)]
    need = st.PROXY_W + 4.0
    gap = min(gaps, default=need)
    if gap >= need:
        return dict.fromkeys(range(len(xs)), 0), st.PROXY_W
    rows = min(MAX_TAG_ROWS, math.ceil(need / max(gap, 1.0)))
    width = min(st.PROXY_W, rows * gap - 4.0)
    return {index: rank % rows for rank, index in enumerate(order)}, max(width, 12.0)
