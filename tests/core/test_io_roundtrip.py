"""Open + save without edits reproduces the model (SPEC D-3, quality bar "Fidelity").

What counts as "the same model": the saved bytes must equal the original bytes. Only if they
differ does :func:`assert_same_model` fall back to comparing the two parsed ``ModelProto``
messages with protobuf equality, which ignores nothing but the order in which fields were
serialized (the only difference ONNX itself treats as equal). Nothing else is normalised:
the core keeps the parsed protobuf as is, so doc strings, metadata, unknown fields and
external references all have to survive untouched. Today every model below is byte-identical.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import onnx
import pytest
from helpers.models import (
    backend_data_dir,
    backend_model_files,
    backend_node_models,
    function_model,
    rich_model,
    subgraph_model,
    with_unknown_field,
)

from designer.core.io import open_document, save_document, write_model


def same_model_problem(original: bytes, saved: bytes) -> str | None:
    """None when ``saved`` is the same model as ``original`` (see the module docstring)."""
    if original == saved:
        return None
    a, b = onnx.ModelProto(), onnx.ModelProto()
    a.ParseFromString(original)
    b.ParseFromString(saved)
    if a == b:
        return None
    return f"models differ ({len(original)} bytes before, {len(saved)} after)"


def roundtrip(src: Path, dst: Path) -> bytes:
    """Open ``src`` as a document and write its model to ``dst``; return the written bytes."""
    doc = open_document(src)
    write_model(doc.model, dst, doc.base_dir)
    return dst.read_bytes()


# --- model files of the backend test data ------------------------------------------------
_FILES = backend_model_files()


def test_backend_data_has_model_files() -> None:
    assert len(_FILES) >= 100, f"expected the onnx backend test data in {backend_data_dir()}"


@pytest.mark.parametrize(
    "path", _FILES, ids=[str(p.parent.relative_to(backend_data_dir())) for p in _FILES]
)
def test_backend_model_file_roundtrip(path: Path, tmp_path: Path) -> None:
    original = path.read_bytes()
    saved = roundtrip(path, tmp_path / "model.onnx")
    assert same_model_problem(original, saved) is None


# --- node test models built in memory by onnx ---------------------------------------------
#: Groups of node test names by the first letter after ``test_``: (id, first, last letter).
#: The last group also takes any name that fits nowhere else.
_GROUPS = [
    ("a", "a", "a"),
    ("b", "b", "b"),
    ("c", "c", "c"),
    ("d-h", "d", "h"),
    ("i-l", "i", "l"),
    ("m-q", "m", "q"),
    ("r", "r", "r"),
    ("s", "s", "s"),
    ("t-z", "t", "z"),
]


def _group_of(name: str) -> str:
    letter = name.removeprefix("test_")[:1].lower()
    for group_id, first, last in _GROUPS:
        if first <= letter <= last:
            return group_id
    return _GROUPS[-1][0]


def test_node_models_are_all_grouped() -> None:
    names = backend_node_models()
    assert len(names) > 1500
    counts = {g: 0 for g, _first, _last in _GROUPS}
    for name in names:
        counts[_group_of(name)] += 1
    assert all(counts.values()), counts


@pytest.mark.parametrize("group", [g for g, _first, _last in _GROUPS])
def test_backend_node_models_roundtrip(group: str, tmp_path: Path) -> None:
    """Each node test model is saved with onnx.save, opened, written elsewhere, compared."""
    src_dir = tmp_path / "src"
    dst_dir = tmp_path / "dst"
    src_dir.mkdir()
    dst_dir.mkdir()
    failures = []
    for name, model in backend_node_models().items():
        if _group_of(name) != group:
            continue
        src = src_dir / f"{name}.onnx"
        onnx.save(model, src)
        problem = same_model_problem(src.read_bytes(), roundtrip(src, dst_dir / src.name))
        if problem is not None:
            failures.append(f"{name}: {problem}")
    assert not failures, "\n".join(failures)


# --- save in place, and models built here -----------------------------------------------------
def test_save_document_in_place_keeps_bytes_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "rich.onnx"
    onnx.save(rich_model(), path)
    original = path.read_bytes()
    doc = open_document(path)
    report = save_document(doc)
    assert report.path == doc.path
    assert path.read_bytes() == original
    assert sorted(os.listdir(tmp_path)) == ["rich.onnx"]
    assert not doc.modified


@pytest.mark.parametrize(
    "build", [rich_model, subgraph_model, function_model], ids=lambda f: f.__name__
)
def test_helper_models_roundtrip_byte_identical(
    build: Callable[[], onnx.ModelProto], tmp_path: Path
) -> None:
    model = build()
    src = tmp_path / "src.onnx"
    onnx.save(model, src)
    assert roundtrip(src, tmp_path / "dst.onnx") == src.read_bytes()


def test_rich_model_keeps_every_field(tmp_path: Path) -> None:
    """The rich model really has what the round trip must keep (guards the helper)."""
    src = tmp_path / "rich.onnx"
    onnx.save(rich_model(), src)
    model = open_document(src).model
    assert model.functions and model.functions[0].doc_string
    assert model.metadata_props and model.training_info
    assert model.graph.sparse_initializer and model.graph.value_info
    assert model.graph.doc_string and model.doc_string
    assert model.graph.quantization_annotation


def test_unknown_fields_survive(tmp_path: Path) -> None:
    src = tmp_path / "unknown.onnx"
    data = with_unknown_field(rich_model())
    src.write_bytes(data)
    assert roundtrip(src, tmp_path / "dst.onnx") == data
