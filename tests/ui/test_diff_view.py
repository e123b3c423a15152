"""File > Compare Models… with real widgets: the dialog, the Compare view of a real model
against a hand-edited copy (colours on both canvases, one table row per change, selecting
a row centres both canvases), read-only canvases, closing the tab."""

from __future__ import annotations

import copy
from pathlib import Path

import onnx
import pytest
from helpers.gui import open_model
from onnx import helper
from pytestqt.qtbot import QtBot

from designer.core.edits.model import SetModelProperty
from designer.ui.diff import diff_tabs
from designer.ui.diff.side import COLORS
from designer.ui.diff.tab import DiffTab
from designer.ui.main_window import MainWindow
from designer.ui.tools.compare_models import CompareModelsDialog

MODELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "models"
SQUEEZENET = MODELS / "squeezenet1_0.torchscript.onnx"


def edited_copy(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    """SqueezeNet with 2 nodes deleted, 1 attribute changed, 1 node added; what changed."""
    model = onnx.load(SQUEEZENET)
    removed = [model.graph.node[5].name, model.graph.node[9].name]
    del model.graph.node[9]
    del model.graph.node[5]
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    pads = next(a for a in conv.attribute if a.name == "pads")
    pads.ints[0] += 1
    model.graph.node.append(
        helper.make_node("Neg", [model.graph.output[0].name], ["negated"], name="added_neg")
    )
    path = tmp_path / "edited.onnx"
    onnx.save(model, path)
    return path, {"removed": removed, "changed": conv.name, "added": "added_neg"}


def compare(window: MainWindow, qtbot: QtBot, b: Path, a: Path | None = None) -> DiffTab:
    """File > Compare Models… with B (and A, else the open document's file) filled in."""
    window.actions_by_name["compare_models"].trigger()
    dialogs = [d for d in window.findChildren(CompareModelsDialog) if d.isVisible()]
    assert len(dialogs) == 1
    dialog = dialogs[0]
    if a is not None:
        dialog.a.setText(str(a))
    dialog.b.setText(str(b))
    dialog.compare.click()
    qtbot.waitUntil(lambda: bool(diff_tabs(window)), timeout=30_000)
    tab = diff_tabs(window)[-1]
    assert window.tabs.currentWidget() is tab
    assert tab.left.view.wait_for_layout(30_000) and tab.right.view.wait_for_layout(30_000)
    return tab


def test_compare_menu_entry_is_in_file_menu(window: MainWindow) -> None:
    action = window.actions_by_name["compare_models"]
    assert action in window.menus["File"].actions()
    assert action.isEnabled()


def test_compare_a_real_model_with_an_edited_copy(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    open_model(window, SQUEEZENET, qtbot)
    edited, made = edited_copy(tmp_path)
    tab = compare(window, qtbot, edited)
    diff = tab.diff
    assert sorted(n.name for n in diff.graph.nodes_removed) == sorted(made["removed"])  # type: ignore[arg-type]
    assert [n.name for n in diff.graph.nodes_added] == [made["added"]]
    assert [c.before.name for c in diff.graph.nodes_changed] == [made["changed"]]
    assert diff.change_count == 4
    assert tab.table.rowCount() == 4
    kinds = sorted(tab.table.item(r, 0).text() for r in range(tab.table.rowCount()))
    assert kinds == ["added", "changed", "removed", "removed"]

    def fill(side: object, index: int) -> object:
        key = side.key(index)  # type: ignore[attr-defined]
        return side.view.canvas.node_items[key].heat_fill  # type: ignore[attr-defined]

    for n in diff.graph.nodes_removed:
        assert fill(tab.left, n.index) == COLORS["removed"]
    (added,) = diff.graph.nodes_added
    assert fill(tab.right, added.index) == COLORS["added"]
    (changed,) = diff.graph.nodes_changed
    assert fill(tab.left, changed.before.index) == COLORS["changed"]
    assert fill(tab.right, changed.after.index) == COLORS["changed"]
    unchanged_a = diff.graph.matches[0][0]
    if unchanged_a != changed.before.index:
        assert fill(tab.left, unchanged_a) is None

    # selecting the "changed" row selects and centres the node on both canvases
    row = next(r for r in range(tab.table.rowCount()) if tab.table.item(r, 0).text() == "changed")
    tab.table.selectRow(row)
    for side, index in ((tab.left, changed.before.index), (tab.right, changed.after.index)):
        key = side.key(index)
        assert side.view.selected_keys() == [key]
        item = side.view.canvas.node_items[key]
        centre = side.view.mapToScene(side.view.viewport().rect().center())
        assert (item.sceneBoundingRect().center() - centre).manhattanLength() < 60
    # a removed node: selected on A; B centres on its nearest matched neighbour
    row = next(r for r in range(tab.table.rowCount()) if tab.table.item(r, 0).text() == "removed")
    tab.table.selectRow(row)
    assert len(tab.left.view.selected_keys()) == 1 and tab.right.view.selected_keys() == []


def test_canvases_are_read_only(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    edited, _made = edited_copy(tmp_path)
    tab = compare(window, qtbot, edited, SQUEEZENET)
    messages: list[str] = []
    tab.left.session.editRejected.connect(messages.append)
    assert not tab.left.session.push(SetModelProperty("producer_name", "x"))
    assert messages and "read-only" in messages[0]
    assert tab.left.session.doc.model.producer_name != "x"


def test_bad_input_is_refused_inline(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    dialog = CompareModelsDialog(window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.a.setText(str(SQUEEZENET))
    dialog.run()
    assert dialog.error.isVisible() and "Choose model B" in dialog.error.text()
    dialog.b.setText(str(tmp_path / "missing.onnx"))
    dialog.run()
    assert "is not a file" in dialog.error.text()
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"junk")
    dialog.b.setText(str(bad))
    dialog.run()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=20_000)
    assert "bad.onnx" in dialog.error.text() and dialog.compare.isEnabled()
    assert diff_tabs(window) == []
    dialog.close()


def test_identical_models_and_closing_the_tab(window: MainWindow, qtbot: QtBot) -> None:
    shown = compare(window, qtbot, SQUEEZENET, SQUEEZENET)
    assert shown.diff.identical and shown.table.rowCount() == 0
    assert "identical" in shown.summary.text()
    window.close_tab(window.tabs.indexOf(shown))
    assert diff_tabs(window) == []


@pytest.mark.parametrize("name", ["bert_4l_h64.torchscript.onnx"])
def test_renamed_nodes_show_as_changed(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, name: str
) -> None:
    model = onnx.load(MODELS / name)
    renamed = copy.deepcopy(model)
    renamed.graph.node[3].name = "a_new_name"
    path = tmp_path / "renamed.onnx"
    onnx.save(renamed, path)
    (change,) = compare(window, qtbot, path, MODELS / name).diff.graph.nodes_changed
    assert change.by == "structure" and change.after.name == "a_new_name"


def test_colours_survive_a_layout_off_the_gui_thread(qtbot: QtBot) -> None:
    """Large models are laid out by a job; the colours are painted on the items it builds."""
    from helpers.models import chain_model

    from designer.core.diff import diff_models
    from designer.ui.canvas.settings import CanvasSettings

    a = chain_model(30)
    b = copy.deepcopy(a)
    del b.graph.node[4]
    b.graph.node[10].attribute.append(helper.make_attribute("alpha", 1.0))
    diff = diff_models(a, b)
    tab = DiffTab(
        diff, ("a", a, None), ("b", b, None), "t", settings=CanvasSettings(async_layout_nodes=5)
    )
    qtbot.addWidget(tab)
    tab.resize(1000, 700)
    tab.show()
    assert tab.left.view.wait_for_layout(30_000) and tab.right.view.wait_for_layout(30_000)

    def fill(side: object, index: int) -> object:
        item = side.view.canvas.node_items.get(side.key(index))  # type: ignore[attr-defined]
        return None if item is None else item.heat_fill

    (changed,) = diff.graph.nodes_changed
    qtbot.waitUntil(
        lambda: (
            fill(tab.left, 4) == COLORS["removed"]
            and fill(tab.right, changed.after.index) == COLORS["changed"]
        ),
        timeout=10_000,
    )
    assert fill(tab.left, changed.before.index) == COLORS["changed"]
    tab.close_tab_requested()


def test_closing_while_comparing_opens_no_tab(window: MainWindow, qtbot: QtBot) -> None:
    """Close during a comparison: its Compare tab opened a second later and took the focus."""
    dialog = CompareModelsDialog(window)  # kept after Close (not deleted on close)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.a.setText(str(MODELS / "llama_24l_h64.torchscript.onnx"))
    dialog.b.setText(str(MODELS / "llama_24l_h64.dynamo.onnx"))
    job = dialog.run()
    assert job is not None
    dialog.reject()  # Close, at once
    qtbot.waitUntil(lambda: job.wait(0), timeout=60_000)
    qtbot.wait(200)
    assert diff_tabs(window) == []
