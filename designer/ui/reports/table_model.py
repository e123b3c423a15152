"""Qt views of the plain report :class:`~designer.activities.reports.Table`: a table model,
a sort/filter proxy and a widget with a filter box over a sortable table."""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QTableView, QVBoxLayout, QWidget

from designer.activities.reports.table import Cell, Column, Table

SORT_ROLE = Qt.ItemDataRole.UserRole
_MISSING = float("-inf")
Index = QModelIndex | QPersistentModelIndex


def format_cell(value: Cell, column: Column) -> str:
    """How a cell reads in the GUI: thousands separators, 1-3 decimals by kind."""
    if value is None:
        return "—"
    if isinstance(value, float):
        if column.kind == "percent":
            return f"{value:.2f}"
        if column.unit == "µs":
            return f"{value:,.1f}"
        return f"{value:,.3f}"
    if isinstance(value, int) and column.kind != "text":
        return f"{value:,}"
    return str(value)


class TableModel(QAbstractTableModel):
    """A read-only model over one report Table (numbers sort as numbers)."""

    def __init__(self, table: Table, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = table

    def set_table(self, table: Table) -> None:
        self.beginResetModel()
        self.table = table
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.table.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.table.columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        value = self.table.rows[index.row()][index.column()]
        column = self.table.columns[index.column()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return format_cell(value, column)
        if role == SORT_ROLE:
            if column.kind == "text":
                return "" if value is None else str(value).lower()
            return _MISSING if value is None else float(value)
        if role == Qt.ItemDataRole.TextAlignmentRole and column.kind != "text":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole:
            return super().headerData(section, orientation, role)
        column = self.table.columns[section]
        return f"{column.label} ({column.unit})" if column.unit else column.label


class TableWidget(QWidget):
    """A filter box ("type to filter, any column") over a sortable table view."""

    def __init__(self, table: Table, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = TableModel(table, self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter (any column)…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter_changed)
        self.count = QLabel()
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.setAlternatingRowColors(True)
        self.view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(22)
        self.view.horizontalHeader().setStretchLastSection(True)
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        self.proxy.sort(-1)  # the table's own row order, shown without a sort indicator:
        # enabling sorting put one on the first column, claiming a sort that was not there
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self._update_count()
        self.view.resizeColumnsToContents()

    def set_table(self, table: Table) -> None:
        self.model.set_table(table)
        self._update_count()

    def _filter_changed(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self._update_count()

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.count.setText(f"{total:,} rows" if shown == total else f"{shown:,} of {total:,}")

    def visible_column(self, key: str) -> list[str]:
        """Display texts of one column in view order (tests and copy)."""
        col = self.model.table.column_index(key)
        return [
            str(self.proxy.data(self.proxy.index(r, col))) for r in range(self.proxy.rowCount())
        ]
