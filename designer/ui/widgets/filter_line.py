"""A search field that reports its text after a short pause in typing (so filtering a
large list does not run on every key press)."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QLineEdit, QWidget


class FilterLineEdit(QLineEdit):
    """``filterChanged(text)`` fires ``delay_ms`` after the last edit (and at once on
    Enter or when cleared)."""

    filterChanged = Signal(str)

    def __init__(self, placeholder: str, delay_ms: int = 150, parent: QWidget | None = None):
        super().__init__(parent)
        self.setPlaceholderText(placeholder)
        self.setClearButtonEnabled(True)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.flush)
        self.textChanged.connect(self._edited)
        self.returnPressed.connect(self.flush)

    def _edited(self, text: str) -> None:
        if not text:
            self.flush()
        else:
            self._timer.start()

    def flush(self) -> None:
        """Report the current text now."""
        self._timer.stop()
        self.filterChanged.emit(self.text())
