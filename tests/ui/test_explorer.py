"""Layer Explorer (L-3): grouping, filters, advanced filters with badge, double-click,
selection synchronised with the canvas both ways, live updates, and 100k layers."""

from __future__ import annotations

import time
from pathlib import Path

from helpers.gui import explorer_panel
from onnx import TensorProto, helper
from PySide6.QtCore import QItemSelectionModel, Qt
from pytestqt.qtbot import QtBot

from designer.core.document import Document
from designer.core.edits import CompoundEdit, RenameNode
from designer.core.edits.trt import SetLayerPrecision
from designer.core.scope import MAIN_SCOPE
from designer.ui.docks.explorer import ExplorerPanel
from designer.ui.main_window import MainWindow
from designer.ui.qtmodels.explorer_model import (
    AttributeFilter,
    ExplorerModel,
    layer_precisions,
    name_prefix,
)


def opened(window: MainWindow, path: Path) -> ExplorerPanel:
    window.open_files([path])
    tab = window.tab()
    assert tab is not None and tab.view.wait_for_layout(30_000)
    return explorer_panel(window)


def group_labels(model: ExplorerModel) -> list[str]:
    return [model.index(r, 0).data() for r in range(model.rowCount())]


def test_grouping_filter_and_sort(window: MainWindow, resnet_path: Path) -> None:
    panel = opened(window, resnet_path)
    model = panel.model
    assert "Conv (5)" in group_labels(model) and "Relu (5)" in group_labels(model)
    conv = model.group_row("Conv")
    assert [model.index(r, 0, conv).data() for r in range(3)] == [
        "block0a_conv",
        "block0b_conv",
        "block1a_conv",
    ]
    assert model.headerData(2, Qt.Orientation.Horizontal) == "TRT-Prec"
    panel.grouping.setCurrentIndex(panel.grouping.findData("name"))
    assert "block0a (3)" in group_labels(model) and "head (3)" in group_labels(model)
    panel.grouping.setCurrentIndex(panel.grouping.findData("none"))
    assert model.rowCount() == 21 and model.index(0, 0).data() == "block0_add"
    panel.order.setChecked(True)
    assert model.index(0, 0).data() == "stem_relu" and panel.order.text() == "Z→A"
    panel.search.setText("head")
    panel.search.flush()
    assert model.rowCount() == 3 and "3 of 21 layers" in panel.status.text()
    assert name_prefix("/enc/layer.0/MatMul") == "/enc/layer.0"
    assert name_prefix("Conv") == "(no prefix)"


def test_advanced_filters_and_badge(window: MainWindow, resnet_path: Path) -> None:
    panel = opened(window, resnet_path)
    model, adv = panel.model, panel.advanced
    assert panel.gear.count == 0
    panel.gear.setChecked(True)
    assert adv.isVisible() and adv.types.count() == 8
    adv.set_types({"Conv", "MaxPool"})
    assert panel.gear.count == 1 and model.visible_count() == 6
    adv.attribute.setCurrentText("kernel_shape")
    adv.value.setText("2, 2")
    assert adv.add_attribute_filter()
    assert panel.gear.count == 2 and model.visible_count() == 1
    assert model.index(0, 0, model.group_row("MaxPool")).data() == "stem_pool"
    adv.attribute.setCurrentText("no_such_attribute")
    assert not adv.add_attribute_filter()
    assert "no_such_attribute" in adv.message.text() and panel.gear.count == 2
    adv.active.setCurrentRow(0)
    adv.remove.click()
    assert panel.gear.count == 1 and model.visible_count() == 6
    adv.clear.click()
    assert panel.gear.count == 0 and model.visible_count() == 21


def test_double_click_and_selection_sync(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    panel = opened(window, resnet_path)
    tab = window.tab()
    assert tab is not None
    scope = tab.session.doc.scope()
    key = next(k for k, n in scope.nodes() if n.name == "head_fc")
    index = panel.model.index_of_key(key)
    panel.tree.doubleClicked.emit(index)
    assert tab.view.selected_keys() == [key]
    # canvas → explorer
    other = next(k for k, n in scope.nodes() if n.name == "stem_pool")
    tab.view.select_keys([other, key])
    qtbot.waitUntil(lambda: sorted(panel.selected_keys()) == sorted([other, key]))
    assert panel.tree.isExpanded(panel.model.group_row("MaxPool"))
    # explorer → canvas
    flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
    flags |= QItemSelectionModel.SelectionFlag.Rows
    panel.tree.selectionModel().select(panel.model.index_of_key(other), flags)
    assert tab.view.selected_keys() == [other]


def test_live_updates_and_precision_column(window: MainWindow, resnet_path: Path) -> None:
    panel = opened(window, resnet_path)
    tab = window.tab()
    assert tab is not None
    session = tab.session
    key = next(k for k, n in session.doc.scope().nodes() if n.name == "head_fc")
    assert session.push(RenameNode(MAIN_SCOPE, key, "classifier"))
    panel.flush()
    assert panel.model.index_of_key(key).data() == "classifier"
    stem = next(k for k, n in session.doc.scope().nodes() if n.name == "stem_conv")
    assert session.push(CompoundEdit("precisions", [
        SetLayerPrecision(MAIN_SCOPE, [key], "fp16"), SetLayerPrecision(MAIN_SCOPE, [stem], "int8")
    ]))  # fmt: skip
    panel.flush()
    assert panel.model.index_of_key(key, 2).data() == "fp16"
    panel.advanced.fill_choices()
    panel.model.set_advanced((), [AttributeFilter("TRT-Prec", "int8")])
    assert panel.model.visible_count() == 1
    assert layer_precisions(session.doc.model)["stem_conv"] == "int8"
    panel.model.set_advanced((), ())
    session.undo_stack.undo()
    session.undo_stack.undo()
    panel.flush()
    assert panel.model.index_of_key(key).data() == "head_fc"


def test_hundred_thousand_layers_build_fast() -> None:
    n = 100_000
    nodes = [
        helper.make_node(
            "Relu" if i % 3 else "Conv", [f"t{i}"], [f"t{i + 1}"], name=f"b{i // 10}_n{i}"
        )
        for i in range(n)
    ]
    graph = helper.make_graph(
        nodes,
        "big",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [1])],
    )
    doc = Document(helper.make_model(graph))
    model = ExplorerModel()
    start = time.process_time()  # CPU time: other jobs on the machine do not count
    model.load(doc)
    model.set_name_filter("n9")
    elapsed = time.process_time() - start
    assert model.visible_count() == 11_111
    assert elapsed < 2.0, f"{elapsed:.2f} s for 100k layers"


def test_selection_survives_regrouping(window: MainWindow, resnet_path: Path, qtbot: QtBot) -> None:
    panel = opened(window, resnet_path)
    tab = window.tab()
    assert tab is not None
    key = next(k for k, n in tab.session.doc.scope().nodes() if n.name == "head_fc")
    tab.view.select_keys([key])
    qtbot.waitUntil(lambda: panel.selected_keys() == [key])
    panel.grouping.setCurrentIndex(panel.grouping.findData("name"))
    assert panel.selected_keys() == [key] and tab.view.selected_keys() == [key]
    assert tab.session.push(RenameNode(MAIN_SCOPE, key, "fc"))
    panel.flush()
    assert panel.selected_keys() == [key] and tab.view.selected_keys() == [key]


def test_another_document_drops_the_filters_and_regroups_once(
    window: MainWindow, resnet_path: Path, tmp_path: Path
) -> None:
    panel = opened(window, resnet_path)
    panel.advanced.fill_choices()
    panel.advanced.set_types({"Conv"})
    assert panel.model.visible_count() == 5 and panel.model.advanced_count == 1
    other = tmp_path / "other.onnx"
    other.write_bytes(resnet_path.read_bytes())
    regroups: list[int] = []
    panel.model.modelReset.connect(lambda: regroups.append(1))
    panel = opened(window, other)  # a new tab: its layers, no filter left over
    assert panel.model.advanced_count == 0 and panel.model.visible_count() == 21
    assert len(regroups) == 2  # (the load with the old filter, then without it)
    regroups.clear()
    window.tabs.setCurrentIndex(0)  # back to the first: nothing was filtered, one regroup
    assert panel.model.visible_count() == 21 and len(regroups) == 1


def test_a_hidden_explorer_reads_the_layers_when_shown(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    """Behind the Layer Palette's tab (the default layout) the explorer reads nothing; once
    its tab is selected it shows the document as it is then: edits and the canvas selection
    made meanwhile included."""
    palette = next(d for d in window.docks if d.objectName() == "dock_palette")
    palette.raise_()
    qtbot.wait(10)
    window.open_files([resnet_path])
    tab = window.tab()
    assert tab is not None and tab.view.wait_for_layout(30_000)
    dock = next(d for d in window.docks if d.objectName() == "dock_explorer")
    panel = dock.widget()
    assert isinstance(panel, ExplorerPanel)
    assert panel.model.records == {}  # not read while hidden
    session = tab.session
    scope = session.doc.scope()
    key = next(k for k, n in scope.nodes() if n.name == "head_fc")
    pool = next(k for k, n in scope.nodes() if n.name == "stem_pool")
    assert session.push(RenameNode(MAIN_SCOPE, key, "classifier"))
    tab.view.select_keys([pool])
    qtbot.wait(10)
    assert panel.model.records == {}
    panel = explorer_panel(window)  # its tab selected
    assert len(panel.model.records) == len(scope)
    assert panel.model.records[key].name == "classifier"
    assert panel.selected_keys() == [pool]
    palette.raise_()  # hidden again after being read: it follows edits as before
    qtbot.wait(10)
    assert session.push(RenameNode(MAIN_SCOPE, key, "head"))
    panel.flush()
    assert panel.model.records[key].name == "head"
