"""Look of the canvas: colours, fonts and node geometry (sizes, terminal positions).

Geometry is computed here once per node change, never in ``paint()``. Terminal ``i`` of
``n`` on a side sits at ``x = width * (i + 1) / (n + 1)``; inputs on the top edge, outputs on
the bottom edge.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cache, lru_cache

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFont, QFontInfo, QFontMetricsF

from designer.core.schema import category_of
from designer.core.viewgraph import NodeKind, TerminalState, ViewNode

OP_HEIGHT = 44.0
IO_HEIGHT = 30.0
MIN_WIDTH = 110.0
MAX_WIDTH = 240.0
TEXT_PAD = 12.0
TERMINAL_SPACING = 18.0
TRIANGLE = 9.0  # side of an input triangle
TRIANGLE_OPTIONAL = 6.0
CIRCLE = 4.5  # radius of an output circle
TERMINAL_HIT = 9.0  # pick radius around a terminal, in scene units
LAYER_GAP = 70.0
NODE_GAP = 36.0
PROXY_W = 96.0  # a graph input drawn once per consumer
PROXY_H = 18.0
PROXY_GAP = 16.0
#: Most room a collapsed module box gives each of its inputs: enough for a stub above it
#: to show the end of its tensor's name (``…eeze_14``), so that a box with eight inputs is
#: 576 wide, not 162 with 14-px blank stubs (see :func:`group_input_spacing`).
GROUP_TAG_SPACING = 64.0
#: A tag is 4 narrower than its terminal spacing, its label 8 narrower than the tag, and
#: an elided text must leave 2 (see :func:`elide`): the spacing that shows a whole label.
_TAG_TEXT_PAD = 14.0
IMPLICIT_INSET = 14.0  # a value read inside a node's subgraphs enters this far from its right

# Level-of-detail thresholds (scale of one scene unit in device pixels).
LOD_TEXT = 0.45  # below: no text (graph-input proxies, badges)
LOD_TERMINALS = 0.25  # below: no terminals, plain boxes in the category colour
MIN_TEXT_PX = 8.0  # no label is drawn smaller than this on screen
COMPACT_TEXT_PX = 9.0  # the one-line label of a box too small for name and type

TERMINAL_COLORS: dict[TerminalState, QColor] = {
    TerminalState.UNCONNECTED: QColor("#2fb344"),
    TerminalState.LINKED: QColor("#1c2f7a"),
    TerminalState.INITIALIZER: QColor("#7cc6f2"),
    TerminalState.OUTER: QColor("#9a6cd1"),
    TerminalState.GROWTH: QColor("#a3a3a3"),
}

CATEGORY_COLORS: dict[str, QColor] = {
    "convolution": QColor("#3f7fd0"),
    "pooling": QColor("#5aa0a8"),
    "activation": QColor("#e0962b"),
    "normalization": QColor("#8a64c8"),
    "math": QColor("#4e9a5b"),
    "logic": QColor("#a08a3c"),
    "tensor/shape": QColor("#7d8793"),
    "control flow": QColor("#c0504d"),
    "quantization": QColor("#b85c9e"),
    "reduction": QColor("#2f8f8a"),
    "recurrent": QColor("#b3633b"),
    "image": QColor("#5f6fb8"),
    "sequence": QColor("#6b8e23"),
    "other": QColor("#8c8c8c"),
}

NODE_FILL = QColor("#fbfbfc")
NODE_BORDER = QColor("#5b6270")
SELECTED = QColor("#ff9f1a")
INPUT_FILL = QColor("#dff3e3")
OUTER_FILL = QColor("#ece3f7")  # a value of an enclosing graph (subgraph tabs)
OUTPUT_FILL = QColor("#fde8d4")
STUB_FILL = QColor("#e4e9f3")  # a stub: a widely read output, drawn at each reader
IO_BORDER = QColor("#6f7a6f")
GROUP_FILL = QColor("#eef1fb")  # a collapsed module scope (designer.core.collapse)
GROUP_COLOR = QColor("#5b6ccf")
TEXT = QColor("#1d2129")
TEXT_DIM = QColor("#5c6370")
EDGE = QColor("#48536b")
EDGE_HOVER = QColor("#e8590c")
ERROR = QColor("#d62828")
WARNING = QColor("#e6a100")
BACKGROUND = QColor("#f4f5f7")
GRID = QColor("#e2e5ea")
GRID_MAJOR = QColor("#d3d7de")
OVERVIEW_NODE = QColor("#8b93a3")


@cache
def name_font() -> QFont:
    font = QFont()
    font.setPointSizeF(8.5)
    font.setBold(True)
    return font


@cache
def type_font() -> QFont:
    font = QFont()
    font.setPointSizeF(7.5)
    return font


@cache
def small_font() -> QFont:
    font = QFont()
    font.setPointSizeF(6.5)
    return font


@cache
def readable_zoom() -> float:
    """The zoom from which a box's name and type are at least MIN_TEXT_PX high on screen
    (about 0.8 at 96 dpi); below it a box shows its type alone, in a screen-sized font."""
    smallest = min(QFontInfo(type_font()).pixelSize(), QFontInfo(name_font()).pixelSize())
    return MIN_TEXT_PX / max(smallest, 1)


@cache
def compact_font() -> QFont:
    font = QFont()
    font.setPixelSize(round(COMPACT_TEXT_PX))
    return font


@lru_cache(maxsize=65536)
def compact_label(text: str, width_px: int) -> str:
    """``text`` elided to ``width_px`` device pixels in the compact font ("" if not even
    two characters and the ellipsis fit). Cached: drawn once per box per frame."""
    metrics = QFontMetricsF(compact_font())
    if metrics.horizontalAdvance(text) <= width_px:
        return text
    elided = metrics.elidedText(text, Qt.TextElideMode.ElideRight, width_px)
    return elided if len(elided) >= 3 else ""


@cache
def _metrics(which: str) -> QFontMetricsF:
    font = {"name": name_font, "type": type_font, "small": small_font}[which]()
    return QFontMetricsF(font)


def category_color(node: ViewNode) -> QColor:
    if node.is_function_call:
        return CATEGORY_COLORS["control flow"]
    return CATEGORY_COLORS.get(category_of(node.op_type, node.domain), CATEGORY_COLORS["other"])


_ADVANCE: dict[str, dict[str, float]] = {"name": {}, "type": {}, "small": {}}
_TYPE_WIDTH: dict[str, float] = {}


def text_width(text: str, which: str = "name") -> float:
    """Width of ``text`` in font ``which`` from cached per-character advances (no kerning:
    within a pixel or two of QFontMetricsF, ~10x cheaper for many short names)."""
    table = _ADVANCE[which]
    try:
        return float(sum(map(table.__getitem__, text)))
    except KeyError:  # a character not seen yet: measure the missing ones once
        _measure(set(text) - table.keys(), which)
        return float(sum(map(table.__getitem__, text)))


def _measure(chars: Iterable[str], which: str) -> None:
    table = _ADVANCE[which]
    metrics = _metrics(which)
    for ch in chars:
        table[ch] = metrics.horizontalAdvance(ch)


def _type_width(op_type: str) -> float:
    width = _TYPE_WIDTH.get(op_type)
    if width is None:
        width = _TYPE_WIDTH[op_type] = text_width(op_type, "type") + 24.0
    return width


_OP, _GROUP = NodeKind.OP, NodeKind.GROUP


def node_size(node: ViewNode) -> tuple[float, float]:
    """Width and height of ``node``'s box: fits its name and op type (up to MAX_WIDTH, longer
    names are elided) and spaces its terminals at least TERMINAL_SPACING apart."""
    text = text_width(node.name)
    kind = node.kind
    if kind is _OP or kind is _GROUP:
        height = OP_HEIGHT
        op_width = _TYPE_WIDTH.get(node.op_type) or _type_width(node.op_type)
        if op_width >= text:
            text = op_width
    else:
        height = IO_HEIGHT
    width = text + 2 * TEXT_PAD
    width = MIN_WIDTH if width <= MIN_WIDTH else MAX_WIDTH if width > MAX_WIDTH else width
    inputs, outputs = len(node.inputs), len(node.outputs)
    spaced = ((inputs if inputs > outputs else outputs) + 1) * TERMINAL_SPACING
    if kind is _GROUP and inputs:
        spaced = max(spaced, (inputs + 1) * group_input_spacing(node))
    return (width if width >= spaced else spaced), height


def tag_text(tensor: str) -> str:
    """What a small tag shows of a tensor name: the part after the last ``/``, less the
    exporter's ``_output_0`` (``/m/model/rotary_emb/Cast_output_0`` → ``Cast``; output 1:
    ``Cast:1``). Elided in the middle, every tag of a TorchScript box read
    ``/m/mode…utput_0``. The whole name is in the tooltip."""
    tail = tensor.rpartition("/")[2] or tensor
    head, sep, index = tail.rpartition("_output_")  # the exporter's "<node>_output_<i>"
    if sep and head and index.isdigit():
        return head if index == "0" else f"{head}:{index}"
    return tail


def group_input_spacing(node: ViewNode) -> float:
    """Room for each input of a collapsed module box: its inputs are mostly stubs (the
    mask, rotary tables and shapes every layer reads), one tag above each, so the box is
    wide enough for the longest :func:`tag_text` of its inputs to show whole, up to
    GROUP_TAG_SPACING (longer ones keep their end). An input with no tensor needs no tag.
    Part of the box size, so the layout (window, ``layout``, ``export-image``) leaves it."""
    longest = max(
        (text_width(tag_text(t.tensor), "small") for t in node.inputs if t.tensor), default=0.0
    )
    if longest <= 0.0:
        return TERMINAL_SPACING
    return max(TERMINAL_SPACING, min(GROUP_TAG_SPACING, math.ceil(longest) + _TAG_TEXT_PAD))


def node_sizes(nodes: Iterable[ViewNode]) -> dict[int, tuple[float, float]]:
    """``{node.key: node_size(node)}`` for a whole graph, the same numbers in about half the
    time: the formula with its look-ups hoisted out of the loop."""
    advance = _ADVANCE["name"].__getitem__
    type_width = _TYPE_WIDTH.get
    pad = 2 * TEXT_PAD
    op, group = _OP, _GROUP
    sizes: dict[int, tuple[float, float]] = {}
    for node in nodes:
        name = node.name
        try:
            text = sum(map(advance, name), 0.0)
        except KeyError:  # a character not measured yet
            text = text_width(name)
        kind = node.kind
        if kind is op or kind is group:
            height = OP_HEIGHT
            op_width = type_width(node.op_type) or _type_width(node.op_type)
            if op_width >= text:
                text = op_width
        else:
            height = IO_HEIGHT
        width = text + pad
        width = MIN_WIDTH if width <= MIN_WIDTH else MAX_WIDTH if width > MAX_WIDTH else width
        inputs, outputs = len(node.inputs), len(node.outputs)
        spaced = ((inputs if inputs > outputs else outputs) + 1) * TERMINAL_SPACING
        if kind is group and inputs:
            spaced = max(spaced, (inputs + 1) * group_input_spacing(node))
        sizes[node.key] = (width if width >= spaced else spaced), height
    return sizes


def elide(
    text: str, which: str, width: float, mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle
) -> str:
    """``text`` shortened with an ellipsis (in the middle, or where ``mode`` says) to fit
    ``width`` pixels (``text`` itself, not a copy, when it fits)."""
    if text_width(text, which) <= width - 2.0:
        return text
    return _metrics(which).elidedText(text, mode, width)


def terminal_x(width: float, index: int, count: int) -> float:
    """x offset of terminal ``index`` of ``count`` on a side of a box ``width`` wide."""
    return width * (index + 1) / (count + 1)


def input_point(pos: QPointF, width: float, slot: int, count: int) -> QPointF:
    """Scene point where a link enters input terminal ``slot`` (tip of the triangle)."""
    return QPointF(pos.x() + terminal_x(width, slot, count), pos.y() - 1.0)


def output_point(pos: QPointF, width: float, height: float, slot: int, count: int) -> QPointF:
    """Scene point where a link leaves output terminal ``slot`` (bottom of the circle)."""
    return QPointF(pos.x() + terminal_x(width, slot, count), pos.y() + height + CIRCLE)
