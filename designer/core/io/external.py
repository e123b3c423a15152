"""External data: find tensors stored outside the model file, check and read them lazily."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import onnx
from onnx import numpy_helper

EXTERNAL = onnx.TensorProto.EXTERNAL


def iter_graph_tensors(
    graph: onnx.GraphProto, *, sparse: bool = True
) -> Iterator[onnx.TensorProto]:
    """Every TensorProto in ``graph``: initializers, sparse parts (unless ``sparse`` is False),
    attribute values, subgraphs."""
    yield from graph.initializer
    if sparse:
        for part in graph.sparse_initializer:
            yield part.values
            yield part.indices
    yield from _iter_node_tensors(graph.node, sparse=sparse)


def _iter_node_tensors(
    nodes: Iterable[onnx.NodeProto], *, sparse: bool = True
) -> Iterator[onnx.TensorProto]:
    for node in nodes:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if sparse and attr.HasField("sparse_tensor"):
                yield attr.sparse_tensor.values
                yield attr.sparse_tensor.indices
            if attr.HasField("g"):
                yield from iter_graph_tensors(attr.g, sparse=sparse)
            for graph in attr.graphs:
                yield from iter_graph_tensors(graph, sparse=sparse)


def iter_model_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every TensorProto of the model, functions and training info included (O(model))."""
    yield from iter_graph_tensors(model.graph)
    for fn in model.functions:
        yield from _iter_node_tensors(fn.node)
    for info in model.training_info:
        yield from iter_graph_tensors(info.initialization)
        yield from iter_graph_tensors(info.algorithm)


def iter_loadable_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """The tensors whose external data ONNX's own loader (``onnx.load``, and so ONNX Runtime)
    reads back: initializers and attribute tensors of the graph, its subgraphs and the local
    functions. Parts of sparse tensors and training_info tensors are not among them."""
    yield from iter_graph_tensors(model.graph, sparse=False)
    for fn in model.functions:
        yield from _iter_node_tensors(fn.node, sparse=False)


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


def external_problem(tensor: onnx.TensorProto, base_dir: Path) -> str | None:
    """Why the external data of ``tensor`` cannot be read, or None when it can."""
    try:
        ref = ExternalRef.of(tensor)
    except ValueError as exc:
        return str(exc)
    if not ref.location:
        return f"tensor '{tensor.name}' is external but names no file"
    if ref.offset < 0 or (ref.length is not None and ref.length < 0):
        return f"tensor '{tensor.name}': external offset/length must not be negative"
    loc = Path(ref.location)
    if loc.is_absolute() or ".." in loc.parts:
        return f"tensor '{tensor.name}': external file '{ref.location}' is outside the model folder"
    path = base_dir / loc
    if not path.is_file():
        return f"external data file '{ref.location}' of tensor '{tensor.name}' is missing"
    size = path.stat().st_size
    end = ref.offset + (ref.length if ref.length is not None else 0)
    if ref.offset < 0 or end > size:
        return (
            f"tensor '{tensor.name}' needs bytes {ref.offset}..{end} of '{ref.location}',"
            f" which has only {size}"
        )
    return None


def read_external_bytes(tensor: onnx.TensorProto, base_dir: Path) -> bytes:
    """The raw bytes of an external tensor (reads only its own range)."""
    ref = ExternalRef.of(tensor)
    with open(base_dir / ref.location, "rb") as f:
        f.seek(ref.offset)
        return f.read() if ref.length is None else f.read(ref.length)


def tensor_array(tensor: onnx.TensorProto, base_dir: Path | None) -> np.ndarray:
    """The tensor's values as numpy; external data is memory-mapped, not read up front."""
    if not is_external(tensor):
        return numpy_helper.to_array(tensor)
    if base_dir is None:
        raise ValueError(f"tensor '{tensor.name}' is external but the model has no folder")
    ref = ExternalRef.of(tensor)
    dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)
    shape = tuple(tensor.dims)
    if np.dtype(dtype).itemsize and tensor.data_type not in _PACKED_TYPES:
        count = int(np.prod(shape)) if shape else 1
        return np.memmap(
            base_dir / ref.location, dtype=dtype, mode="r", offset=ref.offset, shape=(count,)
        ).reshape(shape)
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
    zero = bytes(chunk)
    with open(src, "rb") as f:
        f.seek(offset)
        remaining = length if length is not None else os.fstat(f.fileno()).st_size - offset
        pos = dst_offset
        while remaining > 0:
            data = f.read(min(chunk, remaining))
            if not data:
                raise OSError(f"{src} ended {remaining} bytes early")
            if data != zero[: len(data)]:
                dst_file.seek(pos)
                dst_file.write(data)
            pos += len(data)
            remaining -= len(data)
    if dst_file.seek(0, os.SEEK_END) < pos:
        dst_file.truncate(pos)
    return pos - dst_offset
