"""A data file of a save, written while a transform runs: converted tensors stream into it.

A transform that converts weights one at a time (FP16, Batch Tensor Cast) would otherwise
hold every converted weight in memory until the save. With a :class:`DataSink` each one
goes into the output's data file as soon as it is converted, and the model keeps only
an external reference (location, offset, length): memory stays about one tensor, however
large the model.

The file is a save's data file like any other (:mod:`designer.core.io.save`), so the same
guarantee holds: it is written under a temporary name of our naming beside the output,
listed first in a journal, and renamed into place by :func:`~designer.core.io.write_model`
(given ``sink=``) before the model file's rename, which is the switch from the old set
of files to the new. Its name is fresh (``<model>.data``, else ``<model>.1.data``, …): no
existing file and no location the source model uses. If the transform fails, is cancelled
or the process is killed, the temporary file and the journal are removed (at once, or by
the next save into the folder); nothing the user had is touched.

Zero runs are left as holes (a sparse model stays cheap on disk), and tensors start at
4 KiB offsets as in every data file a save writes.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import sys
from pathlib import Path
from types import TracebackType

import numpy as np
import onnx

from designer.core.errors import ModelSaveError
from designer.core.io.atomic import (
    clean_stale,
    create_temp,
    name_max,
    release,
    temp_path,
    write_journal,
)
from designer.core.io.external import ExternalRef, is_external, iter_model_tensors
from designer.core.io.save_plan import TargetNames, in_use, normalize

ALIGN = 4096
#: Tensors smaller than this stay inside the model file (as for a save's externalising).
MIN_BYTES = 1024
_CHUNK = 16 << 20
_DATA_FIELDS = (
    "raw_data",
    "float_data",
    "int32_data",
    "string_data",
    "int64_data",
    "double_data",
    "uint64_data",
)


class DataSink:
    """The new data file of a save to ``path``, open for writing (see the module doc).

    ``source`` is the model being transformed: no location it uses is taken. Use it as a
    context manager; leaving the block without :func:`write_model` having taken the file
    over removes it."""

    def __init__(self, path: Path | str, source: onnx.ModelProto | None = None) -> None:
        self.path = Path(path)
        folder = self.path.parent if str(self.path.parent) else Path(".")
        if not folder.is_dir():
            raise ModelSaveError(f"{self.path}: the folder {folder} does not exist")
        taken = _locations(source) if source is not None else set()
        names = TargetNames(folder, self.path)
        for location in taken:
            names.claim(location)
        wanted = f"{self.path.name}.data"
        fresh = (f"{self.path.name}.{n}.data" for n in itertools.count(1))
        candidates = (c for c in itertools.chain([wanted], fresh) if normalize(c) not in taken)
        first = next(candidates)
        clean_stale(folder, in_use)
        self.location = names.pick(first, candidates)
        self.final = folder / self.location
        size, limit = len(os.fsencode(self.final.name)), name_max(folder)
        if size > limit:  # said now, not once the whole conversion has run
            raise ModelSaveError(
                f"{self.path}: the name of its data file, {self.location}, would take {size} "
                f"bytes, more than the {limit} the folder {folder} allows; "
                "choose a shorter file name"
            )
        self.temp = temp_path(self.final)
        self.journal: Path | None = None
        try:
            self.journal = write_journal(
                self.path, [self.location], [self.temp.relative_to(folder).as_posix()]
            )
            fd, _ = create_temp(self.final, path=self.temp)
        except OSError as exc:  # write_journal removes its own file when it fails
            self._drop_journal()
            raise write_error(self.path, folder, exc) from None
        except BaseException:
            self._drop_journal()
            raise
        self._file = os.fdopen(fd, "wb")
        self.size = 0
        self.tensors = 0
        self.taken_over = False

    # --- writing -------------------------------------------------------------------------
    def write(self, tensor: onnx.TensorProto, values: np.ndarray) -> None:
        """Write ``values`` (the tensor's elements, already of its type) to the file and make
        ``tensor`` (name, type, dims set) an external reference to them."""
        flat = np.ascontiguousarray(values).reshape(-1)
        order = flat.dtype.byteorder
        if order == ">" or (order == "=" and sys.byteorder == "big"):
            flat = flat.astype(flat.dtype.newbyteorder("<"))
        self._put(tensor, flat.view(np.uint8).data)

    def take(self, tensor: onnx.TensorProto) -> None:
        """Move the inline data of ``tensor`` (raw_data) into the file."""
        if not tensor.HasField("raw_data"):
            raise ValueError(f"tensor '{tensor.name}' has no raw_data to move")
        raw = tensor.raw_data
        for data_field in _DATA_FIELDS:
            tensor.ClearField(data_field)
        self._put(tensor, memoryview(raw))

    def _put(self, tensor: onnx.TensorProto, data: memoryview) -> None:
        if self._file.closed:
            raise ModelSaveError(f"{self.path}: the data file was already closed")
        offset = -(-self.size // ALIGN) * ALIGN
        length = len(data)
        try:
            for start in range(0, length, _CHUNK):  # zero chunks stay holes
                chunk = data[start : start + _CHUNK]
                if np.frombuffer(chunk, np.uint8).any():
                    self._file.seek(offset + start)
                    self._file.write(chunk)
        except OSError as exc:  # a full disk, a quota: the caller's with block removes it
            raise write_error(self.path, self.final.parent, exc) from None
        self.size = offset + length
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.EXTERNAL
        for key, value in (
            ("location", self.location),
            ("offset", str(offset)),
            ("length", str(length)),
        ):
            tensor.external_data.add(key=key, value=value)
        self.tensors += 1

    def owns(self, tensor: onnx.TensorProto) -> bool:
        """True for an external tensor whose data is in this file."""
        if not is_external(tensor):
            return False
        with contextlib.suppress(ValueError):
            return normalize(ExternalRef.of(tensor).location) == normalize(self.location)
        return False

    # --- handing over to the save --------------------------------------------------------
    def close_for_save(self) -> tuple[Path, Path]:
        """Flush the file to disk and close it; (temporary path, final path) for the save's
        switch. Called by :func:`~designer.core.io.write_model`."""
        if not self._file.closed:
            try:
                if self._file.seek(0, os.SEEK_END) < self.size:
                    self._file.truncate(self.size)  # trailing holes count
                self._file.flush()
                os.fsync(self._file.fileno())
                self._file.close()
            except OSError as exc:  # not taken over: the save's clean-up removes the file
                raise write_error(self.path, self.final.parent, exc) from None
        self.taken_over = True
        return self.temp, self.final

    def unused(self) -> None:
        """No tensor went into the file: remove it (the save writes no empty data file)."""
        self.discard()
        self.taken_over = True

    def finished(self) -> None:
        """The save is over (done or undone by its own clean-up): drop the journal."""
        self._drop_journal()

    def discard(self) -> None:
        """Remove the temporary file and the journal (nothing was saved)."""
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(OSError):
            self.temp.unlink()
        release(self.temp)
        self._drop_journal()

    def _drop_journal(self) -> None:
        if self.journal is not None:
            with contextlib.suppress(OSError):
                self.journal.unlink()
            release(self.journal)
            self.journal = None

    def __enter__(self) -> DataSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self.taken_over:
            self.discard()
        else:
            self.finished()


def write_error(path: Path, folder: Path, exc: OSError) -> ModelSaveError:
    """The save to ``path`` cannot write into ``folder``: what went wrong there and what to
    do, as :func:`~designer.core.io.write_model` says it (never a temporary file's name)."""
    if isinstance(exc, PermissionError):
        return ModelSaveError(
            f"{path}: permission denied writing {folder}; choose a folder you can write to"
        )
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        advice = "free some space there or choose another folder"
    elif exc.errno == errno.EROFS:
        advice = "choose a folder you can write to"
    elif exc.errno == errno.ENAMETOOLONG:
        advice = "choose a shorter file name"
    else:
        advice = "choose another folder"
    return ModelSaveError(f"{path}: cannot write {folder} ({reason}); {advice}")


def _locations(model: onnx.ModelProto) -> set[str]:
    found = set()
    for tensor in iter_model_tensors(model):
        if is_external(tensor):
            with contextlib.suppress(ValueError):
                found.add(normalize(ExternalRef.of(tensor).location))
    return found
