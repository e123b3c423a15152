"""The engine report card as a main-window tab (SPEC X-5, issue 13 point 3): engine summary,
charts (latency by layer type, precision by latency and by count, top layers; layer counts
by type and precision without a profile), tables of
layer types, precisions, reformats, top layers, every layer and the lint findings, CSV/JSON
export. Double-clicking a layer or a finding selects that layer in the engine's graph tab."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from designer.activities.reports.engine_bundle import EngineBundle
from designer.activities.reports.engine_lint import lint
from designer.activities.reports.engine_report import (
    EngineReport,
    Share,
    build_report,
    report_tables,
)
from designer.activities.reports.table import Column, Table, write_tables
from designer.ui.reports.charts import bar_chart
from designer.ui.reports.table_model import TableWidget

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

TOP_N = 10
#: The lint table's Layers column is at most this wide (px), its list elided on one line
#: (the cell's tooltip has all of it), so Found and Fix fit beside it, wrapped.
LINT_LAYERS_WIDTH = 180


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.4f} ms"


def summary_html(report: EngineReport) -> str:
    """The card's header: what engine, where, how fast, and the notes."""
    b = report.bundle
    perf = b.performance
    device = b.device
    cells = [
        ("TensorRT", b.trt_version or f"{b.version_family} schema"),
        ("Device", device.name if device and device.name else "not recorded"),
        (
            "Precision allowed",
            b.build.precision if b.build and b.build.precision else "not recorded",
        ),
        ("Layers", f"{len(b.graph.layers)} ({len(report.reformats)} reformat)"),
        ("Engine latency", _ms(report.engine_latency_ms)),
        ("Sum of layers", _ms(report.layers_sum_ms)),
        (
            "Throughput",
            "—"
            if perf is None or perf.throughput_qps is None
            else f"{perf.throughput_qps:,.1f} /s",
        ),
        (
            "Reformats",
            "—"
            if report.reformat_percent is None
            else f"{report.reformat_percent:.1f} % of the time",
        ),
        ("Weights", f"{report.weights_bytes / 2**20:,.2f} MiB"),
        ("Activations", f"{report.activation_bytes / 2**20:,.2f} MiB"),
    ]
    if perf is not None and perf.latency is not None:
        for p in (90.0, 95.0, 99.0):
            value = perf.latency.percentile(p)
            if value is not None:
                cells.append((f"p{p:g}", _ms(value)))
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td style='color:#5c6370;padding-right:6px'>{html.escape(k)}</td>"
            f"<td style='padding-right:22px;white-space:nowrap'><b>{html.escape(v)}</b></td>"
            for k, v in cells[i : i + 3]
        )
        + "</tr>"
        for i in range(0, len(cells), 3)
    )
    notes = "".join(
        f"<div style='background:#fff4ce;color:#5c4400;padding:4px'>{html.escape(n)}</div>"
        for n in report.notes
    )
    if not report.has_profile:
        notes += (
            "<div style='color:#5c6370'>No per-layer profile: latency columns are empty. Load "
            "one in the engine's tab (Load Profile…) or put &lt;engine&gt;.profile.json beside "
            "it.</div>"
        )
    return (
        f"<div style='font-size:13pt'><b>Engine report card</b> — {html.escape(b.name)}</div>"
        f"<table style='margin-top:6px'>{rows}</table>{notes}"
    )


def lint_table(bundle: EngineBundle) -> Table:
    """The lint findings of ``bundle`` as a table (severity, rule, layers, found, fix)."""
    columns = (
        Column("severity", "Severity"),
        Column("rule", "Rule"),
        Column("layers", "Layers"),
        Column("found", "Found"),
        Column("fix", "Fix"),
    )
    rows = [(f.severity, f.rule, " | ".join(f.layers), f.found, f.fix) for f in lint(bundle)]
    return Table("lint", "Lint findings", columns, rows)  # type: ignore[arg-type]


class _OneLine(QStyledItemDelegate):
    """Draws a cell on one line, elided at the right (its tooltip holds the full text)."""

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        option.features &= ~QStyleOptionViewItem.ViewItemFeature.WrapText
        option.textElideMode = Qt.TextElideMode.ElideRight


def fit_lint_columns(widget: TableWidget) -> None:
    """Lay the lint table out to be read without scrolling sideways: Severity and Rule as
    wide as their text, Layers capped at LINT_LAYERS_WIDTH (one line, elided), Found and
    Fix sharing the rest, wrapped, each row as tall as its text."""
    view, table = widget.view, widget.model.table
    header = view.horizontalHeader()
    layers = table.column_index("layers")
    view.setItemDelegateForColumn(layers, _OneLine(view))
    view.setWordWrap(True)
    view.setTextElideMode(Qt.TextElideMode.ElideRight)
    for key in ("severity", "rule"):
        header.setSectionResizeMode(
            table.column_index(key), QHeaderView.ResizeMode.ResizeToContents
        )
    header.setSectionResizeMode(layers, QHeaderView.ResizeMode.Interactive)
    header.resizeSection(layers, min(header.sectionSize(layers), LINT_LAYERS_WIDTH))
    for key in ("found", "fix"):
        header.setSectionResizeMode(table.column_index(key), QHeaderView.ResizeMode.Stretch)
    # Rows follow the wrapped text whenever the widths change (the window or a column is
    # resized, a scroll bar comes or goes): a ResizeToContents vertical header misses those.
    # Coalesced and run once the layout has settled (during it the widths are not final).
    timer = QTimer(view)
    timer.setSingleShot(True)
    timer.setInterval(0)
    timer.timeout.connect(view.resizeRowsToContents)
    header.sectionResized.connect(lambda *_: timer.start())
    view.resizeRowsToContents()


class EngineReportTab(QWidget):
    """The report card of one engine (``path`` is its layer JSON, for export names)."""

    def __init__(self, window: MainWindow, bundle: EngineBundle, path: Path) -> None:
        super().__init__()
        self.window_ = window
        self.bundle = bundle
        self.path = path
        self.report = build_report(bundle)
        self.tables = {t.name: t for t in report_tables(self.report, TOP_N)}
        self.tables["lint"] = lint_table(bundle)
        self.header = QLabel(summary_html(self.report))
        self.header.setWordWrap(True)
        csv = QPushButton("Export CSV…")
        csv.clicked.connect(lambda: self.export(("csv",)))
        js = QPushButton("Export JSON…")
        js.clicked.connect(lambda: self.export(("json",)))
        graph = QPushButton("Show Engine Graph")
        graph.clicked.connect(self.show_graph)
        self.message = QLabel()
        self.message.setStyleSheet("color:#5c6370")
        bar = QHBoxLayout()
        for button in (csv, js, graph):
            bar.addWidget(button)
        bar.addWidget(self.message, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._charts(), "Charts")
        self.table_widgets: dict[str, TableWidget] = {}
        for name, label in (
            ("layer_types", "Layer Types"),
            ("precision", "Precision"),
            ("reformats", "Reformats"),
            ("top_layers", f"Top {TOP_N}"),
            ("layers", "Layers"),
            ("lint", f"Lint ({len(self.tables['lint'].rows)})"),
            ("summary", "Summary"),
        ):
            widget = TableWidget(self.tables[name])
            if name == "lint":
                fit_lint_columns(widget)
            widget.view.doubleClicked.connect(lambda index, n=name: self._jump(n, index))
            self.table_widgets[name] = widget
            self.tabs.addTab(widget, label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.header)
        layout.addLayout(bar)
        layout.addWidget(self.tabs, 1)

    @property
    def title(self) -> str:
        return f"{self.bundle.name} (report card)"

    def _charts(self) -> QWidget:
        """The charts: shares of the latency by layer type and precision, or of the layer
        count without a profile, the precisions by count (only beside a latency chart: without
        a profile it would repeat the one before) and the slowest layers."""
        r = self.report
        counts = not r.has_profile
        unit, decimals = ("layers", 0) if counts else ("%", 1)

        def shares(items: list[Share]) -> list[tuple[str, float]]:
            return [(s.key, float(s.count) if counts else s.percent or 0.0) for s in items]

        self.charts = {
            "types": bar_chart(
                "Layers by type" if counts else "Latency by layer type",
                shares(r.by_type),
                unit,
                decimals=decimals,
            ),
            "precision": bar_chart(
                "Layers by precision" if counts else "Precision by latency",
                shares(r.by_precision),
                unit,
                decimals=decimals,
            ),
        }
        if not counts:
            self.charts["precision_count"] = bar_chart(
                "Precision by layer count",
                [(s.key, float(s.count)) for s in r.by_precision],
                "layers",
                decimals=0,
            )
        self.charts["top"] = bar_chart(
            f"Top {TOP_N} layers (mean time)",
            [(t.name, 1000.0 * (t.latency_ms or 0.0)) for t in r.top(TOP_N)],
            "µs",
            empty="No per-layer profile: no layer times to rank.",
        )
        widget = QWidget()
        grid = QGridLayout(widget)
        charts = list(self.charts.values())
        for i, chart in enumerate(charts):
            last_alone = i == len(charts) - 1 and i % 2 == 0
            grid.addWidget(chart, i // 2, i % 2, 1, 2 if last_alone else 1)
        return widget

    # --- actions ----------------------------------------------------------------------------
    def engine_tab(self) -> QWidget | None:
        from designer.ui.engine import engine_tabs

        return next(
            (t for t in engine_tabs(self.window_) if t.path.resolve() == self.path.resolve()), None
        )

    def show_graph(self) -> None:
        from designer.ui.engine import open_engine_tab

        open_engine_tab(self.window_, self.path)

    def _jump(self, table: str, index: QModelIndex) -> None:
        widget = self.table_widgets[table]
        source = widget.proxy.mapToSource(index)
        t = self.tables[table]
        key = "layers" if table == "lint" else "name"
        if key not in [c.key for c in t.columns]:
            return
        value = t.rows[source.row()][t.column_index(key)]
        name = str(value).split(" | ")[0] if value else ""
        self.select_layer(name)

    def select_layer(self, name: str) -> bool:
        """Show the engine's graph tab with layer ``name`` selected; False if not drawn."""
        from designer.ui.engine import open_engine_tab

        tab = open_engine_tab(self.window_, self.path)
        key = tab.engine.layer_key(name) if tab is not None else None
        if tab is None or key is None:
            self.message.setText(f"{name}: not a layer of the graph (a profile-only entry)")
            return False
        tab.view.select_keys([key])
        tab.view.center_on(key)
        return True

    def ask_export_folder(self) -> Path | None:
        chosen = QFileDialog.getExistingDirectory(
            self, "Export Report Tables To", str(self.path.parent)
        )
        return Path(chosen) if chosen else None

    def export(self, formats: tuple[str, ...]) -> list[Path]:
        """Write every table as ``<engine>_<table>.<ext>`` into a chosen folder."""
        folder = self.ask_export_folder()
        if folder is None:
            return []
        try:
            written = write_tables(self.tables, folder, self.bundle.name, formats)  # type: ignore[arg-type]
        except OSError as exc:
            self.message.setText(f"Export failed: {folder}: {exc.strerror or exc}")
            return []
        self.message.setText(f"Wrote {len(written)} files to {folder}")
        return written


def open_report_tab(window: MainWindow, bundle: EngineBundle, path: Path) -> EngineReportTab:
    """Show (or focus) the report card of ``bundle`` (a card of an older reading of the same
    engine, before a profile was loaded, is replaced)."""
    index = -1
    for i in range(window.tabs.count()):
        widget = window.tabs.widget(i)
        if isinstance(widget, EngineReportTab) and widget.path.resolve() == path.resolve():
            if widget.bundle is bundle:
                window.tabs.setCurrentIndex(i)
                return widget
            window.tabs.removeTab(i)
            widget.deleteLater()
            index = i
            break
    tab = EngineReportTab(window, bundle, path)
    index = window.tabs.insertTab(index, tab, tab.title)
    window.tabs.setTabToolTip(index, str(path))
    window.tabs.setCurrentIndex(index)
    window.stack.setCurrentWidget(window.tabs)
    return tab
