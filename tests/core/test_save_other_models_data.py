"""A save refuses a target that is the external data file of another model in its folder:
it replaced gpt.onnx's weights with a model file, and `check gpt.onnx` still passed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.core.errors import ModelSaveError
from designer.core.io.save import write_model


def matmul_model(name: str) -> onnx.ModelProto:
    weight = numpy_helper.from_array(np.ones((8, 8), np.float32), f"{name}_w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", f"{name}_w"], ["y"], name="mm")],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    onnx.save(
        matmul_model("gpt"),
        tmp_path / "gpt.onnx",
        save_as_external_data=True,
        location="w.data",
        size_threshold=0,
    )
    return tmp_path


def test_another_models_data_file_is_refused(folder: Path) -> None:
    before = digest(folder / "w.data")
    with pytest.raises(ModelSaveError, match=r"external data file of the model gpt\.onnx"):
        write_model(matmul_model("other"), folder / "w.data", None)
    assert digest(folder / "w.data") == before
    onnx.checker.check_model(str(folder / "gpt.onnx"), full_check=True)


def test_a_file_no_model_reads_is_replaced_as_asked(folder: Path) -> None:
    notes = folder / "notes.bin"
    notes.write_bytes(b"old")
    write_model(matmul_model("other"), notes, None)
    assert onnx.load(str(notes)).graph.name == "other"
    write_model(matmul_model("third"), folder / "third.onnx", None)  # a new name: no scan
    assert (folder / "third.onnx").is_file()
