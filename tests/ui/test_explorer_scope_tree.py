"""Layer Explorer "Group by scope": the real Llama exports as a tree of their modules
(24 decoder layers, attention and MLP inside), filters prune empty groups, selection synced
with the canvas both ways (a canvas selection opens the groups down to the layer), expanded
groups survive a regroup, and a 100k-layer scope builds fast."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from helpers.gui import explorer_panel
from PySide6.QtCore import QItemSelectionModel, QModelIndex
from pytestqt.qtbot import QtBot

from designer.core.document import Document
from designer.ui.docks.explorer import ExplorerPanel
from designer.ui.main_window import MainWindow
from designer.ui.qtmodels.explorer_model import ExplorerModel
from tests.helpers.gui import open_model
from tests.helpers.shared import model

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def _panel(window: MainWindow, qtbot: QtBot, name: str) -> ExplorerPanel:
    open_model(window, model(name), qtbot)
    panel = explorer_panel(window)
    panel.grouping.setCurrentIndex(panel.grouping.findData("scope"))
    assert panel.model.grouping == "scope" and panel.model.tree is not None
    return panel


def _child(m: ExplorerModel, parent: QModelIndex, name: str) -> QModelIndex:
    for row in range(m.rowCount(parent)):
        index = m.index(row, 0, parent)
        if str(index.data()).split(" (")[0] == name:
            return index
    raise AssertionError(f"no row {name} under {parent.data()}: {_labels(m, parent)[:5]}")


def _labels(m: ExplorerModel, parent: QModelIndex) -> list[str]:
    return [str(m.index(r, 0, parent).data()).split(" (")[0] for r in range(m.rowCount(parent))]


@pytest.mark.parametrize("name", ["llama_24l_h64.dynamo.onnx", "llama_24l_h64.torchscript.onnx"])
def test_tree_by_scope_matches_the_modules(window: MainWindow, qtbot: QtBot, name: str) -> None:
    panel = _panel(window, qtbot, name)
    m = panel.model
    top = _child(m, QModelIndex(), "m")
    inner = _child(m, top, "model")
    layers = [x for x in _labels(m, inner) if x.startswith("layers.")]
    assert layers == [f"layers.{i}" for i in range(24)]
    layer = _child(m, inner, "layers.3")
    assert {"self_attn", "mlp"} <= set(_labels(m, layer))
    attn = _child(m, layer, "self_attn")
    assert _labels(m, attn)[:4] == ["q_proj", "k_proj", "v_proj", "o_proj"]
    q = _child(m, attn, "q_proj")
    (leaf,) = [m.index(r, 0, q) for r in range(m.rowCount(q))]
    assert m.index(leaf.row(), 1, q).data() == "MatMul"
    assert m.parent(leaf) == q and m.parent(q) == attn and m.parent(top) == QModelIndex()
    assert "parameters" in str(m.data(q, 3))  # ToolTipRole: op counts and parameters
    # every layer is under exactly one group; counts add up
    assert m.visible_count() == len(m.records)
    # the filter prunes groups without shown layers
    h = m.hierarchy()
    assert h is not None
    (key,) = h.by_id["m/model/layers.3/self_attn/q_proj"].own_keys
    panel.search.setText(m.records[key].name)
    panel.search.flush()
    index = m.index_of_key(key)
    chain = []
    while index.isValid():
        chain.append(str(index.data()).split(" (")[0])
        assert m.rowCount(m.parent(index)) == 1
        index = m.parent(index)
    assert chain[1:] == ["q_proj", "self_attn", "layers.3", "model", "m"]


def test_selection_syncs_both_ways(window: MainWindow, qtbot: QtBot) -> None:
    panel = _panel(window, qtbot, "llama_24l_h64.dynamo.onnx")
    m, view = panel.model, panel.tab.view  # type: ignore[union-attr]
    h = m.hierarchy()
    assert h is not None
    (key,) = h.by_id["m/model/layers.11/mlp/down_proj"].own_keys
    view.select_keys([key])  # canvas → explorer: the groups open down to the layer
    qtbot.waitUntil(lambda: panel.selected_keys() == [key], timeout=5000)
    index = m.index_of_key(key)
    parent = m.parent(index)
    while parent.isValid():
        assert panel.tree.isExpanded(parent)
        parent = m.parent(parent)
    # explorer → canvas
    other = h.by_id["m/model/layers.2/self_attn/k_proj"].own_keys[0]
    panel.tree.selectionModel().select(
        m.index_of_key(other),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
    )
    qtbot.waitUntil(lambda: view.selected_keys() == [other], timeout=5000)
    # expanded groups stay expanded across a regroup (sort order change)
    layer = m.group_row("m/model/layers.11")
    assert panel.tree.isExpanded(layer)
    panel.order.setChecked(True)
    assert panel.tree.isExpanded(m.group_row("m/model/layers.11/mlp"))


def test_hundred_thousand_layers_by_scope_build_fast() -> None:
    from bench_hierarchy import scoped_model

    doc = Document(scoped_model(100_000, metadata=False))
    doc.scope()
    m = ExplorerModel()
    m.load(doc)
    start = time.process_time()  # CPU time: other jobs on the machine do not count
    m.set_grouping("scope")
    elapsed = time.process_time() - start
    assert m.visible_count() == 100_000
    top = m.index(0, 0)
    assert str(top.data()) == "m (100000)"
    assert elapsed < 5.0, elapsed  # about 1 s here on a loaded 2-core machine
