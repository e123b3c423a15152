"""The Layer Explorer's advanced filters: which layer types to show, and attribute
conditions ("has group", "auto_pad contains SAME", "TRT-Prec contains fp16")."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QWidget,
)

from designer.ui.qtmodels.explorer_model import AttributeFilter, ExplorerModel


class AdvancedFilters(QFrame):
    """Edits ``model``'s type and attribute filters; ``changed`` after each change."""

    changed = Signal()

    def __init__(self, model: ExplorerModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.model = model
        self._filling = False
        self.types = QListWidget()
        self.types.setMaximumHeight(96)
        self.types.setToolTip("Show only the checked layer types (none checked: all types)")
        self.types.itemChanged.connect(lambda _item: self._types_changed())
        self.attribute = QComboBox()
        self.attribute.setEditable(True)
        self.attribute.setToolTip("An attribute set on layers, or TRT-Prec")
        self.value = QLineEdit()
        self.value.setPlaceholderText("value contains…")
        self.value.setToolTip("Text the attribute's value must contain (empty: any value)")
        self.value.returnPressed.connect(self.add_attribute_filter)
        self.add = QPushButton("Add")
        self.add.clicked.connect(self.add_attribute_filter)
        self.active = QListWidget()
        self.active.setMaximumHeight(52)
        self.remove = QPushButton("Remove")
        self.remove.setToolTip("Remove the selected attribute condition")
        self.remove.clicked.connect(self._remove_selected)
        self.clear = QPushButton("Clear all")
        self.clear.clicked.connect(self.clear_all)
        self.message = QLabel()
        self.message.setStyleSheet("color: #c62828;")
        self.message.setWordWrap(True)
        grid = QGridLayout(self)
        grid.setContentsMargins(6, 4, 6, 4)
        grid.setVerticalSpacing(3)
        grid.addWidget(QLabel("Layer types:"), 0, 0, 1, 3)
        grid.addWidget(self.types, 1, 0, 1, 3)
        grid.addWidget(QLabel("Attribute:"), 2, 0, 1, 3)
        grid.addWidget(self.attribute, 3, 0)
        grid.addWidget(self.value, 3, 1)
        grid.addWidget(self.add, 3, 2)
        grid.addWidget(self.active, 4, 0, 2, 2)
        grid.addWidget(self.remove, 4, 2)
        grid.addWidget(self.clear, 5, 2, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.message, 6, 0, 1, 3)
        grid.setColumnStretch(1, 1)
        self._refresh_active()

    # --- choices ---------------------------------------------------------------------------
    def fill_choices(self) -> None:
        """Offer the layer types and attribute names of the model (O(n) over its layers)."""
        self._filling = True
        try:
            self.types.clear()
            for op_type in sorted(set(self.model.op_types()) | self.model.type_filter):
                item = QListWidgetItem(op_type)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                checked = op_type in self.model.type_filter
                item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
                self.types.addItem(item)
            current = self.attribute.currentText()
            self.attribute.clear()
            self.attribute.addItems(self.model.attribute_names())
            if current:
                self.attribute.setCurrentText(current)
        finally:
            self._filling = False

    def reset_choices(self) -> None:
        """A different document: drop the filters and offer its choices."""
        self.model.set_advanced((), ())
        self._refresh_active()
        self.message.clear()
        self.types.clear()
        if self.isVisible():
            self.fill_choices()
        self.changed.emit()

    # --- editing ---------------------------------------------------------------------------
    def set_types(self, types: set[str]) -> None:
        """Check exactly ``types`` (tests and scripted use)."""
        self.fill_choices()
        for row in range(self.types.count()):
            item = self.types.item(row)
            state = Qt.CheckState.Checked if item.text() in types else Qt.CheckState.Unchecked
            item.setCheckState(state)

    def _types_changed(self) -> None:
        if self._filling:
            return
        checked = {
            self.types.item(r).text()
            for r in range(self.types.count())
            if self.types.item(r).checkState() == Qt.CheckState.Checked
        }
        self.model.set_advanced(checked, self.model.attribute_filters)
        self.changed.emit()

    def add_attribute_filter(self) -> bool:
        """Add the condition typed in the fields; False with a message when it is invalid."""
        name = self.attribute.currentText().strip()
        if not name:
            self.message.setText("Choose an attribute first.")
            return False
        known = self.model.attribute_names()
        if name not in known:
            self.message.setText(f"No layer has an attribute named '{name}'.")
            return False
        rule = AttributeFilter(name, self.value.text().strip())
        if rule in self.model.attribute_filters:
            self.message.setText(f"The filter '{rule}' is already active.")
            return False
        self.message.clear()
        self.model.set_advanced(self.model.type_filter, (*self.model.attribute_filters, rule))
        self.value.clear()
        self._refresh_active()
        self.changed.emit()
        return True

    def _remove_selected(self) -> None:
        rows = {i.row() for i in self.active.selectedIndexes()}
        if not rows:
            self.message.setText("Select a condition to remove.")
            return
        kept = [f for i, f in enumerate(self.model.attribute_filters) if i not in rows]
        self.model.set_advanced(self.model.type_filter, kept)
        self.message.clear()
        self._refresh_active()
        self.changed.emit()

    def clear_all(self) -> None:
        self.model.set_advanced((), ())
        self.message.clear()
        self._refresh_active()
        self.fill_choices()
        self.changed.emit()

    def _refresh_active(self) -> None:
        self.active.clear()
        for rule in self.model.attribute_filters:
            self.active.addItem(str(rule))
        has = bool(self.model.attribute_filters)
        self.remove.setEnabled(has)
        self.remove.setToolTip(
            "Remove the selected attribute condition" if has else "No attribute condition yet"
        )
