"""External data locations are checked by real path (issue 11 points 4 and 6): a symbolic
link leading out of the model's folder is refused when opening, reading a tensor, saving
(Save As, ``resave``) and building the upload list for a remote target; a link that stays
inside is fine. Odd locations (none, a folder, a FIFO) and ranges past the end of the file
give one clear line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.models import weights_model
from onnx import TensorProto, numpy_helper

from designer.activities.runner import _model_files
from designer.cli import main
from designer.core.errors import DesignerError, ModelLoadError, ModelSaveError
from designer.core.io import open_document, read_model, save_document, write_model
from designer.core.io.external import ExternalDataError, tensor_array

ROOT = Path(__file__).resolve().parents[2]
ARRAYS = {"w": np.arange(1024, dtype=np.float32), "v": np.arange(300, dtype=np.int64)}


def _external(folder: Path, location: str = "weights.bin") -> Path:
    """``folder/model.onnx`` with both tensors in ``folder/location``."""
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(
        weights_model(ARRAYS),
        folder / "model.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=location,
        size_threshold=0,
    )
    return folder / "model.onnx"


def _retarget(model_path: Path, location: str) -> None:
    """Point every external tensor of the model file at ``location``."""
    model = onnx.load(str(model_path), load_external_data=False)
    for tensor in model.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = location
    onnx.save(model, model_path)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside every model folder whose bytes would pass as the weights."""
    source = _external(tmp_path / "private")
    return source.parent / "weights.bin"


def _file_link(tmp_path: Path, secret: Path) -> Path:
    model = _external(tmp_path / "m")
    (model.parent / "weights.bin").unlink()
    os.symlink(secret, model.parent / "weights.bin")
    return model


def _folder_link(tmp_path: Path, secret: Path) -> Path:
    model = _external(tmp_path / "m")
    (model.parent / "weights.bin").unlink()
    os.symlink(secret.parent, model.parent / "data")
    _retarget(model, "data/weights.bin")
    return model


@pytest.mark.parametrize("make", [_file_link, _folder_link], ids=["file link", "folder link"])
def test_link_out_of_the_folder_is_refused_everywhere(
    make: object, tmp_path: Path, secret: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = make(tmp_path, secret)  # type: ignore[operator]
    with pytest.raises(ModelLoadError) as info:
        read_model(model)
    message = str(info.value)
    assert "\n" not in message
    assert "tensor 'w'" in message and "outside the model folder" in message

    out = tmp_path / "out"
    out.mkdir()
    assert main(["resave", str(model), str(out / "model.onnx")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "outside the model folder" in err[0]
    assert list(out.iterdir()) == []  # nothing copied

    with pytest.raises(DesignerError, match="outside the model folder"):
        _model_files(model)  # the upload list for an SSH target


def test_link_swapped_in_after_opening_is_refused_on_read_and_save(
    tmp_path: Path, secret: Path
) -> None:
    model = _external(tmp_path / "m")
    doc = open_document(model)
    data = model.parent / "weights.bin"
    data.unlink()
    os.symlink(secret, data)
    with pytest.raises(ExternalDataError, match="outside the model folder"):
        tensor_array(doc.model.graph.initializer[0], doc.base_dir)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ModelSaveError, match=r"tensor 'w'.*outside the model folder"):
        save_document(doc, out / "model.onnx")
    assert list(out.iterdir()) == []
    assert doc.base_dir == model.parent.resolve()


def test_link_that_stays_inside_is_fine(tmp_path: Path) -> None:
    model = _external(tmp_path / "m")
    folder = model.parent
    (folder / "store").mkdir()
    (folder / "weights.bin").rename(folder / "store" / "real.bin")
    os.symlink("store/real.bin", folder / "weights.bin")  # relative link, inside
    os.symlink("store", folder / "alias")  # a folder link, inside
    _retarget(model, "alias/real.bin")

    doc = open_document(model)
    for tensor in doc.model.graph.initializer:
        np.testing.assert_array_equal(tensor_array(tensor, doc.base_dir), ARRAYS[tensor.name])
    assert _model_files(model) == [model, folder / "alias" / "real.bin"]

    out = tmp_path / "out"
    out.mkdir()
    assert main(["resave", str(model), str(out / "model.onnx")]) == 0
    copied = out / "alias" / "real.bin"
    assert copied.is_file() and not copied.is_symlink() and not (out / "alias").is_symlink()
    loaded = onnx.load(str(out / "model.onnx"))
    for tensor in loaded.graph.initializer:
        np.testing.assert_array_equal(numpy_helper.to_array(tensor), ARRAYS[tensor.name])


def test_resave_of_a_leaking_link_as_a_real_command(tmp_path: Path, secret: Path) -> None:
    model = _file_link(tmp_path, secret)
    out = tmp_path / "out.onnx"
    result = subprocess.run(
        [sys.executable, "-m", "designer.cli", "resave", str(model), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "outside the model folder" in lines[0], result.stderr
    assert not out.exists() and not (tmp_path / "weights.bin").exists()


def test_a_location_outside_given_to_write_model_is_refused(tmp_path: Path, secret: Path) -> None:
    """A model built in memory whose location leads out through a link in its source."""
    src = tmp_path / "src"
    src.mkdir()
    os.symlink(secret, src / "w.bin")
    model = onnx.load(str(secret.parent / "model.onnx"), load_external_data=False)
    for tensor in model.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = "w.bin"
    with pytest.raises(ModelSaveError, match="outside the model folder"):
        write_model(model, tmp_path / "dst.onnx", src)
    assert not (tmp_path / "dst.onnx").exists()


# --- odd locations and ranges ----------------------------------------------------------------
def _odd(tmp_path: Path, location: str | None, offset: int = 0, length: int | None = None) -> Path:
    folder = tmp_path / "odd"
    folder.mkdir(exist_ok=True)
    (folder / "short.bin").write_bytes(b"\1" * 64)
    (folder / "sub").mkdir(exist_ok=True)
    tensor = TensorProto(
        name="w", data_type=TensorProto.FLOAT, dims=[32], data_location=TensorProto.EXTERNAL
    )
    if location is not None:
        tensor.external_data.add(key="location", value=location)
    tensor.external_data.add(key="offset", value=str(offset))
    if length is not None:
        tensor.external_data.add(key="length", value=str(length))
    model = weights_model({})
    model.graph.initializer.append(tensor)
    onnx.save(model, folder / "model.onnx")
    return folder / "model.onnx"


@pytest.mark.parametrize(
    ("location", "offset", "length", "needle"),
    [
        (None, 0, None, "names no data file"),
        ("", 0, None, "names no data file"),
        ("sub", 0, None, "is a folder"),
        (".", 0, None, "is a folder"),
        ("fifo", 0, None, "not a regular file"),
        ("missing.bin", 0, None, "is missing"),
        ("short.bin", 60, 128, "needs bytes 60..188 of 'short.bin', which has only 64"),
        ("short.bin", 100, None, "which has only 64"),
        ("../odd/short.bin", 0, None, "outside the model folder"),
        ("/etc/hostname", 0, None, "outside the model folder"),
    ],
)
def test_odd_external_locations_are_one_clear_line(
    tmp_path: Path, location: str | None, offset: int, length: int | None, needle: str
) -> None:
    path = _odd(tmp_path, location, offset, length)
    if location == "fifo":
        os.mkfifo(path.parent / "fifo")
    with pytest.raises(ModelLoadError) as info:
        read_model(path)
    assert needle in str(info.value) and "\n" not in str(info.value)
    assert "tensor 'w'" in str(info.value)


def test_mapped_tensor_longer_than_its_data_is_a_clear_error(tmp_path: Path) -> None:
    """32 floats need 128 bytes; the file has 64 from offset 0 (no length given): opening
    succeeds (the range is in the file) but reading says how many bytes are missing."""
    path = _odd(tmp_path, "short.bin")
    doc = open_document(path)
    with pytest.raises(ExternalDataError, match="needs 128 bytes, but its external data has 64"):
        tensor_array(doc.model.graph.initializer[0], doc.base_dir)


def test_empty_external_tensor_reads_as_empty(tmp_path: Path) -> None:
    path = _odd(tmp_path, "short.bin", 64, 0)
    model = onnx.load(str(path), load_external_data=False)
    del model.graph.initializer[0].dims[:]
    model.graph.initializer[0].dims.extend([0, 4])
    onnx.save(model, path)
    doc = open_document(path)
    assert tensor_array(doc.model.graph.initializer[0], doc.base_dir).shape == (0, 4)


def test_numerics_session_refuses_a_link_out_and_runs_one_inside(
    tmp_path: Path, secret: Path
) -> None:
    """The ONNX Runtime check of FP16 links the data files into a temporary folder: it
    links real files inside the model folder only."""
    from designer.activities.numerics import run_model

    inside = _external(tmp_path / "ok")
    doc = open_document(inside)
    outputs = run_model(doc.model, {"X": np.zeros(1, np.float32)}, doc.base_dir)
    np.testing.assert_array_equal(outputs["w_id"], ARRAYS["w"])
    leaking = _file_link(tmp_path, secret)
    model = onnx.load(str(leaking), load_external_data=False)
    with pytest.raises(ExternalDataError, match="outside the model folder"):
        run_model(model, {"X": np.zeros(1, np.float32)}, leaking.parent)
