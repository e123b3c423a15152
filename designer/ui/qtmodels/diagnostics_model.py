"""Diagnostics of a type check (T-1) as a table, and a proxy filtering them by severity and
text."""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QStyle

from designer.core.analysis import CheckResult, Diagnostic, Severity
from designer.core.scope import ScopeId

Index = QModelIndex | QPersistentModelIndex
DIAGNOSTIC_ROLE = int(Qt.ItemDataRole.UserRole) + 1
SEVERITY_ROLE = int(Qt.ItemDataRole.UserRole) + 2
COLUMNS = ("Severity", "Message", "Node", "Code", "Where")
MESSAGE_COLUMN = 1

_ICONS = {
    Severity.ERROR: QStyle.StandardPixmap.SP_MessageBoxCritical,
    Severity.WARNING: QStyle.StandardPixmap.SP_MessageBoxWarning,
    Severity.INFO: QStyle.StandardPixmap.SP_MessageBoxInformation,
}


def severity_icon(severity: Severity) -> QIcon:
    return QApplication.style().standardIcon(_ICONS[severity])


class DiagnosticsModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.diagnostics: list[Diagnostic] = []
        self._icons: dict[Severity, QIcon] = {}

    def set_result(self, result: CheckResult | None) -> None:
        self.beginResetModel()
        self.diagnostics = list(result.diagnostics) if result is not None else []
        self.endResetModel()

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)

    def diagnostic(self, index: Index) -> Diagnostic | None:
        return self.diagnostics[index.row()] if index.isValid() else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.diagnostics)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        d = self.diagnostics[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            where = d.scope_name or "main graph"
            return (d.severity.label, d.message, d.node_name or "—", d.code, where)[column]
        if role == Qt.ItemDataRole.DecorationRole and column == 0:
            icon = self._icons.get(d.severity)
            if icon is None:
                icon = self._icons[d.severity] = severity_icon(d.severity)
            return icon
        if role == Qt.ItemDataRole.ToolTipRole:
            hint = "\nDouble-click to show the node" if d.node_key is not None else ""
            return f"{d}{hint}"
        if role == DIAGNOSTIC_ROLE:
            return d
        if role == SEVERITY_ROLE:
            return int(d.severity)
        return None


class DiagnosticsFilter(QSortFilterProxyModel):
    """Shows diagnostics of the enabled severities whose text contains the filter text (and,
    when ``scope`` is set, that lie in that scope or below it)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.severities: set[Severity] = set(Severity)
        self.text = ""
        self.scope: ScopeId | None = None

    def set_scope(self, scope: ScopeId | None) -> None:
        self.beginFilterChange()
        self.scope = scope
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_severity(self, severity: Severity, shown: bool) -> None:
        self.beginFilterChange()
        if shown:
            self.severities.add(severity)
        else:
            self.severities.discard(severity)
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_text(self, text: str) -> None:
        self.beginFilterChange()
        self.text = text.strip().lower()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        assert isinstance(model, DiagnosticsModel)
        d = model.diagnostics[source_row]
        if d.severity not in self.severities:
            return False
        if self.scope is not None and not d.scope.is_within(self.scope):
            return False
        if not self.text:
            return True
        haystack = f"{d.message} {d.node_name} {d.code} {d.scope_name} {d.tensor}".lower()
        return self.text in haystack
