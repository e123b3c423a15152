"""Opening and folding boxes with their real sizes: a module box is as wide as its input
tags need (``style.group_input_spacing``: up to 64 per input, 448 for the Llama's `model`
with 6 inputs, 576 for a layer), not the 120 the room-making took. Folding pushes aside
what the box would cover on its row, just clear of it; opening gives that back; nothing
overlaps, and what lies above never moves (README: "Collapse and expand on the canvas")."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from designer.core.collapse import group_key
from designer.ui.canvas import style as st
from designer.ui.canvas.collapse_view import (
    BOX_WIDTH,
    collapse_group,
    collapse_to_depth,
    expand_group,
)
from designer.ui.canvas.view import CanvasView
from designer.ui.main_window import MainWindow
from tests.helpers.gui import open_model
from tests.helpers.shared import model

Position = tuple[float, float]


def _view(window: MainWindow, qtbot: QtBot, name: str) -> CanvasView:
    return open_model(window, model(name), qtbot).view


def _overlaps(view: CanvasView) -> list[tuple[str, str]]:
    """Pairs of drawn boxes and nodes (stubs aside) whose item rectangles intersect."""
    scene = view.canvas
    scene.build_all()
    items = sorted(
        (i for i in scene.node_items.values() if i.view.kind.value != "stub"),
        key=lambda i: i.sceneBoundingRect().top(),
    )
    pairs = []
    for a, first in enumerate(items):
        rect = first.sceneBoundingRect()
        for second in items[a + 1 :]:
            other = second.sceneBoundingRect()
            if other.top() > rect.bottom():
                break
            if rect.intersects(other):
                pairs.append((first.view.name, second.view.name))
    return pairs


def _drawn(view: CanvasView) -> dict[int, Position]:
    scene = view.canvas
    return {k: scene.positions[k] for k in scene.node_items}


def test_a_wide_box_folded_beside_nodes_pushes_them_just_clear(
    window: MainWindow, qtbot: QtBot
) -> None:
    view = _view(window, qtbot, "llama_24l_h64.dynamo.onnx")
    collapse_to_depth(view, 2)
    scene = view.canvas
    before = _drawn(view)
    collapse_group(view, "m/model")
    key = group_key("m/model")
    box = scene.positions[key]
    width = scene.node_items.sizes[key][0]
    assert width > 3 * BOX_WIDTH  # wide for its input tags
    assert _overlaps(view) == []  # it covered node_Shape_1 beside it
    above = [k for k in before if k in scene.node_items and before[k][1] < box[1]]
    assert above and all(scene.positions[k] == before[k] for k in above)  # never moves
    row = [k for k in scene.node_items if k != key and before[k][1] == box[1]]
    assert row and all(before[k][0] > box[0] for k in row)
    # the row moves right as one block, on its row, just far enough to clear the box
    shift = {scene.positions[k][0] - before[k][0] for k in row}
    assert len(shift) == 1 and shift.pop() > 0
    assert all(scene.positions[k][1] == box[1] for k in row)
    assert min(scene.positions[k][0] for k in row) == box[0] + width + st.NODE_GAP
    expand_group(view, "m/model")  # gives the row back, then makes room for the module
    assert _overlaps(view) == []
    assert all(scene.positions[k] == before[k] for k in above)


def test_a_module_opened_with_wide_boxes_inside_overlaps_nothing(
    window: MainWindow, qtbot: QtBot
) -> None:
    view = _view(window, qtbot, "llama_24l_h64.dynamo.onnx")
    collapse_to_depth(view, 2)
    collapse_to_depth(view, 1)  # the 24 wide layer boxes are inside the model box
    scene = view.canvas
    before = _drawn(view)
    top = scene.positions[group_key("m/model")][1]
    expand_group(view, "m/model")
    assert _overlaps(view) == []
    assert all(scene.positions[k] == p for k, p in before.items() if p[1] < top)
    collapse_group(view, "m/model")  # folding what was just opened puts everything back
    assert _drawn(view) == before


def test_opening_and_folding_each_layer_keeps_the_drawing(window: MainWindow, qtbot: QtBot) -> None:
    """Each layer of both exports opened and folded again: nothing overlaps, what lies above
    it and what was laid out beside it to its left keeps its place, and folding gives every
    position back exactly."""
    for name in ("llama_24l_h64.dynamo.onnx", "llama_24l_h64.torchscript.onnx"):
        view = _view(window, qtbot, name)
        collapse_to_depth(view, "auto")
        scene = view.canvas
        assert _overlaps(view) == []
        for layer in (0, 7, 23):
            group = f"m/model/layers.{layer}"
            before = _drawn(view)
            box = before[group_key(group)]
            expand_group(view, group)
            assert _overlaps(view) == [], (name, group)
            kept = [
                k for k, p in before.items() if p[1] < box[1] or (p[1] == box[1] and p[0] < box[0])
            ]
            assert kept and all(scene.positions[k] == before[k] for k in kept), (name, group)
            # what sat right of it on its row moved as one block, just clear of what it opened
            # into, measured in the real sizes of its nodes
            row = [k for k, p in before.items() if p[1] == box[1] and p[0] > box[0]]
            opened = set(scene.node_items) - set(before)
            right = max(scene.positions[k][0] + scene.node_items.sizes[k][0] for k in opened)
            moved = {scene.positions[k][0] - before[k][0] for k in row}
            assert len(moved) <= 1, (name, group)
            if moved and moved != {0.0}:
                assert min(scene.positions[k][0] for k in row) == right + st.NODE_GAP
            collapse_group(view, group)
            assert _drawn(view) == before, (name, group)
