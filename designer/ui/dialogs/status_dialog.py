"""The status dialog that ends every global modification (M): success, success with a
warning, failure or cancelled, a short message, and an expandable detailed log."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)


class RunState(Enum):
    """How a run ended; the value is the headline word."""

    SUCCESS = "succeeded"
    WARNING = "finished with warnings"
    FAILURE = "failed"
    CANCELLED = "was cancelled"


_ICONS = {
    RunState.SUCCESS: QStyle.StandardPixmap.SP_DialogApplyButton,
    RunState.WARNING: QStyle.StandardPixmap.SP_MessageBoxWarning,
    RunState.FAILURE: QStyle.StandardPixmap.SP_MessageBoxCritical,
    RunState.CANCELLED: QStyle.StandardPixmap.SP_MessageBoxInformation,
}
_COLORS = {
    RunState.SUCCESS: "#1b7f3b",
    RunState.WARNING: "#9a6700",
    RunState.FAILURE: "#b42318",
    RunState.CANCELLED: "#44546a",
}


class StatusDialog(QDialog):
    """``what`` names the operation ("Convert to FP16"); ``message`` says what happened to
    the document or file and what to do; ``details`` is the full log (hidden until the user
    expands it; shown at once when a run failed with a log)."""

    def __init__(
        self,
        what: str,
        state: RunState,
        message: str,
        details: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.setWindowTitle(f"{what} — {state.name.capitalize()}")
        self.setMinimumWidth(560)
        layout = QVBoxLayout(self)

        head = QHBoxLayout()
        icon = QLabel()
        icon.setPixmap(self.style().standardIcon(_ICONS[state]).pixmap(40, 40))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        head.addWidget(icon)
        texts = QVBoxLayout()
        self.headline = QLabel(f"{what} {state.value}")
        font = QFont(self.headline.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.headline.setFont(font)
        self.headline.setStyleSheet(f"color:{_COLORS[state]};")
        texts.addWidget(self.headline)
        self.message = QLabel(message)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        texts.addWidget(self.message)
        head.addLayout(texts, 1)
        layout.addLayout(head)

        self.toggle = QToolButton()
        self.toggle.setText("Detailed log")
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setStyleSheet("QToolButton{border:none;}")
        self.toggle.toggled.connect(self.set_details_visible)
        self.toggle.setEnabled(bool(details))
        if not details:
            self.toggle.setToolTip("This run produced no log")
        layout.addWidget(self.toggle)

        self.details = QPlainTextEdit(details)
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setMinimumHeight(240)
        self.details.setVisible(False)
        layout.addWidget(self.details, 1)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons = buttons
        self.show_changes: QPushButton | None = None
        self.copy = QPushButton("Copy Log")
        self.copy.setAutoDefault(False)
        self.copy.setToolTip("Copy the message and the detailed log to the clipboard")
        self.copy.clicked.connect(self.copy_log)
        buttons.addButton(self.copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        if details and state is RunState.FAILURE:
            self.toggle.setChecked(True)

    def offer_changes(self, show: Callable[[], object]) -> QPushButton:
        """Add Show Changes: closes this dialog, then calls ``show`` (which opens the diff
        view of the model before and after the run)."""
        button = QPushButton("Show Changes")
        button.setAutoDefault(False)
        button.setToolTip("Compare the model before and after this step, side by side")

        def clicked() -> None:
            self.accept()
            show()

        button.clicked.connect(clicked)
        self.buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        self.show_changes = button
        return button

    def set_details_visible(self, visible: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if visible else Qt.ArrowType.RightArrow)
        self.details.setVisible(visible)
        self.adjustSize()

    def text(self) -> str:
        """Headline, message and log as plain text (what Copy Log puts on the clipboard)."""
        parts = [self.headline.text(), self.message.text()]
        if self.details.toPlainText():
            parts.append(self.details.toPlainText())
        return "\n\n".join(parts)

    def copy_log(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
