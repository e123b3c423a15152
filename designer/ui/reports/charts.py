"""Bar charts of a report: Qt Charts when the module is importable, else a small QPainter
chart with the same content (labels, bars, values)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

BAR_COLOR = QColor("#3f7fd0")
Bars = Sequence[tuple[str, float]]


def charts_available() -> bool:
    """True when PySide6.QtCharts can be imported (it is an optional Qt add-on)."""
    try:
        from PySide6 import QtCharts  # noqa: F401
    except ImportError:
        return False
    return True


class BarChartWidget(QWidget):
    """Horizontal bars, largest first, with the label on the left and the value on the right.
    Bar rectangles are computed on resize and on new data, never in paintEvent."""

    def __init__(self, title: str, bars: Bars, unit: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.unit = unit
        self.bars = list(bars)
        self._rects: list[tuple[QRectF, QRectF, QRectF, str, str]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumHeight(160)
        self._layout()

    def sizeHint(self) -> QSize:
        return QSize(420, 40 + 20 * max(len(self.bars), 4))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._layout()

    def _layout(self) -> None:
        metrics = QFontMetricsF(self.font())
        label_w = min(
            max((metrics.horizontalAdvance(n) for n, _ in self.bars), default=0.0) + 8, 220.0
        )
        value_w = 84.0
        top, w = 28.0, float(self.width())
        row = (self.height() - top - 6) / max(len(self.bars), 1)
        row = min(row, 26.0)
        peak = max((v for _, v in self.bars), default=0.0) or 1.0
        span = max(w - label_w - value_w - 16, 10.0)
        self._rects = []
        decimals = 1 if self.unit == "%" or peak >= 10 else 3
        for i, (name, value) in enumerate(self.bars):
            y = top + i * row
            label = QRectF(4, y, label_w - 8, row)
            bar = QRectF(label_w, y + row * 0.18, span * max(value, 0.0) / peak, row * 0.64)
            text = QRectF(bar.right() + 6, y, value_w, row)
            elided = metrics.elidedText(name, Qt.TextElideMode.ElideMiddle, label.width())
            self._rects.append((label, bar, text, elided, f"{value:,.{decimals}f} {self.unit}"))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor("white"))
        painter.setPen(QColor("#1d2129"))
        bold = painter.font()
        bold.setBold(True)
        painter.setFont(bold)
        painter.drawText(QRectF(4, 4, self.width() - 8, 20), Qt.AlignmentFlag.AlignLeft, self.title)
        bold.setBold(False)
        painter.setFont(bold)
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        for label, bar, text, name, value in self._rects:
            painter.setPen(QColor("#1d2129"))
            painter.drawText(label, right, name)
            painter.fillRect(bar, BAR_COLOR)
            painter.setPen(QColor("#5c6370"))
            painter.drawText(text, left, value)
        painter.end()


def _qt_chart(title: str, bars: Bars, unit: str) -> QWidget:
    from PySide6.QtCharts import (
        QBarCategoryAxis,
        QBarSet,
        QChart,
        QChartView,
        QHorizontalBarSeries,
        QValueAxis,
    )

    ordered = list(reversed(list(bars)))  # Qt draws the first category at the bottom
    chart = QChart()
    chart.setTitle(title)
    chart.legend().setVisible(False)
    chart.setAnimationOptions(QChart.AnimationOption.NoAnimation)
    chart.setMargins(chart.margins() * 0)
    bar_set = QBarSet(unit)
    bar_set.setColor(BAR_COLOR)
    bar_set.append([float(v) for _, v in ordered])
    bar_set.setLabelColor(QColor("#1d2129"))
    series = QHorizontalBarSeries()
    series.append(bar_set)
    series.setLabelsVisible(True)
    series.setLabelsFormat("@value")
    series.setLabelsPosition(QHorizontalBarSeries.LabelsPosition.LabelsOutsideEnd)
    series.setLabelsPrecision(4)
    chart.addSeries(series)
    names = QBarCategoryAxis()
    names.append([_short(n) for n, _ in ordered])
    chart.addAxis(names, Qt.AlignmentFlag.AlignLeft)
    series.attachAxis(names)
    values = QValueAxis()
    values.setTitleText(unit)
    peak = max((v for _, v in ordered), default=0.0)
    values.setRange(0.0, peak * 1.2 if peak > 0 else 1.0)
    values.applyNiceNumbers()
    values.setLabelFormat("%.0f")
    chart.addAxis(values, Qt.AlignmentFlag.AlignBottom)
    series.attachAxis(values)
    view = QChartView(chart)
    view.setRenderHint(QPainter.RenderHint.Antialiasing)
    view.setMinimumHeight(200)
    view.setProperty("bars", [n for n, _ in bars])
    return view


def _short(name: str, limit: int = 32) -> str:
    return name if len(name) <= limit else f"{name[: limit // 2 - 1]}…{name[-limit // 2 :]}"


def bar_chart(title: str, bars: Bars, unit: str, use_qtcharts: bool = False) -> QWidget:
    """A horizontal bar chart (largest bar first) as a widget: the painter chart, whose
    labels are elided in the middle to fit and whose values sit beside their bars. Qt Charts
    only on request (``use_qtcharts``): its category axis turns every long node name into
    "…" on a narrow chart, its value labels overlap the bars and its nice-number axis runs to
    150 % for a 96 % maximum."""
    if use_qtcharts and charts_available():
        return _qt_chart(title, bars, unit)
    return BarChartWidget(title, bars, unit)
