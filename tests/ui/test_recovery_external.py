"""Crash-recovery entries of models with external data reference the weights in place:
nothing is read or copied into the recovery folder, and the entry opens with them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from helpers.models import weights_model

from designer.core.edits import SetModelProperty
from designer.core.io import open_document
from designer.core.io.external import tensor_array
from designer.ui import recovery


def test_recovery_entry_of_an_external_data_model(tmp_path: Path) -> None:
    arrays = {"w": np.arange(2048, dtype=np.float32)}
    source = tmp_path / "model" / "m.onnx"
    source.parent.mkdir()
    onnx.save(weights_model(arrays), source, save_as_external_data=True, size_threshold=0)
    doc = open_document(source)
    doc.undo_stack.push(SetModelProperty("doc_string", "edited"))

    path = recovery.write_recovery(doc, "entry1")

    assert sorted(p.name for p in path.parent.iterdir()) == ["entry1.json", "entry1.onnx"]
    (entry,) = recovery.pending_recoveries()
    assert entry.base_dir == source.parent.resolve()
    restored = open_document(entry.model, entry.base_dir)
    assert restored.model.doc_string == "edited"
    tensor = restored.model.graph.initializer[0]
    np.testing.assert_array_equal(tensor_array(tensor, restored.base_dir), arrays["w"])
    recovery.discard(entry)
    assert not recovery.pending_recoveries()
