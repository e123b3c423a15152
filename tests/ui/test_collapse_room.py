"""Opening and folding boxes makes room without drawing anything over anything else, on
the real Llama: a module whose layers were collapsed opens with its layers as boxes;
Find opens the layer hiding a hit and moves what lies below, as a double-click does;
folding an inner module then its layer gives every box below its place back; a box that
grows to the right pushes what sits beside it on its row, and gives that back too."""

from __future__ import annotations

from designer.core.collapse import group_key
from designer.ui.canvas.collapse_view import (
    collapse_group,
    collapse_to_depth,
    expand_group,
    hierarchy_of,
)
from tests.helpers.shared import model

LLAMA = "llama_24l_h64.dynamo.onnx"


def _view(window, qtbot):  # type: ignore[no-untyped-def]
    from tests.helpers.gui import open_model

    return open_model(window, model(LLAMA), qtbot).view


def _overlaps(view) -> int:  # type: ignore[no-untyped-def]
    """Pairs of drawn boxes and nodes whose rectangles intersect (stubs aside)."""
    scene = view.canvas
    scene.build_all()
    rects = sorted(
        (i.sceneBoundingRect() for i in scene.node_items.values() if i.view.kind.value != "stub"),
        key=lambda r: r.top(),
    )
    count = 0
    for a, first in enumerate(rects):
        for second in rects[a + 1 :]:
            if second.top() > first.bottom():
                break
            count += first.intersects(second)
    return count


def _layer_boxes(view) -> dict[int, tuple[float, float]]:  # type: ignore[no-untyped-def]
    return {i: view.canvas.positions[group_key(f"m/model/layers.{i}")] for i in range(24)}


def test_a_module_whose_layers_were_collapsed_opens_with_them_as_boxes(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = _view(window, qtbot)
    collapse_to_depth(view, 2)
    collapse_to_depth(view, 1)  # the layers are inside the model box now, still collapsed
    assert "m/model" in view.canvas.collapsed and "m/model/layers.3" in view.canvas.collapsed
    expand_group(view, "m/model")
    assert "m/model/layers.3" in view.canvas.collapsed
    assert group_key("m/model/layers.3") in view.canvas.node_items
    assert _overlaps(view) == 0  # were 9,539 pairs: every layer's nodes opened at once
    collapse_to_depth(view, 2)
    collapse_group(view, "m/model")  # the same through Collapse Module
    folded = _overlaps(view)
    expand_group(view, "m/model")
    assert "m/model/layers.3" in view.canvas.collapsed
    # opening adds none (folding measures rows as one node high, and the tall node below
    # may end up beside the box: at most that one pair)
    assert _overlaps(view) == folded == 0


def test_find_opens_a_layer_and_moves_what_lies_below(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from designer.ui.tools.find import open_find

    view = _view(window, qtbot)
    collapse_to_depth(view, "auto")
    hierarchy = hierarchy_of(view.canvas)
    (key,) = hierarchy.by_id["m/model/layers.17/mlp/down_proj"].own_keys
    tensor = view.session.doc.scope(view.scope_id).node(key).output[0]
    before = _layer_boxes(view)
    find = open_find(window)
    find.scope_box.setCurrentText("Tensor names")
    find.query.setText(tensor)
    find.search()
    qtbot.waitUntil(lambda: "m/model/layers.17" not in view.canvas.collapsed, timeout=10_000)
    after = _layer_boxes(view)
    members = hierarchy.by_id["m/model/layers.17"].keys()
    layer = [view.canvas.positions[k] for k in members]
    bottom = max(p[1] for p in layer)
    assert all(after[i] == before[i] for i in range(17))  # above: untouched
    assert all(after[i][1] > bottom for i in range(18, 24))  # below: past the open layer
    assert _overlaps(view) == 0


def test_folding_an_inner_module_then_its_layer_gives_the_room_back(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = _view(window, qtbot)
    collapse_to_depth(view, 2)
    before = _layer_boxes(view)
    expand_group(view, "m/model/layers.5")
    collapse_group(view, "m/model/layers.5/self_attn")
    assert _overlaps(view) == 0
    collapse_group(view, "m/model/layers.5")
    assert _layer_boxes(view) == before  # were left 2,400 px low, out of order
    expand_group(view, "m/model/layers.5")  # the inner module was remembered: still a box
    assert "m/model/layers.5/self_attn" in view.canvas.collapsed
    assert group_key("m/model/layers.5/self_attn") in view.canvas.node_items
    assert _overlaps(view) == 0


def test_an_opened_box_pushes_its_row_aside_and_gives_it_back(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = _view(window, qtbot)
    collapse_to_depth(view, "auto")
    scene = view.canvas
    box = scene.positions[group_key("m/model/layers.0")]
    beside = [
        k
        for k, item in scene.node_items.items()
        if item.view.kind.value == "op"
        and scene.positions[k][1] == box[1]
        and scene.positions[k][0] > box[0]
    ]
    assert beside  # a model-level node drawn beside the first layer's box
    positions = dict(scene.positions)
    expand_group(view, "m/model/layers.0")
    assert _overlaps(view) == 0  # a layer node landed on it before
    assert all(scene.positions[k][0] > positions[k][0] for k in beside)
    collapse_group(view, "m/model/layers.0")
    assert {k: scene.positions[k] for k in positions} == positions


def test_ungroup_keeps_the_modules_collapsed_inside(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from designer.ui.canvas.hand_groups import group_selection, ungroup

    view = _view(window, qtbot)
    collapse_to_depth(view, 2)
    scene = view.canvas
    scene.clearSelection()
    for i in (3, 4):
        scene.node_items[group_key(f"m/model/layers.{i}")].setSelected(True)
    pair = group_selection(view, "pair")
    expand_group(view, pair)
    assert {f"{pair}/layers.3", f"{pair}/layers.4"} <= scene.collapsed
    before = _overlaps(view)
    ungroup(view, pair)
    assert {"m/model/layers.3", "m/model/layers.4"} <= scene.collapsed  # they were opened
    assert _overlaps(view) <= before  # layers.3's nodes were drawn over layers.4: 56 pairs


def test_a_large_model_reopens_as_it_was_saved(window, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Above the threshold a model opens collapsed, but once its layout is saved it opens
    as saved: expanded and arranged by hand, not collapsed and laid out afresh."""
    import shutil

    from designer.ui.canvas.controller import move_edit
    from designer.ui.canvas.expand_all import expand_all
    from tests.helpers.gui import open_model

    path = tmp_path / "big.onnx"
    shutil.copyfile(model(LLAMA), path)
    window.settings.collapse_above_nodes = 1000  # the Llama's 1,485 nodes count as large
    tab = open_model(window, path, qtbot)
    qtbot.waitUntil(lambda: bool(tab.view.canvas.collapsed), timeout=30_000)
    expand_all(tab.view)
    key = hierarchy_of(tab.view.canvas).by_id["m/model/layers.5"].keys()[0]
    x, y = tab.view.canvas.positions[key]
    tab.session.push(move_edit(tab.view.scope_id, {key: (x + 900.0, y)}))
    tab.view.flush()
    tab.session.save()
    window.close_tab()
    again = open_model(window, path, qtbot)
    qtbot.wait(300)  # when the collapse would run
    assert not again.view.canvas.collapsed
    assert again.view.canvas.positions[key] == (x + 900.0, y)
