"""One side of the Compare view: a read-only canvas of a model with the diff colours
(added green, removed red, changed amber) and a caption naming the model."""

from __future__ import annotations

from pathlib import Path

import onnx
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from designer.core.document import Document
from designer.core.edits.base import Edit
from designer.core.scope import MAIN_SCOPE
from designer.ui.canvas.settings import CanvasSettings
from designer.ui.canvas.view import CanvasView
from designer.ui.session import DocumentSession

#: fills of changed nodes (pale enough for dark text at every zoom)
COLORS = {
    "added": QColor("#8fd19e"),
    "removed": QColor("#f19a9a"),
    "changed": QColor("#f5c26b"),
}
#: overlay strength given to the canvas (below the white-text threshold)
_HEAT = 0.5


class ReadOnlySession(DocumentSession):
    """A session whose document refuses every edit (a model shown for comparison)."""

    def push_unlocked(self, edit: Edit) -> bool:
        self.editRejected.emit("The compared models are read-only; open the file to edit it")
        return False


class DiffSide(QWidget):
    """Caption + canvas of ``model`` (external data under ``base_dir``); ``marks`` maps
    node index → "added" / "removed" / "changed"."""

    def __init__(
        self,
        title: str,
        model: onnx.ModelProto,
        base_dir: Path | None,
        marks: dict[int, str],
        settings: CanvasSettings,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        doc = Document(model)
        doc.base_dir = base_dir
        self.session = ReadOnlySession(doc, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.caption = QLabel(title)
        self.caption.setStyleSheet("font-weight:bold;padding:4px 6px;background:#eef1f5;")
        self.caption.setToolTip(title)
        layout.addWidget(self.caption)
        self.view = CanvasView(self.session, MAIN_SCOPE, settings=settings)
        layout.addWidget(self.view, 1)
        self.marks = marks
        self.keys = list(doc.scope(MAIN_SCOPE).keys)
        # a layout off the GUI thread reports "not busy" just before it rebuilds the items
        self.view.layoutBusy.connect(
            lambda busy: None if busy else QTimer.singleShot(0, self, self.paint_marks)
        )
        self.paint_marks()

    def key(self, index: int) -> int | None:
        return self.keys[index] if 0 <= index < len(self.keys) else None

    def paint_marks(self) -> None:
        """Colour the marked nodes (again after a layout rebuilt the items)."""
        items = self.view.canvas.node_items
        for index, kind in self.marks.items():
            key = self.key(index)
            item = items.get(key) if key is not None else None
            if item is not None:
                item.set_heat(_HEAT, kind, COLORS[kind])
        self.view.viewport().update()

    def show_nodes(self, indices: tuple[int, ...], near: int | None) -> None:
        """Select and centre on ``indices``; with none, centre on ``near`` (unselected)."""
        keys = [k for k in (self.key(i) for i in indices) if k is not None]
        self.view.select_keys(keys)
        target = keys[0] if keys else (self.key(near) if near is not None else None)
        if target is not None:
            self.view.center_on(target)

    def close_side(self) -> None:
        self.view.cancel_layout()
        self.session.close()
