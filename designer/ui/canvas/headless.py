"""Headless canvas export (the ``export-image`` command and the Python API): open a model,
lay it out (or read its companion layout), and render the canvas to a file offscreen."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from designer.core.errors import DesignerError
from designer.core.io import open_document
from designer.core.io.companion import LayoutFileError, load_positions
from designer.ui.canvas.export import ExportOptions, format_for, render_scene_to_file
from designer.ui.canvas.placement import layout_graph, needs_full_layout
from designer.ui.canvas.scene import CanvasScene


def export_model_image(
    model: Path,
    out: Path,
    *,
    background: str = "white",
    grid: bool = False,
    grid_color: str = "#e2e5ea",
    scale: float = 1.0,
    show_constants: bool = False,
) -> tuple[int, int, str]:
    """Lay out ``model`` (or use its companion layout file) and write its canvas to ``out``.

    Returns (width, height, message) where message is '' or a note (scaled down, layout
    file ignored). Raises DesignerError for bad input. Creates an offscreen QApplication if
    none exists.
    """
    if QApplication.instance() is None:
        QApplication(["onnx-designer", "-platform", "offscreen"])
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
    doc = open_document(model)
    notes = []
    try:
        load_positions(doc, Path(model))
    except LayoutFileError as exc:
        doc.positions.clear()
        notes.append(str(exc))
    scene = CanvasScene(doc, show_constants=show_constants, show_grid=grid)
    graph = scene.build_graph()
    placement = None
    if needs_full_layout(graph, scene.positions):
        placement = layout_graph(graph, scene.sizes(graph))
    scene.rebuild(graph, placement)
    message = render_scene_to_file(scene, out, options)
    if message:
        notes.append(message)
    width = height = 0
    if out.suffix.lower() != ".svg":
        image = QImage(str(out))
        width, height = image.width(), image.height()
    return width, height, "\n".join(notes)
