"""Save models atomically, keeping external data external and never losing the old file.

What a save guarantees, also after a crash (kill -9, power loss) or an error at any point:
the folder holds the complete old set (old model file and every data file it uses,
unchanged) or the complete new set, never a mix. How:

1. New data files are written under temporary names, flushed to disk, and then renamed to
   names no file has: a save never writes over an existing data file (a taken name gets a
   fresh one, ``weights.bin`` → ``weights.1.bin``; a data file named like the model or its
   layout file too). Saved in its own folder, a model's data files stay where they are.
   A data file a transform streamed its converted weights into while it ran
   (:mod:`designer.core.io.stream`, ``write_model(..., sink=)``) is one of these: written
   under a temporary name listed in its own journal first, renamed with the others.
2. The model file is written under a temporary name and renamed over the old one last:
   that rename is the switch from the old set to the new.
3. Saved over a model of another folder, the data files the replaced model used and the
   new one does not are removed after the switch, unless another ``*.onnx`` file beside
   them mentions them. A model saved in its own folder removes none (its undo history may
   refer to them again).

A journal (a hidden ``.tmp`` file beside the model), written before anything else, lists
the data files of steps 1 and 3 and the save's temporary files; the next save into the
folder finishes what a killed one left: stale temporary files, and journal-listed data
files the model does not use, are removed (see :mod:`designer.core.io.atomic`). Until
then a killed save can leave hidden temporary files and unused new data files.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import onnx
from google.protobuf.message import EncodeError
from onnx import numpy_helper

from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.errors import ModelSaveError
from designer.core.io.atomic import (
    clean_stale,
    create_temp,
    fsync_dir,
    link_target,
    release,
    temp_path,
    write_journal,
)
from designer.core.io.external import (
    DataStamp,
    ExternalRef,
    copy_range_sparse,
    is_external,
    iter_loadable_tensors,
    iter_model_tensors,
    stamp_tensor_files,
)
from designer.core.io.history_data import history_tensors
from designer.core.io.save_plan import (
    DataCopy,
    TargetNames,
    in_use,
    mentioned_elsewhere,
    model_locations,
    normalize,
    plan_copies,
)
from designer.core.io.stream import DataSink, write_error

#: A model whose serialized size would pass this is saved with its weights as external data
#: (protobuf cannot write messages of 2 GiB or more; the margin leaves room for the graph).
AUTO_EXTERNAL_LIMIT = 2**31 - 64 * 2**20
#: Tensors smaller than this stay inside the model file when weights go external.
MIN_EXTERNAL_BYTES = 1024
_ALIGN = 4096
_DATA_FIELDS = (
    "raw_data",
    "float_data",
    "int32_data",
    "string_data",
    "int64_data",
    "double_data",
    "uint64_data",
)


@dataclass
class SaveReport:
    path: Path
    data_files: list[Path] = field(default_factory=list)
    externalized: int = 0  # tensors moved to external data because of the 2 GiB limit


@dataclass
class _Transaction:
    """The files of one save: temporary files, data files renamed into place before the
    model, folders created, and in-memory tensor changes to undo on failure."""

    path: Path
    temps: list[Path] = field(default_factory=list)
    data: list[tuple[Path, Path]] = field(default_factory=list)  # (temporary, final)
    renamed: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    rollback: list[tuple[onnx.TensorProto, onnx.TensorProto]] = field(default_factory=list)
    relocated: list[tuple[onnx.TensorProto, list[tuple[str, str]]]] = field(default_factory=list)
    planned: dict[Path, Path] = field(default_factory=dict)  # final: temporary name
    journal: Path | None = None

    def begin(
        self, targets: list[Path], obsolete: list[Path], ready: dict[Path, Path] | None = None
    ) -> None:
        """Choose the temporary names and, when data files are involved, write the journal
        that lets a later save clean up after this one if it is killed. ``ready``: targets
        whose temporary file exists already (final: temporary), a streamed data file."""
        ready = ready or {}
        self.planned = {t: temp_path(t) for t in [*targets, self.path] if t not in ready}
        if targets or obsolete:
            folder = self.path.parent
            files = [p.relative_to(folder).as_posix() for p in [*targets, *obsolete]]
            temps = [
                p.relative_to(folder).as_posix() for p in [*self.planned.values(), *ready.values()]
            ]
            self.journal = write_journal(self.path, files, temps)

    def create(self, target: Path) -> tuple[int, Path]:
        missing = [p for p in [target.parent, *target.parent.parents] if not p.exists()]
        for folder in reversed(missing):
            folder.mkdir()
            self.folders.append(folder)
        fd, tmp = create_temp(target, path=self.planned.pop(target, None))
        self.temps.append(tmp)
        return fd, tmp

    def relocate(self, tensor: onnx.TensorProto, location: str) -> None:
        entries = [(e.key, e.value) for e in tensor.external_data]
        if dict(entries).get("location") == location:
            return
        self.relocated.append((tensor, entries))
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = location

    def restore_locations(self) -> None:
        for tensor, entries in reversed(self.relocated):
            del tensor.external_data[:]
            for key, value in entries:
                tensor.external_data.add(key=key, value=value)
        self.relocated.clear()

    def switch(self, model_tmp: Path) -> None:
        """Rename the data files into place (never over an existing file), then the model
        file: the one rename that replaces the old set by the new one."""
        for tmp, final in self.data:
            if os.path.lexists(final):
                raise ModelSaveError(f"{self.path}: {final} appeared during the save; try again")
            os.replace(tmp, final)
            self.temps.remove(tmp)
            release(tmp)
            self.renamed.append(final)
        for folder in dict.fromkeys(final.parent for _tmp, final in self.data):
            fsync_dir(folder)  # the data files are durable before the model names them
        os.replace(model_tmp, self.path)
        self.temps.remove(model_tmp)
        release(model_tmp)

    def finish(self, obsolete: list[Path]) -> None:
        """After the switch: remove data files the old model used and the new one does not,
        and the journal. Failures here cannot undo a completed save: a data file that could
        not be removed keeps the journal, so the next save into the folder removes it."""
        with contextlib.suppress(OSError):
            fsync_dir(self.path.parent)
        left = False
        for old in obsolete:
            try:
                old.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                left = True
        if self.journal is not None:
            if not left:
                with contextlib.suppress(OSError):
                    self.journal.unlink()
            release(self.journal)

    def discard(self) -> None:
        """Remove every file and folder this save created, and undo tensor changes."""
        for tmp in [*self.temps, *self.renamed, *([self.journal] if self.journal else [])]:
            with contextlib.suppress(OSError):
                tmp.unlink()
            release(tmp)
        for folder in reversed(self.folders):
            with contextlib.suppress(OSError):
                folder.rmdir()
        self.restore_tensors()

    def restore_tensors(self) -> None:
        """Put back the tensors this save moved out of the model file, and the external
        locations it changed: ``model`` as it was before the save."""
        for tensor, original in reversed(self.rollback):
            tensor.CopyFrom(original)
        self.rollback.clear()
        self.restore_locations()


def write_model(
    model: onnx.ModelProto,
    path: Path | str,
    source_dir: Path | None,
    *,
    limit: int = AUTO_EXTERNAL_LIMIT,
    adopt: bool = False,
    references_only: bool = False,
    sink: DataSink | None = None,
    history: Sequence[onnx.TensorProto] = (),
    stamps: Mapping[Path, DataStamp] | None = None,
) -> SaveReport:
    """Write ``model`` to ``path``; the old model and its data files stay complete until
    the new ones are (see the module doc for what is guaranteed).

    External tensors are read from ``source_dir`` (checked: inside it after resolving
    symbolic links). Saved into another folder, their files are copied beside the new model
    at the same relative paths and offsets (zero runs stay holes, so the copy is cheap);
    where that name is taken, or is the model's own name, under a fresh one. If the
    serialized model would exceed ``limit`` bytes, tensors of ``MIN_EXTERNAL_BYTES`` or
    more move to ``<model file name>.data`` (or a fresh name) and ``model`` is changed to
    refer to it, only with ``adopt`` (the model now lives at ``path``); so are renamed
    copies: without it, ``model`` is left exactly as it was. ``references_only`` writes
    external references as they are, reading and copying nothing (crash recovery, which
    remembers their folder). On failure nothing on disk or in ``model`` changes and
    ModelSaveError says why.

    ``sink``: the data file a transform streamed converted tensors into for this ``path``
    (:class:`designer.core.io.stream.DataSink`); it becomes one of the new set's data
    files (renamed with the others before the model) and takes the tensors moved because
    of ``limit`` too. The save takes it over: done or failed, its temporary file does not
    stay.

    ``history``: the external tensors the document's undo history holds; saved into
    another folder, their bytes are copied too (see :func:`save_plan.plan_copies`).

    ``stamps``: what the data files were when the document took its weights from them
    (``Document.data_stamps``); a data file this save would copy or keep that differs now
    is refused (DataFileChanged) before anything is written. Without them (or with
    ``references_only``) nothing is checked.
    """
    path = link_target(Path(path))  # a link is saved through, as a model opened through one
    dst_dir = path.parent if str(path.parent) else Path(".")
    if not dst_dir.is_dir():
        what = "is a file, not a folder" if dst_dir.exists() else "does not exist"
        raise ModelSaveError(f"{path}: {dst_dir} {what}; choose another folder")
    if path.is_dir():
        raise ModelSaveError(f"{path}: is a folder; choose a file name")
    if path.exists() and not path.is_file():  # renaming over it would replace a device node
        raise ModelSaveError(f"{path}: not a regular file (a device, pipe or socket)")
    if path.exists() and path.suffix.lower() != ".onnx":
        _refuse_data_of_another_model(path)
    report = SaveReport(path)
    tx = _Transaction(path)
    try:
        clean_stale(dst_dir, in_use)
        names = TargetNames(dst_dir, path)
        if sink is not None:
            if sink.path.name != path.name or not sink.final.parent.samefile(dst_dir):
                raise ModelSaveError(f"{path}: the streamed data file was made for {sink.path}")
            names.claim(sink.location)
        skip = sink.owns if sink is not None else None
        copies = (
            []
            if references_only
            else plan_copies(model, path, source_dir, names, skip, history, stamps)
        )
        for copy in copies:
            for tensor in copy.tensors:
                tx.relocate(tensor, copy.location)
        external = None  # where tensors go because of the limit
        if sink is not None:
            external = sink.location
        elif _too_big(model, limit):
            fresh = (f"{path.name}.{n}.data" for n in itertools.count(1))
            external = names.pick(f"{path.name}.data", fresh)
        obsolete = [] if references_only else _obsolete(model, path, source_dir, copies, external)
        targets = [dst_dir / c.location for c in copies]
        ready = {sink.final: sink.temp} if sink is not None else {}
        tx.begin(targets + ([dst_dir / external] if external else []), obsolete, ready)
        for copy, target in zip(copies, targets, strict=True):
            _write_copy(copy, target, tx, report)
        if sink is not None:
            _finish_sink(model, sink, _too_big(model, limit), tx, report)
        elif external is not None:
            _externalize(model, dst_dir / external, tx, report)
        try:
            data = model.SerializeToString()
        except (ValueError, EncodeError) as exc:
            raise ModelSaveError(f"{path}: the model cannot be serialized ({exc})") from None
        fd, tmp = tx.create(path)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        _keep_mode(path, tmp)
        tx.switch(tmp)
    except ModelSaveError:
        tx.discard()
        raise
    except PermissionError as exc:
        tx.discard()
        where = exc.filename or dst_dir
        where = dst_dir if str(where).endswith(".tmp") else where  # name the folder, not a temp
        raise ModelSaveError(f"{path}: permission denied writing {where}") from None
    except OSError as exc:
        tx.discard()
        raise write_error(path, dst_dir, exc) from None
    except BaseException:  # Ctrl-C, a cancelled worker: leave no temporary files behind
        tx.discard()
        raise
    finally:
        if sink is not None:
            if not sink.taken_over:  # failed before the save took the file over
                sink.discard()
            sink.finished()
    tx.finish(obsolete)
    if not adopt:  # the model stays where it was: its tensors keep referring to its own files
        tx.restore_tensors()
    return report


def _keep_mode(path: Path, tmp: Path) -> None:
    """Give the new file the old file's permissions (a new file has the usual default)."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        return
    os.chmod(tmp, mode)


def _write_copy(copy: DataCopy, target: Path, tx: _Transaction, report: SaveReport) -> None:
    """Copy the byte ranges ``copy`` needs into a temporary file for ``target``."""
    fd, tmp = tx.create(target)
    tx.data.append((tmp, target))
    with os.fdopen(fd, "wb") as f:
        for offset, length in _merged(copy.ranges):
            copy_range_sparse(copy.source, offset, length, f, offset)
        f.flush()
        os.fsync(f.fileno())
    report.data_files.append(target)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(offset, length) ranges sorted, overlapping and adjacent ones joined."""
    merged: list[tuple[int, int]] = []
    for offset, length in sorted(ranges):
        if merged and offset <= merged[-1][0] + merged[-1][1]:
            start, size = merged[-1]
            merged[-1] = (start, max(size, offset + length - start))
        else:
            merged.append((offset, length))
    return merged


def _refuse_data_of_another_model(path: Path) -> None:
    """ModelSaveError when the existing file ``path`` is an external data file of another
    ``*.onnx`` model in its folder: saving there gave that model garbage weights, and its
    check still passed. Exact (the other models' locations are read, up to PARSE_LIMIT each);
    only run for a target that exists and is not itself named ``.onnx``."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        others = [e for e in os.scandir(folder) if e.name.endswith(".onnx") and e.is_file()]
    except OSError:
        return
    for entry in others:
        locations = model_locations(Path(entry.path))
        if locations and normalize(path.name) in locations:
            raise ModelSaveError(
                f"{path}: this is the external data file of the model {entry.name} in the "
                "same folder; saving there would destroy its weights, choose another file name"
            )


def _obsolete(
    model: onnx.ModelProto,
    path: Path,
    source_dir: Path | None,
    copies: list[DataCopy],
    external: str | None,
) -> list[Path]:
    """Data files the model file being replaced used that the new model does not, when the
    model comes from another folder (a model saved in its own folder keeps every data file:
    its undo history may refer to them again), excluding the files being read and those
    another model in the folder mentions."""
    if source_dir is not None and os.path.realpath(source_dir) == os.path.realpath(path.parent):
        return []
    old = model_locations(path)
    if not old:
        return []
    tensors = iter_model_tensors(model)
    new = {normalize(ExternalRef.of(t).location) for t in tensors if is_external(t)}
    if external is not None:
        new.add(normalize(external))
    reading = {os.path.realpath(c.source) for c in copies}
    candidates = [
        s
        for s in sorted(old - new)
        if os.path.realpath(path.parent / s) not in reading
        and os.path.isfile(path.parent / s)
        and not os.path.islink(path.parent / s)
    ]
    keep = mentioned_elsewhere(path.parent, path.name, candidates)
    return [path.parent / s for s in candidates if s not in keep]


def _externalize(
    model: onnx.ModelProto, target: Path, tx: _Transaction, report: SaveReport
) -> None:
    """Move inline tensors of ``MIN_EXTERNAL_BYTES`` or more into the new file ``target``."""
    location = target.name
    fd, tmp = tx.create(target)
    tx.data.append((tmp, target))
    with os.fdopen(fd, "wb") as f:
        for tensor in iter_loadable_tensors(model):  # what onnx.load can read back
            if is_external(tensor) or tensor.data_type == onnx.TensorProto.STRING:
                continue
            if _is_small(tensor):
                continue
            original = onnx.TensorProto()
            original.CopyFrom(tensor)
            tx.rollback.append((tensor, original))
            if tensor.HasField("raw_data"):
                raw = tensor.raw_data
            else:  # typed fields: from_array packs 4-bit and 2-bit types as raw_data must be
                raw = numpy_helper.from_array(numpy_helper.to_array(tensor)).raw_data
            offset = -(-f.seek(0, os.SEEK_END) // _ALIGN) * _ALIGN
            f.seek(offset)
            f.write(raw)
            for data_field in _DATA_FIELDS:  # name, dims, doc string, metadata stay
                tensor.ClearField(data_field)
            tensor.ClearField("external_data")
            tensor.data_location = onnx.TensorProto.EXTERNAL
            for key, value in (
                ("location", location),
                ("offset", str(offset)),
                ("length", str(len(raw))),
            ):
                tensor.external_data.add(key=key, value=value)
            report.externalized += 1
        f.flush()
        os.fsync(f.fileno())
    report.data_files.append(target)


def _finish_sink(
    model: onnx.ModelProto, sink: DataSink, externalize: bool, tx: _Transaction, report: SaveReport
) -> None:
    """Move inline tensors into the streamed file when the model needs it (as
    :func:`_externalize` does for a new file), then hand the file to the switch."""
    if externalize:
        for tensor in iter_loadable_tensors(model):
            if is_external(tensor) or tensor.data_type == onnx.TensorProto.STRING:
                continue
            if _is_small(tensor):
                continue
            original = onnx.TensorProto()
            original.CopyFrom(tensor)
            tx.rollback.append((tensor, original))
            if not tensor.HasField("raw_data"):  # typed fields: packed as raw_data must be
                tensor.raw_data = numpy_helper.from_array(numpy_helper.to_array(tensor)).raw_data
            sink.take(tensor)
            report.externalized += 1
    if sink.tensors == 0:
        sink.unused()
        return
    tmp, final = sink.close_for_save()
    tx.temps.append(tmp)
    tx.data.append((tmp, final))
    report.data_files.append(final)


def save_document(doc: Document, path: Path | str | None = None) -> SaveReport:
    """Save ``doc`` to ``path`` (default: where it came from) and mark it clean there.

    A data file that changed on disk since ``doc`` was opened or last saved is refused
    (DataFileChanged; ``doc`` and the files stay as they were). After the save ``doc``
    holds the stamps of the files it now reads (one walk over the model's tensors and one
    stat per data file)."""
    target = Path(path) if path is not None else doc.path
    if target is None:
        raise ModelSaveError("Untitled: the model has never been saved; choose a file name")
    history: list[onnx.TensorProto] = []
    same_folder = doc.base_dir is not None and _same_folder(doc.base_dir, target)
    if doc.base_dir is not None and not same_folder:
        # an undo after Save As puts back tensors whose bytes are in the old folder
        history = history_tensors(doc.undo_stack.edits())
    report = write_model(
        doc.model, target, doc.base_dir, adopt=True, history=history, stamps=doc.data_stamps
    )
    doc.path = target.resolve()
    doc.base_dir = doc.path.parent
    _restamp(doc, history, same_folder)
    doc.undo_stack.set_clean()
    doc.notify(DocumentEvent(ChangeKind.SAVED))
    return report


def _restamp(doc: Document, history: Sequence[onnx.TensorProto], same_folder: bool) -> None:
    """After a save, stamp the data files ``doc`` now reads (the model's and, saved into
    another folder, the undo history's, copied beside it): what the next save checks.
    Saved in its own folder, the history's files were neither read nor moved and keep the
    stamps they had (a change to them since is still a change)."""
    tensors = itertools.chain(iter_model_tensors(doc.model), history)
    fresh = stamp_tensor_files(tensors, doc.base_dir)
    kept = doc.data_stamps if same_folder else {}
    doc.data_stamps = {**kept, **fresh}


def _same_folder(folder: Path, target: Path) -> bool:
    parent = target.parent if str(target.parent) else Path(".")
    try:
        return os.path.samefile(folder, parent)
    except OSError:
        return False


def _too_big(model: onnx.ModelProto, limit: int) -> bool:
    """Whether ``model`` serializes to more than ``limit`` bytes. protobuf refuses to even
    measure a message of 2 GiB or more (EncodeError): that one is too big too."""
    try:
        return bool(model.ByteSize() > limit)
    except EncodeError:
        return True


def _is_small(tensor: onnx.TensorProto) -> bool:
    """Whether ``tensor`` stays inside the model file (under ``MIN_EXTERNAL_BYTES``); one
    too big for protobuf to measure (2 GiB or more) is not."""
    try:
        return bool(tensor.ByteSize() < MIN_EXTERNAL_BYTES)
    except EncodeError:
        return False
