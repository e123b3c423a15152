"""The red message a dialog or a field shows about what is wrong: one look everywhere."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDialog, QLabel, QWidget

ERROR_STYLE = "color:#b00020;"


class ErrorLabel(QLabel):
    """A red, word-wrapped message the user can select and copy; hidden while empty
    (:meth:`setText` shows or hides it). In a dialog, a message longer than the dialog has
    room for makes the dialog taller, so no line of it is cut off."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(ERROR_STYLE)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setVisible(False)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setVisible(bool(text))
        if text:  # once the layout has taken the new text in
            QTimer.singleShot(0, self, self._fit_dialog)

    def _fit_dialog(self) -> None:
        window = self.window()
        layout = window.layout() if isinstance(window, QDialog) else None
        if layout is None or not window.isVisible() or not self.isVisible():
            return
        width = window.width()
        needed = (
            layout.totalHeightForWidth(width)
            if layout.hasHeightForWidth()
            else layout.totalSizeHint().height()
        )
        if needed > window.height():
            window.resize(width, needed)

    def show_message(self, text: str) -> None:
        """The same as :meth:`setText`."""
        self.setText(text)
