"""The Parameters window's TensorRT section with stored values the build refuses (QA trt-gui
finding 2): a hand-edited precision ('half') is shown as stored with the reason, not as
"No Constraint"; output types that are not one per output are shown with the reason; an
invalid stored profile is marked on the input. Each can be fixed there, and a valid value
shows no error. Real widgets (pytest-qt, offscreen) on a model built with onnx.helper."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from helpers.gui import open_model
from onnx import TensorProto, helper
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from designer.core.scope import MAIN_SCOPE
from designer.core.trt.settings import (
    OUTPUT_TYPES_KEY,
    PRECISION_KEY,
    PROFILES_KEY,
    read_settings_lenient,
    stored_output_types,
    stored_precision,
)
from designer.core.viewgraph import NodeKind
from designer.ui.canvas.precision_menu import fill_precision_menu
from designer.ui.docks.parameters import ParametersDock
from designer.ui.document_tab import DocumentTab
from designer.ui.main_window import MainWindow
from designer.ui.params.io_panel import IOPanel
from designer.ui.params.node_panel import NodePanel
from designer.ui.params.trt_section import InputTrtSection, NodeTrtSection

BAD_PROFILE = '{"version":1,"profiles":[{"x":{"min":[1,3,8,8],"opt":[4,3,8,8],"max":[2,3,8,8]}}]}'
GOOD_PROFILE = '{"version":1,"profiles":[{"x":{"min":[1,3,8,8],"opt":[4,3,8,8],"max":[8,3,8,8]}}]}'


def write_model(path: Path, bad: dict[str, str], good: dict[str, str], profiles: str) -> Path:
    """x[batch,3,8,8] → Relu "bad" → Relu "good", with that metadata on each."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="bad"),
        helper.make_node("Relu", ["r"], ["y"], name="good"),
    ]
    for node, props in zip(nodes, (bad, good), strict=True):
        for key, value in props.items():
            node.metadata_props.add(key=key, value=value)
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3, 8, 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    model.metadata_props.add(key=PROFILES_KEY, value=profiles)
    onnx.save(model, path)
    return path


@pytest.fixture
def tab(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> DocumentTab:
    path = write_model(
        tmp_path / "bad.onnx",
        {PRECISION_KEY: "half", OUTPUT_TYPES_KEY: "fp16,fp32"},
        {PRECISION_KEY: "fp16", OUTPUT_TYPES_KEY: "fp32"},
        BAD_PROFILE,
    )
    return open_model(window, path, qtbot)


def key_of(tab: DocumentTab, name: str) -> int:
    scope = tab.session.doc.scope(MAIN_SCOPE)
    return next(k for k, n in scope.nodes() if n.name == name)


def parameters(window: MainWindow) -> ParametersDock:
    return next(d for d in window.docks if isinstance(d, ParametersDock))


def select(window: MainWindow, tab: DocumentTab, qtbot: QtBot, key: int, panel: type) -> object:
    dock = parameters(window)
    tab.view.select_keys([key])
    window.selectionChanged.emit([key])
    qtbot.waitUntil(
        lambda: isinstance(dock.panel, panel) and getattr(dock.panel, "keys", [key]) == [key]
    )
    return dock.panel


def rebuilt(window: MainWindow, qtbot: QtBot, old: NodeTrtSection) -> NodeTrtSection:
    """The section of the panel the dock builds after an edit (it rebuilds on a timer)."""
    dock = parameters(window)
    qtbot.waitUntil(lambda: isinstance(dock.panel, NodePanel) and dock.panel.trt_section is not old)
    assert isinstance(dock.panel, NodePanel)
    return dock.panel.trt_section


def node_section(window: MainWindow, tab: DocumentTab, qtbot: QtBot, name: str) -> NodeTrtSection:
    panel = select(window, tab, qtbot, key_of(tab, name), NodePanel)
    assert isinstance(panel, NodePanel)
    return panel.trt_section


def test_a_stored_value_the_build_refuses_is_shown_with_why(
    window: MainWindow, tab: DocumentTab, qtbot: QtBot
) -> None:
    section = node_section(window, tab, qtbot, "bad")
    assert section.precision.currentText() == "half (not a precision)"  # not "No Constraint"
    assert section.types.text() == "fp16,fp32"
    message = section.stored_error.text()
    assert not section.stored_error.isHidden()
    assert "Stored precision: unknown TensorRT precision 'half'" in message
    assert "Stored output types: output types 'fp16,fp32': 2 types for 1 output" in message
    assert "An engine build refuses the model until this is fixed." in message

    good = node_section(window, tab, qtbot, "good")
    assert good.precision.currentText() == "fp16" and good.types.text() == "fp32"
    assert good.stored_error.text() == "" and good.stored_error.isHidden()


def test_the_refused_values_are_fixed_in_the_section(
    window: MainWindow, tab: DocumentTab, qtbot: QtBot
) -> None:
    key = key_of(tab, "bad")
    section = node_section(window, tab, qtbot, "bad")
    invalid = section.precision.currentIndex()
    section.precision.activated.emit(invalid)  # choosing the stored value again: no edit
    assert stored_precision(tab.session.doc.scope(MAIN_SCOPE).node(key)) == "half"
    combo = section.precision
    combo.setCurrentIndex(combo.findData(""))
    combo.activated.emit(combo.currentIndex())  # No Constraint clears it
    section = rebuilt(window, qtbot, section)
    assert section.precision.currentText() == "No Constraint"
    assert "Stored precision" not in section.stored_error.text()
    assert "Stored output types" in section.stored_error.text()
    section.types.setText("")
    section.types.editingFinished.emit()  # an empty field clears even refused types
    node = tab.session.doc.scope(MAIN_SCOPE).node(key)
    assert stored_precision(node) is None and stored_output_types(node) is None
    section = rebuilt(window, qtbot, section)
    assert section.stored_error.text() == "" and section.stored_error.isHidden()
    assert read_settings_lenient(tab.session.doc.model)[1] == []


def test_an_invalid_stored_profile_is_marked_on_the_input(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    for profiles, problems in ((BAD_PROFILE, 1), (GOOD_PROFILE, 0)):
        path = write_model(tmp_path / f"p{problems}.onnx", {}, {}, profiles)
        tab = open_model(window, path, qtbot)
        items = tab.view.canvas.node_items.values()
        key = next(i.key for i in items if i.view.kind == NodeKind.INPUT)
        panel = select(window, tab, qtbot, key, IOPanel)
        assert isinstance(panel, IOPanel)
        section = panel.trt_section
        assert isinstance(section, InputTrtSection)
        text = section.text.text()
        if problems:
            assert section.problems == [
                "profile 0: 'x' dim 0 (batch): need min ≤ opt ≤ max, got 1/4/2"
            ]
            assert "Profile 0: min 1x3x8x8, opt 4x3x8x8, max 2x3x8x8 <span" in text
            assert "invalid: &#x27;x&#x27; dim 0 (batch): need min ≤ opt ≤ max" in text
            assert "An engine build refuses the model" in text
        else:
            assert section.problems == []
            assert "invalid" not in text and "refuses" not in text
            assert "Profile 0: min 1x3x8x8, opt 4x3x8x8, max 8x3x8x8" in text


def test_the_precision_menu_checks_nothing_for_a_refused_value(tab: DocumentTab) -> None:
    for name, checked, note in (("bad", [], True), ("good", ["fp16"], False)):
        menu = QMenu()
        fill_precision_menu(menu, tab.session, MAIN_SCOPE, [key_of(tab, name)])
        actions = menu.actions()
        assert [a.text() for a in actions if a.isChecked()] == checked
        stored = [a for a in actions if a.text().startswith("Stored 'half'")]
        assert bool(stored) == note and all(not a.isEnabled() for a in stored)
