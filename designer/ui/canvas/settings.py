"""Canvas settings: what the canvas shows and how it navigates (persisted by the window)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CanvasSettings:
    """Options of one canvas view.

    ``show_grid``: background grid. ``show_constants``: draw Constant nodes (hidden by default;
    the inputs they feed show as initializer-fed). ``async_layout_nodes``: graphs with more
    nodes than this are laid out off the GUI thread with progress and cancel.
    ``overview_items``: when more nodes than this would be visible, the view shows a
    pre-rendered overview instead of painting items (keeps far zoom fast on big graphs).
    """

    show_grid: bool = True
    show_constants: bool = False
    async_layout_nodes: int = 3000
    overview_items: int = 600
    zoom_step: float = 1.25
    min_zoom: float = 1e-5
    max_zoom: float = 8.0


NAVIGATION_HELP = (
    "Canvas controls:\n"
    "  Ctrl + mouse wheel: zoom around the pointer\n"
    "  Mouse wheel / Shift + wheel: scroll vertically / horizontally\n"
    "  Middle-button drag: pan\n"
    "  Right-button drag: zoom into the dragged box (right click: context menu)\n"
    "  Left-button drag on empty canvas: rubber-band selection (Ctrl adds)\n"
    "  Left-button drag on a node: move the selected nodes\n"
    "  Drag from an output circle to an input triangle: connect (replaces the old link)\n"
    "  Click a link, then Delete: disconnect it; Delete on nodes removes them\n"
    "  Ctrl+A select all, Ctrl+C / Ctrl+V copy and paste nodes\n"
    "  F or View > Fit: whole graph; Ctrl+0: 100 %; Ctrl++ / Ctrl+-: zoom\n"
    "  Hover a link: tensor type and shape"
)
