"""The ONNX Runtime profile report as a main-window tab (SPEC R-2, E-1): session summary,
charts, sortable/filterable per-node, per-op-type, per-iteration and timeline tables, CSV/JSON
export, and "Show on Canvas" (the overlay on the profiled model's document)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from designer.activities.reports import ModelNode, model_nodes, parse_ort_profile
from designer.activities.reports.ort_profile import OrtProfileReport
from designer.ui.jobs import Job, start_job_with
from designer.ui.reports.charts import bar_chart
from designer.ui.reports.overlay import name_overlap, overlay_shares
from designer.ui.reports.table_model import TableWidget
from designer.ui.reports.timeline import TimelineWidget

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow

TOP_N = 15


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.3f} ms"


def summary_html(report: OrtProfileReport, profile: Path) -> str:
    s = report.summary
    rate = "—" if s.throughput_per_s is None else f"{s.throughput_per_s:,.1f} /s"
    cells = [
        ("Model load", _ms(s.load_ms)),
        ("Session init", _ms(s.init_ms)),
        ("First run", _ms(s.first_run_ms)),
        ("Median", _ms(s.median_ms)),
        ("p90", _ms(s.p90_ms)),
        ("p99", _ms(s.p99_ms)),
        ("Min", _ms(s.min_ms)),
        ("Max", _ms(s.max_ms)),
        ("Mean", _ms(s.mean_ms)),
        ("Throughput", rate),
        ("Runs", f"{s.measured_runs} measured + {s.warmup_runs} warm-up"),
        ("Nodes", f"{len(report.nodes)} profiled, {len(report.not_in_profile)} not in profile"),
    ]
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td style='color:#5c6370;padding-right:6px'>{k}</td>"
            f"<td style='padding-right:22px'><b>{v}</b></td>"
            for k, v in cells[i : i + 4]
        )
        + "</tr>"
        for i in range(0, len(cells), 4)
    )
    return (
        f"<div style='font-size:13pt'><b>ONNX Runtime profile</b> — {profile.name}</div>"
        f"<div style='color:#5c6370'>{profile}</div><table style='margin-top:6px'>{rows}</table>"
    )


class ReportTab(QWidget):
    """One profile report. ``model`` is the profiled model when known (for the overlay)."""

    def __init__(
        self,
        window: MainWindow,
        profile: Path,
        report: OrtProfileReport,
        model: Path | None = None,
        warmup: int = 0,
        nodes: list[ModelNode] | None = None,
    ) -> None:
        super().__init__()
        self.window_ = window
        self.profile = profile
        self.model = model
        self.report = report
        self.nodes = nodes
        self.job: Job | None = None
        self._generation = 0
        self.overlay_tab: DocumentTab | None = None
        self.header = QLabel()
        self.header.setWordWrap(True)
        # What makes the numbers doubtful (a profile cut off), above everything else.
        self.warning = QLabel()
        self.warning.setWordWrap(True)
        self.warning.setObjectName("report_warning")
        self.warning.setStyleSheet("color:#b5651d;font-weight:bold")
        self.warning.hide()
        self.warmup = QSpinBox()
        self.warmup.setRange(0, 1_000_000)
        self.warmup.setValue(warmup)
        self.warmup.setToolTip("Runs at the start excluded from the statistics (E-3)")
        self.warmup.valueChanged.connect(lambda _v: self.reparse())
        self.show_button = QPushButton("Show on Canvas")
        self.show_button.setToolTip("Colour the profiled model's nodes by their share of time")
        self.show_button.clicked.connect(self.show_on_canvas)
        self.clear_button = QPushButton("Clear Overlay")
        self.clear_button.setEnabled(False)
        self.clear_button.clicked.connect(self.clear_overlay)
        csv = QPushButton("Export CSV…")
        csv.clicked.connect(lambda: self.export(("csv",)))
        js = QPushButton("Export JSON…")
        js.clicked.connect(lambda: self.export(("json",)))
        self.message = QLabel()
        self.message.setStyleSheet("color:#5c6370")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Warm-up runs excluded:"))
        bar.addWidget(self.warmup)
        bar.addSpacing(12)
        for button in (self.show_button, self.clear_button, csv, js):
            bar.addWidget(button)
        bar.addWidget(self.message, 1)
        self.tabs = QTabWidget()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.header)
        layout.addWidget(self.warning)
        layout.addLayout(bar)
        layout.addWidget(self.tabs, 1)
        self.set_report(report)

    @property
    def title(self) -> str:
        return f"{self.profile.name.removesuffix('.json')} (report)"

    # --- content ----------------------------------------------------------------------------
    def set_report(self, report: OrtProfileReport) -> None:
        """Show ``report`` (keeps the inner tab the user was on)."""
        self.report = report
        self.tables = report.tables()
        self.header.setText(summary_html(report, self.profile))
        self.warning.setText("\n".join(f"Warning: {w}" for w in report.warnings))
        self.warning.setVisible(bool(report.warnings))
        current = self.tabs.currentIndex()
        while self.tabs.count():
            widget = self.tabs.widget(0)
            self.tabs.removeTab(0)
            if widget is not None:
                widget.deleteLater()
        self.tabs.addTab(self._charts(report), "Charts")
        self.node_table = TableWidget(self.tables["detail"])
        self.tabs.addTab(self.node_table, "Nodes")
        self.op_table = TableWidget(self.tables["op_type"])
        self.tabs.addTab(self.op_table, "Op Types")
        self.iteration_table = TableWidget(self.tables["iteration"])
        self.tabs.addTab(self.iteration_table, "Iterations")
        timeline = QSplitter(Qt.Orientation.Vertical)
        run = report.typical_run()
        self.timeline = TimelineWidget(report.timeline())
        timeline.addWidget(self.timeline)
        timeline.addWidget(TableWidget(self.tables["timeline"]))
        self.tabs.addTab(timeline, "Timeline" if run is None else f"Timeline (run {run})")
        self.tabs.addTab(TableWidget(self.tables["summary"]), "Summary")
        self.tabs.setCurrentIndex(max(current, 0))

    def _charts(self, report: OrtProfileReport) -> QWidget:
        nodes = [(n.name, n.total_us / max(n.calls, 1)) for n in report.nodes[:TOP_N]]
        ops = [(o.op_type, o.percent) for o in report.op_types[:TOP_N]]
        splitter = QSplitter()
        self.node_chart = bar_chart(f"Top {len(nodes)} nodes (mean time per call)", nodes, "µs")
        self.op_chart = bar_chart("Time per op type", ops, "%")
        splitter.addWidget(self.node_chart)
        splitter.addWidget(self.op_chart)
        return splitter

    def reparse(self, nodes: list[ModelNode] | None = None, then: object = None) -> None:
        """Parse the profile again off the GUI thread (new warm-up range or model nodes)."""
        if nodes is not None:
            self.nodes = nodes
        profile, warmup, model_nodes_ = self.profile, self.warmup.value(), self.nodes
        if self.job is not None:
            self.job.cancel()
        self._generation += 1
        generation = self._generation
        self.job = start_job_with(
            lambda _r, _c: parse_ort_profile(profile, warmup=warmup, model_nodes=model_nodes_),
            self,
            finished=lambda report: self._parsed(generation, report, then),
            failed=lambda text: self._parse_failed(generation, text),
        )
        self.message.setText("Reading the profile…")

    def _parsed(self, generation: int, report: OrtProfileReport, then: object) -> None:
        if generation != self._generation:
            return
        self.job = None
        self.message.setText("")
        self.set_report(report)
        if callable(then):
            then()

    def _parse_failed(self, generation: int, text: str) -> None:
        if generation == self._generation:
            self.job = None
            self.message.setText(f"Cannot read the profile: {text}")

    # --- export -----------------------------------------------------------------------------
    def ask_export_folder(self) -> Path | None:
        start = str(self.profile.parent)
        chosen = QFileDialog.getExistingDirectory(self, "Export Report Tables To", start)
        return Path(chosen) if chosen else None

    def export(self, formats: tuple[str, ...]) -> list[Path]:
        """Write the E-1 reports (summary, detail, op_type, iteration, kernel, expert over
        the warm-up range) and the timeline as ``<profile>_<report>.<ext>`` into a chosen
        folder."""
        from designer.core.errors import DesignerError
        from designer.ui.reports.analysis_view import export_analysis

        folder = self.ask_export_folder()
        if folder is None:
            return []
        try:
            written = export_analysis(self, folder, formats, {"timeline": self.tables["timeline"]})
        except OSError as exc:
            self.message.setText(f"Export failed: {folder}: {exc.strerror or exc}")
            return []
        except (DesignerError, ValueError) as exc:
            self.message.setText(f"Export failed: {exc}")
            return []
        self.message.setText(f"Wrote {len(written)} files to {folder}")
        return written

    # --- canvas overlay -------------------------------------------------------------------------
    def document_tab(self) -> DocumentTab | None:
        """The open document of the profiled model, else the one sharing most node names."""
        tabs = self.window_.document_tabs()
        if self.model is not None:
            wanted = self.model.resolve()
            for tab in tabs:
                if tab.session.doc.path == wanted:
                    return tab
        scored = [(name_overlap(t.session.doc, self.report), i) for i, t in enumerate(tabs)]
        best = max(scored, default=(0, -1))
        return tabs[best[1]] if best[0] > 0 else None

    def show_on_canvas(self) -> None:
        tab = self.document_tab()
        if tab is None and self.model is not None and self.model.is_file():
            self.window_.open_files([self.model])
            self.window_.tabs.setCurrentWidget(self)
            tab = self.document_tab()
        if tab is None:
            where = f" ({self.model} is not there)" if self.model is not None else ""
            self.message.setText(f"Open the profiled model first{where}.")
            return
        self.reparse(model_nodes(tab.session.doc.model), then=lambda t=tab: self._overlay(t))

    def _overlay(self, tab: DocumentTab) -> None:
        if tab not in self.window_.document_tabs():
            return
        shares = overlay_shares(tab.session.doc, self.report)
        if not shares:
            self.message.setText(f"No node of {tab.session.title} matches this profile.")
            return
        tab.view.set_overlay(shares)
        self.overlay_tab = tab
        self.clear_button.setEnabled(True)
        self.message.setText(f"{len(shares)} nodes of {tab.session.title} coloured by time.")
        self.window_.tabs.setCurrentWidget(tab)

    def clear_overlay(self) -> None:
        tab = self.overlay_tab
        if tab is not None and tab in self.window_.document_tabs():
            tab.view.set_overlay(None)
        self.overlay_tab = None
        self.clear_button.setEnabled(False)
        self.message.setText("Overlay cleared.")

    def close_tab_requested(self) -> None:
        """The tab is being closed: stop a re-parse still running."""
        if self.job is not None:
            self.job.cancel()


def add_report_tab(window: MainWindow, tab: ReportTab) -> ReportTab:
    """Show ``tab`` in the main window's tabs (closed like a document, by
    MainWindow.close_tab, which calls the tab's ``close_tab_requested`` if it has one). A
    tab already showing the same report (the one a run opened, then Open Report) is brought
    to the front instead, and ``tab`` is discarded; that one is returned."""
    report = getattr(tab, "report", None)
    for i in range(window.tabs.count()):
        other = window.tabs.widget(i)
        if other is not tab and report is not None and getattr(other, "report", None) is report:
            window.tabs.setCurrentIndex(i)
            window.stack.setCurrentWidget(window.tabs)
            tab.deleteLater()
            return other  # type: ignore[return-value]
    index = window.tabs.addTab(tab, tab.title)
    window.tabs.setTabToolTip(index, str(tab.profile))
    window.tabs.setCurrentIndex(index)
    window.stack.setCurrentWidget(window.tabs)
    return tab


#: Runs at the start of a profile that the report leaves out by default (ORT's first run
#: includes one-off allocation and is a warm-up).
DEFAULT_WARMUP = 1


def _is_tensorrt(path: Path) -> bool:
    """Whether ``path`` starts like a TensorRT profile (as ``onnx-designer report`` tells);
    anything else goes to the ORT reader, which says what is wrong with it."""
    from designer.activities.analysis.profile import NotAProfileError, profile_kind

    try:
        return profile_kind(path) == "tensorrt"
    except NotAProfileError:
        return False


def open_profile(window: MainWindow, profile: Path, model: Path | None = None) -> Job:
    """Read a profile off the GUI thread and show it as a report tab: an ORT profile JSON as
    the ORT report, a TensorRT profile (--exportProfile JSON, TREx ``<engine>.profile.json``,
    trtexec log with --dumpProfile) as the TensorRT report with the layer JSON and timing
    found beside it (:func:`load_profile_report`).

    ``model`` is the profiled model, when known: its node list maps fused profile entries
    back to ONNX nodes and enables "Show on Canvas". A file that cannot be read (or is no
    profile) ends in ``window.show_error`` with the reason; no tab is added."""
    from designer.activities.reports.trt_tables import TrtReport

    def work(
        _report: object, _cancelled: object
    ) -> tuple[OrtProfileReport, list[ModelNode] | None] | TrtReport:
        if _is_tensorrt(profile):
            from designer.activities.reports.trt_tables import load_profile_report

            return load_profile_report(profile)
        nodes = None
        if model is not None and model.is_file():
            from designer.core.io import read_model

            nodes = model_nodes(read_model(model))
        return parse_ort_profile(profile, warmup=DEFAULT_WARMUP, model_nodes=nodes), nodes

    def done(result: tuple[OrtProfileReport, list[ModelNode] | None] | TrtReport) -> None:
        if isinstance(result, TrtReport):
            from designer.ui.reports.trt_report_tab import open_trt_report_tab

            open_trt_report_tab(window, result, model)
            return
        report, nodes = result
        add_report_tab(window, ReportTab(window, profile, report, model, DEFAULT_WARMUP, nodes))

    return start_job_with(
        work,
        window,
        finished=done,
        failed=lambda message: window.show_error("Cannot open the profile", message),
    )
