"""The dependency list of an activity (SPEC A-3): each dependency with its state on the
target (current, missing, outdated with a warning icon, unavailable) and deployment
progress."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from designer.activities.deploy import DependencyState, DependencyStatus

STATE_TEXT = {
    DependencyState.CURRENT: "current",
    DependencyState.MISSING: "missing — will be deployed",
    DependencyState.OUTDATED: "outdated — will be deployed",
    DependencyState.UNAVAILABLE: "unavailable — install it on the target",
}


class DependencyPanel(QWidget):
    """Rows keyed by dependency key; :meth:`set_status` updates one as checks report."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Dependency", "Status", "Detail"])
        self.tree.setRootIsDecorated(False)
        self.tree.setMinimumHeight(70)
        self.tree.setMaximumHeight(120)
        self.tree.setColumnWidth(0, 230)
        self.tree.setColumnWidth(1, 200)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(True)
        self.message = QLabel()
        self.message.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.message, 1)
        row.addWidget(self.progress)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree, 1)
        layout.addLayout(row)
        self.statuses: dict[str, DependencyStatus] = {}
        self.progress.setVisible(False)

    def _icon(self, state: DependencyState | None) -> QIcon:
        if state is None:
            return QIcon()
        pixmap = {
            DependencyState.CURRENT: QStyle.StandardPixmap.SP_DialogApplyButton,
            DependencyState.MISSING: QStyle.StandardPixmap.SP_MessageBoxWarning,
            DependencyState.OUTDATED: QStyle.StandardPixmap.SP_MessageBoxWarning,
            DependencyState.UNAVAILABLE: QStyle.StandardPixmap.SP_MessageBoxCritical,
        }[state]
        return self.style().standardIcon(pixmap)

    def clear(self, message: str = "") -> None:
        self.tree.clear()
        self.statuses.clear()
        self.message.setText(message)
        self.progress.setVisible(False)

    def set_busy(self, text: str, done: int = 0, total: int = 0) -> None:
        """Show ``text`` with a progress bar (``total`` 0: busy indicator)."""
        self.message.setText(text)
        self.progress.setVisible(True)
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def set_idle(self, text: str) -> None:
        self.message.setText(text)
        self.progress.setVisible(False)

    def set_status(self, done: int, total: int, status: DependencyStatus) -> None:
        """One dependency checked or deployed (``done`` of ``total``)."""
        self.statuses[status.key] = status
        item = self._item(status.key)
        item.setText(0, status.label)
        item.setText(1, STATE_TEXT[status.state])
        item.setIcon(1, self._icon(status.state))
        item.setText(2, status.detail)
        item.setToolTip(2, status.detail)
        if total:
            self.progress.setVisible(True)
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def set_statuses(self, statuses: Sequence[DependencyStatus]) -> None:
        for i, status in enumerate(statuses):
            self.set_status(i + 1, len(statuses), status)

    def _item(self, key: str) -> QTreeWidgetItem:
        for i in range(self.tree.topLevelItemCount()):
            found = self.tree.topLevelItem(i)
            if found is not None and found.data(0, 256) == key:
                return found
        item = QTreeWidgetItem(self.tree)
        item.setData(0, 256, key)
        return item

    def state_of(self, key: str) -> DependencyState | None:
        status = self.statuses.get(key)
        return status.state if status is not None else None

    def needs_deploy(self) -> bool:
        return any(s.state is not DependencyState.CURRENT for s in self.statuses.values())
