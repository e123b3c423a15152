"""Messages that say what happened: History names the node and tensor of a link (six links
were six identical "Connect input 0"); a file that is not a .npy is said to be one (numpy's
"pickled data … allow_pickle=" advice was wrong and meant for programmers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from designer.core.document import Document
from designer.core.edits.nodes import SetNodeInput
from designer.core.scope import MAIN_SCOPE
from designer.core.tensorgen import TensorGenError, load_npy


def test_a_link_in_history_names_its_node_and_tensor() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", [""], ["y"], name="act")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    doc = Document(helper.make_model(graph))
    key = doc.scope(MAIN_SCOPE).keys[0]
    edit = SetNodeInput(MAIN_SCOPE, key, 0, "x")
    doc.undo_stack.push(edit)
    assert edit.label == "Connect x to act input 0"
    off = SetNodeInput(MAIN_SCOPE, key, 0, "")
    doc.undo_stack.push(off)
    assert off.label == "Disconnect act input 0"


def test_a_file_that_is_not_npy_is_said_to_be_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npy"
    bad.write_text("garbage")
    with pytest.raises(TensorGenError, match=r"not a \.npy file") as info:
        load_npy(bad, TensorProto.FLOAT)
    assert "pickle" not in str(info.value)
    good = tmp_path / "good.npy"
    np.save(good, np.ones((2, 2), np.float32))
    assert load_npy(good, TensorProto.FLOAT).shape == (2, 2)
    objects = tmp_path / "objects.npy"
    np.save(objects, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(TensorGenError, match="holds Python objects, not numbers"):
        load_npy(objects, TensorProto.FLOAT)
