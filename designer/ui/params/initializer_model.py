"""A table of the initializers of one scope (name, type, shape, size, storage) and the
Qt-free helpers the Initializer Editor uses to find their users."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import onnx
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from designer.core.document import Document
from designer.core.edits import CompoundEdit, Edit, RemoveInitializer, SetNodeInput
from designer.core.io.external import ExternalRef, is_external
from designer.core.scope import ScopeId
from designer.core.tensor_sizes import tensor_nbytes
from designer.core.tensorgen import type_name

Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("Name", "Type", "Shape", "Size", "Storage")


def size_text(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def users_of(doc: Document, scope_id: ScopeId, name: str) -> list[tuple[int, int]]:
    """(node key, input slot) of every input of the scope's nodes reading ``name``."""
    return [
        (key, slot)
        for key, node in doc.scope(scope_id).nodes()
        for slot, tensor in enumerate(node.input)
        if tensor == name
    ]


def delete_edit(doc: Document, scope_id: ScopeId, names: list[str]) -> Edit:
    """Delete initializers and disconnect every input that read them: one undo step."""
    edits: list[Edit] = []
    for name in names:
        for key, slot in sorted(users_of(doc, scope_id, name), key=lambda u: (u[0], -u[1])):
            edits.append(SetNodeInput(scope_id, key, slot, ""))
        edits.append(RemoveInitializer(scope_id, name))
    label = (
        f"Delete initializer {names[0]}" if len(names) == 1 else f"Delete {len(names)} initializers"
    )
    return CompoundEdit(label, edits)


class InitializerTableModel(QAbstractTableModel):
    """One row per initializer of ``scope_id``; :meth:`refresh` after a change."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.tensors: list[onnx.TensorProto] = []
        self._order: tuple[int, Qt.SortOrder] | None = None  # (column, order) of sort()

    def refresh(self, doc: Document | None, scope_id: ScopeId | None) -> None:
        self.beginResetModel()
        self.tensors = []
        if doc is not None and scope_id is not None:
            try:
                proto = doc.scope(scope_id).proto
            except KeyError:
                proto = None
            if isinstance(proto, onnx.GraphProto):
                self.tensors = list(proto.initializer)
        if self._order is not None:
            self._sorted(*self._order)
        self.endResetModel()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows by one key per tensor (a proxy model sorting 30k initializers asks
        for a cell twice per comparison: seconds)."""
        self.layoutAboutToBeChanged.emit()
        before = list(self.tensors)
        self._order = (column, order)
        self._sorted(column, order)
        row_of = {id(t): row for row, t in enumerate(self.tensors)}
        moved = self.persistentIndexList()  # selections follow their rows
        self.changePersistentIndexList(
            moved, [self.index(row_of[id(before[i.row()])], i.column()) for i in moved]
        )
        self.layoutChanged.emit()

    def _sorted(self, column: int, order: Qt.SortOrder) -> None:
        keys: dict[int, Callable[[onnx.TensorProto], Any]] = {
            0: lambda t: t.name,
            1: lambda t: type_name(t.data_type),
            2: lambda t: tuple(t.dims),
            3: tensor_nbytes,
            4: is_external,
        }
        key = keys.get(column)
        if key is not None:
            descending = order == Qt.SortOrder.DescendingOrder
            self.tensors.sort(key=key, reverse=descending)  # stable, like Qt's sort

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.tensors)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        tensor = self.tensors[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return tensor.name
            if column == 1:
                return type_name(tensor.data_type)
            if column == 2:
                return str(list(tensor.dims))
            if column == 3:
                return size_text(tensor_nbytes(tensor))
            return "external" if is_external(tensor) else "embedded"
        if role == Qt.ItemDataRole.ToolTipRole and column == 4 and is_external(tensor):
            ref = ExternalRef.of(tensor)
            return f"{ref.location} at byte {ref.offset}, {ref.length or 'to the end'} bytes"
        if role == Qt.ItemDataRole.UserRole:
            return tensor.name
        return None
