"""A TensorRT engine as a read-only main-window tab: its graph on the canvas (layers coloured
by type, links by precision, reformats marked, latency shares when a profile is loaded), a
legend, and buttons for Fit, Export Image, Load Profile and the Report Card. The Parameters
window shows the selected layer's record (see :mod:`designer.ui.engine.layer_panel`)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from designer.activities.reports.engine_bundle import (
    EngineBundle,
    run_description,
    with_profile,
)
from designer.activities.reports.engine_lint import lint, severity_rank
from designer.activities.reports.engine_view import EngineViewGraph, build_engine_view
from designer.core.errors import DesignerError
from designer.core.scope import MAIN_SCOPE
from designer.ui.canvas.export import ExportOptions
from designer.ui.canvas.settings import CanvasSettings
from designer.ui.engine.items import precision_color, type_color
from designer.ui.engine.layer_panel import IOPanel, LayerPanel, summary_panel
from designer.ui.engine.view import EngineView

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow


def engine_view_of(bundle: EngineBundle) -> EngineViewGraph:
    """The drawable view of ``bundle`` (latencies from its profile when it has one)."""
    latency = None
    if bundle.profile is not None:
        latency = {p.name: p.average_ms for p in bundle.profile.layers if p.average_ms is not None}
    return build_engine_view(bundle.graph, latency, title=bundle.name)


def _swatch(color: str, text: str, line: bool = False) -> str:
    shape = (
        f"<span style='color:{color};font-weight:bold'>━━</span>"
        if line
        else f"<span style='background:{color};color:{color}'>&nbsp;&nbsp;&nbsp;</span>"
    )
    return f"{shape}&nbsp;{html.escape(text)}"


def legend_html(engine: EngineViewGraph) -> str:
    """Layer-type colours and link precisions present in ``engine``, one line each."""
    kinds: dict[str, set[str]] = {}
    for info in engine.info.values():
        if info.layer is not None:
            kinds.setdefault(info.category, set()).add(info.layer.kind)
    types = "&nbsp;&nbsp; ".join(
        _swatch(type_color(c).name(), f"{c} ({', '.join(sorted(k)[:3])})")
        for c, k in sorted(kinds.items())
    )
    precisions = sorted(set(engine.precision.values()))
    links = "&nbsp;&nbsp; ".join(
        _swatch(precision_color(p).name(), p, line=True) for p in precisions
    )
    return f"<b>Layers:</b> {types}<br><b>Tensors:</b> {links}"


class EngineTab(QWidget):
    """One engine (``bundle``). ``parametersChanged`` asks the Parameters window to show
    :meth:`parameters_panel` again (the selection changed)."""

    parametersChanged = Signal()

    def __init__(self, window: MainWindow, bundle: EngineBundle, path: Path) -> None:
        super().__init__()
        self.window_ = window
        self.bundle = bundle
        self.path = path
        self.keys: list[int] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("background:#e8e0f5;color:#3b2a5c;padding:6px;")
        layout.addWidget(self.banner)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        self.buttons: dict[str, QPushButton] = {}
        for name, text, slot, tip in (
            ("fit", "Fit (F)", self.fit, "Show the whole engine"),
            ("actual", "100 %", self.actual_size, "One canvas unit per pixel"),
            ("image", "Export Image…", self.export_dialog, "Write the graph as PNG, JPEG or SVG"),
            ("profile", "Load Profile…", self.profile_dialog, "Add a trtexec --exportProfile JSON"),
            ("report", "Report Card", self.show_report, "Latency, precision and reformat tables"),
            (
                "compare",
                "Compare With…",
                self.compare_dialog,
                "Other engines of this model, side by side",
            ),
        ):
            button = QPushButton(text)
            button.setToolTip(tip)
            button.clicked.connect(lambda _c=False, s=slot: s())
            bar.addWidget(button)
            self.buttons[name] = button
        self.message = QLabel()
        self.message.setStyleSheet("color:#5c6370")
        self.message.setWordWrap(True)  # a refused profile says why in a sentence or two
        self.message.setText("; ".join(bundle.skipped))  # a damaged file found beside it
        bar.addWidget(self.message, 1)
        layout.addLayout(bar)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setStyleSheet("padding:2px 6px;")
        layout.addWidget(self.legend)
        settings = CanvasSettings(show_grid=window.settings.show_grid)
        self.view = EngineView(engine_view_of(bundle), path, settings)
        self.view.selectionChanged.connect(self._selection_changed)
        layout.addWidget(self.view, 1)
        self.findings = 0
        self._mark_findings()
        self._describe()

    # --- what is shown ----------------------------------------------------------------------
    @property
    def title(self) -> str:
        return f"{self.bundle.name} (engine)"

    @property
    def engine(self) -> EngineViewGraph:
        return self.view.engine

    def _describe(self) -> None:
        b = self.bundle
        device = b.device.name if b.device is not None and b.device.name else None
        parts = [
            f"<b>TensorRT engine</b> {html.escape(b.name)} — read-only",
            f"{len(b.graph.layers)} layers",
            f"schema {html.escape(b.version_family)}",
        ]
        if b.trt_version:
            parts.append(f"TensorRT {html.escape(b.trt_version)}")
        if device:
            parts.append(html.escape(device))
        if b.profile is not None:
            parts.append(
                f"profile{self._profile_origin()}: layers sum to {b.profile.sum_average_ms:.3f} ms"
            )
        else:
            parts.append("no profile (Load Profile… adds latencies)")
        if self.findings:
            parts.append(
                f"{self.findings} lint finding(s) marked on the layers (Report Card > Lint)"
            )
        if not b.graph.detailed:
            parts.append("built without detailed profiling verbosity: names only")
        self.banner.setText(" · ".join(parts))
        self.legend.setText(legend_html(self.engine))

    def _profile_origin(self) -> str:
        """`` from x.log (TensorRT 10.16.1 · H100)``: the loaded profile's file and what its run
        recorded where that differs from the engine's own (never shown as the engine's)."""
        b, run = self.bundle, self.bundle.profile_run
        loaded = b.sources.get("profile", [])
        if run is None or not loaded:  # a profile JSON (or the engine's own files)
            return ""
        origin = f" from {html.escape(loaded[0].name)}"
        own_device = b.device.name if b.device is not None else None
        differs = (run.trt_version or None) not in (None, b.trt_version) or (
            run.device is not None and run.device.name not in (None, own_device)
        )
        measured = run_description(run)
        if differs and measured:
            origin += f" (measured with {html.escape(measured)})"
        return origin

    def _mark_findings(self) -> None:
        """Lint findings as marks on their layers (the report card lists them all)."""
        found = lint(self.bundle)
        self.findings = len(found)
        marks: dict[int, tuple[str, list[str]]] = {}
        for finding in found:
            for name in finding.layers:
                key = self.engine.layer_key(name)
                if key is None:
                    continue
                worst, texts = marks.get(key, ("info", []))
                if severity_rank(finding.severity) > severity_rank(worst):
                    worst = finding.severity
                texts.append(f"{finding.severity}: {finding.found}\nfix: {finding.fix}")
                marks[key] = (worst, texts)
        self.view.set_findings({k: (s, "\n".join(t)) for k, (s, t) in marks.items()})

    def set_bundle(self, bundle: EngineBundle) -> None:
        self.bundle = bundle
        self.view.set_engine(engine_view_of(bundle))
        self._mark_findings()
        self._describe()
        self.parametersChanged.emit()

    # --- parameters -------------------------------------------------------------------------
    def _selection_changed(self, keys: list[int]) -> None:
        self.keys = list(keys)
        self.parametersChanged.emit()

    def parameters_panel(self) -> QWidget:
        """What the Parameters window shows for the current selection."""
        if len(self.keys) == 1 and self.keys[0] in self.engine.info:
            info = self.engine.info[self.keys[0]]
            if info.layer is not None:
                return LayerPanel(info, self.find_onnx_tab_title, self.select_onnx_nodes)
            return IOPanel(info)
        if self.keys:
            names = [
                html.escape(self.engine.graph.node(k).name)
                for k in self.keys
                if self.engine.graph.has_node(k)
            ]
            label = QLabel(f"{len(names)} selected: " + ", ".join(names[:20]))
            label.setWordWrap(True)
            return label
        return summary_panel(self.bundle)

    # --- the ONNX model's tab ---------------------------------------------------------------
    def _onnx_tab(self, names: tuple[str, ...]) -> tuple[DocumentTab, list[int]] | None:
        """The open model tab holding most of ``names`` as node names, and their keys."""
        wanted = set(names)
        best: tuple[DocumentTab, list[int]] | None = None
        for tab in self.window_.document_tabs():
            if tab.scope_id != MAIN_SCOPE:
                continue
            keys = [
                k for k, node in tab.session.doc.scope(MAIN_SCOPE).nodes() if node.name in wanted
            ]
            if keys and (best is None or len(keys) > len(best[1])):
                best = (tab, keys)
        return best

    def find_onnx_tab_title(self, names: tuple[str, ...]) -> str | None:
        found = self._onnx_tab(names)
        return None if found is None else found[0].session.title.rstrip("*")

    def select_onnx_nodes(self, names: tuple[str, ...]) -> str:
        """Select the ONNX nodes ``names`` in the open model's tab and show it; returns a
        line saying what happened."""
        found = self._onnx_tab(names)
        if found is None:
            return "No open model has these nodes; open the ONNX model the engine was built from."
        tab, keys = found
        self.window_.tabs.setCurrentWidget(tab)
        tab.view.select_keys(keys)
        tab.view.center_on(keys[0])
        return f"Selected {len(keys)} of {len(names)} nodes in {tab.session.title.rstrip('*')}."

    # --- actions ----------------------------------------------------------------------------
    def fit(self) -> None:
        self.view.fit_to_view()

    def actual_size(self) -> None:
        self.view.reset_zoom()

    def export_dialog(self) -> None:
        start = str(self.path.parent / f"{self.bundle.name}.png")
        name, _ = QFileDialog.getSaveFileName(
            self, "Export Engine Graph", start, "PNG image (*.png);;SVG image (*.svg);;JPEG (*.jpg)"
        )
        if name:
            self.export_image(Path(name))

    def export_image(self, path: Path) -> bool:
        try:
            note = self.view.export_image(path, ExportOptions())
        except DesignerError as exc:
            self.message.setText(str(exc))
            return False
        self.message.setText(note or f"Wrote {path}")
        return True

    def profile_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self,
            "Load Engine Profile",
            str(self.path.parent),
            "Profile JSON (*.json);;All files (*)",
        )
        if name:
            self.load_profile(Path(name))

    def load_profile(self, profile: Path) -> bool:
        """Show the latencies of ``profile`` (a --exportProfile JSON or a trtexec log with
        --dumpProfile) on this engine. Refused, the engine unchanged and the reason in
        :attr:`message`, when it holds no profile or profiles another engine (too few of its
        layers are this engine's); the engine's own TensorRT version and device stay."""
        try:
            bundle, match = with_profile(self.bundle, profile)
        except DesignerError as exc:
            self.message.setText(str(exc))
            return False
        self.set_bundle(bundle)
        text = f"Latencies from {profile.name}"
        if match.missing:
            text += (
                f"; {len(match.missing)} of its {match.profiled} profiled layers are not in "
                "this engine (another build?): they count in the totals only"
            )
        self.message.setText(text)
        return True

    def compare_dialog(self) -> None:
        names, _ = QFileDialog.getOpenFileNames(
            self,
            "Compare With Engines",
            str(self.path.parent.parent),
            "Engine layer information (*.json *.log);;All files (*)",
        )
        if names:
            self.compare_with([Path(n) for n in names])

    def compare_with(self, others: list[Path]) -> None:
        """Open the comparison of this engine (the baseline) with ``others``."""
        from designer.ui.engine.compare_tab import open_compare_tab

        open_compare_tab(self.window_, [self.path, *others])

    def show_report(self) -> None:
        from designer.ui.engine.report_tab import open_report_tab

        open_report_tab(self.window_, self.bundle, self.path)
