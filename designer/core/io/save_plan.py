"""Which data files a save writes, under which names, and which old ones it makes obsolete.

Rules (see :mod:`designer.core.io.save`): a save never writes over an existing data file
and never gives a data file the model's or its layout file's name; where the natural
name is taken, the data file gets a fresh one (``weights.bin`` → ``weights.1.bin``) and
the saved model refers to that. Names are compared by real path (symbolic links followed)
and case-insensitively, so ``B/out.onnx`` and a location ``out.onnx`` collide.
"""

from __future__ import annotations

import contextlib
import itertools
import mmap
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import onnx
from google.protobuf.message import DecodeError

from designer.core.errors import ModelSaveError
from designer.core.io.external import (
    DataStamp,
    ExternalDataError,
    ExternalRef,
    FileCache,
    check_unchanged,
    external_range,
    is_external,
    iter_model_tensors,
    resolve_location,
)

#: Old model files up to this size are parsed to see which data files they use.
PARSE_LIMIT = 256 * 2**20
_MAX_TRIES = 10_000


def normalize(location: str) -> str:
    return PurePosixPath(Path(location).as_posix()).as_posix()


class TargetNames:
    """Names in the destination folder: what exists, what this save claims, what is reserved
    for the model file and its layout file."""

    def __init__(self, dst_dir: Path, model: Path) -> None:
        self.dst = dst_dir
        self.base = os.path.realpath(dst_dir)
        self.used: set[str] = set()
        self.reserved: set[str] = set()
        for name in (model.name, model.name + ".designer.json"):
            for key in (self._key_of(os.path.join(self.base, name)), self.key(name)):
                if key is not None:
                    self.reserved.add(key)

    def _key_of(self, real: str) -> str | None:
        if os.path.commonpath([self.base, real]) != self.base or real == self.base:
            return None
        return os.path.normcase(real).casefold()

    def key(self, location: str) -> str | None:
        """A comparison key for ``location``'s real path; None when it leads outside."""
        return self._key_of(os.path.realpath(self.dst / location))

    def is_reserved(self, location: str) -> bool:
        return self.key(location) in self.reserved

    def free(self, location: str) -> bool:
        key = self.key(location)
        if key is None or key in self.used or key in self.reserved:
            return False
        target = self.dst / location
        if os.path.lexists(target):
            return False
        parent = target.parent
        while parent != self.dst and parent != parent.parent:
            if os.path.lexists(parent) and not parent.is_dir():
                return False  # a file where a folder is needed
            parent = parent.parent
        return True

    def claim(self, location: str) -> None:
        key = self.key(location)
        if key is not None:
            self.used.add(key)

    def is_reserved_real(self, real: Path) -> bool:
        """True if the existing file ``real`` is the model's or its layout file's path."""
        return self._key_of(str(real)) in self.reserved

    def claim_real(self, real: Path) -> bool:
        """Claim an existing file by real path; False if it is the model or layout file."""
        key = self._key_of(str(real))
        if key is None or key in self.reserved:
            return False
        self.used.add(key)
        return True

    def pick(self, wanted: str, alternatives: Iterable[str]) -> str:
        """``wanted`` if free, else the first free alternative; the result is claimed."""
        if self.free(wanted):
            self.claim(wanted)
            return wanted
        for candidate in itertools.islice(alternatives, _MAX_TRIES):
            if self.free(candidate):
                self.claim(candidate)
                return candidate
        raise ModelSaveError(f"{self.dst}: no free name for the data file '{wanted}'")


def alternatives(location: str) -> Iterator[str]:
    """``weights.bin`` → ``weights.1.bin``, ``weights.2.bin``, …; a data file named like the
    model (``out.onnx``) → ``out.onnx.data``, ``out.onnx.1.data``, …"""
    path = PurePosixPath(normalize(location))
    if path.suffix == ".onnx":
        yield f"{path}.data"
        path = PurePosixPath(f"{path}.data")
    for n in itertools.count(1):
        yield str(path.with_name(f"{path.stem}.{n}{path.suffix}"))


@dataclass
class DataCopy:
    """One data file to write in the destination: the byte ranges of ``source`` the
    ``tensors`` use, at the same offsets, under ``location``."""

    source: Path
    location: str
    tensors: list[onnx.TensorProto] = field(default_factory=list)
    ranges: list[tuple[int, int]] = field(default_factory=list)


def plan_copies(
    model: onnx.ModelProto,
    path: Path,
    source_dir: Path | None,
    names: TargetNames,
    skip: Callable[[onnx.TensorProto], bool] | None = None,
    history: Sequence[onnx.TensorProto] = (),
    stamps: Mapping[Path, DataStamp] | None = None,
) -> list[DataCopy]:
    """The data files to write for ``model``'s external tensors saved as ``path``.

    Every external file is checked (inside ``source_dir`` after resolving links, a regular
    file, ranges in bounds). In the same folder files stay where they are; elsewhere each
    distinct real file is copied once, under its location if that is free, else under a
    fresh name. A data file that is the model's (or its layout file's) own path is refused:
    writing the model would destroy it, and other models may use it. Tensors ``skip``
    accepts are left out (their data file is being written by this save already).

    ``history``: external tensors the document's undo history holds
    (:func:`designer.core.io.history_data.history_tensors`); their ranges are copied and
    their locations follow a renamed copy like the model's, so that what an undo puts back
    reads its own bytes. One that cannot be read is left as it is (it could not be undone
    into a readable tensor before either) rather than failing the save.

    ``stamps``: the data files' stamps when the document was opened or last saved; a file
    that differs from its stamp now is refused (DataFileChanged, before anything is
    written), whether it would be copied or kept: its bytes are no longer the document's
    weights. One stat per data file."""
    groups: dict[Path, DataCopy] = {}
    cache: FileCache = {}
    model_side = ((t, False) for t in iter_model_tensors(model))
    for tensor, past in itertools.chain(model_side, ((t, True) for t in history)):
        if not is_external(tensor) or (skip is not None and skip(tensor)):
            continue
        if source_dir is None:
            if past:
                continue
            raise ModelSaveError(
                f"{path}: the model's external tensors have no source folder to be copied from"
            )
        problem: ModelSaveError | None = None
        try:
            real, offset, length = external_range(tensor, source_dir, cache)
        except ExternalDataError as exc:
            if past:
                continue
            problem = ModelSaveError(f"{path}: {exc}")
        if problem is not None:
            _check_file_of(tensor, source_dir, stamps)  # a changed file: the better reason
            raise problem
        group = groups.get(real)
        if group is None:
            group = groups[real] = DataCopy(real, normalize(ExternalRef.of(tensor).location))
        group.tensors.append(tensor)
        group.ranges.append((offset, length))
    for real in groups:
        check_unchanged(real, stamps)
    same = source_dir is not None and os.path.realpath(source_dir) == names.base
    copies = []
    for real, group in groups.items():
        if names.is_reserved_real(real):  # other models may use it too: never replace it
            raise ModelSaveError(
                f"{path}: saving there would overwrite '{group.location}', the external data"
                f" file of tensor '{group.tensors[0].name}'; choose another file name"
            )
        if same and names.claim_real(real):
            continue  # already in place
        group.location = names.pick(group.location, alternatives(group.location))
        copies.append(group)
    return copies


def _check_file_of(
    tensor: onnx.TensorProto, source_dir: Path, stamps: Mapping[Path, DataStamp] | None
) -> None:
    """DataFileChanged when the data file of ``tensor`` (whose range cannot be read) is one
    that changed since it was stamped: a file cut short says so rather than "needs bytes"."""
    if not stamps:
        return
    try:
        real = resolve_location(ExternalRef.of(tensor).location, source_dir, tensor.name)
    except (ExternalDataError, ValueError):
        return
    check_unchanged(real, stamps)


def model_locations(path: Path) -> set[str] | None:
    """Normalised external locations the model file at ``path`` uses; None when it cannot
    be told (missing, unreadable, not a model, larger than PARSE_LIMIT)."""
    try:
        if not path.is_file() or path.stat().st_size > PARSE_LIMIT:
            return None
        model = onnx.ModelProto()
        model.ParseFromString(path.read_bytes())
    except (OSError, DecodeError, RuntimeError, ValueError):  # "cannot tell"
        return None
    return {
        normalize(ExternalRef.of(t).location)
        for t in iter_model_tensors(model)
        if is_external(t) and _has_location(t)
    }


def _has_location(tensor: onnx.TensorProto) -> bool:
    with contextlib.suppress(ValueError):
        return bool(ExternalRef.of(tensor).location)
    return False


def mentioned_elsewhere(folder: Path, model_name: str, names: Iterable[str]) -> set[str]:
    """Those of ``names`` (relative to ``folder``) that another ``*.onnx`` file in
    ``folder``, or in the data file's own folder, contains as text (a cheap, conservative
    test: a mention keeps a data file)."""
    wanted = {n: os.path.basename(n).encode("utf-8", "surrogateescape") for n in names}
    found: set[str] = set()
    folders = dict.fromkeys([folder, *((folder / n).parent for n in wanted)])
    try:
        others = [e for f in folders for e in os.scandir(f) if e.name.endswith(".onnx")]
    except OSError:
        return set(wanted)
    model_path = os.path.join(folder, model_name)
    for entry in others:
        if entry.path == model_path:
            continue
        if not entry.is_file(follow_symlinks=True):
            continue
        try:
            with open(entry.path, "rb") as f:
                if os.fstat(f.fileno()).st_size == 0:
                    continue
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    found.update(n for n, b in wanted.items() if data.find(b) >= 0)
        except (OSError, ValueError):
            return set(wanted)  # cannot tell: keep them all
    return found


def in_use(folder: Path, model_name: str, files: list[str]) -> set[str]:
    """Of ``files`` (journal entries), those the model or another model in ``folder`` uses;
    all of them when the model cannot be read."""
    used = model_locations(folder / model_name)
    if used is None:
        return set(files)
    return {f for f in files if normalize(f) in used} | mentioned_elsewhere(
        folder, model_name, files
    )
