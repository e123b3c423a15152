"""What a save does for the document beyond its model file: the external tensors held by
the undo history follow a Save As into another folder (an undo afterwards reads its own
weights, not a hole nor another model's file of the same name); a write that does not
adopt the target (crash recovery, exports) leaves the document's tensors as they were; and
a document of more than 2 GiB of inline weights is saved with them as external data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.models import weights_model
from onnx import numpy_helper

from designer.core.edits.base import CompoundEdit
from designer.core.edits.model import ReplaceModel
from designer.core.edits.tensors import RemoveInitializer, ReplaceInitializer
from designer.core.io import open_document, save_document, write_model
from designer.core.io.external import is_external, tensor_array
from designer.core.io.history_data import history_tensors
from designer.core.scope import MAIN_SCOPE


def _external_model(folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    rng = np.random.default_rng(3)
    arrays = {
        "w": rng.standard_normal(3000).astype(np.float32),
        "v": rng.standard_normal(2000).astype(np.float32),
    }
    folder.mkdir(parents=True)
    path = folder / "m.onnx"
    onnx.save(
        weights_model(arrays),
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=0,
    )
    return path, arrays


def _saved(path: Path, name: str) -> np.ndarray:
    model = onnx.load(str(path))  # onnx's own loader, external data included
    return numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == name))


@pytest.mark.parametrize("taken", [False, True])
def test_undo_after_save_as_reads_the_original_weights(tmp_path: Path, taken: bool) -> None:
    path, arrays = _external_model(tmp_path / "A")
    other = tmp_path / "B"
    other.mkdir()
    stranger = np.full(50_000, 7, np.uint8).tobytes()
    if taken:  # another model's data file of the same name lives there already
        (other / "weights.bin").write_bytes(stranger)
    doc = open_document(path)
    doc.undo_stack.push(
        ReplaceInitializer(MAIN_SCOPE, numpy_helper.from_array(np.ones(3000, np.float32), "w"))
    )
    save_document(doc, other / "m.onnx")  # Save As: "w" is inline now, its old range unused
    doc.undo_stack.undo()
    assert np.array_equal(tensor_array(doc.model.graph.initializer[0], doc.base_dir), arrays["w"])
    save_document(doc)
    assert np.array_equal(_saved(other / "m.onnx", "w"), arrays["w"])
    assert np.array_equal(_saved(other / "m.onnx", "v"), arrays["v"])
    if taken:
        assert (other / "weights.bin").read_bytes() == stranger  # never written over
    doc.undo_stack.redo()  # and forward again
    save_document(doc)
    assert np.array_equal(_saved(other / "m.onnx", "w"), np.ones(3000, np.float32))


def test_history_tensors_found_in_nested_edits(tmp_path: Path) -> None:
    path, _arrays = _external_model(tmp_path / "A")
    doc = open_document(path)
    old_model = onnx.ModelProto()
    old_model.CopyFrom(doc.model)
    replacement = onnx.ModelProto()
    replacement.CopyFrom(doc.model)
    for tensor in replacement.graph.initializer:  # made inline: nothing external
        tensor.CopyFrom(numpy_helper.from_array(np.zeros(3, np.float32), tensor.name))
    doc.undo_stack.push(CompoundEdit("two", [RemoveInitializer(MAIN_SCOPE, "v")]))
    doc.undo_stack.push(ReplaceModel("inline", replacement))
    found = history_tensors(doc.undo_stack.edits())
    names = sorted(t.name for t in found)
    assert "v" in names and "w" in names  # the removed one, and the replaced model's
    assert all(is_external(t) for t in found)
    assert history_tensors([]) == []


def test_save_as_of_an_unchanged_history_copies_only_what_is_used(tmp_path: Path) -> None:
    """Nothing in the history: the copy holds the model's ranges only (holes elsewhere)."""
    path, arrays = _external_model(tmp_path / "A")
    doc = open_document(path)
    (tmp_path / "B").mkdir()
    save_document(doc, tmp_path / "B" / "m.onnx")
    assert np.array_equal(_saved(tmp_path / "B" / "m.onnx", "w"), arrays["w"])
    assert sorted(p.name for p in (tmp_path / "B").iterdir()) == ["m.onnx", "weights.bin"]


def test_a_write_that_does_not_adopt_leaves_the_tensors_inline(tmp_path: Path) -> None:
    arrays = {"w": np.arange(4096, dtype=np.float32)}
    model = weights_model(arrays)
    report = write_model(model, tmp_path / "copy.onnx", tmp_path, limit=1000)
    assert report.externalized == 1 and (tmp_path / "copy.onnx.data").is_file()
    assert not is_external(model.graph.initializer[0])  # the document keeps its own data
    assert np.array_equal(numpy_helper.to_array(model.graph.initializer[0]), arrays["w"])
    assert np.array_equal(_saved(tmp_path / "copy.onnx", "w"), arrays["w"])
    adopted = weights_model(arrays)
    write_model(adopted, tmp_path / "own.onnx", tmp_path, limit=1000, adopt=True)
    assert is_external(adopted.graph.initializer[0])  # adopted: it refers to its new file


def test_a_document_over_2_gib_is_saved_with_external_data(tmp_path: Path) -> None:
    """protobuf cannot even measure a message of 2 GiB or more: the save must not ask it
    to, but move the weights out (the README's promise), for real at that size."""
    size = (2**31 + 2**26) // 4  # 2.06 GiB of float32
    model = weights_model({"small": np.arange(4, dtype=np.float32)})
    big = model.graph.initializer.add(name="big", dims=[size], data_type=onnx.TensorProto.FLOAT)
    big.raw_data = bytes(size * 4)
    report = write_model(model, tmp_path / "big.onnx", tmp_path, adopt=True)
    assert report.externalized == 1
    assert (tmp_path / "big.onnx.data").stat().st_size >= size * 4
    head = onnx.load(str(tmp_path / "big.onnx"), load_external_data=False)
    assert [t.name for t in head.graph.initializer if is_external(t)] == ["big"]
