"""Findings window (SPEC E-2): the expert system's findings for the profile report last
shown (ONNX Runtime or TensorRT), largest estimated gain first, each with its fix; "Show on
Canvas" selects the nodes a finding concerns in the profiled model's document."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from designer.activities.analysis.analyze import Analysis
from designer.activities.analysis.detectors import Finding
from designer.ui.jobs import Job, start_job_with
from designer.ui.reports.analysis_view import (
    ProfileSource,
    best_document,
    keys_for,
    run_analysis,
    source_of,
)

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

TITLE = "Findings"
_COLUMNS = ("Gain", "Severity", "Problem", "Detector")
_SEVERITY_COLOR = {"high": "#c0392b", "medium": "#d68910", "low": "#2e86c1", "info": "#5c6370"}


class FindingsPanel(QWidget):
    def __init__(self, window: MainWindow, dock: QDockWidget) -> None:
        super().__init__()
        self.window_ = window
        self.dock = dock
        self.analysis: Analysis | None = None
        self.source: ProfileSource | None = None
        self.job: Job | None = None
        self._generation = 0
        self.header = QLabel("Open a profile report to see its findings")
        self.header.setWordWrap(True)
        self.table = QTableWidget(0, len(_COLUMNS))
        self.table.setHorizontalHeaderLabels(_COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setMinimumHeight(40)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(0, 92)
        header.resizeSection(1, 64)
        self.table.itemSelectionChanged.connect(self._selected)
        self.table.doubleClicked.connect(lambda _i: self.show_on_canvas())
        self.detail = QTextBrowser()
        self.detail.setMaximumHeight(110)
        self.show_button = QPushButton("Show on Canvas")
        self.show_button.setToolTip("Select the nodes of this finding in the profiled model")
        self.show_button.setEnabled(False)
        self.show_button.clicked.connect(self.show_on_canvas)
        self.status = QLabel()
        self.status.setStyleSheet("color: palette(mid); padding: 2px;")
        self.status.setWordWrap(True)
        bar = QHBoxLayout()
        bar.addWidget(self.show_button)
        bar.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail)
        layout.addLayout(bar)
        window.tabs.currentChanged.connect(lambda _i: self.follow(window.tabs.currentWidget()))

    # --- following the report tabs ------------------------------------------------------------
    def follow(self, widget: object) -> None:
        """Analyse the report tab that became current; other tabs keep the last findings."""
        source = source_of(widget)
        if source is None or source == self.source:
            return
        spin = getattr(widget, "warmup", None)  # an ORT report's range: follow its changes
        if spin is not None and not spin.property("findings_follow"):
            spin.setProperty("findings_follow", True)
            spin.valueChanged.connect(lambda _v, w=widget: self._range_changed(w))
        self.analyse(source)

    def _range_changed(self, widget: object) -> None:
        if self.window_.tabs.currentWidget() is widget:
            self.follow(widget)

    def analyse(self, source: ProfileSource) -> Job:
        if self.job is not None:
            self.job.cancel()
        self.source = source
        self._generation += 1
        generation = self._generation
        self.header.setText(f"<b>{source.title}</b> — analysing…")
        self.job = start_job_with(
            lambda _p, _c: run_analysis(source),
            self,
            finished=lambda a: self._done(generation, a),
            failed=lambda text: self._failed(generation, text),
        )
        return self.job

    def _done(self, generation: int, analysis: Analysis) -> None:
        if generation == self._generation:
            self.job = None
            self.show_analysis(analysis)

    def _failed(self, generation: int, text: str) -> None:
        if generation == self._generation:
            self.job = None
            self.analysis = None
            self.table.setRowCount(0)
            self.header.setText(f"Cannot analyse the profile: {text}")

    def show_analysis(self, analysis: Analysis) -> None:
        self.analysis = analysis
        stats = analysis.stats
        rng = "" if stats.range is None else f", iterations {stats.range.start}–{stats.range.stop}"
        self.header.setText(
            f"<b>{analysis.profile.name}</b> — {len(analysis.findings)} finding(s); "
            f"{stats.per_iteration_us:,.1f} µs node time per iteration{rng}"
        )
        self.table.setRowCount(len(analysis.findings))
        for row, f in enumerate(analysis.findings):
            gain = "—" if f.gain_us is None else f"{f.gain_us:,.1f} µs"
            if f.gain_percent is not None:
                gain += f" ({f.gain_percent:.0f}%)"
            cells = (gain, f.severity, f.problem, f.detector)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{f.problem}\n\nFix: {f.fix}")
                if column == 1:
                    item.setForeground(Qt.GlobalColor.white)
                    item.setBackground(_color(f.severity))
                if column == 0:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, column, item)
        self.dock.setWindowTitle(f"{TITLE} ({len(analysis.findings)})")
        self.status.setText("" if analysis.findings else "No problems found")
        if analysis.findings:
            self.table.selectRow(0)
        else:
            self.detail.clear()
            self.show_button.setEnabled(False)

    # --- one finding ----------------------------------------------------------------------------
    def current(self) -> Finding | None:
        rows = self.table.selectionModel().selectedRows()
        if self.analysis is None or not rows:
            return None
        return self.analysis.findings[rows[0].row()]

    def _selected(self) -> None:
        f = self.current()
        if f is None:
            self.show_button.setEnabled(False)
            self.detail.clear()
            return
        nodes = ", ".join(f.nodes[:12]) + (
            f" … (+{len(f.nodes) - 12})" if len(f.nodes) > 12 else ""
        )
        self.detail.setHtml(
            f"<b>{f.problem}</b><br><b>Fix:</b> {f.fix}"
            + (f"<br><span style='color:#5c6370'>Nodes: {nodes}</span>" if nodes else "")
        )
        self.show_button.setEnabled(bool(f.nodes))
        self.show_button.setToolTip(
            "Select the nodes of this finding in the profiled model"
            if f.nodes
            else "This finding concerns the whole model, not particular nodes"
        )

    def show_on_canvas(self) -> bool:
        """Select the finding's nodes in the profiled model's document (opened when known
        and not open yet) and centre the first. False with a message when impossible."""
        f = self.current()
        if f is None or not f.nodes:
            return False
        tab = best_document(self.window_, f.nodes)
        model = self.source.model if self.source is not None else None
        if tab is None and model is not None and model.is_file():
            self.window_.open_files([model])
            tab = best_document(self.window_, f.nodes)
        if tab is None:
            self.status.setText("Open the profiled model first: none of these nodes is open.")
            return False
        keys = keys_for(tab, f.nodes)
        self.window_.tabs.setCurrentWidget(tab)
        tab.view.select_keys(keys)
        tab.view.center_on(keys[0])
        missing = len(dict.fromkeys(f.nodes)) - len(keys)
        self.status.setText(
            f"{len(keys)} node(s) selected in {tab.session.title}"
            + (f"; {missing} not in this model (fused or inserted at run time)" if missing else "")
        )
        return True


def _color(severity: str):  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QColor

    return QColor(_SEVERITY_COLOR.get(severity, "#5c6370"))


def create_dock(window: MainWindow) -> QDockWidget:
    dock = QDockWidget(TITLE, window)
    dock.setObjectName("dock_findings")
    panel = FindingsPanel(window, dock)
    dock.setWidget(panel)
    dock.panel = panel  # type: ignore[attr-defined]
    return dock
