"""File > Export > Canvas As Image (C-9): format, colours, grid and file location."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QWidget,
)

from designer.core.errors import DesignerError
from designer.ui.canvas.export import ExportOptions
from designer.ui.canvas.view import CanvasView

FORMATS = {"PNG": "png", "JPEG": "jpg", "SVG": "svg"}


class ColorButton(QPushButton):
    """A button showing a colour; clicking opens a colour picker."""

    def __init__(self, color: QColor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.color = color
        self.clicked.connect(self._pick)
        self._paint()

    def _pick(self) -> None:
        chosen = QColorDialog.getColor(self.color, self, "Choose colour")
        if chosen.isValid():
            self.color = chosen
            self._paint()

    def _paint(self) -> None:
        self.setText(self.color.name())
        text = "#000" if self.color.lightness() > 128 else "#fff"
        self.setStyleSheet(f"background:{self.color.name()};color:{text};")


def _focus_note(view: CanvasView) -> str:
    """What is exported when a module is focused: the canvas as it is shown."""
    from designer.ui.canvas.focus_view import focus_of

    group = focus_of(view.canvas)
    if group is None:
        return ""
    return (
        f"The canvas shows the module {group.rsplit('/', 1)[-1]} alone (Focus): that is what "
        "is exported. Press Esc on the canvas first to export the whole graph."
    )


class ExportImageDialog(QDialog):
    def __init__(self, view: CanvasView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.setWindowTitle("Export Canvas As Image")
        self.setMinimumWidth(600)  # room for a whole path in the File box
        form = QFormLayout(self)
        self.format = QComboBox()
        self.format.addItems(list(FORMATS))
        self.format.currentTextChanged.connect(self._format_changed)
        form.addRow("Format:", self.format)
        self.background = ColorButton(QColor("#ffffff"))
        form.addRow("Background colour:", self.background)
        self.grid = QCheckBox("Draw the grid")
        form.addRow(self.grid)
        self.grid_color = ColorButton(QColor("#e6e6e6"))
        form.addRow("Grid colour:", self.grid_color)
        self.grid.toggled.connect(self.grid_color.setEnabled)
        self.grid_color.setEnabled(False)
        self.scale = QDoubleSpinBox()
        self.scale.setRange(0.1, 8.0)
        self.scale.setSingleStep(0.5)
        self.scale.setValue(1.0)
        form.addRow("Scale (PNG/JPEG):", self.scale)
        row = QHBoxLayout()
        doc_path = view.session.doc.path
        default = doc_path.with_suffix(".png") if doc_path else Path.home() / "canvas.png"
        self.path = QLineEdit(str(default))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form.addRow("File:", row)
        self.note = QLabel(_focus_note(view))
        self.note.setWordWrap(True)
        form.addRow(self.note)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _format_changed(self, name: str) -> None:
        extension = FORMATS[name]
        path = Path(self.path.text())
        self.path.setText(str(path.with_suffix(f".{extension}")))
        self.scale.setEnabled(extension != "svg")

    def _browse(self) -> None:
        extension = FORMATS[self.format.currentText()]
        name, _ = QFileDialog.getSaveFileName(
            self, "Export Canvas As Image", self.path.text(), f"Image (*.{extension})"
        )
        if name:
            self.path.setText(name)

    def options(self) -> ExportOptions:
        return ExportOptions(
            format=FORMATS[self.format.currentText()],
            background=self.background.color,
            grid=self.grid.isChecked(),
            grid_color=self.grid_color.color,
            scale=self.scale.value(),
        )

    def accept(self) -> None:
        path = Path(self.path.text()).expanduser()
        try:
            self.view.export_image(path, self.options())  # says what it wrote on the status bar
        except DesignerError as exc:
            QMessageBox.critical(self, "Export failed", str(exc))
            return
        super().accept()
