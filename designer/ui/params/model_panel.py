"""The Parameters window with nothing selected: model information (SPEC P-4).

IR version and opset imports are shown read-only (changing them changes what the model
means; that is a global modification). Producer, version, domain, doc string and metadata
props are editable, each change one undo step.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from designer.core.edits import SetMetadataProp, SetModelProperty
from designer.core.names import unique_name
from designer.ui.params.fields import CommitLineEdit, CommitTextEdit, Section
from designer.ui.session import DocumentSession
from designer.ui.widgets.error_label import ErrorLabel

_TEXT_FIELDS = (
    ("producer_name", "Producer"),
    ("producer_version", "Producer version"),
    ("domain", "Domain"),
)


class ModelPanel(QWidget):
    def __init__(self, session: DocumentSession) -> None:
        super().__init__()
        self.session = session
        model = session.doc.model
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(QLabel(f"<b>Model</b> — {session.title.rstrip('*')}"))
        info = Section("Model information")
        form_box = QWidget()
        form = QFormLayout(form_box)
        form.setContentsMargins(0, 0, 0, 0)
        ir = QLabel(str(model.ir_version))
        ir.setToolTip("Changing the IR version changes what the file means; not edited here")
        form.addRow("IR version", ir)
        opsets = ", ".join(
            f"{d or 'ai.onnx'} {v}" for d, v in sorted(session.doc.opset_imports.items())
        )
        opset_label = QLabel(opsets or "(none)")
        opset_label.setWordWrap(True)
        opset_label.setToolTip("Converting to another opset is a global modification")
        form.addRow("Opset imports", opset_label)
        form.addRow("Graph", QLabel(model.graph.name or "(unnamed)"))
        self.fields: dict[str, CommitLineEdit] = {}
        for name, label in _TEXT_FIELDS:
            field = CommitLineEdit(getattr(model, name))
            field.committed.connect(lambda text, n=name: self._set(n, text))
            self.fields[name] = field
            form.addRow(label, field)
        self.version = CommitLineEdit(str(model.model_version))
        self.version.setToolTip("An integer (int64)")
        self.version.committed.connect(self._set_version)
        self.version_error = ErrorLabel()
        form.addRow("Model version", self.version)
        form.addRow("", self.version_error)
        self.doc_string = CommitTextEdit(model.doc_string)
        self.doc_string.setMaximumHeight(90)
        self.doc_string.setToolTip("Applied when the field loses focus (or Ctrl+Enter)")
        self.doc_string.committed.connect(lambda text: self._set("doc_string", text))
        form.addRow("Doc string", self.doc_string)
        info.add(form_box)
        layout.addWidget(info)

        meta = Section("Metadata properties")
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Key", "Value"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        for prop in model.metadata_props:
            row = self.table.rowCount()
            self.table.insertRow(row)
            self.table.setItem(row, 0, QTableWidgetItem(prop.key))
            self.table.setItem(row, 1, QTableWidgetItem(prop.value))
        self.table.setMinimumHeight(110)
        self.table.itemChanged.connect(self._meta_changed)
        buttons = QHBoxLayout()
        add = QPushButton("Add")
        add.setToolTip("Add a metadata property")
        add.clicked.connect(self.add_property)
        self.remove = QPushButton("Remove")
        self.remove.setToolTip("Remove the selected metadata property")
        self.remove.clicked.connect(self.remove_property)
        buttons.addWidget(add)
        buttons.addWidget(self.remove)
        buttons.addStretch(1)
        self.meta_error = ErrorLabel()
        meta_box = QWidget()
        meta_layout = QVBoxLayout(meta_box)
        meta_layout.setContentsMargins(0, 0, 0, 0)
        meta_layout.addWidget(self.table)
        meta_layout.addLayout(buttons)
        meta_layout.addWidget(self.meta_error)
        meta.add(meta_box)
        layout.addWidget(meta)
        layout.addStretch(1)

    def _set(self, name: str, value: str | int) -> None:
        self.session.push(SetModelProperty(name, value))

    def _set_version(self, text: str) -> None:
        try:
            value = int(text.strip())
            if not -(2**63) <= value < 2**63:
                raise ValueError
        except ValueError:
            self.version_error.show_message(f"'{text}' is not an integer within int64")
            return
        self.version_error.show_message("")
        self._set("model_version", value)

    def _keys(self) -> list[str]:
        return [p.key for p in self.session.doc.model.metadata_props]

    def _meta_changed(self, item: QTableWidgetItem) -> None:
        keys = self._keys()
        row = item.row()
        if row >= len(keys):
            return
        old_key = keys[row]
        if item.column() == 1:
            self.session.push(SetMetadataProp(old_key, item.text()))
            return
        new_key = item.text().strip()
        if new_key == old_key:
            return
        if not new_key or new_key in keys:
            why = "a key cannot be empty" if not new_key else f"the key '{new_key}' exists"
            self.meta_error.show_message(why)
            self.table.blockSignals(True)
            item.setText(old_key)
            self.table.blockSignals(False)
            return
        from designer.core.edits import CompoundEdit

        value_item = self.table.item(row, 1)
        value = value_item.text() if value_item is not None else ""
        edit = CompoundEdit(
            f"Rename metadata {old_key}",
            [SetMetadataProp(old_key, None), SetMetadataProp(new_key, value)],
        )
        self.session.push(edit)

    def add_property(self) -> None:
        key = unique_name("key", set(self._keys()))
        self.session.push(SetMetadataProp(key, ""))

    def remove_property(self) -> None:
        row = self.table.currentRow()
        keys = self._keys()
        if not 0 <= row < len(keys):
            self.meta_error.show_message("select a property to remove")
            return
        self.session.push(SetMetadataProp(keys[row], None))
