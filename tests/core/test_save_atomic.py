"""Saves with external data are atomic as a set (SPEC D-3, issue 11 points 1-3): a data file
never overwrites the model or another data file, an OSError or a kill -9 at any point leaves
the complete old set or the complete new set, and the next save removes what a killed save
left behind."""

from __future__ import annotations

import errno
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from helpers.models import weights_model
from onnx import TensorProto, numpy_helper

from designer.core.errors import ModelSaveError
from designer.core.io import open_document, save_document, write_model
from designer.core.io.atomic import clean_stale, create_temp, release, temp_path
from designer.core.io.external import ExternalRef, is_external, iter_model_tensors, tensor_array
from designer.core.io.save_plan import in_use

Arrays = dict[str, np.ndarray]


def _version(seed: int, size: int = 4096) -> Arrays:
    rng = np.random.default_rng(seed)
    return {
        "w": rng.standard_normal(size).astype(np.float32),
        "v": rng.integers(-100, 100, 600).astype(np.int64),
    }


def _tag(arrays: Arrays) -> str:
    return hashlib.sha256(b"".join(a.tobytes() for a in arrays.values())).hexdigest()[:16]


def _model(arrays: Arrays) -> onnx.ModelProto:
    """A model of ``arrays`` whose graph says which arrays it was made for (so that an old
    graph with new weights is told from the new set)."""
    model = weights_model(arrays)
    model.doc_string = _tag(arrays)
    return model


def _save_external(arrays: Arrays, path: Path, location: str = "weights.bin") -> Path:
    (path.parent / location).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(
        _model(arrays),
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=location,
        size_threshold=0,
    )
    return path


def _values(path: Path) -> Arrays:
    """The model's initializers read by onnx's own loader (external data included)."""
    model = onnx.load(str(path))
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def _which(path: Path, versions: dict[str, Arrays]) -> str:
    """Which version the folder holds, checked by two readers (onnx's and ours)."""
    values = _values(path)
    tag = onnx.load(str(path), load_external_data=False).doc_string
    doc = open_document(path)
    ours = {t.name: np.asarray(tensor_array(t, doc.base_dir)) for t in doc.model.graph.initializer}
    for name, expected in versions.items():
        if (
            tag == _tag(expected)
            and values.keys() == expected.keys()
            and all(
                np.array_equal(values[k], v) and np.array_equal(ours[k], v)
                for k, v in expected.items()
            )
        ):
            return name
    raise AssertionError(f"{path}: the model and its data files are a mix of versions")


def _used(path: Path) -> set[str]:
    model = onnx.load(str(path), load_external_data=False)
    return {ExternalRef.of(t).location for t in iter_model_tensors(model) if is_external(t)}


def _listing(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _assert_tidy(path: Path) -> None:
    """Only the model and the data files it uses: no temporary file, no orphan."""
    files = {str(p.relative_to(path.parent)) for p in path.parent.rglob("*") if p.is_file()}
    assert files == {path.name, *_used(path)}


# --- point 1: a data file never replaces the model or another data file ----------------
def test_data_file_named_like_the_target_model_is_renamed(tmp_path: Path) -> None:
    """The reported loss: data file ``out.onnx`` saved as ``B/out.onnx``."""
    arrays = _version(1)
    src = _save_external(arrays, tmp_path / "A" / "model.onnx", location="out.onnx")
    (tmp_path / "B").mkdir()
    out = tmp_path / "B" / "out.onnx"
    doc = open_document(src)
    report = save_document(doc, out)
    assert _values(out).keys() == arrays.keys()
    for name, value in _values(out).items():
        np.testing.assert_array_equal(value, arrays[name])
    assert _used(out) == {"out.onnx.data"}
    assert report.data_files == [out.parent / "out.onnx.data"]
    assert {ExternalRef.of(t).location for t in doc.model.graph.initializer} == {"out.onnx.data"}
    _assert_tidy(out)
    assert _values(src).keys() == arrays.keys()  # the source is untouched


@pytest.mark.parametrize("target", ["x.onnx", "m.onnx.designer.json"])
def test_saving_over_a_data_file_in_use_is_refused(tmp_path: Path, target: str) -> None:
    """Same folder: the new model file (or its layout file) would be the data file that the
    model on disk, and the document, read: refused, nothing changes."""
    arrays = _version(2)
    src = _save_external(arrays, tmp_path / "model.onnx", location=target)
    before = _listing(tmp_path)
    doc = open_document(src)
    name = "m.onnx" if target.endswith(".json") else target
    with pytest.raises(ModelSaveError, match=f"overwrite '{target}', the external data file"):
        save_document(doc, tmp_path / name)
    assert _listing(tmp_path) == before
    assert doc.path == src.resolve()


def test_two_locations_of_one_real_file_are_copied_once(tmp_path: Path) -> None:
    arrays = _version(3)
    src = _save_external(arrays, tmp_path / "A" / "model.onnx")
    model = onnx.load(str(src), load_external_data=False)
    for entry in model.graph.initializer[1].external_data:
        if entry.key == "location":
            entry.value = "./weights.bin"
    onnx.save(model, src)
    (tmp_path / "B").mkdir()
    out = tmp_path / "B" / "model.onnx"
    report = write_model(open_document(src).model, out, src.parent)
    assert report.data_files == [out.parent / "weights.bin"]
    for name, value in _values(out).items():
        np.testing.assert_array_equal(value, arrays[name])


def test_same_folder_new_name_never_overwrites_another_models_data(tmp_path: Path) -> None:
    other = _save_external(_version(4), tmp_path / "other.onnx", location="new.onnx.data")
    before = _listing(tmp_path)
    model = _model(_version(5))  # inline: goes external because of the limit
    write_model(model, tmp_path / "new.onnx", tmp_path, limit=1000)
    assert _used(tmp_path / "new.onnx") == {"new.onnx.1.data"}
    for name, value in _values(other).items():
        np.testing.assert_array_equal(value, _version(4)[name])
    assert {k: v for k, v in _listing(tmp_path).items() if k in before} == before


def test_repeated_saves_elsewhere_alternate_names_and_remove_the_old_data(
    tmp_path: Path,
) -> None:
    versions = {"a": _version(6), "b": _version(7)}
    docs = {
        k: open_document(_save_external(v, tmp_path / k / "m.onnx")) for k, v in versions.items()
    }
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    seen = []
    for name in "abab":
        write_model(docs[name].model, out, docs[name].base_dir)
        assert _which(out, versions) == name
        _assert_tidy(out)
        seen.append(_used(out))
    assert seen == [{"weights.bin"}, {"weights.1.bin"}, {"weights.bin"}, {"weights.1.bin"}]


def test_old_data_another_model_mentions_is_kept(tmp_path: Path) -> None:
    versions = {"a": _version(8), "b": _version(9)}
    docs = {
        k: open_document(_save_external(v, tmp_path / k / "m.onnx")) for k, v in versions.items()
    }
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    write_model(docs["a"].model, out, docs["a"].base_dir)
    shutil.copy(out, out.parent / "sibling.onnx")  # shares weights.bin
    write_model(docs["b"].model, out, docs["b"].base_dir)
    assert _which(out, versions) == "b"
    assert _which(out.parent / "sibling.onnx", versions) == "a"


# --- point 2: OSError at every step --------------------------------------------------------
Scenario = Callable[[Path], tuple[Callable[[], Any], Path]]


def _overwrite_elsewhere(root: Path) -> tuple[Callable[[], Any], Path]:
    """B's folder holds version a (copied there); version b is saved over it from its own."""
    a = open_document(_save_external(_version(10), root / "a" / "m.onnx"))
    b = open_document(_save_external(_version(11), root / "b" / "m.onnx"))
    out = root / "out" / "m.onnx"
    out.parent.mkdir()
    write_model(a.model, out, a.base_dir)
    return lambda: save_document(b, out), out


def _externalize_over(root: Path) -> tuple[Callable[[], Any], Path]:
    """Inline models going external because of the limit, the second over the first."""
    out = root / "out" / "m.onnx"
    out.parent.mkdir(parents=True)
    write_model(_model(_version(10)), out, None, limit=1000)
    model = _model(_version(11))
    return lambda: write_model(model, out, None, limit=1000), out


def _in_place_edit(root: Path) -> tuple[Callable[[], Any], Path]:
    """A model edited in its own folder: one tensor becomes inline and goes external anew."""
    out = _save_external(_version(10), root / "out" / "m.onnx")
    doc = open_document(out)
    new = _version(11)
    doc.model.graph.initializer[0].CopyFrom(numpy_helper.from_array(new["w"], "w"))
    doc.model.graph.initializer[1].CopyFrom(numpy_helper.from_array(new["v"], "v"))
    doc.model.doc_string = _tag(new)
    return lambda: write_model(doc.model, out, doc.base_dir, limit=1000, adopt=True), out


class _Inject:
    """Make the ``k``-th call (1-based) of the wrapped os functions raise OSError."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, k: int) -> None:
        self.k, self.calls = k, 0
        for name in ("replace", "fsync", "open", "unlink", "mkdir"):
            monkeypatch.setattr(os, name, self._wrap(getattr(os, name)))

    def _wrap(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.k:
                raise OSError(errno.EIO, "Input/output error (injected)")
            return real(*args, **kwargs)

        return call


@pytest.mark.parametrize("scenario", [_overwrite_elsewhere, _externalize_over, _in_place_edit])
def test_oserror_at_every_step_leaves_old_or_new_set(
    scenario: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    versions = {"old": _version(10), "new": _version(11)}
    with monkeypatch.context() as m:  # count the calls of a save that succeeds
        counter = _Inject(m, 0)
        save, out = scenario(tmp_path / "count")
        counter.calls = 0
        save()
        total = counter.calls
    assert _which(out, versions) == "new"
    assert total > 5
    outcomes = set()
    for k in range(1, total + 1):
        root = tmp_path / f"k{k}"
        save, out = scenario(root)
        before = _listing(out.parent)
        with monkeypatch.context() as m:
            _Inject(m, k)
            try:
                save()
            except ModelSaveError as exc:
                assert "\n" not in str(exc) and str(out) in str(exc)
                failed = True
            else:
                failed = False
        state = _which(out, versions)
        outcomes.add(state)
        if failed:
            assert state == "old", k
            assert _listing(out.parent) == before, k  # not a file more or less
        else:
            assert state == "new", k
        write_model(onnx.load(str(out), load_external_data=False), out, out.parent)
        assert not [p for p in out.parent.rglob("*.tmp")], k
        shutil.rmtree(root)
    assert outcomes == {"old", "new"}


def test_failed_save_restores_the_documents_locations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arrays = _version(12)
    src = _save_external(arrays, tmp_path / "A" / "model.onnx", location="out.onnx")
    (tmp_path / "B").mkdir()
    doc = open_document(src)
    before = doc.model.SerializeToString()
    real = os.replace

    def replace(a: Any, b: Any) -> None:
        if str(b).endswith("out.onnx"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(ModelSaveError, match="No space left"):
        save_document(doc, tmp_path / "B" / "out.onnx")
    assert doc.model.SerializeToString() == before
    assert doc.base_dir == src.parent.resolve()
    assert list((tmp_path / "B").iterdir()) == []


# --- point 2 with a real kill -9 -------------------------------------------------------------
_CHILD = """
import os, sys, time
from pathlib import Path
import onnx
from designer.core.io import open_document, write_model
real_replace = os.replace
def slow_replace(a, b):  # a slow disk: the moments between renames last a while
    real_replace(a, b)
    time.sleep(0.03)
os.replace = slow_replace
a, b, out, mode = sys.argv[1:5]
docs = [open_document(a), open_document(b)]
print("ready", flush=True)
i = 1
while True:
    doc = docs[i % 2]
    if mode == "copy":
        write_model(doc.model, Path(out), doc.base_dir)
    else:
        model = onnx.ModelProto()
        model.CopyFrom(doc.model)
        write_model(model, Path(out), None, limit=1000)
    i += 1
"""


@pytest.mark.parametrize("mode", ["copy", "externalize"])
def test_kill_during_saves_leaves_old_or_new_set_and_next_save_cleans_up(
    mode: str, tmp_path: Path
) -> None:
    versions = {"a": _version(20, 1 << 20), "b": _version(21, 1 << 20)}  # 4 MiB each
    sources = []
    for name, arrays in versions.items():
        path = tmp_path / name / "m.onnx"
        if mode == "copy":  # in a subfolder: its temporary files are found by the journal
            _save_external(arrays, path, location="data/weights.bin")
        else:
            path.parent.mkdir()
            onnx.save(_model(arrays), path)
        sources.append(path)
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    first = open_document(sources[0])
    write_model(first.model, out, first.base_dir, limit=1000 if mode != "copy" else 2**31)
    states = []
    for seed in range(6):
        rng = random.Random(seed)
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, *map(str, sources), str(out), mode],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
            time.sleep(rng.uniform(0.05, 0.6))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        states.append(_which(out, versions))
    leftovers = [p for p in out.parent.iterdir() if p.name not in {out.name, *_used(out)}]
    # the next save finishes what the killed ones left: stale temporary files, orphan data
    doc = open_document(out)
    write_model(doc.model, out, doc.base_dir)
    _assert_tidy(out)
    assert _which(out, versions) in versions
    assert states  # each kill left a complete set (checked by _which above)
    print(f"states after kills: {states}; leftovers cleaned: {len(leftovers)}")


# --- point 3: stale temporary files --------------------------------------------------------
def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_next_save_removes_only_our_stale_temporary_files(tmp_path: Path) -> None:
    model_path = tmp_path / "m.onnx"
    onnx.save(_model(_version(30)), model_path)
    fd, mine = create_temp(model_path)  # a save of this process is writing it
    os.close(fd)
    own_done = temp_path(model_path)  # this process, but no save of it is writing it
    dead = Path(str(temp_path(model_path)).replace(f"~od{os.getpid()}@", f"~od{_dead_pid()}@"))
    other_host = tmp_path / ".m.onnx.~od1@00000000~abcd.part.tmp"
    old_other_host = tmp_path / ".m.onnx.data.~od1@00000000~abce.part.tmp"
    legacy_old = tmp_path / ".m.onnx.k2x9_abc.tmp"
    legacy_new = tmp_path / ".m.onnx.q7r8s9t0.tmp"
    foreign = tmp_path / ".notes.txt.tmp"
    for path in (mine, own_done, dead, other_host, old_other_host, legacy_old, legacy_new, foreign):
        path.write_bytes(b"x" * 100)
    day_ago = time.time() - 2 * 24 * 3600
    for path in (legacy_old, old_other_host):
        os.utime(path, (day_ago, day_ago))

    write_model(_model(_version(31)), model_path, None)

    remaining = {p.name for p in tmp_path.iterdir()}
    assert dead.name not in remaining and own_done.name not in remaining
    assert legacy_old.name not in remaining and old_other_host.name not in remaining
    for kept in (mine, other_host, legacy_new, foreign):
        assert kept.name in remaining, kept.name
    release(mine)


def test_stale_journal_removes_unused_data_files_only(tmp_path: Path) -> None:
    model_path = _save_external(_version(32), tmp_path / "m.onnx")
    (tmp_path / "weights.1.bin").write_bytes(b"orphan of a killed save")
    (tmp_path / "unlisted.bin").write_bytes(b"not ours")
    dead = f"~od{_dead_pid()}@"
    journal = Path(str(temp_path(model_path, "journal")).replace(f"~od{os.getpid()}@", dead))
    (tmp_path / "data").mkdir()
    part = temp_path(tmp_path / "data" / "w.bin")
    part = part.with_name(part.name.replace(f"~od{os.getpid()}@", dead))
    part.write_bytes(b"half a copy")
    not_ours = tmp_path / "data" / "keep.tmp"
    not_ours.write_bytes(b"someone else's")
    journal.write_text(
        '{"model": "m.onnx", "files": ["weights.1.bin", "weights.bin", "data/w.bin"],'
        f' "temps": ["data/{part.name}", "data/keep.tmp", "../x.tmp"]}}'
    )

    removed = clean_stale(tmp_path, in_use)

    assert set(removed) == {journal, tmp_path / "weights.1.bin", part}
    assert (tmp_path / "weights.bin").is_file() and (tmp_path / "unlisted.bin").is_file()
    assert not_ours.is_file()
    for name, value in _values(model_path).items():
        np.testing.assert_array_equal(value, _version(32)[name])


def test_new_data_files_get_the_usual_permissions(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_model(_model(_version(33)), tmp_path / "m.onnx", None, limit=1000)
    finally:
        os.umask(umask)
    assert (tmp_path / "m.onnx").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "m.onnx.data").stat().st_mode & 0o777 == 0o644


def test_inline_types_round_trip_unchanged(tmp_path: Path) -> None:
    """A model with no external data is saved as before: one file, same bytes."""
    model = _model(_version(34))
    write_model(model, tmp_path / "m.onnx", None)
    assert (tmp_path / "m.onnx").read_bytes() == model.SerializeToString()
    assert os.listdir(tmp_path) == ["m.onnx"]
    assert onnx.load(str(tmp_path / "m.onnx")).graph.initializer[0].data_type == TensorProto.FLOAT
