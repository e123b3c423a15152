"""Export the whole canvas as PNG, JPEG or SVG (File > Export > Canvas As Image, and the
headless ``onnx-designer export-image``).

SVG is vector and always sharp. A raster image larger than MAX_SIDE pixels on a side or
MAX_PIXELS in all is scaled down to fit, and the returned message says so (and suggests
SVG). Selection and hover highlights are not exported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from PySide6.QtCore import QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen

from designer.core.errors import DesignerError
from designer.core.viewgraph import ViewEdge
from designer.ui.canvas import style as st
from designer.ui.canvas.items import EdgeItem
from designer.ui.canvas.scene import CanvasScene

MAX_SIDE = 32_000
MAX_PIXELS = 150_000_000
PADDING = 24.0  # scene units around the graph
_QUOTE = {'"': "&quot;"}
FORMATS = {".png": "png", ".jpg": "jpg", ".jpeg": "jpg", ".svg": "svg"}


@dataclass
class ExportOptions:
    """``format``: "png", "jpg" or "svg" ("" = from the file suffix); ``scale``: pixels per
    scene unit (raster) or the SVG's user units per scene unit."""

    format: str = ""
    background: QColor = field(default_factory=lambda: QColor("white"))
    grid: bool = False
    grid_color: QColor = field(default_factory=lambda: QColor(st.GRID))
    scale: float = 1.0


def format_for(path: Path, options: ExportOptions) -> str:
    """The format to write ``path`` in (``options.format``, else its suffix); DesignerError
    for an unknown one, and for a transparent background in a JPEG."""
    fmt = (options.format or FORMATS.get(path.suffix.lower(), "")).lower().replace("jpeg", "jpg")
    if fmt not in ("png", "jpg", "svg"):
        raise DesignerError(
            f"cannot tell the image format of '{path.name}': use a .png, .jpg or .svg file name"
        )
    if fmt == "jpg" and QColor(options.background).alpha() < 255:
        raise DesignerError(
            "a JPEG image has no transparency (the background would come out black): "
            "choose an opaque background, or write a .png"
        )
    return fmt


def render_scene_to_file(scene: CanvasScene, path: Path, options: ExportOptions) -> str:
    """Render every node and link of ``scene`` to ``path``. Returns '' or a message about
    scaling a too-large raster image down; raises DesignerError when writing fails."""
    fmt = format_for(path, options)
    if not (math.isfinite(options.scale) and options.scale > 0):
        raise DesignerError(f"the scale must be a positive number, not {options.scale}")
    source = scene.content_rect()
    if source.isEmpty():
        source = QRectF(0, 0, 200, 100)
    source = source.adjusted(-PADDING, -PADDING, PADDING, PADDING)
    saved = (scene.background, scene.show_grid, scene.grid_color)
    selected = scene.selectedItems()
    scene.build_nodes()  # a big scene builds its items as they come into view
    if fmt == "svg":
        scene.complete()  # vector output: every link as an item
    hovered = [i for i in scene.built_edge_items.values() if i.hovered]
    scene.background, scene.show_grid = QColor(options.background), options.grid
    scene.grid_color = QColor(options.grid_color)
    scene.clearSelection()
    for item in hovered:
        item.hovered = False
    try:
        if fmt == "svg":
            _write_svg(scene, path, source, options.scale)
            return ""
        return _write_raster(scene, path, source, options.scale, fmt)
    finally:
        scene.background, scene.show_grid, scene.grid_color = saved
        for sel in selected:
            sel.setSelected(True)
        for item in hovered:
            if isinstance(item, EdgeItem):
                item.hovered = True


def raster_size(source: QRectF, scale: float) -> tuple[int, int, float, str]:
    """(width, height, scale actually used, message) for a raster export."""
    w, h = source.width() * scale, source.height() * scale
    factor = min(1.0, MAX_SIDE / max(w, 1.0), MAX_SIDE / max(h, 1.0))
    factor = min(factor, math.sqrt(MAX_PIXELS / max(w * h, 1.0)))
    if factor >= 1.0:
        return max(1, math.ceil(w)), max(1, math.ceil(h)), scale, ""
    used = scale * factor
    width, height = (  # round first: 399.99999 or 400.0000001 must give 400
        max(1, math.ceil(round(source.width() * used, 6))),
        max(1, math.ceil(round(source.height() * used, 6))),
    )
    message = (
        f"The image would be {math.ceil(w):,}×{math.ceil(h):,} pixels, more than the limit of "
        f"{MAX_SIDE:,} pixels a side / {MAX_PIXELS // 1_000_000} megapixels; it was scaled "
        f"down to {width:,}×{height:,} (scale {used:.4g}). Export as SVG for a sharp image "
        "of a graph this large."
    )
    return width, height, used, message


def _write_raster(scene: CanvasScene, path: Path, source: QRectF, scale: float, fmt: str) -> str:
    width, height, _used, message = raster_size(source, scale)
    image_format = QImage.Format.Format_RGB32 if fmt == "jpg" else QImage.Format.Format_ARGB32
    image = QImage(width, height, image_format)
    if image.isNull():
        raise DesignerError(f"not enough memory for a {width}×{height} image; try a smaller scale")
    image.fill(scene.background)
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    queued = scene.pending_links()
    if not queued:
        scene.render(
            painter, QRectF(0, 0, width, height), source, Qt.AspectRatioMode.IgnoreAspectRatio
        )
    else:  # links not built as items yet (a big scene): drawn from their paths, no items
        _render_with_links(scene, painter, QRectF(0, 0, width, height), source, queued)
    painter.end()
    kind = "JPG" if fmt == "jpg" else "PNG"  # str: PySide6 6.11 refuses the bytes its stubs ask
    if not image.save(str(path), kind, 92 if fmt == "jpg" else -1):  # type: ignore[call-overload]
        raise DesignerError(
            f"could not write the image to '{path}' (check the folder exists and is writable)"
        )
    return message


def _render_with_links(
    scene: CanvasScene,
    painter: QPainter,
    target: QRectF,
    source: QRectF,
    queued: list[tuple[ViewEdge, QPainterPath]],
) -> None:
    """What ``scene.render`` draws, with the ``queued`` links (no items yet) drawn from
    their paths with the pens of an unselected EdgeItem, between the background and the
    items: building their items first costs seconds at 100k links."""
    painter.save()
    painter.translate(target.left(), target.top())
    painter.scale(target.width() / source.width(), target.height() / source.height())
    painter.translate(-source.left(), -source.top())
    scene.drawBackground(painter, source)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for implicit, style in ((False, Qt.PenStyle.SolidLine), (True, Qt.PenStyle.DashLine)):
        pen = QPen(st.EDGE, 1.2, style)
        pen.setCosmetic(True)
        painter.setPen(pen)
        draw = painter.drawPath
        for edge, path in queued:
            if edge.implicit is implicit:
                draw(path)
    painter.restore()
    background, grid = scene.background, scene.show_grid
    scene.background, scene.show_grid = QColor(Qt.GlobalColor.transparent), False
    try:  # the background is drawn already: render adds the items only
        scene.render(painter, target, source, Qt.AspectRatioMode.IgnoreAspectRatio)
    finally:
        scene.background, scene.show_grid = background, grid


def _write_svg(scene: CanvasScene, path: Path, source: QRectF, scale: float) -> None:
    from PySide6.QtSvg import QSvgGenerator

    width = max(1, math.ceil(source.width() * scale))
    height = max(1, math.ceil(source.height() * scale))
    tmp = path.with_name(path.name + ".tmp")
    generator = QSvgGenerator()
    generator.setFileName(str(tmp))
    generator.setSize(QSize(width, height))
    generator.setViewBox(QRect(0, 0, width, height))
    generator.setTitle(scene.doc.path.name if scene.doc.path else "ONNX model")
    generator.setDescription("Exported by ONNX Designer")
    painter = QPainter()
    if not painter.begin(generator):
        raise DesignerError(f"could not write the SVG to '{path}'")
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    scene.render(painter, QRectF(0, 0, width, height), source, Qt.AspectRatioMode.IgnoreAspectRatio)
    painter.end()
    try:
        _add_node_titles(tmp, scene, source, width / source.width(), height / source.height())
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise DesignerError(f"could not write the SVG to '{path}': {exc.strerror}") from None


def _add_node_titles(svg: Path, scene: CanvasScene, source: QRectF, sx: float, sy: float) -> None:
    """Give every node box an invisible area with a ``<title>``: its full name and type.
    Labels drawn on the canvas may be elided; the names stay searchable in the file and
    show as tooltips in SVG viewers."""
    text = svg.read_text(encoding="utf-8")
    rows = ['<g id="onnx-designer-nodes" fill="none" stroke="none">']
    for item in scene.node_items.values():
        view = item.view
        title = f"{view.name} ({view.op_type})" if view.op_type else view.name
        x, y = (item.x() - source.left()) * sx, (item.y() - source.top()) * sy
        rows.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{item.width * sx:.1f}" '
            f'height="{item.height * sy:.1f}" pointer-events="all">'
            f"<title>{escape(title, _QUOTE)}</title></rect>"
        )
    rows.append("</g>\n")
    end = text.rfind("</svg>")
    svg.write_text(text[:end] + "\n".join(rows) + text[end:], encoding="utf-8")
