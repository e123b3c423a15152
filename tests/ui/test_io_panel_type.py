"""A graph input's or output's element type and shape edited in the Parameters window
(IOPanel) on the real BERT export: one SetValueType undo step, bad text an inline error."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers.gui import open_model
from helpers.shared import model
from helpers.shots import save_screenshot
from pytestqt.qtbot import QtBot

from designer.ui.docks.parameters import ParametersDock
from designer.ui.document_tab import DocumentTab
from designer.ui.main_window import MainWindow
from designer.ui.params.io_panel import IOPanel, parse_dims


def _dims(value: onnx.ValueInfoProto) -> list[int | str]:
    return [
        d.dim_value if d.HasField("dim_value") else d.dim_param
        for d in value.type.tensor_type.shape.dim
    ]


def _panel(window: MainWindow, tab: DocumentTab, qtbot: QtBot, kind: str, name: str) -> IOPanel:
    dock = next(d for d in window.docks if isinstance(d, ParametersDock))
    old = dock.panel
    tab.view.select_io(kind, name)
    qtbot.waitUntil(
        lambda: (
            dock.panel is not old and isinstance(dock.panel, IOPanel) and dock.panel.name == name
        )
    )
    assert isinstance(dock.panel, IOPanel)
    return dock.panel


def _rebuilt(window: MainWindow, qtbot: QtBot, old: IOPanel, shape: str) -> IOPanel:
    """The panel the Parameters window shows in place of ``old`` after an edit."""
    dock = next(d for d in window.docks if isinstance(d, ParametersDock))
    qtbot.waitUntil(lambda: isinstance(dock.panel, IOPanel) and dock.panel is not old)
    assert isinstance(dock.panel, IOPanel)
    assert dock.panel.shape_edit.text() == shape
    assert isinstance(dock.panel, IOPanel)
    return dock.panel


def _commit_shape(panel: IOPanel, text: str) -> None:
    panel.shape_edit.setText(text)
    panel.shape_edit.editingFinished.emit()


@pytest.fixture
def bert(tmp_path: Path) -> Path:
    path = tmp_path / "bert.onnx"
    shutil.copy(model("bert_4l_h64.torchscript.onnx"), path)
    return path


def test_shape_text_reads_unknown_sizes() -> None:
    assert parse_dims("[1, 'seq', ?]") == [1, "seq", None]
    assert parse_dims("['a?b']") == ["a?b"]
    assert parse_dims(" ") is None
    with pytest.raises(Exception, match="position 2"):
        parse_dims("[?")


def test_input_shape_fixed_to_batch_one(window: MainWindow, bert: Path, qtbot: QtBot) -> None:
    tab = open_model(window, bert, qtbot)
    doc = tab.session.doc
    before = doc.model.SerializeToString()
    panel = _panel(window, tab, qtbot, "input", "input_ids")
    assert panel.elem_combo.currentText() == "INT64"
    assert panel.shape_edit.text() == "['batch', 'seq']"
    save_screenshot(panel, "io_panel_input_type.png")
    # bad text: a message at the field, the document as it was, no undo step
    _commit_shape(panel, "[1, seq]")
    assert "position 4" in panel.type_error.text() and panel.type_error.isVisibleTo(panel)
    assert doc.model.SerializeToString() == before
    assert tab.session.undo_stack.count() == 0
    save_screenshot(panel, "io_panel_shape_error.png")
    checked = tab.session.check_result
    _commit_shape(panel, "[1, 'seq']")
    assert _dims(doc.model.graph.input[0]) == [1, "seq"]
    assert _dims(doc.model.graph.input[1]) == ["batch", "seq"]
    assert tab.session.undo_stack.count() == 1
    # Type Checking runs again and sees the new shape
    qtbot.waitUntil(lambda: tab.session.check_result is not checked, timeout=30_000)
    result = tab.session.check_result
    assert result is not None
    inferred = result.type_of(tab.view.scope_id, "input_ids")
    assert inferred is not None and inferred.tensor_type.shape.dim[0].dim_value == 1
    # the panel is rebuilt with the new shape
    _rebuilt(window, qtbot, panel, "[1, 'seq']")
    assert window.save(tab)
    saved = onnx.load(str(bert))
    assert _dims(saved.graph.input[0]) == [1, "seq"]
    onnx.checker.check_model(saved, full_check=True)
    session = ort.InferenceSession(str(bert), providers=["CPUExecutionProvider"])
    assert session.get_inputs()[0].shape == [1, "seq"]
    ids = np.random.default_rng(0).integers(0, 1000, (1, 16)).astype(np.int64)
    (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
    assert hidden.shape == (1, 16, 64)
    tab.session.undo_stack.undo()
    assert doc.model.SerializeToString() == before


def test_output_element_type_and_unknown_size(window: MainWindow, bert: Path, qtbot: QtBot) -> None:
    tab = open_model(window, bert, qtbot)
    doc = tab.session.doc
    before = doc.model.SerializeToString()
    panel = _panel(window, tab, qtbot, "output", "last_hidden_state")
    assert panel.elem_combo.currentText() == "FLOAT"
    assert panel.shape_edit.text() == "['batch', 'seq', 64]"
    panel.elem_combo.setCurrentText("FLOAT16")
    panel.elem_combo.activated.emit(panel.elem_combo.currentIndex())
    out = doc.model.graph.output[0]
    assert out.type.tensor_type.elem_type == onnx.TensorProto.FLOAT16
    assert _dims(out) == ["batch", "seq", 64]  # the shape as it was
    assert tab.session.undo_stack.count() == 1
    panel = _rebuilt(window, qtbot, panel, "['batch', 'seq', 64]")
    assert panel.elem_combo.currentText() == "FLOAT16"
    _commit_shape(panel, "[?, 'seq', 64]")
    dim0 = doc.model.graph.output[0].type.tensor_type.shape.dim[0]
    assert not dim0.HasField("dim_value") and not dim0.HasField("dim_param")
    _rebuilt(window, qtbot, panel, "[?, 'seq', 64]")
    tab.session.undo_stack.undo()
    tab.session.undo_stack.undo()
    assert doc.model.SerializeToString() == before


def test_the_checked_type_follows_the_check_after_a_shape_edit(
    window: MainWindow, bert: Path, qtbot: QtBot
) -> None:
    """The panel rebuilt on the edit showed the old checked type until reselected."""
    tab = open_model(window, bert, qtbot)
    panel = _panel(window, tab, qtbot, "input", "input_ids")
    assert "batch" in panel.checked_label.text()
    checked = tab.session.check_result
    _commit_shape(panel, "[1, 'seq']")
    panel = _rebuilt(window, qtbot, panel, "[1, 'seq']")
    qtbot.waitUntil(lambda: tab.session.check_result is not checked, timeout=30_000)
    qtbot.waitUntil(lambda: panel.checked_label.text().startswith("int64[1, "), timeout=5_000)
