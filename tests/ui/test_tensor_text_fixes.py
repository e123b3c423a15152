"""Viewing the Tensor Editor's text tab changes nothing; a misfit attribute value names the
text typed."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import numpy_helper
from pytestqt.qtbot import QtBot

from designer.ui.dialogs.tensor_editor import TensorEditorDialog
from designer.ui.params.attr_text import AttributeTextError, parse_attribute


@pytest.mark.parametrize("back_to_table", [False, True])
def test_viewing_text_keeps_empty_dims(qtbot: QtBot, back_to_table: bool) -> None:
    dialog = TensorEditorDialog(np.zeros((0, 4), np.float32), T.FLOAT)
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentIndex(1)
    assert dialog.text.toPlainText() == "[]"
    if back_to_table:
        dialog.tabs.setCurrentIndex(0)
        assert dialog.tabs.currentIndex() == 0
    dialog.accept()
    assert numpy_helper.to_array(dialog.tensor("w")).shape == (0, 4)
    assert dialog.shape.text() == "[0, 4]" and not dialog.error.text()


def test_retyped_empty_text_keeps_dims(qtbot: QtBot) -> None:
    dialog = TensorEditorDialog(np.zeros((2, 0, 3), np.int32), T.INT32)
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentIndex(1)
    assert dialog.text.toPlainText() == "[[], []]"
    dialog.text.setPlainText("[ [],[] ]\n")
    dialog.tabs.setCurrentIndex(0)
    assert dialog.array.shape == (2, 0, 3) and dialog.shape.text() == "[2, 0, 3]"
    dialog.tabs.setCurrentIndex(1)
    dialog.text.setPlainText("[[]]")  # other text: the shape it spells
    dialog.accept()
    assert dialog.shape.text() == "[1, 0]"


def test_viewing_text_keeps_nan_payloads(qtbot: QtBot) -> None:
    bits = np.array([0x7FC00001, 0xFFC12345, 0x3F800000], np.uint32)
    dialog = TensorEditorDialog(bits.view(np.float32), T.FLOAT)
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentIndex(1)
    assert dialog.text.toPlainText() == "[nan, -nan, 1.0]"
    dialog.accept()
    assert dialog.array.view(np.uint32).tolist() == bits.tolist()


def test_text_tab_follows_shape_and_paste(qtbot: QtBot) -> None:
    dialog = TensorEditorDialog(np.arange(4, dtype=np.int64), T.INT64)
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentIndex(1)
    dialog.shape.setText("[2, 2]")
    dialog.apply_shape()
    assert dialog.text.toPlainText() == "[[0, 1], [2, 3]]"
    assert dialog.paste_text("[[5, 6], [7, 8]]")
    assert dialog.text.toPlainText() == "[[5, 6], [7, 8]]"
    dialog.accept()
    assert dialog.array.tolist() == [[5, 6], [7, 8]]


def test_misfit_attribute_value_names_the_text() -> None:
    with pytest.raises(AttributeTextError) as info:
        parse_attribute("value", onnx.AttributeProto.TENSOR, "1.5", T.INT64)
    assert str(info.value) == "at position 0: 1.5 is not an integer (INT64)"
    with pytest.raises(AttributeTextError, match=r"1\.5 is not an integer \(INT64\)"):
        parse_attribute("pads", onnx.AttributeProto.INTS, "[0, 1.5]")
