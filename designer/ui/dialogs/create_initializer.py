"""Create an initializer (SPEC I-2, I-3): name, tensor type and its values from P-2 text, a
``.npy`` file, a generated fill or external data beside the saved model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from designer.core.document import Document
from designer.core.errors import ValueSyntaxError
from designer.core.names import identifier_problem
from designer.core.scope import ScopeId
from designer.core.tensorgen import (
    TENSOR_TYPES,
    Fill,
    TensorGenError,
    external_tensor,
    fill_problem,
    generate,
    load_npy,
    make_tensor,
    parse_shape,
    type_name,
)
from designer.core.values import parse_tensor
from designer.ui.widgets.error_label import ErrorLabel

VALUE, NPY, GENERATE, EXTERNAL = range(4)


class CreateInitializerDialog(QDialog):
    """After ``exec()`` is accepted, ``tensor`` holds the new TensorProto (not yet added)."""

    def __init__(
        self,
        doc: Document,
        scope_id: ScopeId,
        name: str = "",
        elem_type: int = onnx.TensorProto.FLOAT,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Create Initializer")
        self.resize(520, 380)
        self.doc = doc
        self.scope_id = scope_id
        self.tensor: onnx.TensorProto | None = None
        self.name = QLineEdit(name)
        self.name.setToolTip("Unique in the graph; a C90 identifier")
        self.dtype = QComboBox()
        for t in TENSOR_TYPES:
            self.dtype.addItem(type_name(t), t)
        self.dtype.setCurrentIndex(max(0, self.dtype.findData(elem_type)))
        self.dtype.currentIndexChanged.connect(self._update_fills)

        self.tabs = QTabWidget()
        self.value_text = QPlainTextEdit()
        self.value_text.setPlaceholderText("[[1, 2], [3, 4]]  —  strings: ['a', 'b']")
        self.tabs.addTab(self.value_text, "Value")

        npy_page = QWidget()
        npy_layout = QHBoxLayout(npy_page)
        self.npy_path = QLineEdit()
        self.npy_path.setPlaceholderText("values.npy (its dtype must match the tensor type)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_npy)
        npy_layout.addWidget(self.npy_path, 1)
        npy_layout.addWidget(browse)
        self.tabs.addTab(npy_page, "Load .npy")

        gen_page = QWidget()
        gen_form = QFormLayout(gen_page)
        self.gen_shape = QLineEdit("[1, 2, 3, 4]")
        self.fill = QComboBox()
        for fill in Fill:
            self.fill.addItem(fill.value, fill)
        gen_form.addRow("Shape", self.gen_shape)
        gen_form.addRow("Fill", self.fill)
        self.tabs.addTab(gen_page, "Generate…")

        ext_page = QWidget()
        ext_form = QFormLayout(ext_page)
        self.ext_path = QLineEdit()
        self.ext_path.setPlaceholderText("weights.bin (relative to the model file)")
        self.ext_shape = QLineEdit("[1, 2, 3, 4]")
        self.ext_offset = QSpinBox()
        self.ext_offset.setRange(0, 2**31 - 1)
        self.ext_length = QLineEdit()
        self.ext_length.setPlaceholderText("from the shape")
        ext_form.addRow("File", self.ext_path)
        ext_form.addRow("Shape", self.ext_shape)
        ext_form.addRow("Offset (bytes)", self.ext_offset)
        ext_form.addRow("Length (bytes)", self.ext_length)
        self.tabs.addTab(ext_page, "External")
        if doc.base_dir is None:
            self.tabs.setTabEnabled(EXTERNAL, False)
            self.tabs.setTabToolTip(
                EXTERNAL, "External data lives beside the model file: save the model first"
            )

        self.error = ErrorLabel()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Tensor type", self.dtype)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Values"))
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self._update_fills()

    @property
    def elem_type(self) -> int:
        return int(self.dtype.currentData())

    def _update_fills(self) -> None:
        """Disable fills the chosen type cannot use (with the reason as tooltip)."""
        model = self.fill.model()
        assert isinstance(model, QStandardItemModel)
        first_ok = -1
        for row in range(self.fill.count()):
            problem = fill_problem(self.fill.itemData(row), self.elem_type)
            item = model.item(row)
            item.setEnabled(problem is None)
            item.setToolTip(problem or "")
            if problem is None and first_ok < 0:
                first_ok = row
        if not model.item(self.fill.currentIndex()).isEnabled():
            self.fill.setCurrentIndex(first_ok)

    def _browse_npy(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load values", "", "NumPy (*.npy)")
        if path:
            self.npy_path.setText(path)

    def build(self) -> onnx.TensorProto:
        """The tensor the fields describe; TensorGenError with a message otherwise."""
        name = self.name.text().strip()
        problem = identifier_problem(name)
        if problem is not None:
            raise TensorGenError(f"name: {problem}")
        scope = self.doc.scope(self.scope_id)
        if name in scope.defined_names() | scope.outer_names():
            raise TensorGenError(f"name: a tensor named '{name}' already exists")
        elem_type = self.elem_type
        page = self.tabs.currentIndex()
        if page == EXTERNAL:
            length_text = self.ext_length.text().strip()
            try:
                length = int(length_text) if length_text else None
            except ValueError:
                raise TensorGenError(f"length: '{length_text}' is not a number of bytes") from None
            return external_tensor(
                name,
                elem_type,
                parse_shape(self.ext_shape.text()),
                self.ext_path.text().strip(),
                self.ext_offset.value(),
                length,
                self.doc.base_dir,
            )
        array: np.ndarray
        if page == VALUE:
            try:
                array = parse_tensor(self.value_text.toPlainText(), elem_type)
            except ValueSyntaxError as exc:
                raise TensorGenError(f"value: {exc}") from None
        elif page == NPY:
            path = self.npy_path.text().strip()
            if not path:
                raise TensorGenError("choose a .npy file")
            array = load_npy(Path(path), elem_type)
        else:
            array = generate(parse_shape(self.gen_shape.text()), elem_type, self.fill.currentData())
        return make_tensor(name, array, elem_type)

    def accept(self) -> None:
        try:
            self.tensor = self.build()
        except TensorGenError as exc:
            self.error.show_message(str(exc))
            return
        super().accept()


def ask_new_initializer(
    parent: QWidget | None,
    doc: Document,
    scope_id: ScopeId,
    name: str = "",
    elem_type: int = onnx.TensorProto.FLOAT,
) -> onnx.TensorProto | None:
    """Run the dialog modally; the new tensor, or None when cancelled. Tests replace this."""
    dialog = CreateInitializerDialog(doc, scope_id, name, elem_type, parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    return dialog.tensor
