"""Use Outer-Scope Value: pick a value of an enclosing graph to pin on a subgraph canvas.

Lists every value visible from the subgraph (name, type, where it comes from, whether it is
an initializer) with a filter; the chosen one is drawn as an outer-scope node that links to
inputs by dragging, like a graph input.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from designer.core.summary import type_text
from designer.core.viewgraph import outer_values
from designer.ui.canvas.view import CanvasView

COLUMNS = ("Name", "Type", "Defined as", "Initializer")


class OuterValueDialog(QDialog):
    """A filterable list of the outer-scope values of ``view``'s subgraph."""

    def __init__(self, view: CanvasView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Use Outer-Scope Value")
        self.resize(640, 420)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by name…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.set_filter)
        self.list = QTreeWidget()
        self.list.setRootIsDecorated(False)
        self.list.setHeaderLabels(list(COLUMNS))
        self.list.setSortingEnabled(True)
        self.list.itemDoubleClicked.connect(lambda _i, _c: self.accept())
        result = view.session.check_result
        for value in outer_values(view.session.doc, view.scope_id).values():
            proto = result.type_of(value.scope, value.name) if result is not None else None
            item = QTreeWidgetItem(
                [
                    value.name,
                    type_text(proto) if proto is not None else "?",
                    value.describe(),
                    "yes" if value.is_initializer else "",
                ]
            )
            self.list.addTopLevelItem(item)
        self.list.sortItems(0, Qt.SortOrder.AscendingOrder)
        for column in range(len(COLUMNS)):
            self.list.resizeColumnToContents(column)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        layout.addWidget(buttons)
        items = self._items()
        if items:
            self.list.setCurrentItem(items[0])

    def _items(self) -> list[QTreeWidgetItem]:
        found = (self.list.topLevelItem(i) for i in range(self.list.topLevelItemCount()))
        return [item for item in found if item is not None]

    def names(self, visible_only: bool = True) -> list[str]:
        return [i.text(0) for i in self._items() if not (visible_only and i.isHidden())]

    def set_filter(self, text: str) -> None:
        needle = text.strip().lower()
        first = None
        for item in self._items():
            hidden = bool(needle) and needle not in item.text(0).lower()
            item.setHidden(hidden)
            if not hidden and first is None:
                first = item
        current = self.list.currentItem()
        if first is not None and (current is None or current.isHidden()):
            self.list.setCurrentItem(first)

    def select(self, name: str) -> None:
        for item in self._items():
            if item.text(0) == name:
                self.list.setCurrentItem(item)

    def chosen(self) -> str | None:
        item = self.list.currentItem()
        return item.text(0) if item is not None and not item.isHidden() else None
