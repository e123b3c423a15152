"""Tools > Options (D-6): persisted preferences."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QSpinBox,
    QWidget,
)

from designer.core.new_model import latest_opset
from designer.ui.settings import Settings


class OptionsDialog(QDialog):
    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle("Options")
        form = QFormLayout(self)
        self.show_grid = QCheckBox("Show the background grid on new canvases")
        self.show_grid.setChecked(settings.show_grid)
        form.addRow(self.show_grid)
        self.show_constants = QCheckBox("Show Constant layers (hidden by default)")
        self.show_constants.setChecked(settings.show_constants)
        form.addRow(self.show_constants)
        self.opset = QComboBox()
        self.opset.addItem("Latest", None)
        for version in range(latest_opset(), 0, -1):
            self.opset.addItem(str(version), version)
        index = self.opset.findData(settings.default_opset)
        self.opset.setCurrentIndex(max(index, 0))
        form.addRow("Default opset for new models:", self.opset)
        self.autosave = QSpinBox()
        self.autosave.setRange(10, 3600)
        self.autosave.setSuffix(" s")
        self.autosave.setValue(settings.autosave_seconds)
        form.addRow("Autosave recovery copy every:", self.autosave)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def accept(self) -> None:
        self.settings.show_grid = self.show_grid.isChecked()
        self.settings.show_constants = self.show_constants.isChecked()
        self.settings.default_opset = self.opset.currentData()
        self.settings.autosave_seconds = self.autosave.value()
        super().accept()
