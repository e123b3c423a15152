"""A tool button with a red count badge in its top-right corner (hidden at zero)."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent
from PySide6.QtWidgets import QToolButton, QWidget

BADGE_COLOR = QColor("#d32f2f")


class BadgeToolButton(QToolButton):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._count = 0

    @property
    def count(self) -> int:
        return self._count

    def set_count(self, count: int) -> None:
        if count != self._count:
            self._count = max(0, count)
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self._count <= 0:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = str(self._count) if self._count < 10 else "9+"
        size = 14.0
        rect = QRectF(self.width() - size - 1, 1, size, size)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(BADGE_COLOR)
        painter.drawEllipse(rect)
        font = QFont(self.font())
        font.setPixelSize(9)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("white"))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.end()
