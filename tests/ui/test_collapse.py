"""Collapsed module scopes. Headless: ``onnx-designer export-image|layout … --collapse
DEPTH|auto`` draws a collapsed scope as one box (kind ``group``, labelled with its scope
name) with the links crossing its border; ``auto`` keeps the first view to a few dozen boxes;
bad depths fail with one line. On the canvas: View ▸ Module Scopes collapses to a level,
expand/collapse in place keeps what lies above and moves what lies below as one block,
a box selects its nodes, Find reveals a tensor inside a collapsed layer, dragging a box
moves its nodes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.gui import explorer_panel
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from designer.core.collapse import group_key
from designer.ui.canvas.controller import move_edit
from designer.ui.canvas.headless import ensure_app, headless_scene
from designer.ui.canvas.layout_json import scene_layout
from tests.helpers.shared import model

ROOT = Path(__file__).resolve().parents[2]
LLAMA = "llama_24l_h64.dynamo.onnx"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "designer.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )


def test_layout_collapsed_to_layers(tmp_path: Path) -> None:
    result = run("layout", model(LLAMA), "-", "--collapse", "2")
    assert result.returncode == 0, result.stderr
    assert "collapsed to depth 2" in result.stderr
    data = json.loads(result.stdout)
    groups = [b for b in data["boxes"] if b["kind"] == "group"]
    labels = {b["label"] for b in groups}
    assert {f"layers.{i}" for i in range(24)} <= labels
    layer = next(b for b in groups if b["label"] == "layers.3")
    assert layer["id"] == "group:m/model/layers.3" and layer["group"] == "m/model/layers.3"
    assert "ops" in layer["caption"] and "params" in layer["caption"]
    ids = {b["id"] for b in data["boxes"]}
    assert all(link["source"] in ids and link["target"] in ids for link in data["links"])
    # links between consecutive layers cross both borders
    assert any(
        link["source"] == "group:m/model/layers.3" and link["target"] == "group:m/model/layers.4"
        for link in data["links"]
    )
    boxes = [b for b in data["boxes"] if b["kind"] not in ("stub", "proxy")]
    assert len(boxes) < 100  # a first view of a few dozen boxes
    # values a layer box hands to every later layer (rotary tables, the mask) are stubs at
    # the readers, not a bundle of links down the column
    readers: dict[str, set[str]] = {}
    for link in data["links"]:
        readers.setdefault(link["tensor"], set()).add(link["target"])
    assert max(len(r) for r in readers.values()) <= 8
    assert any(
        b["kind"] == "stub" and b["target"] == "group:m/model/layers.5" for b in data["boxes"]
    )


def test_auto_and_bad_depth(tmp_path: Path) -> None:
    auto = run("layout", model("gpt2_6l_h64.torchscript.onnx"), "-", "--collapse", "auto")
    assert auto.returncode == 0, auto.stderr
    boxes = [b for b in json.loads(auto.stdout)["boxes"] if b["kind"] not in ("stub", "proxy")]
    # level 1 shows transformer and lm_head alone: auto opens one level more, to the blocks
    assert len(boxes) <= 150
    assert {f"group:m/transformer/h.{i}" for i in range(6)} <= {b["id"] for b in boxes}
    bad = run("layout", model(LLAMA), "-", "--collapse", "deep")
    assert bad.returncode == 2  # a usage error, found before the model is read
    assert bad.stderr.strip().splitlines()[-1] == (
        "onnx-designer layout: error: argument --collapse: takes a depth (0, 1, 2, …) or "
        "'auto', not 'deep'"
    )


def test_export_image_collapsed(tmp_path: Path) -> None:
    out = tmp_path / "llama.png"
    result = run("export-image", model(LLAMA), out, "--collapse", "auto")
    assert result.returncode == 0, result.stderr
    full = tmp_path / "full.png"
    assert run("export-image", model(LLAMA), full).returncode == 0
    small, big = QImage(str(out)), QImage(str(full))
    assert not small.isNull() and small.height() * 3 < big.height()


def test_headless_scene_boxes_are_items(qapp) -> None:  # type: ignore[no-untyped-def]
    ensure_app()
    scene, _notes = headless_scene(model(LLAMA), collapse="2")
    item = scene.node_items[group_key("m/model/layers.0")]
    assert item.view.name == "layers.0" and item.height > 30
    data = scene_layout(scene, "main")
    assert any(b["id"] == "group:m/model/layers.0" for b in data["boxes"])  # type: ignore[index, union-attr]


# --- on the canvas ------------------------------------------------------------------------


def _collapsed(window, qtbot):  # type: ignore[no-untyped-def]
    from tests.helpers.gui import open_model

    tab = open_model(window, model(LLAMA), qtbot)
    window.actions_by_name["collapse_auto"].trigger()
    return tab.view


def test_collapse_auto_from_the_menu_and_box_selection(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = _collapsed(window, qtbot)
    boxes = [i.view for i in view.canvas.node_items.values()]
    layers = [b.name for b in boxes if b.kind.value == "group" and b.name.startswith("layers.")]
    assert len(layers) == 24 and len(boxes) <= 60
    assert "Collapsed to level 2" in window.statusBar().currentMessage()
    box = view.canvas.node_items[group_key("m/model/layers.4")]
    from designer.ui.canvas.collapse_view import hierarchy_of

    members = hierarchy_of(view.canvas).by_id["m/model/layers.4"].keys()
    view.canvas.clearSelection()
    box.setSelected(True)
    assert sorted(view.selected_keys()) == sorted(members)  # the docks see its nodes
    panel = explorer_panel(window)
    qtbot.waitUntil(lambda: sorted(panel.selected_keys()) == sorted(members), timeout=5000)


def test_expand_and_collapse_in_place(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from designer.ui.canvas.collapse_view import collapse_group, expand_group

    view = _collapsed(window, qtbot)
    items = view.canvas.node_items
    top = items[group_key("m/model/layers.5")].pos()
    before = {k: (i.x(), i.y()) for k, i in items.items()}
    count = len(items)
    expand_group(view, "m/model/layers.5")
    after = {k: (i.x(), i.y()) for k, i in view.canvas.node_items.items()}
    assert len(after) > count and group_key("m/model/layers.5") not in after
    above = [k for k, p in before.items() if p[1] < top.y()]
    below = [k for k, p in before.items() if p[1] > top.y() and k in after]
    assert above and all(after[k] == before[k] for k in above)  # untouched boxes stay
    shifts = {round(after[k][1] - before[k][1], 3) for k in below}
    assert len(shifts) == 1 and shifts.pop() > 0  # the rest moves down as one block
    assert all(after[k][0] == before[k][0] for k in below)
    collapse_group(view, "m/model/layers.5")
    again = {k: (i.x(), i.y()) for k, i in view.canvas.node_items.items()}
    assert set(again) == set(before)
    assert all(again[k] == before[k] for k in above)
    # double-click opens a box
    box = view.canvas.node_items[group_key("m/model/layers.6")]
    view.centerOn(box)
    point = view.mapFromScene(box.sceneBoundingRect().center())
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert group_key("m/model/layers.6") not in view.canvas.node_items


def test_find_reveals_a_tensor_inside_a_collapsed_layer(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from designer.ui.canvas.collapse_view import hierarchy_of
    from designer.ui.tools.find import open_find

    view = _collapsed(window, qtbot)
    h = hierarchy_of(view.canvas)
    (key,) = h.by_id["m/model/layers.17/mlp/down_proj"].own_keys
    tensor = view.session.doc.scope(view.scope_id).node(key).output[0]
    assert key not in view.canvas.node_items
    bar = open_find(window)
    assert bar is not None
    bar.scope_box.setCurrentText("Tensor names")
    bar.query.setText(tensor)
    bar.search()
    assert key in view.canvas.node_items and view.selected_keys() == [key]
    assert "m/model/layers.17" not in view.canvas.collapsed
    assert "m/model/layers.16" in view.canvas.collapsed  # the others stay collapsed


def test_dragging_a_box_moves_its_nodes(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from designer.ui.canvas.collapse_view import hierarchy_of, member_moves

    view = _collapsed(window, qtbot)
    scene = view.canvas
    key = group_key("m/model/layers.2")
    x, y = scene.positions[key]
    members = hierarchy_of(scene).by_id["m/model/layers.2"].keys()
    old = {k: scene.positions[k] for k in members if k in scene.positions}
    moves = member_moves(scene, {key: (x + 50.0, y + 20.0)})
    assert key not in moves and set(moves) == set(old)
    assert view.session.push(move_edit(view.scope_id, moves))
    view.flush()
    assert all(scene.positions[k] == (p[0] + 50.0, p[1] + 20.0) for k, p in old.items())
    scene.rebuild()
    assert scene.positions[key] == (x + 50.0, y + 20.0)


def test_collapsed_state_survives_save_and_reopen(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from designer.core.io.companion import companion_path
    from tests.helpers.gui import open_model

    path = tmp_path / "llama.onnx"
    shutil.copyfile(model(LLAMA), path)
    tab = open_model(window, path, qtbot)
    window.actions_by_name["collapse_auto"].trigger()
    from designer.ui.canvas.collapse_view import expand_group

    expand_group(tab.view, "m/model/layers.1")
    state = set(tab.view.canvas.collapsed)
    positions = {k: (i.x(), i.y()) for k, i in tab.view.canvas.node_items.items()}
    tab.session.save()
    saved = json.loads(companion_path(path).read_text(encoding="utf-8"))
    assert saved["version"] == 3 and set(saved["collapsed"]["main"]) == state
    window.close_tab()
    again = open_model(window, path, qtbot)
    assert again is not tab and again.view.canvas.collapsed == state
    reopened = {k: (i.x(), i.y()) for k, i in again.view.canvas.node_items.items()}
    assert reopened.keys() == positions.keys()
    assert all(
        abs(reopened[k][0] - p[0]) < 0.01 and abs(reopened[k][1] - p[1]) < 0.01
        for k, p in positions.items()
        if k >= 0
    )
    # the headless export honours it too
    data = json.loads(run("layout", path, "-").stdout)
    assert sum(1 for b in data["boxes"] if b["kind"] == "group") == len(state)


def test_arrange_while_collapsed_moves_boxes_with_their_nodes(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    view = _collapsed(window, qtbot)
    window.errors.clear()
    scene = view.canvas
    key = group_key("m/model/layers.8")
    scene.positions[key] = (scene.positions[key][0] + 400.0, scene.positions[key][1])
    view.arrange_nodes()
    view.wait_for_layout(30_000)
    view.flush()
    assert window.errors == []
    assert view.session.undo_stack.count() >= 1  # one undoable move of real nodes
    assert len(scene.node_items) <= 60 and key in scene.node_items


def test_large_models_open_collapsed_unless_switched_off(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers.gui import open_model

    big = "llama_24l_h64.torchscript.onnx"  # 5,535 nodes
    action = window.actions_by_name["collapse_large_models"]
    assert action.isChecked() and window.settings.collapse_above_nodes == 20_000
    tab = open_model(window, model(big), qtbot)  # below the default threshold
    qtbot.wait(200)
    assert not tab.view.canvas.collapsed
    window.close_tab()
    window.settings.collapse_above_nodes = 5000
    tab = open_model(window, model(big), qtbot)
    qtbot.waitUntil(lambda: bool(tab.view.canvas.collapsed), timeout=30_000)
    # the first view shows the decoder layers (one level deeper than model + lm_head)
    assert len(tab.view.canvas.node_items) <= 150
    assert all(group_key(f"m/model/layers.{i}") in tab.view.canvas.node_items for i in range(24))
    window.close_tab()
    action.setChecked(False)
    assert window.settings.collapse_large_models is False
    tab = open_model(window, model(big), qtbot)
    qtbot.wait(200)
    assert not tab.view.canvas.collapsed
    small = open_model(window, model(LLAMA), qtbot)  # 1,485 nodes: opens as it is
    action.setChecked(True)
    assert not small.view.canvas.collapsed


def test_deleting_a_box_deletes_its_nodes(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from designer.ui.canvas.collapse_view import hierarchy_of

    view = _collapsed(window, qtbot)
    members = set(hierarchy_of(view.canvas).by_id["m/model/layers.23"].keys())
    scope = view.session.doc.scope(view.scope_id)
    count = len(scope)
    view.canvas.clearSelection()
    view.canvas.node_items[group_key("m/model/layers.23")].setSelected(True)
    window.actions_by_name["delete"].trigger()
    assert len(scope) == count - len(members) and not any(scope.has_node(k) for k in members)
    view.flush()
    assert group_key("m/model/layers.23") not in view.canvas.node_items
    view.session.undo_stack.undo()  # one step brings the module back, still collapsed
    view.flush()
    assert len(scope) == count and group_key("m/model/layers.23") in view.canvas.node_items


def test_auto_from_a_collapsed_view_is_the_same(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from designer.ui.canvas.collapse_view import collapse_to_depth

    view = _collapsed(window, qtbot)
    state = set(view.canvas.collapsed)
    assert collapse_to_depth(view, 0) == 0 and len(view.canvas.node_items) < 12
    assert collapse_to_depth(view, "auto") == 2 and view.canvas.collapsed == state
