"""Batch Tensor Cast written to a file from a model with external data streams each cast
weight into the output's data file (designer.core.io.stream) instead of holding them all
until the save; the open document is not changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from helpers.transform_models import resnet_like, save_external
from onnx import TensorProto, numpy_helper
from pytestqt.qtbot import QtBot
from test_global_modification import model_bytes, open_tool, run_and_wait, session_of

from designer.core.io.stream import DataSink
from designer.ui.dialogs.cast_dialog import CastDialog
from designer.ui.dialogs.status_dialog import RunState
from designer.ui.main_window import MainWindow


def test_cast_to_a_file_streams_the_weights(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "ext" / "big.onnx"
    source.parent.mkdir()
    save_external(resnet_like(channels=4, blocks=1, size=8), str(source))
    original = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(source)).graph.initializer}
    written: list[str] = []
    real_write = DataSink.write

    def spy(self: DataSink, tensor: onnx.TensorProto, values: np.ndarray) -> None:
        written.append(tensor.name)
        real_write(self, tensor, values)

    monkeypatch.setattr(DataSink, "write", spy)
    window.open_files([source])
    session = session_of(window)
    qtbot.waitUntil(lambda: session.check_result is not None, timeout=20_000)
    before = model_bytes(window)
    cast: Any = open_tool(window, "batch_tensor_cast", CastDialog)
    cast.initializers.filter_edits[0].setText("w3")
    cast.initializers.check_shown(True)
    cast.target.setCurrentText("double")
    cast.confirm_loss = lambda text, details: pytest.fail("float to double is exact")
    cast.destination.to_file.setChecked(True)
    out = tmp_path / "elsewhere" / "double.onnx"
    out.parent.mkdir()
    cast.destination.path.setText(str(out))
    assert run_and_wait(qtbot, cast) is RunState.SUCCESS, cast.status.text()
    assert written == ["w3"]  # 1,152 bytes as double: streamed
    onnx.checker.check_model(str(out), full_check=True)
    refs = onnx.load(str(out), load_external_data=False)
    ref = next(t for t in refs.graph.initializer if t.name == "w3")
    assert ref.data_location == TensorProto.EXTERNAL
    assert {e.key: e.value for e in ref.external_data}["location"] == "double.onnx.data"
    w3 = next(t for t in onnx.load(str(out)).graph.initializer if t.name == "w3")
    assert w3.data_type == TensorProto.DOUBLE
    np.testing.assert_array_equal(numpy_helper.to_array(w3), original["w3"].astype(np.float64))
    assert not list(out.parent.glob(".*.tmp"))
    assert model_bytes(window) == before  # the open document is untouched
    cast.status.close()
