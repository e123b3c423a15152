"""External data: find tensors stored outside the model file, check and read them lazily."""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import onnx
from onnx import numpy_helper

from designer.core.errors import DesignerError, ModelSaveError
from designer.core.walk import Container, iter_graphs

EXTERNAL = onnx.TensorProto.EXTERNAL


def iter_graph_tensors(
    graph: onnx.GraphProto, *, sparse: bool = True
) -> Iterator[onnx.TensorProto]:
    """Every TensorProto in ``graph`` and the graphs nested in it, graph by graph (in the
    order of :func:`designer.core.walk.iter_graphs`): initializers, sparse parts (unless
    ``sparse`` is False), attribute values."""
    for walked in iter_graphs(graph):
        yield from _container_tensors(walked.graph, sparse=sparse)


def _container_tensors(graph: Container, *, sparse: bool) -> Iterator[onnx.TensorProto]:
    """The tensors ``graph`` holds itself (not those of its subgraphs)."""
    if isinstance(graph, onnx.GraphProto):
        yield from graph.initializer
        if sparse:
            for part in graph.sparse_initializer:
                yield part.values
                yield part.indices
    for node in graph.node:
        yield from _node_tensors(node, sparse=sparse)


def _node_tensors(node: onnx.NodeProto, *, sparse: bool) -> Iterator[onnx.TensorProto]:
    """The tensors of ``node``'s attributes (not those of its subgraphs)."""
    for attr in node.attribute:
        if attr.HasField("t"):
            yield attr.t
        yield from attr.tensors
        if sparse and attr.HasField("sparse_tensor"):
            yield attr.sparse_tensor.values
            yield attr.sparse_tensor.indices


def _function_tensors(model: onnx.ModelProto, *, sparse: bool = True) -> Iterator[onnx.TensorProto]:
    for fn in model.functions:
        for walked in iter_graphs(fn):
            yield from _container_tensors(walked.graph, sparse=sparse)


def iter_model_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every TensorProto of the model, functions and training info included (O(model))."""
    yield from iter_graph_tensors(model.graph)
    yield from _function_tensors(model)
    for info in model.training_info:
        yield from iter_graph_tensors(info.initialization)
        yield from iter_graph_tensors(info.algorithm)


def iter_root_tensors(
    root: onnx.ModelProto | onnx.GraphProto | onnx.FunctionProto | onnx.NodeProto,
) -> Iterator[onnx.TensorProto]:
    """Every TensorProto under ``root``: a model (:func:`iter_model_tensors`), or a graph,
    function body or node with the graphs nested in it (a node: its own attribute values
    first), sparse parts included."""
    if isinstance(root, onnx.ModelProto):
        yield from iter_model_tensors(root)
        return
    if isinstance(root, onnx.NodeProto):
        yield from _node_tensors(root, sparse=True)
    for walked in iter_graphs(root):
        yield from _container_tensors(walked.graph, sparse=True)


def iter_loadable_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """The tensors whose external data ONNX's own loader (``onnx.load``, and so ONNX Runtime)
    reads back: initializers and attribute tensors of the graph, its subgraphs and the local
    functions. Parts of sparse tensors and training_info tensors are not among them."""
    yield from iter_graph_tensors(model.graph, sparse=False)
    yield from _function_tensors(model, sparse=False)


@dataclass(frozen=True)
class ExternalRef:
    """Where one external tensor's bytes live: ``location`` relative to the model folder."""

    location: str
    offset: int
    length: int | None  # None: to the end of the file

    @staticmethod
    def of(tensor: onnx.TensorProto) -> ExternalRef:
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        try:
            offset = int(info.get("offset", "0") or 0)
            length = int(info["length"]) if info.get("length") else None
        except ValueError:
            raise ValueError(f"tensor '{tensor.name}': offset/length are not integers") from None
        return ExternalRef(location, offset, length)


def is_external(tensor: onnx.TensorProto) -> bool:
    return tensor.data_location == EXTERNAL


class ExternalDataError(DesignerError, ValueError):
    """A tensor's external data cannot be read: no location, a location outside the model
    folder (also through a symbolic link), a folder or device, a range past the end."""


def resolve_location(location: str, base_dir: Path, tensor: str) -> Path:
    """The real path of the external data file ``location`` (relative to ``base_dir``),
    after checking that it names a regular file whose real path (symbolic links followed)
    lies inside ``base_dir``'s real path. Raises ExternalDataError naming the tensor."""
    if not location:
        raise ExternalDataError(f"tensor '{tensor}' is external but names no data file")
    if "\0" in location:
        raise ExternalDataError(f"tensor '{tensor}': external location {location!r} is invalid")
    loc = Path(location)
    if loc.is_absolute() or ".." in loc.parts:
        raise ExternalDataError(
            f"tensor '{tensor}': external file '{location}' is outside the model folder"
        )
    base = os.path.realpath(base_dir)
    real = os.path.realpath(base_dir / loc)
    if os.path.commonpath([base, real]) != base:
        raise ExternalDataError(
            f"tensor '{tensor}': external file '{location}' is a symbolic link (or passes"
            f" through one) leading outside the model folder, to {real}; copy the file into"
            " the folder instead"
        )
    try:
        info = os.stat(real)
    except FileNotFoundError:
        raise ExternalDataError(
            f"external data file '{location}' of tensor '{tensor}' is missing"
        ) from None
    except OSError as exc:
        raise ExternalDataError(
            f"external data file '{location}' of tensor '{tensor}' cannot be read"
            f" ({exc.strerror or exc})"
        ) from None
    if stat.S_ISDIR(info.st_mode):
        raise ExternalDataError(
            f"tensor '{tensor}': external location '{location}' is a folder, not a file"
        )
    if not stat.S_ISREG(info.st_mode):
        raise ExternalDataError(
            f"tensor '{tensor}': external location '{location}' is not a regular file"
            " (a device, pipe or socket)"
        )
    return Path(real)


#: Checked files by location, for checking many tensors: {location: (real path, size)}.
FileCache = dict[str, tuple[Path, int]]


@dataclass(frozen=True)
class DataStamp:
    """What an external data file was when a document last took its weights to be in it
    (opened, saved): size, modification time and identity (inode; a file renamed over
    it is another one). External data is read lazily, so a save that finds the file
    different would copy or keep another program's bytes as the document's weights."""

    size: int
    mtime_ns: int
    inode: int

    @staticmethod
    def of(info: os.stat_result) -> DataStamp:
        return DataStamp(info.st_size, info.st_mtime_ns, info.st_ino)

    def change_since(self, now: DataStamp) -> str | None:
        """What differs in ``now`` (a later stamp of the same path), or None."""
        if now.inode != self.inode:
            return "it was replaced by another file"
        if now.size != self.size:
            return f"its size went from {self.size} to {now.size} bytes"
        if now.mtime_ns != self.mtime_ns:
            return "it was modified"
        return None


#: Stamps of external data files by real path (symbolic links followed).
DataStamps = dict[Path, DataStamp]


class DataFileChanged(ModelSaveError):
    """An external data file a save would read (copy, or keep beside the model) is no
    longer what the document took its weights from; nothing was written."""


def stamp_files(paths: Iterable[Path]) -> DataStamps:
    """The stamps of the existing ``paths`` (real paths), one stat each; a path that cannot
    be stat'ed now gets none (reading it fails on its own, with its own message)."""
    stamps: DataStamps = {}
    for path in paths:
        try:
            stamps[path] = DataStamp.of(os.stat(path))
        except OSError:
            continue
    return stamps


def stamp_tensor_files(tensors: Iterable[onnx.TensorProto], base_dir: Path | None) -> DataStamps:
    """The stamps of the data files ``tensors`` (external ones) use, resolved against
    ``base_dir``: one resolve and one stat per distinct location. A tensor whose file cannot
    be resolved (missing, outside the folder) is skipped: reading it fails on its own."""
    if base_dir is None:
        return {}
    reals: dict[str, Path | None] = {}
    for tensor in tensors:
        if not is_external(tensor):
            continue
        try:
            location = ExternalRef.of(tensor).location
        except ValueError:
            continue
        if location not in reals:
            try:
                reals[location] = resolve_location(location, base_dir, tensor.name)
            except ExternalDataError:
                reals[location] = None
    return stamp_files(dict.fromkeys(p for p in reals.values() if p is not None))


def check_unchanged(real: Path, stamps: Mapping[Path, DataStamp] | None) -> None:
    """Raise DataFileChanged when the data file ``real`` (a real path) has a stamp in
    ``stamps`` and differs from it now (one stat). Files without a stamp (a document made in
    memory, a tensor pasted from elsewhere) are not checked: nothing is known of them."""
    if not stamps:
        return
    known = stamps.get(real)
    if known is None:
        return
    try:
        now = DataStamp.of(os.stat(real))
    except OSError:
        return  # gone or unreadable: reading it fails on its own, with its own message
    change = known.change_since(now)
    if change is not None:
        raise DataFileChanged(
            f"{real} changed on disk since the model was opened or last saved (another"
            f" program wrote it: {change}): the weights it holds are no longer the ones this"
            " document was opened with; reopen the model to continue from the file as it is"
            " now, or restore the file and save again"
        )


def external_range(
    tensor: onnx.TensorProto, base_dir: Path, cache: FileCache | None = None
) -> tuple[Path, int, int]:
    """(real path, offset, length) of the external data of ``tensor``, checked: the file as
    :func:`resolve_location` requires it, and the range within the file's size. ``cache``
    (one per folder and moment) saves checking a file again for the next tensor in it."""
    try:
        ref = ExternalRef.of(tensor)
    except ValueError as exc:
        raise ExternalDataError(str(exc)) from None
    if ref.offset < 0 or (ref.length is not None and ref.length < 0):
        raise ExternalDataError(
            f"tensor '{tensor.name}': external offset/length must not be negative"
        )
    known = cache.get(ref.location) if cache is not None else None
    if known is None:
        path = resolve_location(ref.location, base_dir, tensor.name)
        known = (path, path.stat().st_size)
        if cache is not None:
            cache[ref.location] = known
    path, size = known
    length = ref.length if ref.length is not None else size - ref.offset
    if ref.offset + max(length, 0) > size or ref.offset > size:
        end = ref.offset + max(length, 0)
        raise ExternalDataError(
            f"tensor '{tensor.name}' needs bytes {ref.offset}..{end} of '{ref.location}',"
            f" which has only {size}"
        )
    return path, ref.offset, length


def external_problem(
    tensor: onnx.TensorProto, base_dir: Path, cache: FileCache | None = None
) -> str | None:
    """Why the external data of ``tensor`` cannot be read, or None when it can."""
    try:
        external_range(tensor, base_dir, cache)
    except ExternalDataError as exc:
        return str(exc)
    return None


def read_external_bytes(tensor: onnx.TensorProto, base_dir: Path) -> bytes:
    """The raw bytes of an external tensor (reads only its own range; checked as
    :func:`external_range` says)."""
    path, offset, length = external_range(tensor, base_dir)
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(length)


def tensor_array(tensor: onnx.TensorProto, base_dir: Path | None) -> np.ndarray:
    """The tensor's values as numpy; external data is memory-mapped, not read up front.
    Raises ExternalDataError when the external data is unreadable or too short."""
    if not is_external(tensor):
        return numpy_helper.to_array(tensor)
    if base_dir is None:
        raise ExternalDataError(f"tensor '{tensor.name}' is external but the model has no folder")
    path, offset, length = external_range(tensor, base_dir)
    try:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type))
    except (KeyError, TypeError, ValueError):
        raise ExternalDataError(
            f"tensor '{tensor.name}' has an unknown data type {tensor.data_type}"
        ) from None
    shape = tuple(tensor.dims)
    if any(d < 0 for d in shape):
        raise ExternalDataError(f"tensor '{tensor.name}' has a negative dimension {list(shape)}")
    if dtype.itemsize and tensor.data_type not in _PACKED_TYPES:
        count = math.prod(shape)
        if count * dtype.itemsize > length:
            raise ExternalDataError(
                f"tensor '{tensor.name}' of shape {list(shape)} needs {count * dtype.itemsize}"
                f" bytes, but its external data has {length}"
            )
        if count == 0:
            return np.zeros(shape, dtype)
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(count,)).reshape(shape)
    temp = onnx.TensorProto()
    temp.CopyFrom(tensor)
    del temp.external_data[:]
    temp.data_location = onnx.TensorProto.DEFAULT
    temp.raw_data = read_external_bytes(tensor, base_dir)
    return numpy_helper.to_array(temp)


_PACKED_TYPES = {
    onnx.TensorProto.STRING,
    onnx.TensorProto.INT4,
    onnx.TensorProto.UINT4,
    *(
        getattr(onnx.TensorProto, n)
        for n in ("FLOAT4E2M1", "INT2", "UINT2")
        if hasattr(onnx.TensorProto, n)
    ),
}


def copy_range_sparse(
    src: Path, offset: int, length: int | None, dst_file: BinaryIO, dst_offset: int
) -> int:
    """Copy ``length`` bytes of ``src`` from ``offset`` into the open binary ``dst_file`` at
    ``dst_offset``, in 16 MiB chunks; chunks of zeros are skipped (left as holes), so copying
    a sparse multi-GiB file costs neither memory nor disk. Returns the bytes copied."""
    chunk = 16 << 20
    with open(src, "rb") as f:
        f.seek(offset)
        remaining = length if length is not None else os.fstat(f.fileno()).st_size - offset
        pos = dst_offset
        while remaining > 0:
            data = f.read(min(chunk, remaining))
            if not data:
                raise OSError(f"{src} ended {remaining} bytes early")
            if data.count(0) != len(data):  # not all zeros
                dst_file.seek(pos)
                dst_file.write(data)
            pos += len(data)
            remaining -= len(data)
    if dst_file.seek(0, os.SEEK_END) < pos:
        dst_file.truncate(pos)
    return pos - dst_offset
