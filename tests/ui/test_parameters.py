"""The Parameters window with real widgets: attributes, defaults, rename, multi-selection,
model information; every change is one undo step that restores the model exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.gui import open_model
from helpers.shots import save_screenshot
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from designer.ui.dialogs import tensor_editor
from designer.ui.docks.parameters import ParametersDock
from designer.ui.main_window import DocumentTab, MainWindow
from designer.ui.params.model_panel import ModelPanel
from designer.ui.params.node_panel import NodePanel


def dock_of(window: MainWindow) -> ParametersDock:
    return next(d for d in window.docks if isinstance(d, ParametersDock))


def select(window: MainWindow, tab: DocumentTab, qtbot: QtBot, *names: str) -> NodePanel:
    scope = tab.session.doc.scope()
    keys = [k for k, n in scope.nodes() if n.name in names]
    tab.view.select_keys(keys)
    window.selectionChanged.emit(keys)
    dock = dock_of(window)
    qtbot.waitUntil(lambda: isinstance(dock.panel, NodePanel) and set(dock.panel.keys) == set(keys))
    assert isinstance(dock.panel, NodePanel)
    return dock.panel


def node(tab: DocumentTab, name: str) -> onnx.NodeProto:
    return next(n for n in tab.session.doc.model.graph.node if n.name == name)


def attr(tab: DocumentTab, name: str, attribute: str) -> onnx.AttributeProto | None:
    return next((a for a in node(tab, name).attribute if a.name == attribute), None)


def commit(panel: NodePanel, name: str, text: str) -> None:
    line = panel.rows[name].line
    assert line is not None
    line.setText(text)
    line.editingFinished.emit()


def current(window: MainWindow) -> NodePanel:
    panel = dock_of(window).panel
    assert isinstance(panel, NodePanel)
    return panel


def test_set_attribute_invalid_text_and_restore_default(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    model = lambda: tab.session.doc.model.SerializeToString()  # noqa: E731
    panel = select(window, tab, qtbot, "stem_pool")
    assert set(panel.rows) >= {"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode"}
    # set attributes on top, unset ones in the defaults section with the schema default
    assert panel.rows["kernel_shape"].parent() is panel.set_section.body
    assert panel.rows["ceil_mode"].parent() is panel.default_section.body
    assert panel.rows["ceil_mode"].line.text() == "0"  # type: ignore[union-attr]
    assert panel.rows["auto_pad"].combo is not None  # enum-like string: a combo box
    qtbot.waitUntil(lambda: "float32[1, 4, 32, 32]" in panel.types.text())

    before = model()
    commit(panel, "strides", "[1, x]")
    assert "position 4" in panel.rows["strides"].error.text()
    assert panel.rows["strides"].error.isVisible()
    assert model() == before
    commit(panel, "ceil_mode", "1.5")
    assert "integer" in panel.rows["ceil_mode"].error.text()
    assert model() == before

    commit(panel, "ceil_mode", "1")  # editing a default moves it out of the defaults
    assert attr(tab, "stem_pool", "ceil_mode").i == 1  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: current(window) is not panel)
    panel = current(window)
    assert panel.rows["ceil_mode"].parent() is panel.set_section.body
    after_set = model()
    panel.rows["ceil_mode"].reset_button.click()  # restore the default
    assert attr(tab, "stem_pool", "ceil_mode") is None
    assert model() == before
    tab.session.undo_stack.undo()
    assert model() == after_set
    tab.session.undo_stack.undo()
    assert model() == before

    qtbot.waitUntil(lambda: current(window) is not panel)
    panel = current(window)
    combo = panel.rows["auto_pad"].combo
    assert combo is not None
    combo.activated.emit(combo.findText("SAME_UPPER"))
    assert attr(tab, "stem_pool", "auto_pad").s == b"SAME_UPPER"  # type: ignore[union-attr]
    tab.session.undo_stack.undo()
    assert model() == before
    panel.setMinimumSize(380, 620)
    dock_of(window).resize(400, 700)
    qtbot.waitUntil(lambda: current(window).isVisible())
    save_screenshot(current(window), "parameters_maxpool.png")


def test_tensor_editor_button_and_graph_link(
    window: MainWindow, resnet_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    before = tab.session.doc.model.SerializeToString()
    panel = select(window, tab, qtbot, "stem_pool")
    seen: list[tuple[np.ndarray, int]] = []

    def fake_edit(parent, array, elem_type, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((array, elem_type))
        assert kwargs["max_rank"] == 1 and kwargs["fixed_type"]
        return np.array([3, 3], np.int64), elem_type

    monkeypatch.setattr(tensor_editor, "edit_tensor", fake_edit)
    panel.rows["kernel_shape"].tensor_button.click()
    assert list(seen[0][0]) == [2, 2] and seen[0][1] == onnx.TensorProto.INT64
    assert list(attr(tab, "stem_pool", "kernel_shape").ints) == [3, 3]  # type: ignore[union-attr]
    tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before


def test_rename_refuses_duplicates_and_bad_identifiers(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    before = tab.session.doc.model.SerializeToString()
    panel = select(window, tab, qtbot, "stem_pool")
    panel.name_edit.setText("head_fc")
    panel.name_edit.editingFinished.emit()
    assert "already exists" in panel.name_error.text()
    panel.name_edit.setText("2pool")
    panel.name_edit.editingFinished.emit()
    assert "starts with a digit" in panel.name_error.text()
    assert tab.session.doc.model.SerializeToString() == before
    panel.name_edit.setText("first_pool")
    panel.name_edit.editingFinished.emit()
    assert node(tab, "first_pool").op_type == "MaxPool"
    tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before


def test_multi_selection_edits_common_attribute_in_one_step(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    before = tab.session.doc.model.SerializeToString()
    panel = select(window, tab, qtbot, "stem_conv", "block0a_conv", "stem_pool")
    # Conv and MaxPool share pads/strides/kernel_shape/auto_pad/dilations, not group
    assert "pads" in panel.rows and "group" not in panel.rows and "ceil_mode" not in panel.rows
    assert panel.rows["pads"].line.text() == ""  # type: ignore[union-attr]  # set on convs only
    count = tab.session.undo_stack.count()
    commit(panel, "pads", "[0, 0, 0, 0]")
    assert tab.session.undo_stack.count() == count + 1
    for name in ("stem_conv", "block0a_conv", "stem_pool"):
        assert list(attr(tab, name, "pads").ints) == [0, 0, 0, 0]  # type: ignore[union-attr]
    tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before


def test_model_information_is_editable(window: MainWindow, resnet_path: Path, qtbot: QtBot) -> None:
    tab = open_model(window, resnet_path, qtbot)
    dock = dock_of(window)
    tab.view.select_keys([])
    window.selectionChanged.emit([])
    qtbot.waitUntil(lambda: isinstance(dock.panel, ModelPanel))
    panel = dock.panel
    assert isinstance(panel, ModelPanel)
    before = tab.session.doc.model.SerializeToString()
    panel.fields["producer_name"].setText("designer-test")
    panel.fields["producer_name"].editingFinished.emit()
    assert tab.session.doc.model.producer_name == "designer-test"
    step1 = tab.session.doc.model.SerializeToString()
    qtbot.waitUntil(lambda: dock.panel is not panel)
    panel = dock.panel
    assert isinstance(panel, ModelPanel)
    panel.version.setText("seven")
    panel.version.editingFinished.emit()
    assert "not an integer" in panel.version_error.text()
    assert tab.session.doc.model.SerializeToString() == step1
    panel.add_property()
    assert [p.key for p in tab.session.doc.model.metadata_props] == ["key"]
    qtbot.waitUntil(lambda: dock.panel is not panel)
    panel = dock.panel
    assert isinstance(panel, ModelPanel)
    panel.table.item(0, 1).setText("value 1")
    assert tab.session.doc.model.metadata_props[0].value == "value 1"
    qtbot.waitUntil(lambda: dock.panel is not panel)
    save_screenshot(dock.panel, "parameters_model_info.png")  # type: ignore[union-attr]
    for _ in range(3):
        tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before


def test_graph_input_renamed_from_its_panel(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    from designer.core.scope import MAIN_SCOPE
    from designer.ui.params.io_panel import IOPanel

    tab = open_model(window, resnet_path, qtbot)
    dock = dock_of(window)
    doc = tab.session.doc
    before = doc.model.SerializeToString()
    tab.view.select_io("input", "image")
    qtbot.waitUntil(lambda: isinstance(dock.panel, IOPanel))
    panel = dock.panel
    assert isinstance(panel, IOPanel)
    texts = " ".join(label.text() for label in panel.findChildren(QLabel))
    assert "<b>Graph input</b> — image" in texts and "float32[1, 3, 32, 32]" in texts
    assert "read by stem_conv" in texts
    # a name that is taken: inline error, nothing changes
    panel.name_edit.setText("logits")
    panel.name_edit.editingFinished.emit()
    assert "already exists" in panel.name_error.text() and panel.name_error.isVisibleTo(panel)
    assert doc.model.SerializeToString() == before
    panel.name_edit.setText("pixels")
    panel.name_edit.editingFinished.emit()
    assert doc.model.graph.input[0].name == "pixels"
    assert doc.model.graph.node[0].input[0] == "pixels"
    qtbot.waitUntil(lambda: isinstance(dock.panel, IOPanel) and dock.panel.name == "pixels")
    assert tab.view.selected_keys() == [doc.io_key(MAIN_SCOPE, "input", "pixels")]
    tab.session.undo_stack.undo()
    assert doc.model.SerializeToString() == before
    tab.session.undo_stack.setClean()
