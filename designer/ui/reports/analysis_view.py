"""The E-1/E-2 analysis of the profile a report tab shows, for the GUI: which profile and
model a tab stands for, the analysis itself (off the GUI thread where it matters), the
report tab's Export, and mapping finding/comparison node names onto a document's keys."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from designer.activities.analysis.analyze import Analysis, analyze
from designer.activities.analysis.profile import ModelMismatchError
from designer.activities.reports.table import Table
from designer.ui.reports.overlay import keys_by_name

if TYPE_CHECKING:
    import onnx

    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow

__all__ = ["ProfileSource", "export_analysis", "keys_for", "source_of"]


@dataclass(frozen=True)
class ProfileSource:
    """What an analysis needs from a report tab."""

    profile: Path
    model: Path | None
    iter_start: int | None
    title: str


def source_of(widget: object) -> ProfileSource | None:
    """The profile behind an ORT or TensorRT report tab (None for any other widget)."""
    from designer.ui.reports.report_tab import ReportTab
    from designer.ui.reports.trt_report_tab import TrtReportTab

    if isinstance(widget, ReportTab):
        runs = len(widget.report.iterations)
        start = min(widget.warmup.value(), max(runs - 1, 0)) if runs else None
        return ProfileSource(widget.profile, widget.model, start, widget.title)
    if isinstance(widget, TrtReportTab) and widget.report.source is not None:
        return ProfileSource(Path(widget.report.source), widget.model, None, widget.title)
    return None


def _model(
    source: ProfileSource, fallback: onnx.ModelProto | None
) -> Path | onnx.ModelProto | None:
    if source.model is not None and source.model.is_file():
        return source.model
    return fallback


def run_analysis(source: ProfileSource, fallback: onnx.ModelProto | None = None) -> Analysis:
    """Analyse the tab's profile (DesignerError / ValueError with one line); mapped onto the
    tab's model, or the open document, unless that is not the profiled model (then with
    no model: nothing is judged against another model's nodes)."""
    try:
        return analyze(source.profile, model=_model(source, fallback), iter_start=source.iter_start)
    except ModelMismatchError:
        return analyze(source.profile, model=None, iter_start=source.iter_start)


def export_analysis(
    widget: object, folder: Path, formats: tuple[str, ...], extra: dict[str, Table]
) -> list[Path]:
    """The report tab's Export: the six analysis reports (range = the tab's warm-up
    setting) plus the tab's own ``extra`` tables (e.g. the timeline), as
    ``<profile_name>_<report>.<ext>``."""
    source = source_of(widget)
    if source is None:
        raise ValueError("this tab shows no profile")
    fallback = None
    overlay = getattr(widget, "overlay_tab", None)
    if overlay is not None:
        fallback = overlay.session.doc.model
    analysis = run_analysis(source, fallback)
    tables = {**analysis.tables(), **extra}
    from designer.activities.analysis.reports import write_reports

    return write_reports(tables, folder, analysis.profile.name, formats)


def keys_for(tab: DocumentTab, names: Iterable[str]) -> list[int]:
    """Node keys of ``tab``'s main graph for the ONNX node names given (unknown skipped)."""
    keys = keys_by_name(tab.session.doc)
    return [keys[n] for n in dict.fromkeys(names) if n in keys]


def best_document(window: MainWindow, names: Iterable[str]) -> DocumentTab | None:
    """The current document if it has any of ``names``, else the open document with most."""
    wanted = list(names)
    current = window.tab()
    if current is not None and keys_for(current, wanted):
        return current
    scored = [(len(keys_for(t, wanted)), i, t) for i, t in enumerate(window.document_tabs())]
    scored = [s for s in scored if s[0] > 0]
    return max(scored, key=lambda s: (s[0], -s[1]))[2] if scored else None
