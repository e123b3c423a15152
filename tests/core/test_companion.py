"""The companion layout file: positions survive save and reopen, also when the model changed."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from helpers.models import chain_model, subgraph_model

from designer.core.edits import MoveNodes
from designer.core.io import open_document
from designer.core.io.companion import (
    LayoutFileError,
    companion_path,
    load_positions,
    save_positions,
)
from designer.core.scope import MAIN_SCOPE


def _place_everything(path: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """Open ``path``, give every node of every scope and the main IO a position, save."""
    doc = open_document(path)
    placed: dict[tuple[str, str], tuple[float, float]] = {}
    for n, scope in enumerate(doc.scopes()):
        moves = {key: (10.0 * i + n, 20.0 * i) for i, key in enumerate(scope.keys)}
        if scope.id == MAIN_SCOPE:
            moves[doc.io_key(MAIN_SCOPE, "input", "X")] = (-5.0, -50.0)
        doc.undo_stack.push(MoveNodes(scope.id, moves))
        for key, pos in moves.items():
            io = doc.io_entry(key)
            label = f"input:{io[2]}" if io else scope.node(key).name
            placed[(scope.proto.name, label)] = pos
    save_positions(doc, path)
    return placed


def _positions_by_label(path: Path) -> dict[tuple[str, str], tuple[float, float]]:
    doc = open_document(path)
    load_positions(doc, path)
    found = {}
    for scope in doc.scopes():
        for key, pos in doc.positions.get(scope.id, {}).items():
            io = doc.io_entry(key)
            label = f"input:{io[2]}" if io else scope.node(key).name
            found[(scope.proto.name, label)] = pos
    return found


def test_positions_round_trip_in_every_scope(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(subgraph_model(), path)
    placed = _place_everything(path)
    assert companion_path(path).name == "m.onnx.designer.json"
    assert _positions_by_label(path) == placed
    assert len({scope for scope, _ in placed}) == 6  # main + 5 subgraphs


def test_unnamed_nodes_are_keyed_by_index(tmp_path: Path) -> None:
    model = chain_model(3)
    for node in model.graph.node:
        node.name = ""
    path = tmp_path / "unnamed.onnx"
    onnx.save(model, path)
    doc = open_document(path)
    keys = doc.scope().keys
    doc.undo_stack.push(MoveNodes(MAIN_SCOPE, {keys[2]: (7.0, 8.0)}))
    save_positions(doc, path)
    assert "#2" in json.loads(companion_path(path).read_text())["scopes"]["main"]
    again = open_document(path)
    assert load_positions(again, path) == 1
    assert again.positions[MAIN_SCOPE] == {again.scope().keys[2]: (7.0, 8.0)}


def test_changed_model_keeps_positions_of_remaining_nodes(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(chain_model(3), path)
    _place_everything(path)
    model = onnx.load(path)
    del model.graph.node[0]  # relu0 is gone
    model.graph.node.add(name="brand_new", op_type="Relu", input=["Y"], output=["Z"])
    onnx.save(model, path)
    doc = open_document(path)
    load_positions(doc, path)
    named = {doc.scope().node(k).name for k in doc.positions[MAIN_SCOPE] if doc.io_entry(k) is None}
    assert named == {"relu1", "relu2", "add_w"}


@pytest.mark.parametrize(
    "content",
    ["{not json", "[]", '{"format": "something else"}', '{"format": "onnx-designer-layout"}'],
)
def test_corrupt_layout_file_is_reported(tmp_path: Path, content: str) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(chain_model(2), path)
    companion_path(path).write_text(content)
    doc = open_document(path)
    with pytest.raises(LayoutFileError) as info:
        load_positions(doc, path)
    assert str(companion_path(path)) in str(info.value)
    assert "\n" not in str(info.value)


def test_bad_entries_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(chain_model(2), path)
    companion_path(path).write_text(
        json.dumps(
            {
                "format": "onnx-designer-layout",
                "version": 1,
                "scopes": {
                    "main": {"relu0": [1, 2], "relu1": ["a", 2], "ghost": [0, 0]},
                    "nope": {},
                },
            }
        )
    )
    doc = open_document(path)
    assert load_positions(doc, path) == 1
