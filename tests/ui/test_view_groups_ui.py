"""Group Selection (view only) on the canvas of the real Llama: the selected nodes become a
named box that expands, collapses and can be focused like a module; the model stays byte
for byte the same (nothing to undo, nothing modified); the group is saved in the layout
file and restored on reopen; Ungroup restores the module tree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.gui import explorer_panel
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from designer.core.collapse import group_key
from designer.core.io.companion import companion_path
from designer.ui.canvas.collapse_view import expand_group, hierarchy_of
from designer.ui.canvas.focus_view import focus_of, set_focus
from designer.ui.canvas.hand_groups import group_selection, ungroup
from designer.ui.main_window import MainWindow
from tests.helpers.gui import open_model
from tests.helpers.shared import model

LLAMA = "llama_24l_h64.dynamo.onnx"
MLP = "m/model/layers.3/mlp"
GROUP = "m/model/layers.3/my mlp"


def test_group_selection_saved_restored_and_model_untouched(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "llama.onnx"
    shutil.copyfile(model(LLAMA), path)
    tab = open_model(window, path, qtbot)
    view = tab.view
    tab.session.save()  # the baseline: the model file as this program writes it
    baseline = path.read_bytes()
    keys = hierarchy_of(view.canvas).by_id[MLP].keys()
    view.select_keys(keys)
    menu = QMenu()
    from designer.ui.tools.view_groups import _hook

    _hook(window, menu, view, view.canvas.node_items[keys[0]].sceneBoundingRect().center())
    entry = next(a for a in menu.actions() if a.text() == "Group Selection (view only)…")
    assert entry.isEnabled()
    menu.deleteLater()

    assert group_selection(view, " my mlp ") == GROUP
    box = view.canvas.node_items[group_key(GROUP)]  # drawn collapsed right away
    assert box.view.name == "my mlp" and box.view.op_type.startswith("view group · ")
    assert not any(k in view.canvas.node_items for k in keys)
    assert not tab.session.doc.modified and not tab.session.doc.undo_stack.can_undo
    expand_group(view, GROUP)
    assert all(k in view.canvas.node_items for k in keys if view.canvas.graph.has_node(k))
    set_focus(view, GROUP)  # a hand group focuses like a module
    assert focus_of(view.canvas) == GROUP
    set_focus(view, None)
    from designer.ui.canvas.collapse_view import collapse_group

    collapse_group(view, GROUP)
    tab.session.save()
    assert path.read_bytes() == baseline  # the model is untouched
    saved = json.loads(companion_path(path).read_text(encoding="utf-8"))
    assert saved["version"] == 3
    assert saved["groups"]["main"][0]["name"] == "my mlp"
    assert GROUP in saved["collapsed"]["main"]
    window.close_tab()

    again = open_model(window, path, qtbot)
    assert GROUP in again.view.canvas.collapsed
    assert group_key(GROUP) in again.view.canvas.node_items  # restored, still collapsed
    hierarchy = hierarchy_of(again.view.canvas)
    assert hierarchy.by_id[GROUP].kind == "view"
    assert ungroup(again.view, GROUP)
    assert group_key(GROUP) not in again.view.canvas.node_items
    assert MLP in hierarchy_of(again.view.canvas).by_id  # back in the module tree
    assert not again.session.doc.modified


def test_headless_layout_draws_a_saved_collapsed_hand_group(tmp_path: Path) -> None:
    import subprocess
    import sys

    from designer.core.hierarchy import build_hierarchy
    from designer.core.io.companion import save_positions
    from designer.core.io.load import open_document
    from designer.core.scope import MAIN_SCOPE
    from designer.core.view_groups import add_view_group

    path = tmp_path / "llama.onnx"
    shutil.copyfile(model(LLAMA), path)
    doc = open_document(path)
    add_view_group(doc, MAIN_SCOPE, "my mlp", build_hierarchy(doc).by_id[MLP].keys())
    doc.collapsed[MAIN_SCOPE] = {GROUP}
    save_positions(doc, path)
    result = subprocess.run(
        [sys.executable, "-m", "designer.cli", "layout", str(path), "-"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0, result.stderr
    groups = [b for b in json.loads(result.stdout)["boxes"] if b["kind"] == "group"]
    assert [(b["id"], b["label"]) for b in groups] == [(f"group:{GROUP}", "my mlp")]
    assert groups[0]["caption"].startswith("view group · ")


def test_the_menu_asks_a_name_and_the_explorer_shows_the_group(window, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from designer.ui.tools import view_groups as tool

    tab = open_model(window, model(LLAMA), qtbot)
    view = tab.view
    panel = explorer_panel(window)
    panel.grouping.setCurrentIndex(panel.grouping.findData("scope"))
    keys = hierarchy_of(view.canvas).by_id[MLP].keys()
    view.select_keys(keys)
    answers = iter([("a/b", True), ("my mlp", True)])
    monkeypatch.setattr(tool.QInputDialog, "getText", lambda *a, **k: next(answers))
    tool.ask_and_group(window, view)  # a bad name: one line, nothing made
    assert "cannot contain '/'" in window.statusBar().currentMessage()
    assert GROUP not in hierarchy_of(view.canvas).by_id
    tool.ask_and_group(window, view)
    assert "View group m/model/layers.3/my mlp made" in window.statusBar().currentMessage()
    assert panel.model.group_row(GROUP).isValid()  # the scope tree has it
    tool.ask_and_ungroup(window, view, GROUP)
    assert not panel.model.group_row(GROUP).isValid()
    assert panel.model.group_row(MLP).isValid()


def test_a_rubber_band_around_a_module_takes_its_undrawn_constants(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """Constants are not drawn (by default), so a rubber band around a module selects its
    drawn nodes only; the group still takes the Constants only they read, and so the whole
    module moves under it. A Constant that something outside reads stays where it is."""
    path = tmp_path / "llama.onnx"
    shutil.copyfile(model("llama_24l_h64.torchscript.onnx"), path)
    tab = open_model(window, path, qtbot)
    view, doc = tab.view, tab.session.doc
    module = "m/model/layers.3/self_attn"
    hierarchy = hierarchy_of(view.canvas)
    while module not in hierarchy.by_id:
        expand_group(view, next(g for g in view.canvas.collapsed if module.startswith(g)))
        hierarchy = hierarchy_of(view.canvas)
    keys = hierarchy.by_id[module].keys()
    scope = doc.scope()
    constants = {k for k in keys if scope.node(k).op_type == "Constant"}
    drawn = [k for k in keys if k in view.canvas.node_items]
    assert constants and not constants & set(drawn) and len(drawn) + len(constants) == len(keys)
    view.select_keys(drawn)
    gid = group_selection(view, "band")
    group = hierarchy_of(view.canvas).by_id[gid]
    assert set(group.keys()) == set(keys)
    assert module not in hierarchy_of(view.canvas).by_id  # moved under the hand group
    assert ungroup(view, gid)
    # a Constant read outside the selection is not taken
    from designer.core.view_groups import constants_feeding_only

    reader = {n: k for k in drawn for n in scope.node(k).input}
    shared = next(k for k in constants if scope.node(k).output[0] in reader)
    fewer = [k for k in drawn if k != reader[scope.node(shared).output[0]]]
    assert shared not in constants_feeding_only(doc, view.canvas.scope_id, fewer)
    assert not doc.modified
