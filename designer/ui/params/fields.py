"""Small field widgets shared by the Parameters and Initializer windows."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QEnterEvent, QFocusEvent
from PySide6.QtWidgets import (
    QLineEdit,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

ERROR_FIELD_STYLE = "QLineEdit, QPlainTextEdit { border: 1px solid #b00020; }"


class CommitLineEdit(QLineEdit):
    """A line edit that reports ``committed(text)`` on Enter or focus-out, only when the text
    differs from the last value set with :meth:`set_value` (never once per keystroke)."""

    committed = Signal(str)

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._value = text
        self.editingFinished.connect(self._finish)

    def set_value(self, text: str) -> None:
        self._value = text
        self.setText(text)
        self.setCursorPosition(0)

    def _finish(self) -> None:
        if self.text() != self._value:
            self.committed.emit(self.text())


class CommitTextEdit(QPlainTextEdit):
    """A multi-line field committing on focus-out (Ctrl+Enter too) when the text changed."""

    committed = Signal(str)

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._value = text

    def set_value(self, text: str) -> None:
        self._value = text
        self.setPlainText(text)

    def _finish(self) -> None:
        if self.toPlainText() != self._value:
            self.committed.emit(self.toPlainText())

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self._finish()

    def keyPressEvent(self, event: object) -> None:
        from PySide6.QtGui import QKeyEvent

        assert isinstance(event, QKeyEvent)
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._finish()
            return
        super().keyPressEvent(event)


def tool_button(text: str, tip: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    return button


class Section(QWidget):
    """A titled section whose body collapses with a click on the arrow in its title."""

    def __init__(self, title: str, expanded: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.toggle = QToolButton()
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setChecked(expanded)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setAutoRaise(True)
        self.toggle.setStyleSheet("QToolButton { font-weight: bold; border: none; }")
        self.toggle.toggled.connect(self._toggled)
        self.body = QWidget()
        self.body_layout = QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(8, 0, 0, 4)
        self.body_layout.setSpacing(2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.body)
        self._toggled(expanded)

    def _toggled(self, on: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.body.setVisible(on)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    def add(self, widget: QWidget) -> None:
        self.body_layout.addWidget(widget)


class HoverWidget(QWidget):
    """A row that shows ``hover_buttons`` only while the mouse is over it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hover_buttons: list[QWidget] = []

    def _set_hover(self, on: bool) -> None:
        for button in self.hover_buttons:
            button.setVisible(on)

    def enterEvent(self, event: QEnterEvent) -> None:
        self._set_hover(True)
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        self._set_hover(False)
        super().leaveEvent(event)
