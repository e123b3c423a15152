"""The TensorRT profile report as a main-window tab (SPEC X-4): engine summary, charts, the
per-layer table (median/mean/min/max, % of total, precision, tactic, ONNX nodes), time per
layer type and per precision, CSV/JSON export, and "Show on Canvas": the profiled model's
nodes coloured by the time of the engine layers they became (a fused layer colours all its
ONNX nodes). Built from the ONNX Runtime report's parts (tables, charts, overlay)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from designer.activities.reports import write_tables
from designer.activities.reports.trt_tables import TrtReport
from designer.ui.reports.charts import bar_chart
from designer.ui.reports.overlay import keys_by_name, overlay_shares
from designer.ui.reports.report_tab import add_report_tab
from designer.ui.reports.table_model import TableWidget

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow

TOP_N = 15
_SUMMARY_KEYS = (
    "Throughput",
    "Latency median",
    "Latency p90",
    "Latency p99",
    "GPU compute mean",
    "H2D mean",
    "D2H mean",
    "Sum of layer means",
    "Layers",
    "TensorRT version",
    "GPU",
    "Profiled iterations",
)


def _fmt(value: object, unit: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        text = f"{value:,.1f}" if unit == "qps" else f"{value:,.4f}"
    else:
        text = str(value)
    return f"{text} {unit}".strip()


def summary_html(report: TrtReport) -> str:
    items = {k: (v, u) for k, v, u in report.summary_items()}
    cells = [(k, _fmt(*items[k])) for k in _SUMMARY_KEYS if k in items]
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td style='color:#5c6370;padding-right:6px'>{html.escape(k)}</td>"
            f"<td style='padding-right:22px'><b>{html.escape(v)}</b></td>"
            for k, v in cells[i : i + 4]
        )
        + "</tr>"
        for i in range(0, len(cells), 4)
    )
    name = report.source.name if report.source is not None else "TensorRT profile"
    return (
        f"<div style='font-size:13pt'><b>TensorRT profile</b> — {html.escape(name)}</div>"
        f"<div style='color:#5c6370'>{html.escape(str(report.source or ''))}</div>"
        f"<table style='margin-top:6px'>{rows}</table>"
    )


def type_shares(report: TrtReport, limit: int = TOP_N) -> list[tuple[str, float]]:
    """Percent of the layers' summed mean time per layer type, largest first (``limit``
    types; see ``group_shares``: from the times, so they sum to 100)."""
    return [(key, percent) for key, _n, _ms, percent in report.group_shares("kind")[:limit]]


class TrtReportTab(QWidget):
    """One TensorRT report; ``model`` is the profiled ONNX model when known (overlay)."""

    def __init__(self, window: MainWindow, report: TrtReport, model: Path | None = None) -> None:
        super().__init__()
        self.window_ = window
        self.report = report
        self.model = model
        self.overlay_tab: DocumentTab | None = None
        self.tables = report.tables()
        self.header = QLabel(summary_html(report))
        self.header.setWordWrap(True)
        self.show_button = QPushButton("Show on Canvas")
        self.show_button.setToolTip(
            "Colour the ONNX nodes by the time of the engine layers they became"
        )
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
        for button in (self.show_button, self.clear_button, csv, js):
            bar.addWidget(button)
        bar.addWidget(self.message, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._charts(), "Charts")
        self.layer_table = TableWidget(self.tables["layers"])
        self.tabs.addTab(self.layer_table, "Layers")
        self.type_table = TableWidget(self.tables["layer_types"])
        self.tabs.addTab(self.type_table, "Layer Types")
        self.precision_table = TableWidget(self.tables["precisions"])
        self.tabs.addTab(self.precision_table, "Precisions")
        self.summary_table = TableWidget(self.tables["summary"])
        self.tabs.addTab(self.summary_table, "Summary")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.header)
        layout.addLayout(bar)
        layout.addWidget(self.tabs, 1)

    @property
    def title(self) -> str:
        name = self.report.source.name if self.report.source is not None else "TensorRT"
        return f"{name.removesuffix('.json')} (TensorRT report)"

    @property
    def profile(self) -> Path:
        """For the main window's tab tooltip (like the ORT report)."""
        return self.report.source or Path("TensorRT profile")

    def _charts(self) -> QWidget:
        top = sorted(self.report.layers, key=lambda r: -(r.mean_ms or 0.0))[:TOP_N]
        layers = [(r.name, (r.mean_ms or 0.0) * 1000.0) for r in top]
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.layer_chart = bar_chart(f"Top {len(layers)} layers (mean time)", layers, "µs")
        self.type_chart = bar_chart("Time per layer type", type_shares(self.report), "%")
        splitter.addWidget(self.layer_chart)
        splitter.addWidget(self.type_chart)
        return splitter

    # --- export -----------------------------------------------------------------------------
    def ask_export_folder(self) -> Path | None:
        start = str(self.report.source.parent) if self.report.source else ""
        chosen = QFileDialog.getExistingDirectory(self, "Export Report Tables To", start)
        return Path(chosen) if chosen else None

    def export(self, formats: tuple[str, ...]) -> list[Path]:
        """Every table as ``<profile>_<table>.<ext>`` in a chosen folder."""
        folder = self.ask_export_folder()
        if folder is None:
            return []
        name = self.profile.name.removesuffix(".json")
        try:
            written = write_tables(self.tables, folder, name, formats)  # type: ignore[arg-type]
        except OSError as exc:
            self.message.setText(f"Export failed: {folder}: {exc.strerror or exc}")
            return []
        self.message.setText(f"Wrote {len(written)} files to {folder}")
        return written

    # --- canvas overlay ---------------------------------------------------------------------
    def document_tab(self) -> DocumentTab | None:
        """The profiled model's document, else the open one sharing most node names."""
        tabs = self.window_.document_tabs()
        if self.model is not None:
            wanted = self.model.resolve()
            for tab in tabs:
                if tab.session.doc.path == wanted:
                    return tab
        names = set(self.report.onnx_node_share())
        scored = [(len(names & set(keys_by_name(t.session.doc))), i) for i, t in enumerate(tabs)]
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
        shares = overlay_shares(tab.session.doc, self.report)
        if not shares:
            self.message.setText(
                f"No engine layer maps to a node of {tab.session.title} (build with detailed "
                "metadata so the layer JSON names the ONNX nodes)."
            )
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


def open_trt_report_tab(
    window: MainWindow, report: TrtReport, model: Path | None = None
) -> TrtReportTab:
    tab = TrtReportTab(window, report, model)
    add_report_tab(window, tab)  # type: ignore[arg-type]
    return tab
