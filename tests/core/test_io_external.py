"""External data: lazy open, resave in place and elsewhere, > 2 GiB models, automatic
externalisation and atomic saves that fail cleanly (SPEC D-1, D-3, I-3)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from helpers.models import chain_model, rich_model, tensor_info, weights_model
from onnx import TensorProto, helper, numpy_helper

from designer.core.edits import SetModelProperty
from designer.core.errors import ModelSaveError
from designer.core.io import open_document, save_document, write_model
from designer.core.io.external import ExternalRef, is_external, iter_model_tensors, tensor_array
from designer.core.io.save import MIN_EXTERNAL_BYTES


def _arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "w_f32": rng.standard_normal((64, 32)).astype(np.float32),
        "w_i64": np.arange(512, dtype=np.int64) - 256,
        "w_f16": rng.standard_normal((32, 48)).astype(np.float16),
        "w_u8": rng.integers(0, 255, 3000, dtype=np.uint8),
        "w_bool": rng.integers(0, 2, 2048).astype(bool),
        "small": np.array([1.0, 2.0, 3.0], dtype=np.float32),
    }


def _tensors(model: onnx.ModelProto) -> dict[str, onnx.TensorProto]:
    return {t.name: t for t in iter_model_tensors(model)}


def _refs(model: onnx.ModelProto) -> dict[str, list[tuple[str, str]]]:
    return {
        t.name: [(e.key, e.value) for e in t.external_data]
        for t in iter_model_tensors(model)
        if is_external(t)
    }


def _files(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file below ``folder``: (inode, mtime_ns, contents) by relative path."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            st = path.stat()
            out[str(path.relative_to(folder))] = (st.st_ino, st.st_mtime_ns, path.read_bytes())
    return out


# --- (a) several external tensors --------------------------------------------------------
@pytest.fixture(params=["one_file", "file_per_tensor", "subfolder"])
def external_model(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A model saved by onnx with its tensors >= 1 KiB in external data files."""
    src = tmp_path / "src"
    src.mkdir()
    model = weights_model(_arrays())
    kwargs: dict[str, Any] = {"save_as_external_data": True, "size_threshold": 1024}
    if request.param == "one_file":
        kwargs.update(all_tensors_to_one_file=True, location="weights.bin")
    elif request.param == "subfolder":
        (src / "data").mkdir()
        kwargs.update(all_tensors_to_one_file=True, location="data/weights.bin")
    else:
        kwargs.update(all_tensors_to_one_file=False)
    onnx.save(model, src / "model.onnx", **kwargs)
    return src / "model.onnx"


def test_open_keeps_external_tensors_lazy(external_model: Path) -> None:
    doc = open_document(external_model)
    tensors = _tensors(doc.model)
    for name in _arrays():
        tensor = tensors[name]
        if name == "small":
            assert not is_external(tensor)
        else:
            assert is_external(tensor), name
            assert not tensor.HasField("raw_data"), name
            assert not tensor.float_data and not tensor.int64_data, name


def test_resave_in_place_leaves_data_files_untouched(external_model: Path) -> None:
    folder = external_model.parent
    before = _files(folder)
    doc = open_document(external_model)
    refs = _refs(doc.model)
    save_document(doc)
    write_model(doc.model, folder / "copy.onnx", doc.base_dir)
    after = _files(folder)
    original = before.pop("model.onnx")[2]
    assert after.pop("model.onnx")[2] == original
    assert after.pop("copy.onnx")[2] == original
    assert after == before  # same inodes, times and bytes: the data files were not rewritten
    assert _refs(doc.model) == refs


def test_resave_elsewhere_copies_data_files(external_model: Path, tmp_path: Path) -> None:
    src_files = _files(external_model.parent)
    doc = open_document(external_model)
    refs = _refs(doc.model)
    out = tmp_path / "elsewhere"
    out.mkdir()
    report = save_document(doc, out / "model.onnx")

    assert _files(external_model.parent) == src_files
    assert doc.base_dir == out.resolve()
    assert (out / "model.onnx").read_bytes() == external_model.read_bytes()
    saved = onnx.load(out / "model.onnx", load_external_data=False)
    assert _refs(saved) == refs  # relative locations, offsets and lengths kept
    for ref in (ExternalRef.of(t) for t in iter_model_tensors(saved) if is_external(t)):
        assert not Path(ref.location).is_absolute()
        assert (out / ref.location).is_file()
    assert sorted(report.data_files) == sorted(
        {out / ExternalRef.of(t).location for t in iter_model_tensors(saved) if is_external(t)}
    )
    arrays = _arrays()
    for tensor in iter_model_tensors(saved):
        np.testing.assert_array_equal(tensor_array(tensor, out), arrays[tensor.name])
    reloaded = onnx.load(out / "model.onnx")  # independent reader: onnx's own loader
    for tensor in reloaded.graph.initializer:
        np.testing.assert_array_equal(numpy_helper.to_array(tensor), arrays[tensor.name])


def test_external_tensors_without_source_folder_fail_with_path(
    external_model: Path, tmp_path: Path
) -> None:
    model = open_document(external_model).model
    target = tmp_path / "never_saved.onnx"
    with pytest.raises(ModelSaveError) as info:
        write_model(model, target, None)
    assert str(target) in str(info.value)
    assert not target.exists()


# --- (b) a model over 2 GiB ----------------------------------------------------------------
BIG_TENSOR = 700 * 2**20  # bytes per tensor; three of them make 2.05 GiB
BIG_COUNT = 3
MARKERS = (0, BIG_TENSOR // 2 + 12_345 * 4, BIG_TENSOR - 8)


def _data_ranges(path: Path) -> Iterator[tuple[int, int]]:
    """(start, end) of the allocated (non-hole) ranges of ``path`` via SEEK_DATA/SEEK_HOLE."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        fd = f.fileno()
        pos = 0
        while pos < size:
            try:
                start = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # no data after pos
                    return
                raise
            end = os.lseek(fd, start, os.SEEK_HOLE)
            yield start, end
            pos = end


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _same_content(a: Path, b: Path) -> bool:
    """Byte equality of two sparse files of equal size, reading only their data ranges
    (outside the union of both files' data ranges both are holes, i.e. zeros)."""
    chunk = 16 << 20
    ranges = _merge([*_data_ranges(a), *_data_ranges(b)])
    with open(a, "rb") as fa, open(b, "rb") as fb:
        for start, end in ranges:
            fa.seek(start)
            fb.seek(start)
            pos = start
            while pos < end:
                n = min(chunk, end - pos)
                if fa.read(n) != fb.read(n):
                    return False
                pos += n
    return True


@pytest.fixture
def big_model(tmp_path: Path) -> Iterator[Path]:
    """A 2.05 GiB model: three 700 MiB float32 initializers in a sparse external file, zeros
    except 8-byte markers at known offsets. Nothing is materialised in memory. Every
    ``big.bin`` under ``tmp_path`` is deleted afterwards (pytest keeps old temp folders)."""
    src = tmp_path / "src"
    src.mkdir()
    data = src / "big.bin"
    with open(data, "wb") as f:
        f.truncate(BIG_COUNT * BIG_TENSOR)
        for i in range(BIG_COUNT):
            for rel in MARKERS:
                f.seek(i * BIG_TENSOR + rel)
                f.write(b"MARK%04d" % (i * 10 + MARKERS.index(rel)))
    allocated = data.stat().st_blocks * 512
    if allocated > BIG_TENSOR // 8:
        pytest.skip(f"the temp filesystem does not keep sparse files ({allocated} bytes used)")
    try:
        next(_data_ranges(data))
    except OSError as exc:
        pytest.skip(f"the temp filesystem has no SEEK_DATA ({exc})")
    inits = []
    for i in range(BIG_COUNT):
        tensor = TensorProto(
            name=f"big{i}",
            data_type=TensorProto.FLOAT,
            dims=[BIG_TENSOR // 4],
            data_location=TensorProto.EXTERNAL,
        )
        for key, value in (
            ("location", "big.bin"),
            ("offset", str(i * BIG_TENSOR)),
            ("length", str(BIG_TENSOR)),
        ):
            tensor.external_data.add(key=key, value=value)
        inits.append(tensor)
    nodes = [helper.make_node("Identity", [f"big{i}"], [f"out{i}"]) for i in range(BIG_COUNT)]
    outputs = [tensor_info(f"out{i}", shape=[BIG_TENSOR // 4]) for i in range(BIG_COUNT)]
    graph = helper.make_graph(nodes, "big", [], outputs, initializer=inits)
    onnx.save(helper.make_model(graph), src / "big.onnx")
    yield src / "big.onnx"
    for path in tmp_path.rglob("big.bin"):
        path.unlink()


def test_model_over_2gib_saves_elsewhere_sparse_and_identical(
    big_model: Path, tmp_path: Path
) -> None:
    doc = open_document(big_model)
    assert all(is_external(t) and not t.HasField("raw_data") for t in doc.model.graph.initializer)
    out = tmp_path / "out"
    out.mkdir()
    write_model(doc.model, out / "big.onnx", doc.base_dir)

    src_data, dst_data = big_model.parent / "big.bin", out / "big.bin"
    size = src_data.stat().st_size
    assert size > 2**31
    assert dst_data.stat().st_size == size
    assert dst_data.stat().st_blocks * 512 < size // 8, "the copy is not sparse"
    with open(dst_data, "rb") as f:
        for i in range(BIG_COUNT):
            for rel in MARKERS:
                f.seek(i * BIG_TENSOR + rel)
                assert f.read(8) == b"MARK%04d" % (i * 10 + MARKERS.index(rel))
    assert _same_content(src_data, dst_data)
    assert (out / "big.onnx").read_bytes() == big_model.read_bytes()
    arr = tensor_array(open_document(out / "big.onnx").model.graph.initializer[2], out)
    assert arr.shape == (BIG_TENSOR // 4,) and arr[100] == 0.0  # memory-mapped, not read


# --- (c) automatic externalisation ---------------------------------------------------------
def _auto_model() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    model = weights_model(
        {
            "raw_a": rng.standard_normal(16384).astype(np.float32),  # 64 KiB, raw_data
            "raw_b": rng.standard_normal((128, 128)).astype(np.float32),
            "tiny": np.array([1.0, 2.0], dtype=np.float32),
        }
    )
    floats = rng.standard_normal(16384).astype(np.float32)
    halves = rng.standard_normal(16384).astype(np.float16)
    ints = np.arange(8192, dtype=np.int64)
    model.graph.initializer.extend(
        [  # values in the typed fields (float_data, int32_data, int64_data), not raw_data
            helper.make_tensor("typed_f32", TensorProto.FLOAT, [16384], floats),
            helper.make_tensor("typed_f16", TensorProto.FLOAT16, [16384], halves),
            helper.make_tensor("typed_i64", TensorProto.INT64, [8192], ints),
        ]
    )
    for name, elem, shape in (
        ("typed_f32", TensorProto.FLOAT, [16384]),
        ("typed_f16", TensorProto.FLOAT16, [16384]),
        ("typed_i64", TensorProto.INT64, [8192]),
    ):
        model.graph.node.append(helper.make_node("Identity", [name], [f"{name}_id"]))
        model.graph.output.append(tensor_info(f"{name}_id", elem, shape))
    return model


def test_auto_externalize_over_limit(tmp_path: Path) -> None:
    model = _auto_model()
    expected = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    big = {t.name for t in model.graph.initializer if t.ByteSize() >= MIN_EXTERNAL_BYTES}
    assert big == {"raw_a", "raw_b", "typed_f32", "typed_f16", "typed_i64"}
    path = tmp_path / "auto.onnx"

    report = write_model(model, path, None, limit=10_000)

    assert report.externalized == len(big)
    assert report.data_files == [tmp_path / "auto.onnx.data"]
    saved = onnx.load(path, load_external_data=False)
    for tensor in saved.graph.initializer:
        if tensor.name in big:
            assert is_external(tensor), tensor.name
            assert ExternalRef.of(tensor).location == "auto.onnx.data"
        else:
            assert not is_external(tensor), tensor.name
    assert _refs(model) == {}  # not adopted: the in-memory model keeps its data inline
    adopted = _auto_model()
    write_model(adopted, tmp_path / "own.onnx", None, limit=10_000, adopt=True)
    assert len(_refs(adopted)) == len(big)  # adopted: it refers to its data file
    (tmp_path / "own.onnx").unlink()
    (tmp_path / "own.onnx.data").unlink()
    reloaded = onnx.load(path)
    for tensor in reloaded.graph.initializer:
        np.testing.assert_array_equal(numpy_helper.to_array(tensor), expected[tensor.name])
    onnx.checker.check_model(str(path), full_check=True)
    assert sorted(os.listdir(tmp_path)) == ["auto.onnx", "auto.onnx.data"]


def test_auto_externalize_packed_types_and_tensor_metadata(tmp_path: Path) -> None:
    """4-bit values kept in int32_data are written packed, as raw_data must be; the tensor's
    name, dims, doc string and metadata stay."""
    values = np.resize(np.arange(-8, 8), 4096)
    model = weights_model({})
    tensor = helper.make_tensor("int4", TensorProto.INT4, [4096], values)
    tensor.doc_string = "four bits"
    tensor.metadata_props.add(key="quant", value="int4")
    model.graph.initializer.append(tensor)
    model.graph.node.append(helper.make_node("Identity", ["int4"], ["int4_id"]))
    model.graph.output.append(tensor_info("int4_id", TensorProto.INT4, [4096]))
    path = tmp_path / "packed.onnx"

    assert write_model(model, path, None, limit=1000).externalized == 1

    saved = onnx.load(path)
    loaded = saved.graph.initializer[0]
    assert (loaded.name, list(loaded.dims), loaded.doc_string) == ("int4", [4096], "four bits")
    assert [(p.key, p.value) for p in loaded.metadata_props] == [("quant", "int4")]
    np.testing.assert_array_equal(numpy_helper.to_array(loaded).astype(np.int8), values)
    onnx.checker.check_model(str(path))  # no full check: Identity-17 has no int4


def test_auto_externalize_keeps_what_onnx_cannot_load_inline(tmp_path: Path) -> None:
    """Only tensors whose external data onnx.load reads back go external: sparse tensor parts
    and training_info tensors stay inline, function attribute tensors may go."""
    model = rich_model()
    sparse = model.graph.sparse_initializer[0]
    sparse.values.CopyFrom(numpy_helper.from_array(np.arange(1, 401, dtype=np.float32), "S"))
    sparse.indices.CopyFrom(numpy_helper.from_array(np.arange(400, dtype=np.int64), "S_i"))
    sparse.ClearField("dims")
    sparse.dims.extend([20, 20])
    constant = numpy_helper.from_array(np.ones(1000, dtype=np.float32), "fn_constant")
    model.functions[0].node.append(
        helper.make_node("Constant", [], ["unused"], name="fn_constant", value=constant)
    )
    init_node = model.training_info[0].initialization.node[0]
    init_node.attribute[0].t.CopyFrom(numpy_helper.from_array(np.ones((2, 3), np.float32)))
    path = tmp_path / "rich.onnx"

    report = write_model(model, path, None, limit=1000)

    assert report.externalized == 1
    saved = onnx.load(path)
    assert not is_external(saved.graph.sparse_initializer[0].values)
    assert not is_external(saved.graph.sparse_initializer[0].indices)
    np.testing.assert_array_equal(
        numpy_helper.to_array(saved.functions[0].node[-1].attribute[0].t), np.ones(1000)
    )
    onnx.checker.check_model(str(path))


def test_auto_externalize_avoids_a_taken_data_file_name(tmp_path: Path) -> None:
    model = _auto_model()
    (tmp_path / "auto.onnx.data").write_bytes(b"\0" * 64)
    extra = TensorProto(
        name="ext", data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL
    )
    extra.external_data.add(key="location", value="auto.onnx.data")
    extra.external_data.add(key="length", value="16")
    model.graph.initializer.append(extra)
    write_model(model, tmp_path / "auto.onnx", tmp_path, limit=10_000)
    saved = onnx.load(tmp_path / "auto.onnx", load_external_data=False)
    locations = {ExternalRef.of(t).location for t in iter_model_tensors(saved) if is_external(t)}
    assert locations == {"auto.onnx.data", "auto.onnx.1.data"}
    assert (tmp_path / "auto.onnx.data").read_bytes() == b"\0" * 64


# --- (d) failed saves leave everything as it was -------------------------------------------
def _failing(match: Callable[[str], bool], real: Callable[..., Any]) -> Callable[..., Any]:
    def fail(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
        if match(str(dst)):
            raise OSError(errno.EIO, "Input/output error", str(dst))
        return real(src, dst, *args, **kwargs)

    return fail


def _assert_one_line_naming(error: BaseException, path: Path) -> None:
    text = str(error)
    assert "\n" not in text
    assert str(path) in text


def test_failed_rename_keeps_old_file_and_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "model.onnx"
    onnx.save(chain_model(), path)
    original = path.read_bytes()
    doc = open_document(path)
    doc.undo_stack.push(SetModelProperty("doc_string", "changed"))
    edited = doc.model.SerializeToString()
    monkeypatch.setattr(os, "replace", _failing(lambda _dst: True, os.replace))

    with pytest.raises(ModelSaveError) as info:
        save_document(doc)

    _assert_one_line_naming(info.value, path)
    assert path.read_bytes() == original
    assert os.listdir(tmp_path) == ["model.onnx"]
    assert doc.model.SerializeToString() == edited
    assert doc.modified


def test_failed_fsync_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "model.onnx"
    onnx.save(chain_model(), path)
    original = path.read_bytes()
    model = chain_model()
    model.doc_string = "new"

    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(ModelSaveError) as info:
        write_model(model, path, None)
    _assert_one_line_naming(info.value, path)
    assert "No space left" in str(info.value)
    assert path.read_bytes() == original
    assert os.listdir(tmp_path) == ["model.onnx"]


@pytest.mark.parametrize("failing", ["data file", "model file"])
def test_failed_auto_externalize_rolls_back(
    failing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whichever rename fails, the model in memory gets its tensors back and no file of the
    failed save stays behind (not even a data file already renamed into place)."""
    path = tmp_path / "auto.onnx"
    path.write_bytes(b"old contents")
    model = _auto_model()
    before = model.SerializeToString()
    suffix = ".data" if failing == "data file" else ".onnx"
    monkeypatch.setattr(os, "replace", _failing(lambda dst: dst.endswith(suffix), os.replace))

    with pytest.raises(ModelSaveError) as info:
        write_model(model, path, None, limit=10_000)

    _assert_one_line_naming(info.value, path)
    assert model.SerializeToString() == before
    assert path.read_bytes() == b"old contents"
    assert os.listdir(tmp_path) == ["auto.onnx"]


def test_failed_save_elsewhere_leaves_no_files(
    external_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = open_document(external_model)
    before = doc.model.SerializeToString()
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setattr(os, "replace", _failing(lambda dst: dst.endswith(".onnx"), os.replace))
    with pytest.raises(ModelSaveError) as info:
        save_document(doc, out / "model.onnx")
    _assert_one_line_naming(info.value, out / "model.onnx")
    assert [p for p in out.rglob("*") if p.is_file()] == []
    assert doc.model.SerializeToString() == before
    assert doc.base_dir == external_model.parent.resolve()
