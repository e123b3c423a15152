"""Tools > Global Model Modification > Batch Tensor Cast (M-3).

Top panel: every initializer (filter by name and data type); bottom panel: every tensor or
list node attribute (filter by node name, tensor name and data type). Tick any mix, choose
one target type; before anything changes, a preview counts the values that would be
clipped or rounded and asks to go on.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from designer.core.io.stream import DataSink
from designer.core.transforms import (
    CastCandidate,
    CastPreview,
    ConversionCounts,
    cast_tensors,
    list_cast_candidates,
    preview_cast,
    type_name,
)
from designer.core.transforms.dtypes import CASTABLE_TYPES, FLOAT_TYPES
from designer.ui.dialogs.status_dialog import RunState
from designer.ui.dialogs.transform_runner import (
    StreamableWork,
    TransformDialog,
    TransformOutcome,
    TransformWork,
    keep_enter,
    plain_button,
)
from designer.ui.jobs import IsCancelled, Report
from designer.ui.session import DocumentSession

ANY_TYPE = "any type"
Getter = Callable[[CastCandidate], str]


def _shape(c: CastCandidate) -> str:
    return "[" + ", ".join(str(d) for d in c.shape) + "]" if c.shape else "scalar"


def elements(c: CastCandidate) -> int:
    return math.prod(c.shape) if c.shape else 1


class CandidateTable(QWidget):
    """A checkable, filterable table of cast candidates. ``filters`` are (placeholder,
    getter) pairs matched as case-insensitive substrings; a data type combo is added."""

    selectionChanged = Signal()

    def __init__(
        self,
        title: str,
        candidates: list[CastCandidate],
        columns: list[tuple[str, Getter]],
        filters: list[tuple[str, Callable[[CastCandidate], list[str]]]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.candidates = candidates
        self.filter_getters = [get for _label, get in filters]
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        self.title = QLabel(f"<b>{title}</b> ({len(candidates)})")
        head.addWidget(self.title)
        self.filter_edits: list[QLineEdit] = []
        for placeholder, _get in filters:
            edit = QLineEdit()
            edit.setPlaceholderText(placeholder)
            edit.setClearButtonEnabled(True)
            edit.textChanged.connect(self.apply_filters)
            keep_enter(edit)
            head.addWidget(edit, 1)
            self.filter_edits.append(edit)
        self.dtype = QComboBox()
        self.dtype.addItem(ANY_TYPE)
        self.dtype.addItems(sorted({c.dtype_name for c in candidates}))
        self.dtype.setToolTip("Show only tensors of this data type")
        self.dtype.currentTextChanged.connect(self.apply_filters)
        head.addWidget(self.dtype)
        select_all = plain_button("Select Shown")
        select_all.setToolTip("Tick every row the filters show")
        select_all.clicked.connect(lambda: self.check_shown(True))
        clear = plain_button("Clear Shown")
        clear.setToolTip("Untick every row the filters show")
        clear.clicked.connect(lambda: self.check_shown(False))
        head.addWidget(select_all)
        head.addWidget(clear)
        layout.addLayout(head)

        self.table = QTableWidget(len(candidates), len(columns))
        self.table.setHorizontalHeaderLabels([name for name, _get in columns])
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.check_items: list[QTableWidgetItem] = []
        for row, cand in enumerate(candidates):
            for col, (_name, get) in enumerate(columns):
                item = QTableWidgetItem(get(cand))
                if col == 0:
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    item.setCheckState(Qt.CheckState.Unchecked)
                    item.setData(Qt.ItemDataRole.UserRole, cand.key)
                    item.setToolTip(cand.key)
                    self.check_items.append(item)
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()
        self.table.itemChanged.connect(lambda _item: self.selectionChanged.emit())
        self.table.itemActivated.connect(self._toggle)
        layout.addWidget(self.table, 1)
        if not candidates:
            self.table.setToolTip("The model has nothing of this kind to cast")

    def _toggle(self, item: QTableWidgetItem) -> None:
        first = self.check_items[item.row()]
        checked = first.checkState() == Qt.CheckState.Checked
        first.setCheckState(Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked)

    def visible_rows(self) -> list[int]:
        return [r for r in range(self.table.rowCount()) if not self.table.isRowHidden(r)]

    def apply_filters(self) -> None:
        texts = [e.text().strip().lower() for e in self.filter_edits]
        dtype = self.dtype.currentText()
        for row, cand in enumerate(self.candidates):
            shown = dtype in (ANY_TYPE, cand.dtype_name)
            for text, get in zip(texts, self.filter_getters, strict=True):
                if text and not any(text in value.lower() for value in get(cand)):
                    shown = False
            self.table.setRowHidden(row, not shown)

    def check_shown(self, on: bool) -> None:
        state = Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
        self.table.blockSignals(True)
        for row in self.visible_rows():
            self.check_items[row].setCheckState(state)
        self.table.blockSignals(False)
        self.table.viewport().update()
        self.selectionChanged.emit()

    def set_checked(self, keys: set[str]) -> None:
        self.table.blockSignals(True)
        for row, cand in enumerate(self.candidates):
            on = cand.key in keys
            self.check_items[row].setCheckState(
                Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
            )
        self.table.blockSignals(False)
        self.selectionChanged.emit()

    def checked(self) -> list[CastCandidate]:
        return [
            cand
            for row, cand in enumerate(self.candidates)
            if self.check_items[row].checkState() == Qt.CheckState.Checked
        ]


def loss_summary(previews: list[CastPreview], to: int) -> tuple[str, str]:
    """A one-paragraph warning and per-tensor lines for a lossy cast ("" if exact)."""
    total = ConversionCounts()
    lines: list[str] = []
    lossy = 0
    for p in previews:
        total.add(p.counts)
        if p.counts.lossy:
            lossy += 1
            c = p.candidate
            what = c.name if c.kind == "initializer" else f"{c.node or '?'}.{c.name}"
            lines.append(
                f"{what}: {p.counts.clipped:,} clipped, {p.counts.rounded:,} rounded"
                f"{f', {p.counts.flushed:,} flushed to zero' if p.counts.flushed else ''}"
            )
    if not lossy:
        return "", ""
    target = type_name(to)
    text = (
        f"Casting to {target} loses information in {lossy} of {len(previews)} tensor(s): "
        f"{total.clipped:,} value(s) clipped to the {target} range, {total.rounded:,} rounded"
        f"{f' ({total.flushed:,} flushed to zero)' if total.flushed else ''}."
    )
    return text, "\n".join(lines)


def cast_line(counts: dict[str, int]) -> str:
    """The cast's first log line (``cast_tensors``) for the status message, with thousands
    separators as the confirmation box writes its numbers."""
    return (
        f"{counts.get('tensors_cast', 0):,} tensor(s) cast; "
        f"{counts.get('values_clipped', 0):,} value(s) clipped, "
        f"{counts.get('values_rounded', 0):,} rounded; "
        f"{counts.get('casts_inserted', 0):,} Cast node(s) inserted"
    )


class CastDialog(TransformDialog):
    def __init__(self, session: DocumentSession, parent: QWidget | None = None) -> None:
        super().__init__(session, "Batch Tensor Cast", "Cast", "cast", parent)
        self.candidates = list_cast_candidates(session.doc.model)
        inits = [c for c in self.candidates if c.kind == "initializer"]
        attrs = [c for c in self.candidates if c.kind == "attribute"]
        self.initializers = CandidateTable(
            "Initializers",
            inits,
            [
                ("Name", lambda c: c.name),
                ("Type", lambda c: c.dtype_name),
                ("Shape", _shape),
                ("Scope", lambda c: c.scope),
            ],
            [("filter by name", lambda c: [c.name])],
        )
        self.attributes = CandidateTable(
            "Node attributes",
            attrs,
            [
                ("Node", lambda c: c.node or "(unnamed)"),
                ("Attribute", lambda c: c.name),
                ("Tensor", lambda c: c.tensor_name),
                ("Type", lambda c: c.dtype_name),
                ("Shape", _shape),
                ("Scope", lambda c: c.scope),
            ],
            [
                ("filter by node name", lambda c: [c.node]),
                ("filter by tensor name", lambda c: [c.tensor_name, c.name]),
            ],
        )
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.initializers)
        splitter.addWidget(self.attributes)
        self.body.addWidget(splitter, 1)

        row = QHBoxLayout()
        row.addWidget(QLabel("Cast to:"))
        self.target = QComboBox()
        for elem in sorted(CASTABLE_TYPES, key=type_name):
            self.target.addItem(type_name(elem), elem)
        self.target.setCurrentText("float16")
        row.addWidget(self.target)
        self.clip = QCheckBox("Clip floats outside the target range to its largest value")
        self.clip.setChecked(True)
        row.addWidget(self.clip)
        row.addStretch(1)
        self.selected = QLabel()
        row.addWidget(self.selected)
        self.body.addLayout(row)
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.preview.setVisible(False)
        self.preview.setStyleSheet(
            "background:#fff4ce;color:#5c4400;padding:6px;border:1px solid #e0c060;"
        )
        self.body.addWidget(self.preview)
        for table in (self.initializers, self.attributes):
            table.selectionChanged.connect(self._on_selection)
        self.target.currentIndexChanged.connect(self._on_target)
        self._on_target()
        self._on_selection()
        self.resize(900, 720)

    def _on_target(self) -> None:
        floating = int(self.target.currentData()) in FLOAT_TYPES
        self.clip.setEnabled(floating)
        self.clip.setToolTip(
            "Unchecked, such values become ±inf"
            if floating
            else "Only for float targets: integer and bool targets always saturate"
        )
        self.preview.setVisible(False)

    def chosen(self) -> list[CastCandidate]:
        return self.initializers.checked() + self.attributes.checked()

    def _on_selection(self) -> None:
        chosen = self.chosen()
        n_init = sum(1 for c in chosen if c.kind == "initializer")
        total = sum(elements(c) for c in chosen)
        self.selected.setText(
            f"{n_init} initializer(s), {len(chosen) - n_init} attribute(s) selected "
            f"({total:,} values)"
        )
        self.run_button.setEnabled(bool(chosen) and not self.running)
        self.run_button.setToolTip("" if chosen else "Tick at least one tensor to cast")
        self.preview.setVisible(False)

    def prepare(self) -> TransformWork | str:
        chosen = self.chosen()
        if not chosen:
            return "Tick at least one initializer or attribute to cast."
        keys = [c.key for c in chosen]
        to = int(self.target.currentData())
        clip = self.clip.isChecked()
        model, base_dir = self.session.doc.model, self.session.doc.base_dir

        def streamed(
            report: Report, cancelled: IsCancelled, sink: DataSink | None
        ) -> TransformOutcome:
            result = cast_tensors(
                model, keys, to, base_dir, clip=clip, cancel=cancelled, progress=report, sink=sink
            )
            summary = [cast_line(result.log.counts)]
            if result.log.counts.get("casts_inserted"):
                summary.append("Cast nodes were inserted where operators need the old type.")
            return TransformOutcome(result.model, result.log, result.log.title, summary)

        return StreamableWork(streamed)  # written to a file: each cast weight streamed

    def before_run(self, work: TransformWork) -> None:
        """Count what the cast would clip or round (off the GUI thread), warn, then run."""
        keys = [c.key for c in self.chosen()]
        to = int(self.target.currentData())
        model, base_dir = self.session.doc.model, self.session.doc.base_dir

        def preview(report: Report, cancelled: IsCancelled) -> list[CastPreview]:
            report(0.0, "counting values that would change")
            return preview_cast(model, keys, to, base_dir)

        def previewed(previews: list[CastPreview]) -> None:
            text, details = loss_summary(previews, to)
            self.preview.setText(f"⚠ {text}" if text else "The cast is exact: no value changes.")
            self.preview.setVisible(True)
            if text and not self.confirm_loss(text, details):
                return
            self.start(work)

        self.run_job(
            preview,
            previewed,
            lambda message: self.report(RunState.FAILURE, f"{message}\nNothing was changed.", ""),
            lambda: self.report(RunState.CANCELLED, "Nothing was changed.", ""),
            "Checking for precision loss…",
        )

    def confirm_loss(self, text: str, details: str) -> bool:
        """Ask before a lossy cast (a seam for tests)."""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Precision loss",
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        target = self.destination.target()
        box.setInformativeText(
            "Cast anyway? Edit > Undo restores the original values exactly."
            if target is None
            else f"Cast anyway? The result goes to {target.name}; the open document keeps "
            "its original values."
        )
        box.setDetailedText(details)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes
