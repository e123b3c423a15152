"""Headless image of an engine graph (``onnx-designer engine export-image`` and the Python
API): read the engine's files, lay the graph out and render it offscreen, like
:func:`designer.ui.canvas.headless.export_model_image` does for a model."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from designer.core.errors import DesignerError
from designer.ui.canvas.export import ExportOptions, format_for, render_scene_to_file
from designer.ui.engine.scene import EngineScene


def export_engine_image(
    engine: Path,
    out: Path,
    *,
    profile: Path | None = None,
    background: str = "white",
    grid: bool = False,
    scale: float = 1.0,
) -> tuple[int, int, str]:
    """Write the graph of the engine whose layer JSON is ``engine`` to ``out`` (.png, .jpg or
    .svg), with latency shares when a profile is beside it or given as ``profile``.

    Returns (width, height, message): 0×0 for SVG; message is '' or a note (scaled down).
    Raises DesignerError for bad input. Creates an offscreen QApplication if none exists."""
    from designer.activities.reports.engine_bundle import load_engine, own_profile_only
    from designer.ui.engine.tab import engine_view_of

    if QApplication.instance() is None:
        QApplication(["onnx-designer", "-platform", "offscreen"])
    color = QColor(background)
    if not color.isValid():
        raise DesignerError(
            f"invalid background colour '{background}': use a name (white) or #rrggbb"
        )
    options = ExportOptions(background=color, grid=grid, scale=scale)
    out = Path(out)
    format_for(out, options)  # fail on a bad suffix before reading anything
    given = [Path(engine)] if profile is None else [Path(engine), Path(profile)]
    bundle = own_profile_only(load_engine(given), given)  # not another engine's latencies
    scene = EngineScene(Path(engine))
    scene.show(engine_view_of(bundle))
    message = render_scene_to_file(scene, out, options)
    width = height = 0
    if out.suffix.lower() != ".svg":
        image = QImage(str(out))
        width, height = image.width(), image.height()
    return width, height, message
