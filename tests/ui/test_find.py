"""Find (Edit ▸ Find…, Ctrl+F) on real Llama and GPT-2 exports: the bar opens in the current tab,
finds a tensor, an attribute value and an initializer, lists results, steps next/previous
and selects and centres each hit on the canvas (a hidden Constant via the boxes reading it)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from designer.ui.main_window import MainWindow
from designer.ui.tools.find import find_bar
from designer.ui.widgets.find_bar import FindBar
from tests.helpers.gui import open_model
from tests.helpers.shared import model

LLAMA = "llama_24l_h64.dynamo.onnx"


def _open_bar(window: MainWindow, qtbot: QtBot, name: str = LLAMA) -> FindBar:
    tab = open_model(window, model(name), qtbot)
    assert find_bar(tab, create=False) is None
    qtbot.keyClick(tab.view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = find_bar(tab, create=False)
    assert bar is not None and bar.isVisible()
    return bar


def _query(bar: FindBar, qtbot: QtBot, text: str, scope: str = "Everything") -> None:
    bar.scope_box.setCurrentText(scope)
    bar.query.clear()
    qtbot.keyClicks(bar.query, text)
    qtbot.waitUntil(lambda: not bar._timer.isActive(), timeout=5000)


def test_find_tensor_steps_and_selects(window: MainWindow, qtbot: QtBot) -> None:
    bar = _open_bar(window, qtbot)
    view = bar.view
    scope = view.session.doc.scope(view.scope_id)
    # a tensor produced inside decoder layer 7's attention
    target = next(
        (k, n.output[0])
        for k, n in scope.nodes()
        if n.op_type == "MatMul" and "layers.7.self_attn.q_proj" in str(n.metadata_props)
    )
    _query(bar, qtbot, target[1], "Tensor names")
    assert [h.text for h in bar.hits] == [target[1]]
    assert bar.results.count() == 1 and bar.count.text().startswith("1 of 1")
    assert view.selected_keys() == [target[0]]
    item = view.canvas.node_items[target[0]]
    centre = view.mapToScene(view.viewport().rect().center())
    assert item.sceneBoundingRect().adjusted(-200, -200, 200, 200).contains(centre)


def test_find_attribute_and_initializer_next_previous(window: MainWindow, qtbot: QtBot) -> None:
    bar = _open_bar(window, qtbot)
    view = bar.view
    _query(bar, qtbot, "perm=[0, 2, 1, 3]", "Attribute values")
    hits = bar.hits
    assert len(hits) >= 24 and all(h.kind == "attribute" for h in hits)
    assert view.selected_keys() == [hits[0].key]
    qtbot.keyClick(bar.query, Qt.Key.Key_Return)
    assert bar.current == 1 and view.selected_keys() == [hits[1].key]
    qtbot.keyClick(bar.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(bar.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.current == len(hits) - 1  # wrapped around
    bar.previous_button.click()
    assert bar.current == len(hits) - 2
    _query(bar, qtbot, "rotary_emb.inv_freq", "Initializer names")
    (hit,) = bar.hits
    assert hit.kind == "initializer" and hit.text == "m.model.rotary_emb.inv_freq"
    assert view.selected_keys() == [hit.key]
    reader = view.session.doc.scope(view.scope_id).node(hit.key)
    assert hit.text in reader.input
    _query(bar, qtbot, "no such thing anywhere")
    assert bar.hits == [] and bar.count.text() == "No matches"
    assert not bar.next_button.isEnabled()
    qtbot.keyClick(bar.query, Qt.Key.Key_Escape)
    assert not bar.isVisible()


def test_hidden_constant_is_shown_by_its_readers(window: MainWindow, qtbot: QtBot) -> None:
    bar = _open_bar(window, qtbot, "gpt2_6l_h64.torchscript.onnx")
    view = bar.view
    scope = view.session.doc.scope(view.scope_id)
    key = next(k for k, n in scope.nodes() if n.op_type == "Constant" and "/h.2/" in n.name)
    name = scope.node(key).name
    assert key not in view.canvas.node_items  # constants are hidden by default
    _query(bar, qtbot, name, "Node names")
    assert bar.hits[0].key == key
    readers = [k for k, n in scope.nodes() if set(n.input) & set(scope.node(key).output)]
    assert view.selected_keys() and set(view.selected_keys()) <= set(readers)


def test_module_scope_hit_selects_the_whole_module(window: MainWindow, qtbot: QtBot) -> None:
    bar = _open_bar(window, qtbot)
    _query(bar, qtbot, "layers.5/mlp", "Module scopes")
    first = bar.hits[0]
    assert first.text == "m/model/layers.5/mlp" and len(first.keys) == 6
    assert set(bar.view.selected_keys()) == set(first.keys)
