"""Save models atomically, keeping external data external and never losing the old file.

Every file is written to a temporary name in the destination folder, flushed to disk and
then renamed over the target, so a failed save leaves what was there intact.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import onnx
from onnx import numpy_helper

from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.errors import ModelSaveError
from designer.core.io.external import (
    ExternalRef,
    copy_range_sparse,
    is_external,
    iter_loadable_tensors,
    iter_model_tensors,
)

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
class _Pending:
    """Temporary files to rename into place, and tensor changes to roll back on failure."""

    renames: list[tuple[Path, Path]] = field(default_factory=list)
    rollback: list[tuple[onnx.TensorProto, onnx.TensorProto]] = field(default_factory=list)
    created: list[Path] = field(default_factory=list)  # targets that did not exist before

    def temp_for(self, target: Path) -> tuple[int, Path]:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        self.renames.append((Path(tmp), target))
        return fd, Path(tmp)

    def commit(self) -> None:
        """Rename every temporary file over its target (the model file comes last)."""
        for tmp, target in self.renames:
            existed = os.path.lexists(target)
            os.replace(tmp, target)
            if not existed:
                self.created.append(target)

    def discard(self) -> None:
        """Remove temporary files and files this save created, and roll tensors back."""
        for tmp, _target in self.renames:
            with contextlib.suppress(OSError):
                tmp.unlink()
        for target in self.created:
            with contextlib.suppress(OSError):
                target.unlink()
        for tensor, original in reversed(self.rollback):
            tensor.CopyFrom(original)


def write_model(
    model: onnx.ModelProto,
    path: Path | str,
    source_dir: Path | None,
    *,
    limit: int = AUTO_EXTERNAL_LIMIT,
) -> SaveReport:
    """Write ``model`` to ``path`` atomically.

    External tensors are read from ``source_dir``; saved into another folder, their files are
    copied beside the new model at the same relative paths and offsets (zero runs stay holes,
    so the copy is cheap). If the serialized model would exceed ``limit`` bytes, tensors of
    ``MIN_EXTERNAL_BYTES`` or more move to ``<model file name>.data`` and ``model`` is
    changed to refer to it. On failure nothing on disk or in ``model`` changes and
    ModelSaveError says why.
    """
    path = Path(path)
    dst_dir = path.parent if str(path.parent) else Path(".")
    if not dst_dir.is_dir():
        raise ModelSaveError(f"{path}: the folder {dst_dir} does not exist")
    if path.is_dir():
        raise ModelSaveError(f"{path}: is a folder; choose a file name")
    if path.exists() and not path.is_file():  # renaming over it would replace a device node
        raise ModelSaveError(f"{path}: not a regular file (a device, pipe or socket)")
    report = SaveReport(path)
    pending = _Pending()
    try:
        _copy_external_files(model, path, source_dir, pending, report)
        if model.ByteSize() > limit:
            _externalize(model, path, pending, report)
        try:
            data = model.SerializeToString()
        except ValueError as exc:
            raise ModelSaveError(f"{path}: the model cannot be serialized ({exc})") from None
        fd, tmp = pending.temp_for(path)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        _keep_mode(path, tmp)
        pending.commit()
    except ModelSaveError:
        pending.discard()
        raise
    except PermissionError as exc:
        pending.discard()
        where = exc.filename or dst_dir
        where = dst_dir if str(where).endswith(".tmp") else where  # name the folder, not a temp
        raise ModelSaveError(f"{path}: permission denied writing {where}") from None
    except OSError as exc:
        pending.discard()
        raise ModelSaveError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:  # Ctrl-C, a cancelled worker: leave no temporary files behind
        pending.discard()
        raise
    return report


def _keep_mode(path: Path, tmp: Path) -> None:
    """Give the new file the old file's permissions, or the usual default for a new one."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)


def _copy_external_files(
    model: onnx.ModelProto,
    path: Path,
    source_dir: Path | None,
    pending: _Pending,
    report: SaveReport,
) -> None:
    dst_dir = path.parent
    by_location: dict[str, list[ExternalRef]] = {}
    for tensor in iter_model_tensors(model):
        if is_external(tensor):
            ref = ExternalRef.of(tensor)
            by_location.setdefault(ref.location, []).append(ref)
    if not by_location:
        return
    if source_dir is None:
        raise ModelSaveError(
            f"{path}: the model's external tensors have no source folder to be copied from"
        )
    if source_dir.exists() and dst_dir.resolve() == source_dir.resolve():
        return  # same folder: the data files already are where the references point
    for location, refs in by_location.items():
        target = dst_dir / location
        fd, _tmp = pending.temp_for(target)
        with os.fdopen(fd, "wb") as f:
            for ref in refs:
                copy_range_sparse(source_dir / location, ref.offset, ref.length, f, ref.offset)
            f.flush()
            os.fsync(f.fileno())
        report.data_files.append(target)


def _externalize(model: onnx.ModelProto, path: Path, pending: _Pending, report: SaveReport) -> None:
    taken = {ExternalRef.of(t).location for t in iter_model_tensors(model) if is_external(t)}
    location = f"{path.name}.data"
    counter = 1
    while location in taken:
        location = f"{path.name}.{counter}.data"
        counter += 1
    target = path.parent / location
    fd, _tmp = pending.temp_for(target)
    with os.fdopen(fd, "wb") as f:
        for tensor in iter_loadable_tensors(model):  # what onnx.load can read back
            if is_external(tensor) or tensor.data_type == onnx.TensorProto.STRING:
                continue
            if tensor.ByteSize() < MIN_EXTERNAL_BYTES:
                continue
            original = onnx.TensorProto()
            original.CopyFrom(tensor)
            pending.rollback.append((tensor, original))
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


def save_document(doc: Document, path: Path | str | None = None) -> SaveReport:
    """Save ``doc`` to ``path`` (default: where it came from) and mark it clean there."""
    target = Path(path) if path is not None else doc.path
    if target is None:
        raise ModelSaveError("Untitled: the model has never been saved; choose a file name")
    report = write_model(doc.model, target, doc.base_dir)
    doc.path = target.resolve()
    doc.base_dir = doc.path.parent
    doc.undo_stack.set_clean()
    doc.notify(DocumentEvent(ChangeKind.SAVED))
    return report
