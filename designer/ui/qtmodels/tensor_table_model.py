"""A table over one 1-D or 2-D slice of a tensor (the Tensor Editor's grid).

Lazy: cells are formatted only when the view asks for them, so a tensor of millions of values
opens at once. A read-only array (a memory-mapped external tensor) is copied on the first
edit only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from designer.core.errors import ValueSyntaxError
from designer.core.values import format_tensor, parse_tensor

Index = QModelIndex | QPersistentModelIndex


def parse_cell(text: str, elem_type: int) -> Any:
    """One scalar of ``elem_type`` from P-2 ``text``; ValueSyntaxError when it does not fit."""
    value = parse_tensor(text.strip(), elem_type)
    if value.ndim:
        raise ValueSyntaxError(text, 0, "one value, not a list")
    return value[()]


class TensorTableModel(QAbstractTableModel):
    """Rows × columns of the last two axes; ``slice_index`` fixes the leading axes.

    A 0-d tensor is one cell, a 1-D tensor one column. ``errorOccurred`` carries the message
    of a rejected cell edit (the value is left unchanged).
    """

    errorOccurred = Signal(str)
    edited = Signal()

    def __init__(self, array: np.ndarray, elem_type: int, parent: Any = None) -> None:
        super().__init__(parent)
        self._array = array
        self.elem_type = elem_type
        self._slice: tuple[int, ...] = (0,) * max(0, array.ndim - 2)

    # --- data ----------------------------------------------------------------------------
    @property
    def array(self) -> np.ndarray:
        return self._array

    def set_array(self, array: np.ndarray, elem_type: int) -> None:
        self.beginResetModel()
        self._array = array
        self.elem_type = elem_type
        self._slice = (0,) * max(0, array.ndim - 2)
        self.endResetModel()

    @property
    def slice_index(self) -> tuple[int, ...]:
        return self._slice

    def set_slice(self, index: tuple[int, ...]) -> None:
        """Show the 2-D slice ``array[index]`` (one index per leading axis)."""
        if len(index) != len(self._slice):
            raise ValueError(f"expected {len(self._slice)} indices, got {len(index)}")
        for i, (value, dim) in enumerate(zip(index, self._array.shape, strict=False)):
            if not 0 <= value < dim:
                raise ValueError(f"index {value} of axis {i} is outside 0..{dim - 1}")
        self.beginResetModel()
        self._slice = tuple(index)
        self.endResetModel()

    def _position(self, row: int, column: int) -> tuple[int, ...]:
        if self._array.ndim == 0:
            return ()
        if self._array.ndim == 1:
            return (row,)
        return (*self._slice, row, column)

    # --- Qt model ------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            return 0
        return (
            1
            if self._array.ndim == 0
            else int(self._array.shape[-2 if self._array.ndim > 1 else 0])
        )

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            return 0
        return int(self._array.shape[-1]) if self._array.ndim > 1 else 1

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            value = self._array[self._position(index.row(), index.column())]
            return format_tensor(np.asarray(value, dtype=self._array.dtype))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if self._array.ndim < 2 and orientation == Qt.Orientation.Horizontal:
            return "value"
        return str(section)

    def flags(self, index: Index) -> Qt.ItemFlag:
        base = super().flags(index)
        return base | Qt.ItemFlag.ItemIsEditable if index.isValid() else base

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        try:
            scalar = parse_cell(str(value), self.elem_type)
        except ValueSyntaxError as exc:
            self.errorOccurred.emit(f"row {index.row()}, column {index.column()}: {exc}")
            return False
        self._writable()[self._position(index.row(), index.column())] = scalar
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole])
        self.edited.emit()
        return True

    def paste_cells(self, top: int, left: int, rows: list[list[str]]) -> bool:
        """Write a block of cell texts starting at (top, left); all or nothing."""
        if top + len(rows) > self.rowCount() or any(
            left + len(r) > self.columnCount() for r in rows
        ):
            self.errorOccurred.emit(
                f"the pasted block of {len(rows)} row(s) does not fit from row {top},"
                f" column {left} of a {self.rowCount()}×{self.columnCount()} table"
            )
            return False
        parsed: list[tuple[tuple[int, ...], Any]] = []
        for r, cells in enumerate(rows):
            for c, text in enumerate(cells):
                try:
                    parsed.append(
                        (self._position(top + r, left + c), parse_cell(text, self.elem_type))
                    )
                except ValueSyntaxError as exc:
                    self.errorOccurred.emit(f"pasted row {r}, column {c} ({text!r}): {exc}")
                    return False
        target = self._writable()
        for position, scalar in parsed:
            target[position] = scalar
        bottom = top + len(rows) - 1
        right = left + max(len(r) for r in rows) - 1
        self.dataChanged.emit(self.index(top, left), self.index(bottom, right))
        self.edited.emit()
        return True

    def _writable(self) -> np.ndarray:
        if not self._array.flags.writeable or isinstance(self._array, np.memmap):
            self._array = np.array(self._array)
        return self._array
