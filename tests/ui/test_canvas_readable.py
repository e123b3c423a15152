"""Real exports are readable at first open (issue 15): names at least 8 px high, the graph
inputs in view, F fitting everything, and at every zoom a box shows its type or its category
colour with a legend — never a blank box."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.gui import open_model
from helpers.shared import model
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFontInfo, QImage
from pytestqt.qtbot import QtBot

from designer.core.viewgraph import NodeKind
from designer.ui.canvas import readable
from designer.ui.canvas import style as st
from designer.ui.main_window import MainWindow

#: the dynamo Llama's two inputs lie further apart than the view is wide
REAL = ["squeezenet1_0.torchscript.onnx", "googlenet.dynamo.onnx", "llama_24l_h64.dynamo.onnx"]


def visible(tab: object) -> QRectF:
    view = tab.view  # type: ignore[attr-defined]
    return view.mapToScene(view.viewport().rect()).boundingRect()


@pytest.mark.parametrize("name", REAL)
def test_first_view_is_legible_and_starts_at_the_inputs(
    window: MainWindow, qtbot: QtBot, name: str
) -> None:
    tab = open_model(window, model(name), qtbot)
    view = tab.view
    smallest = min(QFontInfo(st.type_font()).pixelSize(), QFontInfo(st.name_font()).pixelSize())
    assert view.current_zoom() * smallest >= st.MIN_TEXT_PX - 0.01  # text >= 8 px
    shown = visible(tab)
    inputs = [i for i in view.canvas.node_items.values() if i.view.kind == NodeKind.INPUT]
    assert inputs and any(shown.contains(i.sceneBoundingRect().center()) for i in inputs)
    first = view.canvas.graph.nodes[0]  # the first graph input in the model's order
    assert first.kind == NodeKind.INPUT
    assert shown.contains(view.canvas.node_items[first.key].sceneBoundingRect())
    assert not shown.contains(view.canvas.content_rect())  # a tall graph: not squeezed in
    view.fit_to_view()
    assert visible(tab).contains(view.canvas.content_rect())  # F still fits everything


def test_small_graph_opens_whole(window: MainWindow, qtbot: QtBot, resnet_path: Path) -> None:
    tab = open_model(window, resnet_path, qtbot)
    assert readable.first_view(tab.view.canvas, QRectF(0, 0, 4000, 4000).size(), 4.0) is None


def _text_pixels(image: QImage, rect: QRectF) -> int:
    """Pixels in ``rect`` dark enough to be label text (st.TEXT on a light box)."""
    count = 0
    r = rect.toRect().intersected(image.rect())
    for y in range(r.top(), r.bottom(), 1):
        for x in range(r.left(), r.right(), 1):
            if QColor(image.pixel(x, y)).lightness() < 90:
                count += 1
    return count


def test_zoomed_out_boxes_show_their_type_then_colours_with_a_legend(
    window: MainWindow, qtbot: QtBot
) -> None:
    tab = open_model(window, model("squeezenet1_0.torchscript.onnx"), qtbot)
    view = tab.view
    conv = next(i for i in view.canvas.node_items.values() if i.view.op_type == "Conv")
    for zoom, has_text in ((0.45, True), (0.3, True), (0.15, False)):
        view.resetTransform()
        view.scale(zoom, zoom)
        view.centerOn(conv)
        image = view.viewport().grab().toImage()
        box = view.mapFromScene(conv.sceneBoundingRect()).boundingRect()
        inner = QRectF(box).adjusted(6, 4, -6, -4)
        assert (_text_pixels(image, inner) > 4) is has_text, zoom
    assert view.current_zoom() < readable.text_free_zoom()
    legend = dict(readable.legend_entries(view.canvas))
    assert "convolution" in legend and "activation" in legend
    # the legend is drawn in the bottom-left corner of the viewport, in its colours
    image = view.viewport().grab().toImage()
    corner = image.copy(0, image.height() - 120, 200, 120)
    colours = {
        corner.pixelColor(x, y).name()
        for x in range(corner.width())
        for y in range(corner.height())
    }
    assert legend["convolution"].name() in colours
    assert st.compact_label("ConvTranspose", 10) == ""
    assert st.compact_label("Conv", 200) == "Conv"


def test_overview_window_shows_the_graph_and_moves_the_view(
    window: MainWindow, qtbot: QtBot
) -> None:
    from PySide6.QtCore import QPoint, Qt

    from designer.ui.docks.overview import OverviewWidget

    dock = next(d for d in window.docks if d.objectName() == "dock_overview")
    assert not window.tabifiedDockWidgets(dock)  # on by default, in view, not a hidden tab
    widget = dock.widget()
    assert isinstance(widget, OverviewWidget) and widget.view is None
    tab = open_model(window, model("googlenet.dynamo.onnx"), qtbot)
    assert widget.view is tab.view
    widget.resize(160, 400)
    image = widget.grab().toImage()  # paints: the graph and the outline of what is shown
    assert widget._image is not None
    before = visible(tab).center()
    bottom = widget.to_widget(tab.view.canvas.content_rect().bottomLeft())
    target = QPoint(widget.width() // 2, int(bottom.y()) - 5)
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=target)
    after = visible(tab).center()
    assert after.y() > before.y() + 500  # the canvas moved down to where was clicked
    assert abs(widget.to_scene(target.toPointF()).y() - after.y()) < visible(tab).height()
    outline = {image.pixelColor(x, y).name() for x in range(image.width()) for y in range(40)}
    assert "#ff9f1a" in outline
