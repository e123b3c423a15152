"""TensorRT settings in the GUI with real widgets (X-1, X-2, C-8): the optimization profile
dialog (inline errors, OK, several profiles, one undo step), Set Layer Precision on a
multi-selection (one undo step), the precision badge and its quick menu, the Layer Explorer's
TRT-Prec column (sort, filter, context menu) and the Parameters window."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.gui import explorer_panel, open_model
from helpers.shared import model as shared_model
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from designer.core.edits.trt import SetLayerPrecision, SetOptimizationProfiles
from designer.core.scope import MAIN_SCOPE, ScopeId, SubgraphStep
from designer.core.trt.settings import (
    InputShapes,
    OptimizationProfile,
    node_precision,
    read_profiles,
    read_settings,
)
from designer.core.viewgraph import NodeKind
from designer.ui.canvas.items import NodeItem
from designer.ui.canvas.precision_menu import MAIN_ONLY, fill_precision_menu
from designer.ui.dialogs.trt_profile_dialog import TrtProfileDialog
from designer.ui.docks.explorer import ExplorerPanel
from designer.ui.docks.parameters import ParametersDock
from designer.ui.main_window import DocumentTab, MainWindow
from designer.ui.params.io_panel import IOPanel
from designer.ui.params.node_panel import NodePanel
from designer.ui.qtmodels.explorer_model import AttributeFilter
from designer.ui.session import DocumentSession

SQUEEZENET = shared_model("squeezenet1_0.torchscript.onnx")
LLAMA = shared_model("llama_24l_h64.dynamo.onnx")


def ops(tab: DocumentTab, op_type: str) -> list[NodeItem]:
    items = tab.view.canvas.node_items.values()
    return [i for i in items if i.view.kind == NodeKind.OP and i.view.op_type == op_type]


def input_item(tab: DocumentTab, name: str) -> NodeItem:
    items = tab.view.canvas.node_items.values()
    return next(i for i in items if i.view.kind == NodeKind.INPUT and i.view.name == name)


def action(menu: QMenu, text: str) -> QAction:
    found = [a for a in menu.actions() if a.text() == text]
    assert found, [a.text() for a in menu.actions()]
    return found[0]


def submenu(menu: QMenu, prefix: str) -> QMenu:
    for a in menu.actions():
        if a.menu() is not None and a.text().startswith(prefix):
            sub = a.menu()
            assert isinstance(sub, QMenu)
            return sub
    raise AssertionError([a.text() for a in menu.actions()])


def precisions(tab: DocumentTab) -> dict[str, str]:
    return dict(read_settings(tab.session.doc.model).precisions)


@pytest.fixture
def squeeze(window: MainWindow, qtbot: QtBot) -> DocumentTab:
    return open_model(window, SQUEEZENET, qtbot)


# --- the profile dialog ----------------------------------------------------------------------
def test_profile_dialog_inline_errors_ok_and_one_undo_step(
    window: MainWindow, qtbot: QtBot
) -> None:
    session = DocumentSession.open(LLAMA, window)
    dialog = TrtProfileDialog(session, "input_ids", window)
    qtbot.addWidget(dialog)
    assert dialog.tabs.count() == 1 and dialog.ok_button.isEnabled()  # 1/1/1 is valid
    tab = dialog.tab(0)
    assert set(tab.fields) == {0, 1}  # batch and seq are free
    _lo, mid, hi = tab.fields[1]
    mid.setValue(128)
    hi.setValue(64)
    assert "need min ≤ opt ≤ max, got 1/128/64" in tab.error.text()
    assert not dialog.ok_button.isEnabled() and dialog.tabs.tabText(0) == "Profile 0 ⚠"
    hi.setValue(512)
    tab.fields[0][2].setValue(8)
    assert tab.error.text() == "" and dialog.ok_button.isEnabled()
    assert "Also in this profile: attention_mask" in tab.others.text()
    second = dialog.add_profile()
    assert dialog.tabs.count() == 2 and second.error.text() == ""
    second.fields[0][0].setValue(0)
    assert "sizes must be ≥ 1" in second.error.text() and not dialog.ok_button.isEnabled()
    second.fields[0][0].setValue(1)
    dialog.accept()
    assert dialog.result() == TrtProfileDialog.DialogCode.Accepted
    profiles = read_profiles(session.doc.model)
    assert len(profiles) == 2 and session.undo_stack.count() == 1
    first = profiles[0].shapes
    assert first["input_ids"] == InputShapes((1, 1), (1, 128), (8, 512))
    assert first["attention_mask"] == first["input_ids"]  # the same dim names: batch, seq
    session.undo_stack.undo()
    assert read_profiles(session.doc.model) == ()

    # reopening shows the stored profiles; removing every tab then OK clears them
    session.undo_stack.redo()
    again = TrtProfileDialog(session, "attention_mask", window)
    qtbot.addWidget(again)
    assert again.tabs.count() == 2 and again.tab(0).shapes().max == (8, 512)
    again.remove_profile()
    again.remove_profile()
    assert "OK removes every optimization profile" in again.status.text()
    again.accept()
    assert read_profiles(session.doc.model) == () and session.undo_stack.count() == 2


def test_canvas_menu_on_a_graph_input_opens_the_dialog(
    window: MainWindow, squeeze: DocumentTab
) -> None:
    item = input_item(squeeze, "input")
    menu = window.canvas_menu(squeeze, item.sceneBoundingRect().center())
    try:
        action(menu, "Set TensorRT Optimization Profile…").trigger()
        dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, TrtProfileDialog)]
        assert len(dialogs) == 1 and dialogs[0].isVisible()
        tab = dialogs[0].tab(0)
        assert set(tab.fields) == {0}  # only batch is free: 3x224x224 is fixed
        tab.fields[0][2].setValue(16)
        dialogs[0].accept()
        (profile,) = read_profiles(squeeze.session.doc.model)
        assert profile.shapes["input"].max == (16, 3, 224, 224)
    finally:
        menu.deleteLater()


# --- layer precision: canvas menu, badge, quick menu -------------------------------------------
def test_precision_submenu_on_a_multi_selection_is_one_undo_step(
    window: MainWindow, squeeze: DocumentTab, qtbot: QtBot
) -> None:
    convs = ops(squeeze, "Conv")[:3]
    squeeze.view.select_keys([i.key for i in convs])
    menu = window.canvas_menu(squeeze, convs[0].sceneBoundingRect().center())
    try:
        sub = submenu(menu, "Set Layer Precision (3 nodes)")
        assert [a.text() for a in sub.actions() if not a.isSeparator()][-1] == "No Constraint"
        before = squeeze.session.undo_stack.count()
        action(sub, "fp16").trigger()
    finally:
        menu.deleteLater()
    names = {squeeze.session.doc.scope().node(i.key).name for i in convs}
    assert precisions(squeeze) == dict.fromkeys(names, "fp16")
    assert squeeze.session.undo_stack.count() == before + 1
    squeeze.view.flush()
    assert all(i.badge_label == "FP16" and not i.precision_badge().isEmpty() for i in convs)
    # a node outside the selection: only that node
    other = ops(squeeze, "Relu")[0]
    menu = window.canvas_menu(squeeze, other.sceneBoundingRect().center())
    try:
        assert submenu(menu, "Set Layer Precision").title() == "Set Layer Precision"
    finally:
        menu.deleteLater()
    squeeze.session.undo_stack.undo()
    squeeze.view.flush()
    assert precisions(squeeze) == {} and all(i.badge_label == "" for i in convs)


def test_badge_click_opens_quick_menu_that_clears(
    window: MainWindow, squeeze: DocumentTab, qtbot: QtBot
) -> None:
    item = ops(squeeze, "Conv")[0]
    assert squeeze.session.push(SetLayerPrecision(MAIN_SCOPE, [item.key], "int8"))
    squeeze.view.flush()
    squeeze.view.center_on(item.key)
    badge = item.mapToScene(item.precision_badge().center())
    pos = squeeze.view.mapFromScene(badge)
    QTest.mouseClick(squeeze.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    menu = squeeze.view.findChild(QMenu, "precision_quick_menu")
    assert menu is not None
    checked = [a.text() for a in menu.actions() if a.isChecked()]
    assert checked == ["int8"]
    action(menu, "No Constraint").trigger()
    menu.close()
    assert precisions(squeeze) == {}
    squeeze.view.flush()
    assert item.badge_label == ""


def test_precision_menu_outside_the_main_graph_says_why(
    window: MainWindow, squeeze: DocumentTab
) -> None:
    menu = QMenu()
    try:
        sub_scope = ScopeId(None, (SubgraphStep(1, "then_branch"),))
        fill_precision_menu(menu, squeeze.session, sub_scope, [1])
        (entry,) = menu.actions()
        assert entry.text() == MAIN_ONLY and not entry.isEnabled()
    finally:
        menu.deleteLater()


# --- Layer Explorer ---------------------------------------------------------------------------
def explorer(window: MainWindow) -> ExplorerPanel:
    return explorer_panel(window)


def test_explorer_column_sort_filter_and_context_menu(
    window: MainWindow, squeeze: DocumentTab, qtbot: QtBot
) -> None:
    panel = explorer(window)
    model = panel.model
    convs = ops(squeeze, "Conv")
    last = max(convs, key=lambda i: squeeze.session.doc.scope().node(i.key).name)
    assert squeeze.session.push(SetLayerPrecision(MAIN_SCOPE, [last.key], "bf16"))
    panel.flush()
    assert model.index_of_key(last.key, 2).data() == "bf16"
    panel.grouping.setCurrentIndex(panel.grouping.findData("none"))
    panel.tree.header().setSortIndicator(2, Qt.SortOrder.AscendingOrder)  # click on TRT-Prec
    assert model.sort_column == 2 and model.key_of(model.index(0, 0)) == last.key
    panel.tree.header().setSortIndicator(2, Qt.SortOrder.DescendingOrder)
    assert model.key_of(model.index(model.rowCount() - 1, 0)) == last.key
    assert panel.order.isChecked() and panel.order.text() == "Z→A"
    panel.model.set_advanced((), [AttributeFilter("TRT-Prec", "bf16")])
    assert model.visible_count() == 1
    panel.model.set_advanced((), ())

    # right-click two selected layers > Set Layer Precision > int8
    two = [convs[0].key, convs[1].key]
    squeeze.view.select_keys(two)
    qtbot.waitUntil(lambda: sorted(panel.selected_keys()) == sorted(two))
    rect = panel.tree.visualRect(model.index_of_key(two[0]))
    panel.tree.customContextMenuRequested.emit(rect.center())
    menu = next(m for m in panel.tree.findChildren(QMenu) if m.actions())
    action(submenu(menu, "Set Layer Precision (2 nodes)"), "int8").trigger()
    menu.close()
    scope = squeeze.session.doc.scope()
    assert {node_precision(scope.node(k)) for k in two} == {"int8"}
    panel.flush()
    assert {model.index_of_key(k, 2).data() for k in two} == {"int8"}


# --- Parameters window ------------------------------------------------------------------------
def parameters(window: MainWindow) -> ParametersDock:
    return next(d for d in window.docks if isinstance(d, ParametersDock))


def test_parameters_show_and_set_both_settings(
    window: MainWindow, squeeze: DocumentTab, qtbot: QtBot
) -> None:
    dock = parameters(window)
    conv = ops(squeeze, "Conv")[0]
    squeeze.view.select_keys([conv.key])
    window.selectionChanged.emit([conv.key])
    qtbot.waitUntil(lambda: isinstance(dock.panel, NodePanel))
    assert isinstance(dock.panel, NodePanel)
    combo = dock.panel.trt_section.precision
    assert combo.currentText() == "No Constraint"
    combo.setCurrentIndex(combo.findData("fp8"))
    combo.activated.emit(combo.currentIndex())
    assert node_precision(squeeze.session.doc.scope().node(conv.key)) == "fp8"
    qtbot.waitUntil(
        lambda: (
            isinstance(dock.panel, NodePanel)
            and dock.panel.trt_section.precision.currentText() == "fp8"
        )
    )
    types = dock.panel.trt_section.types
    types.setText("fp16,fp16")
    types.editingFinished.emit()
    assert "has 1 output; give 1 type, not 2" in dock.panel.trt_section.error.text()
    types.setText("fp16")
    types.editingFinished.emit()
    name = squeeze.session.doc.scope().node(conv.key).name
    assert read_settings(squeeze.session.doc.model).output_types == {name: ("fp16",)}

    batch = InputShapes((1, 3, 224, 224), (4, 3, 224, 224), (8, 3, 224, 224))
    profile = OptimizationProfile({"input": batch})
    assert squeeze.session.push(SetOptimizationProfiles([profile]))
    key = input_item(squeeze, "input").key
    squeeze.view.select_keys([key])
    window.selectionChanged.emit([key])
    qtbot.waitUntil(lambda: isinstance(dock.panel, IOPanel))
    assert isinstance(dock.panel, IOPanel)
    text = dock.panel.trt_section.text.text()
    assert "Profile 0: min 1x3x224x224, opt 4x3x224x224, max 8x3x224x224" in text


def test_saved_settings_reopen_in_the_gui(
    window: MainWindow, squeeze: DocumentTab, qtbot: QtBot, tmp_path: Path
) -> None:
    conv = ops(squeeze, "Conv")[0]
    assert squeeze.session.push(SetLayerPrecision(MAIN_SCOPE, [conv.key], "fp16"))
    path = tmp_path / "with_trt.onnx"
    squeeze.session.save(path)
    copy = tmp_path / "copy.onnx"  # another file: a new tab, read from disk
    shutil.copyfile(path, copy)
    tab = open_model(window, copy, qtbot)
    assert tab is not squeeze
    badges = [i for i in tab.view.canvas.node_items.values() if i.badge_label]
    assert [i.badge_label for i in badges] == ["FP16"]
