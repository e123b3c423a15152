"""Bad files and paths end in one clear error naming the file, never a traceback, and nothing
is written (SPEC quality bar "Bad input")."""

from __future__ import annotations

import contextlib
import os
import random
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from google.protobuf.message import Message
from helpers.models import chain_model, rich_model, weights_model
from onnx import TensorProto, helper, numpy_helper

from designer.core.errors import DesignerError, ModelLoadError, ModelSaveError
from designer.core.io import read_model, write_model


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _assert_message(error: DesignerError, path: Path, *words: str) -> None:
    text = str(error)
    assert "\n" not in text, text
    assert str(path) in text, text
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"


def _expect_load_error(path: Path, *words: str) -> None:
    folder = path.parent
    before = _listing(folder) if folder.is_dir() else None
    with pytest.raises(ModelLoadError) as info:
        read_model(path)
    _assert_message(info.value, path, *words)
    if before is not None:
        assert _listing(folder) == before


@contextlib.contextmanager
def _as_nobody() -> Iterator[None]:
    """Run the block with the effective user 'nobody' when running as root (root ignores
    file modes); restored afterwards. Skips when the effective user cannot be changed."""
    if os.geteuid() != 0:
        yield
        return
    try:
        os.setegid(65534)
        os.seteuid(65534)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.setegid(0)
        pytest.skip(f"cannot drop root privileges to test file permissions ({exc})")
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A temporary folder that every user may enter (pytest's tmp_path is private)."""
    folder = Path(tempfile.mkdtemp(prefix="designer-perm-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path in sorted(folder.rglob("*"), reverse=True):
            path.chmod(0o700)
            path.unlink() if path.is_file() else path.rmdir()
        folder.rmdir()


# --- reading -------------------------------------------------------------------------------
def test_truncated_model(tmp_path: Path) -> None:
    data = rich_model().SerializeToString()
    for cut in (len(data) // 2, len(data) - 3, 5):
        path = tmp_path / f"truncated_{cut}.onnx"
        path.write_bytes(data[:cut])
        _expect_load_error(path, "not an ONNX model")


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes(seed: int, tmp_path: Path) -> None:
    path = tmp_path / "random.onnx"
    path.write_bytes(random.Random(seed).randbytes(4096))
    _expect_load_error(path, "not an ONNX model")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.onnx"
    path.touch()
    _expect_load_error(path, "empty")


@pytest.mark.parametrize(
    "message",
    [
        numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "w"),
        TensorProto(dims=[3, 4], data_type=TensorProto.FLOAT),
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [], []),
        helper.make_node("Relu", ["x"], ["y"]),
    ],
    ids=["tensor", "tensor_header", "graph", "node"],
)
def test_protobuf_that_is_not_a_model(message: Message, tmp_path: Path) -> None:
    path = tmp_path / "other.pb"
    path.write_bytes(message.SerializeToString())
    _expect_load_error(path, "not an ONNX model")


def _external_model(folder: Path, location: str, offset: str = "0", length: str = "64") -> Path:
    model = weights_model({"w": np.zeros(16, dtype=np.float32)})
    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        tensor.external_data.add(key=key, value=value)
    path = folder / "model.onnx"
    onnx.save(model, path)
    return path


def test_missing_external_data_file(tmp_path: Path) -> None:
    path = _external_model(tmp_path, "weights.bin")
    _expect_load_error(path, "weights.bin", "missing")


def test_external_reference_past_the_end(tmp_path: Path) -> None:
    path = _external_model(tmp_path, "weights.bin", offset="32", length="64")
    (tmp_path / "weights.bin").write_bytes(bytes(64))
    _expect_load_error(path, "weights.bin", "has only 64")


@pytest.mark.parametrize("location", ["/etc/passwd", "../outside.bin", "a/../../x.bin"])
def test_external_reference_outside_the_folder(location: str, tmp_path: Path) -> None:
    path = _external_model(tmp_path, location)
    _expect_load_error(path, "outside the model folder")


@pytest.mark.parametrize(("offset", "length"), [("-8", "16"), ("0", "-4")])
def test_external_negative_offset_or_length(offset: str, length: str, tmp_path: Path) -> None:
    path = _external_model(tmp_path, "weights.bin", offset=offset, length=length)
    (tmp_path / "weights.bin").write_bytes(bytes(64))
    _expect_load_error(path, "must not be negative")


def test_external_offset_not_a_number(tmp_path: Path) -> None:
    path = _external_model(tmp_path, "weights.bin", offset="twelve")
    (tmp_path / "weights.bin").write_bytes(bytes(64))
    _expect_load_error(path, "not integers")


def test_folder_path(tmp_path: Path) -> None:
    folder = tmp_path / "model.onnx"
    folder.mkdir()
    _expect_load_error(folder, "folder")


def test_nonexistent_path(tmp_path: Path) -> None:
    _expect_load_error(tmp_path / "nope.onnx", "not found")


def test_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO (or device) would block or never end; it is refused up front."""
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    errors: list[BaseException] = []

    def read() -> None:
        try:
            read_model(fifo)
        except BaseException as exc:
            errors.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # release the blocked reader before failing
        with open(fifo, "wb"):
            pass
        reader.join(10)
        pytest.fail("read_model blocked on a FIFO")
    assert len(errors) == 1 and isinstance(errors[0], ModelLoadError), errors
    _assert_message(errors[0], fifo, "not a regular file")


def test_unreadable_file(open_dir: Path) -> None:
    path = open_dir / "secret.onnx"
    onnx.save(chain_model(), path)
    path.chmod(0o000)
    with _as_nobody():
        _expect_load_error(path, "permission denied")


# --- writing -------------------------------------------------------------------------------
def _expect_save_error(path: Path, *words: str, check: Callable[[], None] | None = None) -> None:
    model = chain_model()
    before = model.SerializeToString()
    with pytest.raises(ModelSaveError) as info:
        write_model(model, path, None)
    _assert_message(info.value, path, *words)
    assert model.SerializeToString() == before
    if check is not None:
        check()


def test_destination_folder_missing(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "deeper" / "model.onnx"
    _expect_save_error(path, "does not exist")
    assert _listing(tmp_path) == []


def test_destination_is_a_folder(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    path.mkdir()
    _expect_save_error(path, "is a folder")
    assert _listing(tmp_path) == ["model.onnx"]


def test_destination_is_a_pipe(tmp_path: Path) -> None:
    """Saving onto a FIFO (or a device such as /dev/null) must not replace it by a file."""
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    _expect_save_error(fifo, "not a regular file")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert _listing(tmp_path) == ["model.onnx"]


@pytest.mark.parametrize("folder", ["/proc", "/sys"])
def test_destination_nobody_can_create(folder: str) -> None:
    """/proc and /sys refuse new files even to root (ENOENT and EACCES on Linux)."""
    if not Path(folder).is_dir():
        pytest.skip(f"{folder} does not exist here")
    path = Path(folder) / "onnx_designer_test.onnx"
    _expect_save_error(path, "cannot write" if folder == "/proc" else "permission denied")
    assert not path.exists()
    assert not [p for p in Path(folder).iterdir() if p.name.startswith(".onnx_designer_test")]


def test_read_only_folder(open_dir: Path) -> None:
    target = open_dir / "ro"
    target.mkdir()
    target.chmod(0o555)
    with _as_nobody():
        _expect_save_error(target / "model.onnx", "permission denied")
    assert _listing(target) == []


def test_read_only_existing_file_is_kept(open_dir: Path) -> None:
    target = open_dir / "ro"
    target.mkdir()
    onnx.save(rich_model(), target / "model.onnx")
    original = (target / "model.onnx").read_bytes()
    target.chmod(0o555)
    with _as_nobody():
        _expect_save_error(target / "model.onnx", "permission denied")
    assert (target / "model.onnx").read_bytes() == original
    assert _listing(target) == ["model.onnx"]
