"""Saving onto a symbolic link writes through it (the link stays, its target gets the new
model), as a model opened through a link is saved to its target; the companion layout file
too. A folder that is a file is said to be one."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from designer.core.errors import ModelSaveError
from designer.core.io.atomic import write_atomic
from designer.core.io.save import write_model


def relu_model(name: str) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_link_is_saved_through(tmp_path: Path) -> None:
    target = tmp_path / "v1.onnx"
    onnx.save(relu_model("v1"), target)
    link = tmp_path / "latest.onnx"
    link.symlink_to("v1.onnx")
    write_model(relu_model("v2"), link, None)
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert onnx.load(str(target)).graph.name == "v2"


def test_a_layout_link_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real_layout.json"
    real.write_text("{}")
    link = tmp_path / "m.onnx.designer.json"
    link.symlink_to(real.name)
    write_atomic(link, b'{"version": 3}')
    assert link.is_symlink() and real.read_text() == '{"version": 3}'


def test_a_folder_that_is_a_file_is_said_to_be_one(tmp_path: Path) -> None:
    blocker = tmp_path / "sq.onnx"
    blocker.write_bytes(b"x")
    with pytest.raises(ModelSaveError, match=r"sq\.onnx is a file, not a folder"):
        write_model(relu_model("m"), blocker / "inner.onnx", None)
