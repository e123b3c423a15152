"""The Compare view (SPEC B-2): two models side by side on read-only canvases coloured by
the diff, and a table of every change; selecting a row centres both canvases on it."""

from __future__ import annotations

import html
from pathlib import Path

import onnx
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from designer.core.diff import ModelDiff
from designer.core.diff.rows import ChangeRow, change_rows
from designer.core.diff.text import count_text
from designer.ui.canvas.settings import CanvasSettings
from designer.ui.diff.side import COLORS, DiffSide

COLUMNS = ("Change", "Item", "A (before)", "B (after)", "Details")
NAME_WIDTH = 190  # widest a name column starts


def _marks(diff: ModelDiff) -> tuple[dict[int, str], dict[int, str]]:
    a: dict[int, str] = {n.index: "removed" for n in diff.graph.nodes_removed}
    b: dict[int, str] = {n.index: "added" for n in diff.graph.nodes_added}
    for c in diff.graph.nodes_changed:
        a[c.before.index] = b[c.after.index] = "changed"
    return a, b


class DiffTab(QWidget):
    """A tab of the main window (not a document): ``a``/``b`` are the models as shown (they
    must not change while the tab lives: pass copies of live models)."""

    def __init__(
        self,
        diff: ModelDiff,
        a: tuple[str, onnx.ModelProto, Path | None],
        b: tuple[str, onnx.ModelProto, Path | None],
        title: str,
        show_grid: bool = True,
        parent: QWidget | None = None,
        settings: CanvasSettings | None = None,
    ) -> None:
        super().__init__(parent)
        self.diff = diff
        self.title = title
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        head = QHBoxLayout()
        head.setContentsMargins(6, 4, 6, 4)
        self.summary = QLabel(self._summary())
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        head.addWidget(self.summary, 1)
        legend = QLabel(
            " ".join(
                f"<span style='background:{COLORS[k].name()};'>&nbsp;{k}&nbsp;</span>"
                for k in ("added", "removed", "changed")
            )
        )
        legend.setTextFormat(Qt.TextFormat.RichText)
        legend.setToolTip("Node colours: added in B, removed from A, changed between them")
        head.addWidget(legend)
        layout.addLayout(head)
        marks_a, marks_b = _marks(diff)
        split = QSplitter(Qt.Orientation.Vertical)
        sides = QSplitter(Qt.Orientation.Horizontal)
        settings = settings or CanvasSettings(show_grid=show_grid)
        self.left = DiffSide(f"A (before): {a[0]}", a[1], a[2], marks_a, settings)
        self.right = DiffSide(f"B (after): {b[0]}", b[1], b[2], marks_b, settings)
        sides.addWidget(self.left)
        sides.addWidget(self.right)
        split.addWidget(sides)
        self.rows = change_rows(diff, a[1].graph, b[1].graph)
        self.table = self._table()
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([560, 220])
        layout.addWidget(split, 1)

    def _summary(self) -> str:
        d = self.diff
        if d.identical:
            return "<b>The models are identical.</b>"
        parts = [count_text(d.graph) or "main graph identical"]
        if d.opsets:
            parts.append(f"{len(d.opsets)} opset change(s)")
        if d.metadata:
            parts.append(f"{len(d.metadata)} metadata change(s)")
        functions = len(d.functions_added) + len(d.functions_removed) + len(d.functions_changed)
        if functions:
            parts.append(f"{functions} function change(s)")
        notes = "".join(f"<br><i>Note: {html.escape(w)}</i>" for w in d.warnings)
        return (
            f"<b>{d.change_count} difference(s)</b>: {', '.join(parts)}; "
            f"{d.graph.nodes_unchanged} node(s) unchanged. Select a row to show it on both "
            f"canvases.{notes}"
        )

    def _table(self) -> QTableWidget:
        table = QTableWidget(len(self.rows), len(COLUMNS))
        table.setHorizontalHeaderLabels(list(COLUMNS))
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.verticalHeader().setVisible(False)
        table.setWordWrap(False)
        table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        table.setMinimumHeight(120)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
        for r, row in enumerate(self.rows):
            for c, text in enumerate((row.kind, row.item, row.a, row.b, row.details)):
                cell = QTableWidgetItem(text)
                cell.setToolTip(text)
                if c == 0:
                    cell.setBackground(QBrush(COLORS[row.kind]))
                table.setItem(r, c, cell)
        header = table.horizontalHeader()
        table.resizeColumnsToContents()
        for c in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            if table.columnWidth(c) > NAME_WIDTH:  # long names: elided, full text in tooltip
                table.setColumnWidth(c, NAME_WIDTH)
        header.setStretchLastSection(True)
        table.itemSelectionChanged.connect(self._row_selected)
        return table

    def show_row(self, index: int) -> ChangeRow:
        """Centre both canvases on row ``index`` (selecting its nodes)."""
        row = self.rows[index]
        self.left.show_nodes(row.a_nodes, row.a_near)
        self.right.show_nodes(row.b_nodes, row.b_near)
        return row

    def _row_selected(self) -> None:
        selected = self.table.selectionModel().selectedRows()
        if selected:
            self.show_row(selected[0].row())

    def close_tab_requested(self) -> None:
        """The main window is closing the tab: stop layouts, drop the sessions."""
        self.left.close_side()
        self.right.close_side()
