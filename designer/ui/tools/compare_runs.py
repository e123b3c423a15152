"""Tools > Compare Two Profiles… (SPEC B-3): two profiles of the current model (before/after
a transform, CPU vs CUDA, ORT vs TensorRT) as a faster/slower overlay on its canvas, and
Tools > Clear Comparison Overlay. Nodes are matched by ONNX node name (TensorRT layers
through their ONNX metadata); a node removed in the second run shows as "removed" (green)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from designer.activities.analysis.compare import Comparison, compare_stats
from designer.activities.analysis.profile import ModelMismatchError, load_profile
from designer.activities.analysis.stats import compute_stats
from designer.ui.jobs import Job, start_job_with
from designer.ui.reports.overlay import keys_by_name

if TYPE_CHECKING:
    import onnx

    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow

FILTER = "Profiles (*.json *.log);;All files (*)"


def compare_profiles(a: Path, b: Path, model: onnx.ModelProto | None) -> Comparison:
    """Both profiles mapped onto ``model`` (plain data; runs off the GUI thread)."""
    try:
        sa = compute_stats(load_profile(a, model=model))
        sb = compute_stats(load_profile(b, model=model))
    except ModelMismatchError:  # the open document is not the profiled model: by name only
        sa, sb = compute_stats(load_profile(a)), compute_stats(load_profile(b))
    return compare_stats(sa, sb)


def diff_changes(tab: DocumentTab, cmp: Comparison) -> dict[int, tuple[float, str]]:
    """Node key → (change in -1..1, label): log2 of B/A clamped to ±1 (twice as fast =
    -1, twice as slow = +1); a removed node is -1 "removed"."""
    keys = keys_by_name(tab.session.doc)
    out: dict[int, tuple[float, str]] = {}
    for d in cmp.nodes:
        key = keys.get(d.key)
        if key is None:
            continue
        if d.status == "removed":
            out[key] = (-1.0, "removed")
        elif d.ratio is not None and d.ratio > 0:
            change = max(-1.0, min(1.0, math.log2(d.ratio)))
            out[key] = (change, f"{100.0 * (d.ratio - 1.0):+.0f}%")
    return out


def apply_comparison(window: MainWindow, tab: DocumentTab, cmp: Comparison) -> int:
    """Colour ``tab``'s canvas by the comparison; returns the number of nodes coloured."""
    changes = diff_changes(tab, cmp)
    tab.view.set_diff_overlay(changes or None)
    a, b = cmp.total_a_us, cmp.total_b_us
    ratio = f" ({b / a:.2f}×)" if a > 0 else ""
    faster = sum(1 for c, _l in changes.values() if c < 0)
    window.statusBar().showMessage(
        f"Comparison: {len(changes)} nodes coloured ({faster} faster or removed, "
        f"{len(changes) - faster} slower or equal); node time per iteration "
        f"{a:,.1f} → {b:,.1f} µs{ratio}; {len(cmp.removed)} removed, {len(cmp.added)} added",
        15000,
    )
    return len(changes)


def compare_dialog(window: MainWindow) -> Job | None:
    tab = window.tab()
    if tab is None:
        window.statusBar().showMessage("Open the profiled model first, then compare", 8000)
        return None
    folder = str(tab.session.doc.path.parent) if tab.session.doc.path else ""
    a, _f = QFileDialog.getOpenFileName(window, "Baseline Profile (A)", folder, FILTER)
    if not a:
        return None
    b, _f = QFileDialog.getOpenFileName(
        window, "Profile to Compare (B)", str(Path(a).parent), FILTER
    )
    if not b:
        return None
    return start_comparison(window, tab, Path(a), Path(b))


def start_comparison(window: MainWindow, tab: DocumentTab, a: Path, b: Path) -> Job:
    import onnx

    model = onnx.ModelProto()  # the nodes only (what the mapping reads), copied here
    model.graph.node.extend(tab.session.doc.model.graph.node)

    def done(cmp: Comparison) -> None:
        if tab in window.document_tabs():
            apply_comparison(window, tab, cmp)

    return start_job_with(
        lambda _p, _c: compare_profiles(a, b, model),
        window,
        finished=done,
        failed=lambda text: window.show_error("Cannot compare the profiles", text),
    )


def clear_comparison(window: MainWindow) -> None:
    tab = window.tab()
    if tab is not None:
        tab.view.set_diff_overlay(None)


def install(window: MainWindow) -> None:
    tools = window.menus["Tools"]
    compare = QAction("Compare Two &Profiles…", window)
    compare.setToolTip("Colour the current model by how much faster or slower a second profile was")
    compare.triggered.connect(lambda _c=False: compare_dialog(window))
    clear = QAction("Clear Comparison Overlay", window)
    clear.triggered.connect(lambda _c=False: clear_comparison(window))
    tools.addAction(compare)
    tools.addAction(clear)
    window.actions_by_name["compare_profiles"] = compare
    window.actions_by_name["clear_comparison"] = clear
