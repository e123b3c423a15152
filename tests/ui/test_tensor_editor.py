"""The Tensor Editor: table of slices, text mode, paste, dtype ranges, shape changes."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


import numpy as np
from helpers.shots import save_screenshot
from onnx import TensorProto as T
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from designer.ui.dialogs.tensor_editor import TensorEditorDialog


def test_table_slices_cells_and_ranges(qtbot: QtBot) -> None:
    array = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
    dialog = TensorEditorDialog(array, T.INT8)
    qtbot.addWidget(dialog)
    model = dialog.model
    assert (model.rowCount(), model.columnCount()) == (3, 4)
    assert len(dialog.slice_boxes) == 1
    dialog.slice_boxes[0].setValue(1)
    assert model.index(0, 0).data() == "12"
    assert model.setData(model.index(0, 0), "-5")
    assert dialog.array[1, 0, 0] == -5
    assert not model.setData(model.index(0, 1), "300")
    assert "[-128, 127] for INT8" in dialog.error.text()
    assert dialog.array[1, 0, 1] == 13
    dialog.resize(560, 380)
    dialog.show()
    qtbot.waitExposed(dialog)
    save_screenshot(dialog, "tensor_editor_table.png")
    dialog.dtype.setCurrentIndex(dialog.dtype.findData(T.UINT8))  # -5 does not fit
    assert dialog.elem_type == T.INT8 and "UINT8" in dialog.error.text()
    dialog.shape.setText("[6, 4]")
    dialog.apply_shape()
    assert dialog.array.shape == (6, 4) and not dialog.slice_boxes


def test_text_mode_and_paste(qtbot: QtBot) -> None:
    dialog = TensorEditorDialog(np.zeros((2, 2), np.float32), T.FLOAT)
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentIndex(1)
    assert dialog.text.toPlainText() == "[[0.0, 0.0], [0.0, 0.0]]"
    dialog.text.setPlainText("[[1, 2], [3")
    dialog.tabs.setCurrentIndex(0)  # invalid text keeps the text tab with the error
    assert dialog.tabs.currentIndex() == 1 and "position" in dialog.error.text()
    dialog.text.setPlainText("[[1, 2, 3], [4, 5, 6]]")
    dialog.tabs.setCurrentIndex(0)
    assert dialog.array.shape == (2, 3) and dialog.array[1, 2] == 6
    dialog.table.setCurrentIndex(dialog.model.index(1, 1))
    assert dialog.paste_text("7\t8")
    assert dialog.array[1].tolist() == [4, 7, 8]
    assert not dialog.paste_text("1\t2\t3")  # does not fit from column 1
    assert "does not fit" in dialog.error.text()
    assert dialog.paste_text("[[9, 9, 9], [9, 9, 9]]")  # whole shape: replaces everything
    assert (dialog.array == 9).all()
    assert not dialog.paste_text("[1e39]")
    assert "FLOAT" in dialog.error.text()
    dialog.table.setCurrentIndex(dialog.model.index(0, 0))
    assert dialog.paste_text("[1.5, 2.5]")
    assert dialog.array[0].tolist() == [1.5, 2.5, 9]
    dialog.accept()
    assert dialog.tensor("w").dims == [2, 3]


def test_big_tensor_stays_lazy(qtbot: QtBot) -> None:
    array = np.zeros((4, 512, 1024), np.float32)  # 2 M values
    dialog = TensorEditorDialog(array, T.FLOAT, fixed_type=True)
    qtbot.addWidget(dialog)
    assert not dialog.tabs.isTabEnabled(1)  # text mode is for smaller tensors
    assert not dialog.dtype.isEnabled()
    dialog.slice_boxes[0].setValue(3)
    model = dialog.model
    assert model.setData(model.index(511, 1023), "2")
    assert dialog.array[3, 511, 1023] == 2
    assert model.flags(model.index(0, 0)) & Qt.ItemFlag.ItemIsEditable
