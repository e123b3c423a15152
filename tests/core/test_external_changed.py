"""A save refuses to read external data files that changed on disk since the document was
opened (or last saved): their bytes are no longer the weights the document was opened
with, and copying or keeping them would save a model with another program's weights
without a word. The document and every file on disk stay as they were; after a save the
document checks against the files it now reads."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.shared import MODELS
from onnx import numpy_helper

from designer.core.document import Document
from designer.core.edits import SetModelProperty
from designer.core.errors import DesignerError
from designer.core.io import open_document, save_document, write_model

SQUEEZENET = MODELS / "squeezenet1_0.torchscript.onnx"


@functools.cache
def _squeezenet_bytes() -> bytes:
    data: bytes = SQUEEZENET.read_bytes()
    return data


def _external(folder: Path, name: str = "sq.onnx", location: str = "sq.data") -> Path:
    """SqueezeNet saved by onnx in ``folder`` with its weights in ``location``."""
    folder.mkdir(parents=True, exist_ok=True)
    model = onnx.load_from_string(_squeezenet_bytes())
    path = folder / name
    onnx.save(model, path, save_as_external_data=True, location=location)
    assert (folder / location).stat().st_size > 1 << 20
    return path


def _weights(path: Path) -> dict[str, bytes]:
    """The initializers of the model file ``path`` as onnx's own loader reads them."""
    model = onnx.load(str(path))
    return {t.name: numpy_helper.to_array(t).tobytes() for t in model.graph.initializer}


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) and its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _keep_stamp_apart(path: Path, before: os.stat_result) -> None:
    """File systems stamp writes with a coarse clock (a few ms): a rewrite right after the
    open can get the very same mtime. Another program writes seconds or hours later; move
    the mtime on as that would have."""
    after = path.stat()
    if after.st_mtime_ns == before.st_mtime_ns:
        os.utime(path, ns=(after.st_atime_ns, before.st_mtime_ns + 1_000_000_000))


def _rewrite_same_size(path: Path) -> None:
    """Another program rewrites a part of ``path`` in place (the size stays)."""
    before = path.stat()
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 65536] = bytes(b ^ 0x5A for b in data[middle : middle + 65536])
    with open(path, "r+b") as f:
        f.write(data)
    assert path.stat().st_ino == before.st_ino and path.stat().st_size == before.st_size
    _keep_stamp_apart(path, before)


def _grow(path: Path) -> None:
    before = path.stat()
    with open(path, "ab") as f:
        f.write(b"\1" * 4096)
    _keep_stamp_apart(path, before)


def _shrink(path: Path) -> None:
    """Cut the file short: the last tensors' ranges now pass its end."""
    before = path.stat()
    os.truncate(path, before.st_size - 4096)
    _keep_stamp_apart(path, before)


def _replace_same_size_and_time(path: Path) -> None:
    """Another program writes a new file and renames it over ``path``, giving it the old
    size and modification time: only the file's identity (inode) tells it apart."""
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[:65536] = bytes(b ^ 0x33 for b in data[:65536])
    new = path.with_name(path.name + ".new")
    new.write_bytes(data)
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(new, path)
    assert path.stat().st_ino != before.st_ino
    assert path.stat().st_mtime_ns == before.st_mtime_ns


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


def _edit(doc: Document, text: str = "edited") -> None:
    doc.undo_stack.push(SetModelProperty("doc_string", text))


def _assert_refused(
    doc: Document, target: Path | None, changed: Path, folders: list[Path]
) -> DesignerError:
    """Save ``doc`` (to ``target``, or where it is) and check the refusal: a message naming
    ``changed`` and saying what to do, the document and ``folders`` left as they were."""
    before = {folder: _files(folder) for folder in folders}
    model, path, base_dir = doc.model.SerializeToString(), doc.path, doc.base_dir
    stamps = dict(doc.data_stamps)
    with pytest.raises(DesignerError) as caught:
        save_document(doc, target)
    message = str(caught.value)
    assert f"{changed} changed on disk since the model was opened" in message
    assert "another program" in message
    assert "reopen the model" in message and "restore the file" in message
    for folder in folders:
        assert _files(folder) == before[folder], folder
    assert doc.model.SerializeToString() == model
    assert (doc.path, doc.base_dir) == (path, base_dir)
    assert doc.data_stamps == stamps
    assert doc.modified
    return caught.value


@pytest.mark.parametrize("plain", [False, True], ids=["save-as", "save"])
def test_a_data_file_rewritten_in_place_refuses_the_save(tmp_path: Path, plain: bool) -> None:
    source = _external(tmp_path / "A")
    # the target of Save As is a model of its own, with its own data file
    target = _external(tmp_path / "B", "out.onnx", "out.data")
    doc = open_document(source)
    _edit(doc)
    _rewrite_same_size(tmp_path / "A" / "sq.data")

    _assert_refused(
        doc,
        None if plain else target,
        (tmp_path / "A" / "sq.data").resolve(),
        [tmp_path / "A", tmp_path / "B"],
    )


@pytest.mark.parametrize(
    "change",
    [_grow, _shrink, _replace_same_size_and_time],
    ids=["grown", "shrunk", "replaced"],
)
@pytest.mark.parametrize("plain", [False, True], ids=["save-as", "save"])
def test_a_data_file_changed_otherwise_refuses_the_save(
    tmp_path: Path, change: Callable[[Path], None], plain: bool
) -> None:
    source = _external(tmp_path / "A")
    (tmp_path / "B").mkdir()
    doc = open_document(source)
    _edit(doc)
    change(tmp_path / "A" / "sq.data")

    _assert_refused(
        doc,
        None if plain else tmp_path / "B" / "out.onnx",
        (tmp_path / "A" / "sq.data").resolve(),
        [tmp_path / "A", tmp_path / "B"],
    )


def test_unchanged_files_save_and_save_again(tmp_path: Path) -> None:
    source = _external(tmp_path / "A")
    original = _weights(source)
    doc = open_document(source)
    _edit(doc)

    save_document(doc, _folder(tmp_path / "B") / "out.onnx")
    _edit(doc, "again")
    save_document(doc)  # in B, keeping the data file the first save wrote
    _edit(doc, "once more")
    save_document(doc, source)  # back over the original

    assert _weights(tmp_path / "B" / "out.onnx") == original
    assert _weights(source) == original
    assert onnx.load(str(source), load_external_data=False).doc_string == "once more"


def test_after_a_save_the_files_it_now_reads_are_checked(tmp_path: Path) -> None:
    source = _external(tmp_path / "A")
    original = _weights(source)
    doc = open_document(source)
    _edit(doc)
    save_document(doc, _folder(tmp_path / "B") / "out.onnx")  # the data now comes from B

    _rewrite_same_size(tmp_path / "A" / "sq.data")  # no longer read: no matter
    _edit(doc, "again")
    save_document(doc)
    assert _weights(tmp_path / "B" / "out.onnx") == original

    _rewrite_same_size(tmp_path / "B" / "sq.data")
    _edit(doc, "once more")
    _assert_refused(
        doc,
        _folder(tmp_path / "C") / "out.onnx",
        (tmp_path / "B" / "sq.data").resolve(),
        [tmp_path / "B", tmp_path / "C"],
    )


def test_a_model_the_designer_saved_is_edited_and_saved_again(tmp_path: Path) -> None:
    source = _external(tmp_path / "A")
    original = _weights(source)
    first = open_document(source)
    _edit(first)
    save_document(first, _folder(tmp_path / "B") / "out.onnx")

    doc = open_document(tmp_path / "B" / "out.onnx")  # written by the designer
    _edit(doc, "again")
    save_document(doc)
    _edit(doc, "once more")
    save_document(doc)
    save_document(doc, _folder(tmp_path / "C") / "out.onnx")

    assert _weights(tmp_path / "B" / "out.onnx") == original
    assert _weights(tmp_path / "C" / "out.onnx") == original
    _rewrite_same_size(tmp_path / "C" / "sq.data")
    _edit(doc, "last")
    _assert_refused(doc, None, (tmp_path / "C" / "sq.data").resolve(), [tmp_path / "C"])


def test_a_working_copy_checks_the_files_of_its_document(tmp_path: Path) -> None:
    source = _external(tmp_path / "A")
    doc = open_document(source)
    copy = doc.working_copy()
    assert copy.data_stamps == doc.data_stamps and copy.data_stamps
    _edit(copy)
    _rewrite_same_size(tmp_path / "A" / "sq.data")
    (tmp_path / "B").mkdir()

    _assert_refused(
        copy,
        tmp_path / "B" / "out.onnx",
        (tmp_path / "A" / "sq.data").resolve(),
        [tmp_path / "A", tmp_path / "B"],
    )


def test_a_document_made_in_memory_has_nothing_to_check(tmp_path: Path) -> None:
    inline = onnx.load_from_string(_squeezenet_bytes())
    doc = Document(inline)
    assert doc.data_stamps == {}
    save_document(doc, tmp_path / "new.onnx")
    assert _weights(tmp_path / "new.onnx") == _weights(SQUEEZENET)


def test_a_restored_recovery_copy_checks_the_original_folder(tmp_path: Path) -> None:
    """Crash recovery writes the model with references to the original folder's data and
    opens it with that folder as ``base_dir`` (designer.ui.recovery, main_window): the
    files are stamped as they are when it is restored."""
    source = _external(tmp_path / "A")
    original = _weights(source)
    doc = open_document(source)
    _edit(doc)
    entry = tmp_path / "recovery" / "entry.onnx"
    entry.parent.mkdir()
    write_model(doc.model, entry, doc.base_dir, references_only=True)

    restored = open_document(entry, source.parent.resolve())
    restored.path = source.resolve()  # what the window does after restoring
    assert restored.data_stamps == doc.data_stamps
    _edit(restored, "restored")  # (the window marks restored work unsaved)
    _rewrite_same_size(tmp_path / "A" / "sq.data")
    _assert_refused(
        restored,
        None,
        (tmp_path / "A" / "sq.data").resolve(),
        [tmp_path / "A", tmp_path / "recovery"],
    )

    again = open_document(entry, source.parent.resolve())  # restored after the change
    again.path = source.resolve()
    changed = _weights(source)
    save_document(again)
    assert _weights(source) == changed != original
    assert np.any([changed[k] != original[k] for k in original])
