"""Two or more engines side by side as a main-window tab (SPEC X-5, issue 13 point 5): a
summary (latency, Δ against the first, layer count, precision mix), latency by layer type
per engine with deltas, layers matched through their ONNX node names, charts and CSV/JSON
export. The first engine is the baseline."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from designer.activities.reports.engine_bundle import EngineBundle, load_engine
from designer.activities.reports.engine_compare import (
    EngineComparison,
    compare_engines,
    comparison_tables,
)
from designer.activities.reports.table import write_tables
from designer.core.errors import DesignerError
from designer.ui.reports.charts import bar_chart
from designer.ui.reports.table_model import TableWidget

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow


def comparison_html(cmp: EngineComparison) -> str:
    """One line per engine: latency and its change against the first engine."""
    base = cmp.latency(0)
    lines = []
    for i, name in enumerate(cmp.names):
        lat = cmp.latency(i)
        text = "no latency recorded" if lat is None else f"{lat:.4f} ms"
        if i and lat is not None and base:
            change = 100.0 * (lat - base) / base
            word = "faster" if change < 0 else "slower"
            text += f" — {abs(change):.1f} % {word} than {html.escape(cmp.names[0])}"
        lines.append(f"<b>{html.escape(name)}</b>: {text}")
    return "<div style='font-size:13pt'><b>Engine comparison</b></div>" + "<br>".join(lines)


class EngineCompareTab(QWidget):
    """The comparison of ``bundles`` (first = baseline)."""

    def __init__(self, window: MainWindow, bundles: Sequence[EngineBundle]) -> None:
        super().__init__()
        self.window_ = window
        self.bundles = list(bundles)
        self.comparison = compare_engines(self.bundles)
        self.tables = {t.name: t for t in comparison_tables(self.comparison)}
        self.header = QLabel(comparison_html(self.comparison))
        self.header.setWordWrap(True)
        csv = QPushButton("Export CSV…")
        csv.clicked.connect(lambda: self.export(("csv",)))
        js = QPushButton("Export JSON…")
        js.clicked.connect(lambda: self.export(("json",)))
        self.message = QLabel()
        self.message.setStyleSheet("color:#5c6370")
        bar = QHBoxLayout()
        bar.addWidget(csv)
        bar.addWidget(js)
        bar.addWidget(self.message, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._charts(), "Charts")
        self.table_widgets = {}
        for name, label in (
            ("summary", "Summary"),
            ("layer_types", "Layer Types"),
            ("matched_layers", "Matched Layers"),
        ):
            self.table_widgets[name] = TableWidget(self.tables[name])
            self.tabs.addTab(self.table_widgets[name], label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.header)
        layout.addLayout(bar)
        layout.addWidget(self.tabs, 1)

    @property
    def title(self) -> str:
        return " vs ".join(self.comparison.names) + " (compare)"

    def _charts(self) -> QWidget:
        cmp = self.comparison
        latency = [(n, 1000.0 * (cmp.latency(i) or 0.0)) for i, n in enumerate(cmp.names)]
        self.charts: dict[str, QWidget] = {
            "latency": bar_chart("Engine latency", latency, "µs", use_qtcharts=False)
        }
        for i, name in enumerate(cmp.names):
            if not cmp.reports[i].has_profile:
                continue
            bars = [(kind, 1000.0 * (lats[i] or 0.0)) for kind, lats in cmp.type_latency().items()]
            bars.sort(key=lambda b: -b[1])
            self.charts[f"types_{i}"] = bar_chart(
                f"{name}: latency by type", bars, "µs", use_qtcharts=False
            )
        mix = cmp.precision_mix()
        for i, name in enumerate(cmp.names[:3]):
            bars = sorted(((p, float(c[i])) for p, c in mix.items() if c[i]), key=lambda b: -b[1])
            self.charts[f"precision_{i}"] = bar_chart(
                f"{name}: precision", bars, "layers", use_qtcharts=False
            )
        widget = QWidget()
        grid = QGridLayout(widget)
        charts = list(self.charts.values())
        grid.addWidget(charts[0], 0, 0, 1, 2)  # the engines' latency across the top
        for i, chart in enumerate(charts[1:]):
            grid.addWidget(chart, 1 + i // 2, i % 2)
        return widget

    def ask_export_folder(self) -> Path | None:
        start = self.bundles[0].graph.source
        chosen = QFileDialog.getExistingDirectory(
            self, "Export Comparison Tables To", str(start.parent) if start else ""
        )
        return Path(chosen) if chosen else None

    def export(self, formats: tuple[str, ...]) -> list[Path]:
        """Write every table as ``compare_<table>.<ext>`` into a chosen folder."""
        folder = self.ask_export_folder()
        if folder is None:
            return []
        try:
            written = write_tables(self.tables, folder, "compare", formats)  # type: ignore[arg-type]
        except OSError as exc:
            self.message.setText(f"Export failed: {folder}: {exc.strerror or exc}")
            return []
        self.message.setText(f"Wrote {len(written)} files to {folder}")
        return written


def open_compare_tab(window: MainWindow, paths: Sequence[Path]) -> EngineCompareTab | None:
    """Compare the engines whose layer JSONs are ``paths`` (two or more; files beside each are
    read too). A file that is not an engine's: ``window.show_error``, returns None."""
    if len(paths) < 2:
        window.show_error("Cannot compare engines", "choose at least two engines' layer JSON files")
        return None
    try:
        bundles = [load_engine(Path(p)) for p in paths]
    except DesignerError as exc:
        window.show_error("Cannot compare engines", str(exc))
        return None
    tab = EngineCompareTab(window, bundles)
    index = window.tabs.addTab(tab, tab.title)
    window.tabs.setTabToolTip(index, "\n".join(str(p) for p in paths))
    window.tabs.setCurrentIndex(index)
    window.stack.setCurrentWidget(window.tabs)
    return tab
