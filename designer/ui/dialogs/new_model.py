"""File > New (D-2): choose the default-domain opset and optionally the contrib operators."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QWidget,
)

from designer.core.new_model import CONTRIB_DOMAIN, latest_opset


class NewModelDialog(QDialog):
    def __init__(self, default_opset: int | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New Model")
        layout = QFormLayout(self)
        self.opset = QComboBox()
        latest = latest_opset()
        for version in range(latest, 0, -1):
            label = f"{version}" + (" (latest)" if version == latest else "")
            self.opset.addItem(label, version)
        chosen = default_opset if default_opset and 1 <= default_opset <= latest else latest
        self.opset.setCurrentIndex(latest - chosen)
        layout.addRow("Default domain (ai.onnx) opset:", self.opset)
        self.contrib = QCheckBox(f"Import ONNX Runtime contrib operators ({CONTRIB_DOMAIN})")
        layout.addRow(self.contrib)
        note = QLabel("The opset decides which operators and versions the Layer Palette offers.")
        note.setWordWrap(True)
        layout.addRow(note)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addRow(buttons)

    @property
    def chosen_opset(self) -> int:
        return int(self.opset.currentData())

    @property
    def with_contrib(self) -> bool:
        return self.contrib.isChecked()
