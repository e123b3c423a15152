"""The welcome page (D-7): recent files, New and Open."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class WelcomePage(QWidget):
    openRequested = Signal(str)
    newRequested = Signal()
    openDialogRequested = Signal()
    startActivityRequested = Signal()  # D-7: profile a model without opening it
    activityRequested = Signal(str)  # "trt-build" | "trt-profile" (TensorRT activities)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 36, 48, 36)
        title = QLabel("<h1>ONNX Designer</h1><p>Open a model, or start a new one.</p>")
        layout.addWidget(title)
        buttons = QHBoxLayout()
        new = QPushButton("New Model…")
        new.clicked.connect(self.newRequested)
        open_ = QPushButton("Open Model…")
        open_.clicked.connect(self.openDialogRequested)
        activity = QPushButton("Start Activity…")
        activity.setToolTip("Profile a model or build a TensorRT engine, here or on a target")
        choices = QMenu(activity)
        choices.addAction("Profile with ONNX Runtime…", self.startActivityRequested.emit)
        choices.addAction(
            "Export TensorRT Engine…", lambda: self.activityRequested.emit("trt-build")
        )
        choices.addAction(
            "Profile with TensorRT…", lambda: self.activityRequested.emit("trt-profile")
        )
        activity.setMenu(choices)
        self.activity_menu = choices
        buttons.addWidget(new)
        buttons.addWidget(open_)
        buttons.addWidget(activity)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addWidget(QLabel("<h3>Recent files</h3>"))
        self.recent = QListWidget()
        self.recent.itemActivated.connect(self._activated)
        layout.addWidget(self.recent, 1)
        self.empty = QLabel("No recent files yet.")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.empty)

    def set_recent(self, files: list[str]) -> None:
        self.recent.clear()
        for path in files:
            item = QListWidgetItem(f"{Path(path).name}    —    {path}")
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            self.recent.addItem(item)
        self.empty.setVisible(not files)
        self.recent.setVisible(bool(files))

    def _activated(self, item: QListWidgetItem) -> None:
        self.openRequested.emit(str(item.data(Qt.ItemDataRole.UserRole)))
