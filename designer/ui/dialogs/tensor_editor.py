"""The Tensor Editor (SPEC P-3): dtype, shape, a table of one 1-D/2-D slice, P-2 text mode,
paste from the clipboard; values are checked against the dtype's range."""

from __future__ import annotations

import numpy as np
import onnx
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from designer.core.errors import ValueSyntaxError
from designer.core.tensorgen import (
    TENSOR_TYPES,
    TensorGenError,
    element_count,
    parse_shape,
    type_name,
)
from designer.core.values import format_tensor, parse_tensor, parse_tensor_like
from designer.ui.qtmodels.tensor_table_model import TensorTableModel
from designer.ui.widgets.error_label import ErrorLabel

#: Text mode formats the whole tensor; bigger tensors are edited in the table only.
TEXT_LIMIT = 100_000


def convert(array: np.ndarray, elem_type: int, new_type: int) -> np.ndarray:
    """``array`` as ``new_type`` values; ValueError naming a value that does not fit."""
    if new_type == elem_type:
        return array
    if array.size == 0:
        dtype = (
            object
            if new_type == onnx.TensorProto.STRING
            else onnx.helper.tensor_dtype_to_np_dtype(new_type)
        )
        return np.zeros(array.shape, dtype=dtype)
    if onnx.TensorProto.STRING in (elem_type, new_type):
        raise ValueError("STRING values cannot be converted to or from numbers")
    text = format_tensor(array)
    try:
        return parse_tensor(text, new_type)
    except ValueSyntaxError as exc:
        raise ValueError(f"the values do not fit {type_name(new_type)}: {exc.expected}") from None


class TensorEditorDialog(QDialog):
    """Edit a tensor; after ``exec()`` accepted, ``array``/``elem_type`` hold the result.

    ``fixed_type`` keeps the dtype (list attributes), ``max_rank`` limits the shape (1 for
    INTS/FLOATS/STRINGS attributes).
    """

    def __init__(
        self,
        array: np.ndarray,
        elem_type: int,
        *,
        title: str = "Tensor Editor",
        fixed_type: bool = False,
        max_rank: int | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(640, 480)
        self.elem_type = elem_type
        self.max_rank = max_rank
        self.model = TensorTableModel(np.asarray(array), elem_type, self)
        self.model.errorOccurred.connect(self.show_error)
        self.model.edited.connect(lambda: self.show_error(""))

        self.dtype = QComboBox()
        for t in TENSOR_TYPES:
            self.dtype.addItem(type_name(t), t)
        if self.dtype.findData(elem_type) < 0:
            self.dtype.addItem(type_name(elem_type), elem_type)
        self.dtype.setCurrentIndex(self.dtype.findData(elem_type))
        self.dtype.setEnabled(not fixed_type)
        if fixed_type:
            self.dtype.setToolTip("The attribute's type fixes the element type")
        self.dtype.currentIndexChanged.connect(self._dtype_changed)
        self.shape = QLineEdit()
        self.shape.setToolTip("Shape as [d0, d1, ...]; Enter applies it")
        self.shape.returnPressed.connect(self.apply_shape)
        apply_shape = QPushButton("Apply shape")
        apply_shape.clicked.connect(self.apply_shape)
        self.paste_button = QPushButton("Paste")
        self.paste_button.setToolTip(
            "Paste P-2 text ([1, 2, 3]) or tab/newline separated cells at the current cell"
        )
        self.paste_button.clicked.connect(self.paste)
        top = QHBoxLayout()
        for widget in (QLabel("Type"), self.dtype, QLabel("Shape"), self.shape, apply_shape):
            top.addWidget(widget)
        top.addStretch(1)
        top.addWidget(self.paste_button)

        self.slice_row = QHBoxLayout()
        self.slice_boxes: list[QSpinBox] = []
        self.slice_label = QLabel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("[[1, 2], [3, 4]]")
        self.tabs = QTabWidget()
        table_page = QWidget()
        table_layout = QVBoxLayout(table_page)
        table_layout.setContentsMargins(0, 4, 0, 0)
        table_layout.addLayout(self.slice_row)
        table_layout.addWidget(self.table)
        self.tabs.addTab(table_page, "Table")
        self.tabs.addTab(self.text, "Text")
        self._current_tab = 0
        #: The text last shown for the model's array; the same text is never parsed back,
        #: so viewing the text tab changes nothing (NaN payloads, an empty tensor's dims).
        self._shown_text = ""
        self.tabs.currentChanged.connect(self._tab_changed)

        self.error = ErrorLabel()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        QShortcut(QKeySequence.StandardKey.Paste, self.table, self.paste)
        self._refresh_shape()

    # --- state ---------------------------------------------------------------------------
    @property
    def array(self) -> np.ndarray:
        return self.model.array

    def tensor(self, name: str) -> onnx.TensorProto:
        """The result as a TensorProto called ``name``."""
        from designer.core.tensorgen import make_tensor

        return make_tensor(name, self.array, self.elem_type)

    def show_error(self, message: str) -> None:
        self.error.setText(message)

    def _refresh_shape(self) -> None:
        array = self.model.array
        self.shape.setText(str(list(array.shape)))
        while self.slice_row.count():
            item = self.slice_row.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.slice_boxes = []
        if array.ndim > 2:
            self.slice_row.addWidget(QLabel("Slice"))
            for axis in range(array.ndim - 2):
                box = QSpinBox()
                box.setRange(0, max(0, array.shape[axis] - 1))
                box.setPrefix(f"axis {axis}: ")
                box.setEnabled(array.shape[axis] > 0)
                box.valueChanged.connect(self._slice_changed)
                self.slice_boxes.append(box)
                self.slice_row.addWidget(box)
            self.slice_label = QLabel()
            self.slice_row.addWidget(self.slice_label)
            self._label_slice()
            self.slice_row.addStretch(1)
        too_big = array.size > TEXT_LIMIT
        self.tabs.setTabEnabled(1, not too_big)
        self.tabs.setTabToolTip(
            1, f"Text mode holds up to {TEXT_LIMIT:,} values; use the table" if too_big else ""
        )
        self._sync_text()

    def _show_text(self) -> None:
        self._shown_text = format_tensor(self.model.array)
        self.text.setPlainText(self._shown_text)

    def _sync_text(self) -> None:
        """Show the model's array in the text tab while it is open and not edited there."""
        if self._current_tab == 1 and self.text.toPlainText() == self._shown_text:
            self._show_text()

    def _slice_changed(self) -> None:
        if any(self.model.array.shape[a] == 0 for a in range(len(self.slice_boxes))):
            return
        self.model.set_slice(tuple(b.value() for b in self.slice_boxes))
        self._label_slice()

    def _label_slice(self) -> None:
        indices = ", ".join(str(b.value()) for b in self.slice_boxes)
        self.slice_label.setText(f"showing [{indices}, :, :]")

    # --- actions -------------------------------------------------------------------------
    def _tab_changed(self, index: int) -> None:
        if index == self._current_tab:
            return
        if index == 1:  # table → text
            self._show_text()
        elif not self._take_text():  # text → table, only with valid text
            self.tabs.blockSignals(True)
            self.tabs.setCurrentIndex(1)
            self.tabs.blockSignals(False)
            return
        self._current_tab = index

    def _take_text(self) -> bool:
        """Parse the text tab into the model; False (with the error shown) when invalid.
        Text left as shown keeps the model as it is."""
        text = self.text.toPlainText()
        if text == self._shown_text:
            self.show_error("")
            return True
        try:
            array = parse_tensor_like(text, self.elem_type, self.model.array)
        except ValueSyntaxError as exc:
            self.show_error(f"Text: {exc}")
            return False
        if not self._rank_ok(array.shape):
            return False
        self.model.set_array(array, self.elem_type)
        self._refresh_shape()
        self.show_error("")
        return True

    def _rank_ok(self, shape: tuple[int, ...]) -> bool:
        if self.max_rank is not None and len(shape) != self.max_rank:
            self.show_error(
                f"this value must have exactly {self.max_rank} dimension(s), not {len(shape)}"
            )
            return False
        return True

    def _dtype_changed(self) -> None:
        new_type = int(self.dtype.currentData())
        try:
            array = convert(self.model.array, self.elem_type, new_type)
        except ValueError as exc:
            self.show_error(str(exc))
            self.dtype.blockSignals(True)
            self.dtype.setCurrentIndex(self.dtype.findData(self.elem_type))
            self.dtype.blockSignals(False)
            return
        self.elem_type = new_type
        self.model.set_array(array, new_type)
        self._refresh_shape()
        self.show_error("")

    def apply_shape(self) -> None:
        """Reshape (same element count) or resize (values kept in C order, new ones zero)."""
        try:
            shape = parse_shape(self.shape.text())
        except TensorGenError as exc:
            self.show_error(str(exc))
            return
        if not self._rank_ok(shape):
            return
        old = self.model.array
        if element_count(shape) == old.size:
            new = old.reshape(shape)
        else:
            new = (
                np.zeros(shape, dtype=old.dtype)
                if old.dtype != object
                else np.full(shape, "", object)
            )
            n = min(new.size, old.size)
            new.reshape(-1)[:n] = np.asarray(old).reshape(-1)[:n]
        self.model.set_array(new, self.elem_type)
        self._refresh_shape()
        self.show_error("")

    def paste(self) -> None:
        self.paste_text(QGuiApplication.clipboard().text())

    def paste_text(self, text: str) -> bool:
        """Paste P-2 text or tab/newline-separated cells at the current cell (a P-2 tensor of
        the whole shape replaces everything)."""
        text = text.strip()
        if not text:
            self.show_error("the clipboard holds no text")
            return False
        current = self.table.currentIndex()
        top, left = (current.row(), current.column()) if current.isValid() else (0, 0)
        array = self.model.array
        if text.startswith("["):
            try:
                pasted = parse_tensor(text, self.elem_type)
            except ValueSyntaxError as exc:
                self.show_error(f"Pasted text: {exc}")
                return False
            if pasted.shape == array.shape:
                self.model.set_array(pasted, self.elem_type)
                self._sync_text()
                self.show_error("")
                return True
            if pasted.ndim > 2:
                self.show_error(
                    f"a pasted tensor of shape {list(pasted.shape)} must match {list(array.shape)}"
                )
                return False
            from designer.core.values import format_tensor as fmt

            rows = [
                [fmt(np.asarray(v, pasted.dtype)) for v in np.atleast_1d(row)]
                for row in np.atleast_2d(pasted)
            ]
        else:
            rows = [line.split("\t") for line in text.splitlines()]
        if array.ndim <= 1 and len(rows) == 1 and len(rows[0]) > 1:
            rows = [[cell] for cell in rows[0]]  # a row pasted into a one-column table
        ok = self.model.paste_cells(top, left, rows)
        if ok:
            self._sync_text()
            self.show_error("")
        return ok

    def accept(self) -> None:
        if self.tabs.currentIndex() == 1 and not self._take_text():
            return
        super().accept()


def edit_tensor(
    parent: QWidget | None,
    array: np.ndarray,
    elem_type: int,
    *,
    title: str = "Tensor Editor",
    fixed_type: bool = False,
    max_rank: int | None = None,
) -> tuple[np.ndarray, int] | None:
    """Open the Tensor Editor modally; (values, elem type) when accepted, else None.
    Tests replace this function to avoid a modal dialog."""
    dialog = TensorEditorDialog(
        array, elem_type, title=title, fixed_type=fixed_type, max_rank=max_rank, parent=parent
    )
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    return dialog.array, dialog.elem_type
