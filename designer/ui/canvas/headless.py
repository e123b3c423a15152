"""Headless canvas export (the ``export-image`` command and the Python API): open a model,
lay it out (or read its companion layout), and render the canvas to a file offscreen."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QImageReader
from PySide6.QtWidgets import QApplication

from designer.core.collapse import collapse_graph, groups_below, parse_depth
from designer.core.errors import DesignerError
from designer.core.hierarchy import build_hierarchy
from designer.core.io import open_document
from designer.core.io.companion import LayoutFileError, load_positions, scope_label
from designer.core.scope import MAIN_SCOPE
from designer.ui.canvas.export import ExportOptions, format_for, render_scene_to_file
from designer.ui.canvas.placement import layout_graph, needs_full_layout
from designer.ui.canvas.scene import CanvasScene


def headless_scene(
    model: Path,
    *,
    scope: str | None = None,
    show_constants: bool = False,
    show_grid: bool = False,
    collapse: str | None = None,
) -> tuple[CanvasScene, list[str]]:
    """The scene the canvas would show for ``model`` (its saved layout, else a fresh one) at
    ``scope`` (a layout-file scope path such as ``main/If_0/then_branch``; default main), and
    notes (a layout file ignored). ``collapse`` (a depth, or ``auto``) keeps that many levels
    of the module-scope tree open and draws each deeper group as one box (laid out afresh);
    without it, groups the layout file saved as collapsed are drawn collapsed.
    Needs a QApplication; DesignerError for bad input."""
    doc = open_document(model)
    notes = []
    try:
        load_positions(doc, Path(model))
    except LayoutFileError as exc:
        doc.clear_positions()
        notes.append(str(exc))
    scope_id = MAIN_SCOPE
    if scope is not None:
        by_label = {scope_label(doc, s.id): s.id for s in doc.scopes()}
        if scope not in by_label:
            known = ", ".join(sorted(by_label)[:8])
            raise DesignerError(f"{model}: no graph scope {scope!r} (scopes: {known})")
        scope_id = by_label[scope]
    scene = CanvasScene(doc, scope_id, show_constants=show_constants, show_grid=show_grid)
    graph = scene.build_graph()
    placement = None
    if collapse is not None:  # replaces a collapsed state saved in the layout file
        scene.collapsed = set()
        graph = scene.build_graph()
        hierarchy = build_hierarchy(doc, scope_id)
        try:
            depth = parse_depth(collapse, graph, hierarchy)
        except ValueError as exc:
            raise DesignerError(str(exc)) from None
        graph = collapse_graph(graph, hierarchy, groups_below(hierarchy, depth))
        scene.set_positions({}, replace=True)  # those of the expanded graph do not fit boxes
        notes.append(f"collapsed to depth {depth}: {len(graph.nodes)} boxes")
    sizes = scene.sizes(graph)
    if needs_full_layout(graph, scene.positions):
        placement = layout_graph(graph, sizes)
    scene.rebuild(graph, placement, sizes)
    return scene, notes


def ensure_app() -> None:
    """An offscreen QApplication for headless work, unless one exists."""
    if QApplication.instance() is None:
        QApplication(["onnx-designer", "-platform", "offscreen"])


def export_model_image(
    model: Path,
    out: Path,
    *,
    background: str = "white",
    grid: bool = False,
    grid_color: str = "#e2e5ea",
    scale: float = 1.0,
    show_constants: bool = False,
    collapse: str | None = None,
) -> tuple[int, int, str]:
    """Lay out ``model`` (or use its companion layout file) and write its canvas to ``out``.

    Returns (width, height, message) where message is '' or a note (scaled down, layout
    file ignored). Raises DesignerError for bad input. Creates an offscreen QApplication if
    none exists.
    """
    ensure_app()
    colors = {}
    for label, text in (("background", background), ("grid colour", grid_color)):
        color = QColor(text)
        if not color.isValid():
            raise DesignerError(f"invalid {label} '{text}': use a name (white) or #rrggbb")
        colors[label] = color
    options = ExportOptions(
        background=colors["background"], grid=grid, grid_color=colors["grid colour"], scale=scale
    )
    format_for(out, options)  # fail on a bad suffix before the (slow) layout
    scene, notes = headless_scene(
        model, show_constants=show_constants, show_grid=grid, collapse=collapse
    )
    message = render_scene_to_file(scene, out, options)
    if message:
        notes.append(message)
    width = height = 0
    if out.suffix.lower() != ".svg":  # the header only: a big image is not read again
        size = QImageReader(str(out)).size()
        width, height = size.width(), size.height()
    return width, height, "\n".join(notes)
