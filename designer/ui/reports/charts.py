"""Bar charts of a report: Qt Charts when the module is importable, else a small QPainter
chart with the same content (labels, bars, values)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFontMetricsF,
    QHelpEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

BAR_COLOR = QColor("#3f7fd0")
#: Labels take at most this share of a chart's width and at most LABEL_MAX px, so the bars
#: keep room on a narrow chart (a 310 px chart with 220 px of labels had 10 px of bars).
LABEL_SHARE = 0.42
LABEL_MAX = 220.0
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
    Bar rectangles are computed on resize and on new data, never in paintEvent.

    The largest bar spans the room left beside the labels and values, the others in
    proportion. Labels take at most LABEL_SHARE of the width (elided in the middle, the full
    name in the row's tooltip), so a narrow chart still has room for its bars. Values print
    with ``decimals`` decimals; None: whole numbers as integers ("4 layers"), else 1 decimal
    for percentages and values of 10 or more, 3 below. ``empty`` is drawn when there are no
    bars, to say why."""

    def __init__(
        self,
        title: str,
        bars: Bars,
        unit: str,
        parent: QWidget | None = None,
        *,
        decimals: int | None = None,
        empty: str = "no data",
    ) -> None:
        super().__init__(parent)
        self.title = title
        self.unit = unit
        self.bars = list(bars)
        self.decimals = decimals
        self.empty = empty
        self._rects: list[tuple[QRectF, QRectF, QRectF, str, str]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumHeight(160)
        self._layout()

    def sizeHint(self) -> QSize:
        return QSize(420, 40 + 20 * max(len(self.bars), 4))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._layout()

    def value_decimals(self) -> int:
        """How many decimals the values print with (see the class docstring)."""
        if self.decimals is not None:
            return self.decimals
        values = [v for _, v in self.bars]
        if self.unit != "%" and all(float(v).is_integer() for v in values):
            return 0
        peak = max(values, default=0.0)
        return 1 if self.unit == "%" or peak >= 10 else 3

    def value_text(self, value: float) -> str:
        """``value`` as the chart prints it beside its bar."""
        return f"{value:,.{self.value_decimals()}f} {self.unit}"

    def _layout(self) -> None:
        metrics = QFontMetricsF(self.font())
        top, w = 28.0, float(self.width())
        texts = [self.value_text(v) for _, v in self.bars]
        value_w = max((metrics.horizontalAdvance(t) for t in texts), default=0.0) + 8
        label_w = min(
            max((metrics.horizontalAdvance(n) for n, _ in self.bars), default=0.0) + 8,
            LABEL_MAX,
            w * LABEL_SHARE,
        )
        row = (self.height() - top - 6) / max(len(self.bars), 1)
        row = min(row, 26.0)
        peak = max((v for _, v in self.bars), default=0.0) or 1.0
        span = max(w - label_w - value_w - 16, 10.0)
        self._rects = []
        for i, ((name, value), value_text) in enumerate(zip(self.bars, texts, strict=True)):
            y = top + i * row
            label = QRectF(4, y, max(label_w - 8, 0.0), row)
            bar = QRectF(label_w, y + row * 0.18, span * max(value, 0.0) / peak, row * 0.64)
            text = QRectF(bar.right() + 6, y, value_w, row)
            elided = metrics.elidedText(name, Qt.TextElideMode.ElideMiddle, label.width())
            self._rects.append((label, bar, text, elided, value_text))

    def event(self, event: QEvent) -> bool:
        """Tooltips: the full name and value of the row under the mouse (labels are elided)."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            row = self.row_at(event.pos().y())
            if row is None:
                QToolTip.hideText()
                event.ignore()
            else:
                name, _value = self.bars[row]
                QToolTip.showText(event.globalPos(), f"{name}: {self._rects[row][4]}", self)
            return True
        return super().event(event)

    def row_at(self, y: float) -> int | None:
        """The index of the bar row at height ``y`` (widget coordinates), None between rows."""
        for i, (label, *_rest) in enumerate(self._rects):
            if label.top() <= y < label.bottom():
                return i
        return None

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
        if not self._rects:
            painter.setPen(QColor("#5c6370"))
            flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
            painter.drawText(
                QRectF(4, 30, self.width() - 8, self.height() - 34),
                int(flags) | Qt.TextFlag.TextWordWrap.value,
                self.empty,
            )
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


def bar_chart(
    title: str,
    bars: Bars,
    unit: str,
    use_qtcharts: bool = False,
    *,
    decimals: int | None = None,
    empty: str = "no data",
) -> QWidget:
    """A horizontal bar chart (largest bar first) as a widget: the painter chart, whose
    labels are elided in the middle to fit and whose values sit beside their bars
    (``decimals`` and ``empty``: see :class:`BarChartWidget`). Qt Charts only on request
    (``use_qtcharts``): its category axis turns every long node name into "…" on a narrow
    chart, its value labels overlap the bars and its nice-number axis runs to 150 % for a
    96 % maximum."""
    if use_qtcharts and charts_available():
        return _qt_chart(title, bars, unit)
    return BarChartWidget(title, bars, unit, decimals=decimals, empty=empty)
