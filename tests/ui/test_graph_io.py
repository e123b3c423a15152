"""Graph inputs and outputs from the GUI: the Add Graph Input dialog and Make Graph Outputs,
each one undo step."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from helpers.gui import open_model
from PySide6.QtCore import QPointF
from pytestqt.qtbot import QtBot

from designer.core.scope import MAIN_SCOPE
from designer.ui.main_window import MainWindow
from designer.ui.tools.graph_io import AddInputDialog, make_outputs, parse_shape


def test_shape_text() -> None:
    assert parse_shape("[1, 'batch', 224]") == [1, "batch", 224]
    assert parse_shape("  ") is None
    for bad in ("[1, -2]", "3", "[1.5]", "[true]"):
        with pytest.raises(Exception, match=r"sizes? ≥ 0"):
            parse_shape(bad)


def test_add_graph_input_dialog(window: MainWindow, resnet_path: Path, qtbot: QtBot) -> None:
    tab = open_model(window, resnet_path, qtbot)
    before = tab.session.doc.model.SerializeToString()
    dialog = AddInputDialog(tab.view, QPointF(10, 20), window)
    dialog.name.setText("1bad")
    dialog.accept()
    assert "digit" in dialog.error.text()
    dialog.name.setText("mask")
    dialog.shape.setText("[1, 'seq', x]")
    dialog.accept()
    assert "position" in dialog.error.text()
    assert tab.session.doc.model.SerializeToString() == before
    dialog.elem_type.setCurrentText("INT64")
    dialog.shape.setText("[1, 'seq']")
    dialog.accept()
    graph = tab.session.doc.model.graph
    mask = next(v for v in graph.input if v.name == "mask")
    assert mask.type.tensor_type.elem_type == onnx.TensorProto.INT64
    assert [d.dim_param or d.dim_value for d in mask.type.tensor_type.shape.dim] == [1, "seq"]
    key = tab.session.doc.io_key(MAIN_SCOPE, "input", "mask")
    assert tab.session.doc.positions[MAIN_SCOPE][key] == (10.0, 20.0)
    tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before


def test_make_graph_outputs_from_selection(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    before = tab.session.doc.model.SerializeToString()
    scope = tab.session.doc.scope()
    key = next(k for k, n in scope.nodes() if n.op_type == "Relu")
    tab.view.select_keys([key])
    make_outputs(window)
    name = scope.node(key).output[0]
    output = next(v for v in tab.session.doc.model.graph.output if v.name == name)
    assert output.type.tensor_type.elem_type == onnx.TensorProto.FLOAT  # from inference
    assert tab.session.undo_stack.count() == 1
    make_outputs(window)  # already an output: nothing to add
    assert tab.session.undo_stack.count() == 1
    tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before


def test_menus_and_canvas_menu_offer_them(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    tab = open_model(window, resnet_path, qtbot)
    assert "add_graph_input" in window.actions_by_name
    texts = [a.text() for a in window.canvas_menu(tab, QPointF(0, 0)).actions()]
    assert "Add Graph Input Here…" in texts and "Make Graph &Outputs" in texts


def test_a_new_input_at_the_view_centre_covers_no_node(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    """Add Graph Input… placed the input at the view's centre, on the node there."""
    from PySide6.QtCore import QRectF

    from designer.ui.tools.graph_io import _scene_point

    tab = open_model(window, resnet_path, qtbot)
    view = tab.view
    item = next(iter(view.canvas.node_items.values()))
    view.centerOn(item.sceneBoundingRect().center())  # a node right at the centre
    at = _scene_point(view)
    box = QRectF(at.x(), at.y(), 120, 40)
    covered = [
        k for k, i in view.canvas.node_items.items() if i.sceneBoundingRect().intersects(box)
    ]
    assert not covered, covered


def test_a_bad_size_is_pointed_at() -> None:
    """A wrong size was reported at position 0 (the bracket), not where it is."""
    from designer.core.errors import ValueSyntaxError
    from designer.ui.params.io_panel import parse_dims

    with pytest.raises(ValueSyntaxError) as info:
        parse_shape("[1, 3, 32, -5]")
    assert info.value.position == 11 and "(item 4)" in str(info.value)
    with pytest.raises(ValueSyntaxError) as info:
        parse_dims("[1, ?, -5]")  # positions counted in the text as typed
    assert info.value.position == 7
