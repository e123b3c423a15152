"""The timeline of one iteration: one lane per op type, one bar per node execution, time on
the x axis. Hovering a bar shows its node, op type, start and duration."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPaintEvent, QPen, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from designer.activities.reports.ort_profile import NodeEvent

LANE_H = 22.0
LABEL_W = 130.0
AXIS_H = 24.0
_PALETTE = (
    "#3f7fd0",
    "#e0962b",
    "#4e9a5b",
    "#8a64c8",
    "#c0504d",
    "#2f8f8a",
    "#b85c9e",
    "#7d8793",
    "#a08a3c",
    "#5f6fb8",
)


class TimelineWidget(QWidget):
    """Bars of ``events`` (times relative to the iteration start, µs)."""

    def __init__(self, events: Sequence[NodeEvent] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(True)
        self.events: list[NodeEvent] = []
        self.lanes: list[str] = []
        self._bars: list[tuple[QRectF, NodeEvent, QColor]] = []
        self._ticks: list[tuple[float, str]] = []
        self.span_us = 0
        self.set_events(events)

    def set_events(self, events: Sequence[NodeEvent]) -> None:
        self.events = list(events)
        self.lanes = list(dict.fromkeys(e.op_type or "?" for e in self.events))
        self.span_us = max((e.start_us + e.dur_us for e in self.events), default=0)
        self.updateGeometry()
        self._layout()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(640, int(AXIS_H + LANE_H * max(len(self.lanes), 3) + 12))

    def minimumSizeHint(self) -> QSize:
        return QSize(320, int(AXIS_H + LANE_H * min(max(len(self.lanes), 1), 6) + 12))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._layout()

    def _layout(self) -> None:
        width = max(self.width() - LABEL_W - 16.0, 10.0)
        scale = width / self.span_us if self.span_us else 0.0
        lane_of = {name: i for i, name in enumerate(self.lanes)}
        self._bars = []
        for event in self.events:
            lane = lane_of[event.op_type or "?"]
            x = LABEL_W + event.start_us * scale
            rect = QRectF(x, AXIS_H + lane * LANE_H + 3, max(event.dur_us * scale, 1.5), LANE_H - 6)
            self._bars.append((rect, event, QColor(_PALETTE[lane % len(_PALETTE)])))
        self._ticks = []
        if self.span_us:
            step = _nice_step(self.span_us / 6)
            t = 0.0
            while t <= self.span_us:
                self._ticks.append((LABEL_W + t * scale, _format_us(t)))
                t += step

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor("white"))
        if not self.events:
            painter.setPen(QColor("#5c6370"))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No node events")
            painter.end()
            return
        bottom = AXIS_H + LANE_H * len(self.lanes)
        painter.setPen(QPen(QColor("#d3d7de"), 0))
        for x, _label in self._ticks:
            painter.drawLine(QPointF(x, AXIS_H - 4), QPointF(x, bottom))
        painter.setPen(QColor("#5c6370"))
        for x, label in self._ticks:
            painter.drawText(QRectF(x - 40, 2, 80, AXIS_H - 6), Qt.AlignmentFlag.AlignCenter, label)
        for i, lane in enumerate(self.lanes):
            y = AXIS_H + i * LANE_H
            if i % 2:
                painter.fillRect(QRectF(0, y, self.width(), LANE_H), QColor("#f4f5f7"))
            painter.setPen(QColor("#1d2129"))
            painter.drawText(
                QRectF(4, y, LABEL_W - 10, LANE_H),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                lane,
            )
        painter.setPen(Qt.PenStyle.NoPen)
        for rect, _event, color in self._bars:
            painter.fillRect(rect, color)
        painter.end()

    def event_at(self, pos: QPointF) -> NodeEvent | None:
        for rect, event, _color in self._bars:
            if rect.adjusted(-1, 0, 1, 0).contains(pos):
                return event
        return None

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            hit = self.event_at(QPointF(event.pos()))
            if hit is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(
                    event.globalPos(),
                    f"{hit.name}\n{hit.op_type} on {hit.provider}\n"
                    f"start {_format_us(hit.start_us)}, {hit.dur_us:,} µs",
                    self,
                )
            return True
        return super().event(event)


def _nice_step(raw: float) -> float:
    step = 1.0
    while step * 10 <= raw:
        step *= 10
    for factor in (1, 2, 5, 10):
        if step * factor >= raw:
            return step * factor
    return step * 10


def _format_us(value: float) -> str:
    return f"{value / 1000:.2f} ms" if value >= 1000 else f"{value:.0f} µs"
