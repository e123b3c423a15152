"""The dependency list of an activity (SPEC A-3): each dependency with its state on the
target (current, missing, outdated with a warning icon, unavailable), what to do about it
(deployed by the dialog, or per dependency what the user can do) and deployment progress."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from designer.activities.deploy import DependencyState, DependencyStatus

#: The Status column: one word, so it fits beside the icon; what to do goes to the Detail.
STATE_TEXT = {
    DependencyState.CURRENT: "current",
    DependencyState.MISSING: "missing",
    DependencyState.OUTDATED: "outdated",
    DependencyState.UNAVAILABLE: "unavailable",
}
#: What the dialog does about a missing or outdated dependency.
DEPLOY_ADVICE = "will be deployed"
#: What the user can do about a dependency the dialog cannot deploy, by dependency key. Not
#: every one is installed: a GPU is hardware and clock locking is a permission; TensorRT's
#: detail (the detection's reason) and the local onnxruntime's already say what to do.
UNAVAILABLE_ADVICE = {
    "python": "install python3 (with venv) on the target",
    "tensorrt": "",
    "venv": "",
    "gpu": "builds and profiles need an NVIDIA GPU and its driver there",
    "clocks": "optional: runs go ahead unlocked (their times vary more)",
}
DEFAULT_ADVICE = "install it on the target"
DETAIL_COLUMN = 2


def advice(status: DependencyStatus) -> str:
    """What to do about ``status`` ("" when nothing is to be done or its detail says it)."""
    if status.state is DependencyState.UNAVAILABLE:
        return UNAVAILABLE_ADVICE.get(status.key, DEFAULT_ADVICE)
    if status.state in (DependencyState.MISSING, DependencyState.OUTDATED):
        return DEPLOY_ADVICE
    return ""


def detail_text(status: DependencyStatus) -> str:
    """The Detail column: what the check found, then what to do about it."""
    return " — ".join(t for t in (status.detail, advice(status)) if t)


class _WrappedDetail(QStyledItemDelegate):
    """The Detail column's delegate: its size hint wraps the text at the column's width.
    (QTreeView asks for row heights with an empty rect, so a wrapped cell would keep one
    line's height and be cut.)"""

    def __init__(self, tree: QTreeWidget) -> None:
        super().__init__(tree)
        self.tree = tree

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        wrapped = QStyleOptionViewItem(option)
        # A valid rect (the style ignores the width of an empty one); the height is free.
        wrapped.rect = QRect(0, 0, self.tree.columnWidth(index.column()), 1 << 16)
        wrapped.features |= QStyleOptionViewItem.ViewItemFeature.WrapText
        return super().sizeHint(wrapped, index)


class DependencyPanel(QWidget):
    """Rows keyed by dependency key; :meth:`set_status` updates one as checks report."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Dependency", "Status", "Detail"])
        self.tree.setRootIsDecorated(False)
        self.tree.setMinimumHeight(70)
        # Three rows of two wrapped lines each fit without scrolling.
        self.tree.setMaximumHeight(150)
        # Name and status as wide as their text; the detail takes the rest, wrapped, and each
        # row is as tall as its wrapped detail (nothing elided at the dialog's fixed width).
        self.tree.setWordWrap(True)
        self.tree.setUniformRowHeights(False)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.tree.setItemDelegateForColumn(DETAIL_COLUMN, _WrappedDetail(self.tree))
        header = self.tree.header()
        header.setStretchLastSection(True)
        for column in (0, 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        # Row heights are cached by the tree: lay the rows out again (once, after the widths
        # settle) whenever a column's width changes.
        self._relayout = QTimer(self)
        self._relayout.setSingleShot(True)
        self._relayout.setInterval(0)
        self._relayout.timeout.connect(self.tree.doItemsLayout)
        header.sectionResized.connect(lambda *_: self._relayout.start())
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
        detail = detail_text(status)
        item.setText(2, detail)
        tip = f"{status.label}: {STATE_TEXT[status.state]}" + (f" — {detail}" if detail else "")
        for column in range(3):
            item.setToolTip(column, tip)
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
