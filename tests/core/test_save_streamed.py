"""Streamed conversions (issue 11, point 5): FP16 and Batch Tensor Cast write each converted
weight into the output's data file as soon as it is converted (designer.core.io.stream),
and the save stays atomic as a set: an OSError at any step or a kill -9 leaves the complete
old set or the complete new set, and the next save removes what a killed one left."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper
from test_save_atomic import (
    Arrays,
    _assert_tidy,
    _Inject,
    _listing,
    _save_external,
    _used,
    _version,
)

from designer.core.errors import ModelSaveError
from designer.core.io import open_document, write_model
from designer.core.io.external import tensor_array
from designer.core.io.stream import DataSink
from designer.core.transforms import FP16Options, convert_to_fp16
from designer.core.transforms.cast import cast_tensors, list_cast_candidates, select_candidates

ROOT = Path(__file__).resolve().parents[2]


def _source(root: Path, seed: int, location: str = "weights.bin") -> Path:
    return _save_external(_version(seed), root / f"src{seed}" / "m.onnx", location)


def _fp16_of(seed: int) -> Arrays:
    arrays = _version(seed)
    return {"w": arrays["w"].astype(np.float16), "v": arrays["v"]}


def streamed_fp16(src: Path, out: Path) -> None:
    doc = open_document(src)
    with DataSink(out, doc.model) as sink:
        result = convert_to_fp16(doc.model, FP16Options(), doc.base_dir, sink=sink)
        write_model(result.model, out, doc.base_dir, limit=0, sink=sink)


def _state(out: Path, versions: dict[str, Arrays]) -> str:
    """Which version ``out`` holds, read by onnx's loader and by ours; a mix fails."""
    loaded = onnx.load(str(out))
    values = {t.name: numpy_helper.to_array(t) for t in loaded.graph.initializer}
    doc = open_document(out)
    ours = {t.name: np.asarray(tensor_array(t, doc.base_dir)) for t in doc.model.graph.initializer}
    for name, expected in versions.items():
        if values.keys() == expected.keys() and all(
            values[k].dtype == v.dtype
            and np.array_equal(values[k], v)
            and np.array_equal(ours[k], v)
            for k, v in expected.items()
        ):
            return name
    raise AssertionError(f"{out}: the model and its data files are a mix of versions")


def test_streamed_fp16_equals_the_in_memory_conversion(tmp_path: Path) -> None:
    src = _source(tmp_path, 1)
    doc = open_document(src)
    in_memory = convert_to_fp16(doc.model, FP16Options(), doc.base_dir).model
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    streamed_fp16(src, out)
    written = onnx.load(str(out), load_external_data=False)
    assert [n.SerializeToString() for n in written.graph.node] == [
        n.SerializeToString() for n in in_memory.graph.node
    ]
    w = next(t for t in written.graph.initializer if t.name == "w")
    assert w.data_type == TensorProto.FLOAT16 and w.data_location == TensorProto.EXTERNAL
    assert {e.key: e.value for e in w.external_data}["location"] == "m.onnx.data"
    assert _state(out, {"new": _fp16_of(1)}) == "new"
    onnx.checker.check_model(str(out), full_check=True)
    _assert_tidy(out)


def test_streamed_cast_equals_the_in_memory_cast(tmp_path: Path) -> None:
    src = _source(tmp_path, 2)
    doc = open_document(src)
    keys = select_candidates(list_cast_candidates(doc.model), ["w", "v"])
    expected = cast_tensors(doc.model, keys, TensorProto.FLOAT16, doc.base_dir).model
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    with DataSink(out, doc.model) as sink:
        result = cast_tensors(doc.model, keys, TensorProto.FLOAT16, doc.base_dir, sink=sink)
        write_model(result.model, out, doc.base_dir, limit=0, sink=sink)
    values = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(out)).graph.initializer}
    for tensor in expected.graph.initializer:
        np.testing.assert_array_equal(values[tensor.name], numpy_helper.to_array(tensor))
        assert values[tensor.name].dtype == np.float16
    _assert_tidy(out)


def test_data_file_name_avoids_the_sources_locations(tmp_path: Path) -> None:
    """The source's data file is called what the output's would be (m.onnx.data): the
    streamed file takes a fresh name, and the unconverted int64 weight keeps its bytes."""
    src = _source(tmp_path, 3, location="m.onnx.data")
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    streamed_fp16(src, out)
    assert _used(out) == {"m.onnx.data", "m.onnx.1.data"}
    assert _state(out, {"new": _fp16_of(3)}) == "new"


def test_a_failed_conversion_leaves_nothing(tmp_path: Path) -> None:
    src = _source(tmp_path, 4)
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    doc = open_document(src)
    with pytest.raises(RuntimeError, match="stop"), DataSink(out, doc.model) as sink:
        convert_to_fp16(doc.model, FP16Options(), doc.base_dir, sink=sink)
        assert len(list(out.parent.iterdir())) == 2  # the journal and the data file
        raise RuntimeError("stop")
    assert list(out.parent.iterdir()) == []


def test_a_sink_for_another_path_is_refused(tmp_path: Path) -> None:
    src = _source(tmp_path, 5)
    doc = open_document(src)
    with DataSink(tmp_path / "a.onnx", doc.model) as sink:
        result = convert_to_fp16(doc.model, FP16Options(), doc.base_dir, sink=sink)
        with pytest.raises(ModelSaveError, match="made for"):
            write_model(result.model, tmp_path / "b.onnx", doc.base_dir, sink=sink)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src5"]


def test_oserror_at_every_step_leaves_old_or_new_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    versions = {"old": _fp16_of(10), "new": _fp16_of(11)}

    def scenario(root: Path) -> tuple[Path, Path]:
        out = root / "out" / "m.onnx"
        out.parent.mkdir(parents=True)
        streamed_fp16(_source(root, 10), out)
        return _source(root, 11), out

    with monkeypatch.context() as m:  # count the calls of a conversion and save that succeed
        counter = _Inject(m, 0)
        src, out = scenario(tmp_path / "count")
        counter.calls = 0
        streamed_fp16(src, out)
        total = counter.calls
    assert _state(out, versions) == "new" and total > 5
    outcomes = set()
    for k in range(1, total + 1):
        root = tmp_path / f"k{k}"
        src, out = scenario(root)
        before = _listing(out.parent)
        with monkeypatch.context() as m:
            _Inject(m, k)
            try:
                streamed_fp16(src, out)
            except (ModelSaveError, OSError) as exc:
                assert "\n" not in str(exc)
                failed = True
            else:
                failed = False
        state = _state(out, versions)
        outcomes.add(state)
        if failed:
            assert state == "old", k
            assert _listing(out.parent) == before, k  # not a file more or less
        else:
            assert state == "new", k
        # what a failure after the switch could not remove goes with the next save
        write_model(onnx.load(str(out), load_external_data=False), out, out.parent)
        _assert_tidy(out)
        shutil.rmtree(root)
    assert outcomes == {"old", "new"}


_CHILD = """
import os, sys, time
from pathlib import Path
real_replace = os.replace
def slow_replace(a, b):  # a slow disk: the moments between renames last a while
    real_replace(a, b)
    time.sleep(0.03)
os.replace = slow_replace
sys.path.insert(0, sys.argv[4])
from test_save_streamed import streamed_fp16
a, b, out = sys.argv[1:4]
print("ready", flush=True)
i = 1
while True:
    streamed_fp16(Path((a, b)[i % 2]), Path(out))
    i += 1
"""


def test_kill_during_streamed_saves_leaves_old_or_new_set(tmp_path: Path) -> None:
    size = 1 << 20  # 4 MiB of float32 each
    arrays = {s: _version(s, size) for s in (20, 21)}
    sources = [_save_external(arrays[s], tmp_path / f"src{s}" / "m.onnx") for s in arrays]
    versions = {str(s): {"w": a["w"].astype(np.float16), "v": a["v"]} for s, a in arrays.items()}
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    streamed_fp16(sources[0], out)
    states = []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    for seed in range(5):
        rng = random.Random(seed)
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _CHILD,
                *map(str, sources),
                str(out),
                str(Path(__file__).parent),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
            time.sleep(rng.uniform(0.05, 0.8))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        states.append(_state(out, versions))
    doc = open_document(out)  # the next save finishes what the killed ones left
    write_model(doc.model, out, doc.base_dir)
    _assert_tidy(out)
    assert _state(out, versions) in versions
    print(f"states after kills: {states}")


def test_streamed_beside_the_source_leaves_the_source_alone(tmp_path: Path) -> None:
    src = _source(tmp_path, 6)
    before = _listing(src.parent)
    out = src.with_name("half.onnx")
    streamed_fp16(src, out)
    assert _state(out, {"new": _fp16_of(6)}) == "new"
    assert _used(out) == {"weights.bin", "half.onnx.data"}  # v stays in the source's file
    after = _listing(src.parent)
    assert {k: after[k] for k in before} == before
    assert sorted(after) == ["half.onnx", "half.onnx.data", "m.onnx", "weights.bin"]
