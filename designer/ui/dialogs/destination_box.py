"""What the global modification dialogs share besides running (designer.ui.dialogs.
transform_runner): the Destination box (the open document as one undo step, or a file), line
edits whose Enter never starts a run, buttons that never become the default. Split from
transform_runner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from designer.core.io.atomic import same_file as same_file
from designer.core.io.external import is_external, iter_model_tensors
from designer.ui.session import DocumentSession

MODEL_FILTER = "ONNX models (*.onnx);;All files (*)"


def has_external_data(model: onnx.ModelProto) -> bool:
    return any(is_external(t) for t in iter_model_tensors(model))


class _EnterFilter(QObject):
    def __init__(self, parent: QObject, on_enter: Callable[[], object] | None) -> None:
        super().__init__(parent)
        self.on_enter = on_enter

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            if self.on_enter is not None:
                self.on_enter()
            return True
        return False


def keep_enter(edit: QLineEdit, on_enter: Callable[[], object] | None = None) -> None:
    """Enter in ``edit`` calls ``on_enter`` instead of pressing the dialog's Run button
    (typing a filter or a name must never start a transform)."""
    edit.installEventFilter(_EnterFilter(edit, on_enter))


def plain_button(text: str) -> QPushButton:
    """A push button that never becomes the dialog's default (Enter stays with Run)."""
    button = QPushButton(text)
    button.setAutoDefault(False)
    return button


class DestinationBox(QGroupBox):
    """Where the result goes: the open document (one undo step) or a file."""

    def __init__(self, session: DocumentSession, suffix: str, parent: QWidget | None = None):
        super().__init__("Destination", parent)
        self.session = session
        layout = QVBoxLayout(self)
        self.to_document = QRadioButton("Modify the open document (undoable as one step)")
        self.to_file = QRadioButton("Write to file:")
        self.to_document.setChecked(True)
        layout.addWidget(self.to_document)
        row = QHBoxLayout()
        row.addWidget(self.to_file)
        self.path = QLineEdit(str(self._default_path(suffix)))
        self.path.setToolTip("The new model file; the open model's own file is refused")
        self.browse = plain_button("Browse…")
        self.browse.clicked.connect(self._browse)
        row.addWidget(self.path, 1)
        row.addWidget(self.browse)
        layout.addLayout(row)
        self.to_file.toggled.connect(self._sync)
        self._sync()

    def _default_path(self, suffix: str) -> Path:
        source = self.session.doc.path
        if source is None:
            return Path.cwd() / f"model_{suffix}.onnx"
        return source.with_name(f"{source.stem}_{suffix}.onnx")

    def _sync(self) -> None:
        self.path.setEnabled(self.to_file.isChecked())
        self.browse.setEnabled(self.to_file.isChecked())

    def _browse(self) -> None:
        chosen = self.choose_path(self.path.text())
        if chosen:
            self.path.setText(chosen)
            self.to_file.setChecked(True)

    def choose_path(self, start: str) -> str:
        """Ask for the output file (a seam for tests)."""
        name, _ = QFileDialog.getSaveFileName(self, "Write Model To", start, MODEL_FILTER)
        return name

    def target(self) -> Path | None:
        """The output file, or None for the open document."""
        return Path(self.path.text().strip()).expanduser() if self.to_file.isChecked() else None

    def validate(self) -> str | None:
        """Why the destination cannot be used, or None."""
        if not self.to_file.isChecked():
            return None
        text = self.path.text().strip()
        if not text:
            return "Enter the file to write the result to."
        target = Path(text).expanduser()
        source = self.session.doc.path
        if source is not None and same_file(target, source):
            return (
                f"{target} is the open model's own file; choose another file, or modify "
                "the open document and save it."
            )
        if target.is_dir():
            return f"{target} is a folder; choose a file name."
        if not target.parent.is_dir():
            return f"The folder {target.parent} does not exist."
        return None
