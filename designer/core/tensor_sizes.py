"""How many bytes a tensor's dims and data type need, and whether its data holds them.

Used by :mod:`designer.core.validate` at load and by the checker's weightless copy; reads
tensor headers only, never the data itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from onnx import TensorProto


class DataMismatch(Exception):
    """A tensor's data does not fit its dims; ``str()`` says what each holds."""


#: Bits per element of each data type; STRING has none (its data is counted in entries).
_BITS: dict[int, int] = {}
for _name, _bits in (
    ("FLOAT", 32),
    ("UINT8", 8),
    ("INT8", 8),
    ("UINT16", 16),
    ("INT16", 16),
    ("INT32", 32),
    ("INT64", 64),
    ("BOOL", 8),
    ("FLOAT16", 16),
    ("DOUBLE", 64),
    ("UINT32", 32),
    ("UINT64", 64),
    ("COMPLEX64", 64),
    ("COMPLEX128", 128),
    ("BFLOAT16", 16),
    ("FLOAT8E4M3FN", 8),
    ("FLOAT8E4M3FNUZ", 8),
    ("FLOAT8E5M2", 8),
    ("FLOAT8E5M2FNUZ", 8),
    ("FLOAT8E8M0", 8),
    ("UINT4", 4),
    ("INT4", 4),
    ("FLOAT4E2M1", 4),
    ("UINT2", 2),
    ("INT2", 2),
):
    if hasattr(TensorProto, _name):
        _BITS[getattr(TensorProto, _name)] = _bits

#: The typed field holding each data type's values when raw_data is not used, and how many
#: entries of it one element takes (complex: 2) or how many elements one entry packs.
_FLOAT_FIELD = {TensorProto.FLOAT: "float_data", TensorProto.COMPLEX64: "float_data"}
_DOUBLE_FIELD = {TensorProto.DOUBLE: "double_data", TensorProto.COMPLEX128: "double_data"}
_INT64_FIELD = {TensorProto.INT64: "int64_data"}
_UINT64_FIELD = {TensorProto.UINT32: "uint64_data", TensorProto.UINT64: "uint64_data"}


def tensor_bytes_needed(tensor: TensorProto) -> int | None:
    """Bytes the dims and data type of ``tensor`` need as raw data (None for STRING or an
    unknown type). Dims are assumed valid (see :func:`model_problem`)."""
    bits = _BITS.get(tensor.data_type)
    if bits is None:
        return None
    # (a slice: looping over a protobuf repeated field ends in a caught IndexError, which
    # costs more than the whole product)
    count: int = prod(tensor.dims[:])
    return (count * bits + 7) // 8


def tensor_nbytes(tensor: TensorProto) -> int:
    """Bytes of ``tensor``'s values, the one answer used everywhere (never reads data).

    - Fixed-width types: elements (the product of the declared dims; no dims, a scalar, is one
      element) times the element size, packed types (int4, float4, ...) rounded up to a
      whole byte. Inline or external alike: the declared shape counts, not ``raw_data``'s
      length nor the external ``length`` (validation checks that these agree).
    - STRING: the sum of the byte lengths of its ``string_data`` entries (no per-string
      overhead; ONNX strings are not stored externally, so an external one counts 0).
    - A data type onnx does not know (or UNDEFINED): 0.
    """
    if tensor.data_type == TensorProto.STRING:
        return sum(len(s) for s in tensor.string_data)
    return max(tensor_bytes_needed(tensor) or 0, 0)


def initializer_sizes(tensors: Sequence[TensorProto]) -> dict[str, tuple[int, int]]:
    """Name → (elements, :func:`tensor_nbytes`) of every tensor of ``tensors``, in one pass
    that reads each tensor's name, data type and dims once (a later one of the same name
    wins, as in a dict built from the field)."""
    out: dict[str, tuple[int, int]] = {}
    bits_of, string = _BITS.get, TensorProto.STRING
    for tensor in tensors[:]:  # a slice: see tensor_bytes_needed
        dtype = tensor.data_type
        count: int = prod(tensor.dims[:])
        bits = bits_of(dtype)
        if bits is not None:
            nbytes = (count * bits + 7) // 8
            out[tensor.name] = (count, nbytes if nbytes > 0 else 0)
        elif dtype == string:
            out[tensor.name] = (count, sum(len(s) for s in tensor.string_data[:]))
        else:
            out[tensor.name] = (count, 0)
    return out


def check_data_length(tensor: TensorProto, where: str, needed: int | None) -> None:
    """The tensor's data (inline or the external length) holds exactly what its dims need
    (``needed``: :func:`tensor_bytes_needed`); raises DataMismatch naming ``where``."""
    dims: list[int] = tensor.dims[:]
    count: int = prod(dims)
    if tensor.data_location == TensorProto.EXTERNAL:
        # Where the bytes are (location, offset, a length that is no number or negative)
        # is checked with the file itself (designer.core.io.external.external_problem).
        info = {e.key: e.value for e in tensor.external_data}
        length, offset = info.get("length", ""), info.get("offset", "0") or "0"
        if not length or needed is None or not (length.isdigit() and offset.isdigit()):
            return
        if int(length) != needed:
            raise DataMismatch(
                f"{where}: dims {dims} need {needed} bytes, but its external data is "
                f"{int(length)} bytes long"
            )
        return
    dtype = tensor.data_type
    if dtype == TensorProto.STRING:
        held, what = len(tensor.string_data), "strings"
        if held and held != count:
            raise DataMismatch(f"{where}: dims {dims} need {count} {what}, it holds {held}")
        return
    if tensor.raw_data:
        held = len(tensor.raw_data)
        if needed is not None and held != needed:
            raise DataMismatch(f"{where}: dims {dims} need {needed} bytes of data, it holds {held}")
        return
    field, entries = _typed_field(dtype, count)
    if field is None:
        return
    held = len(getattr(tensor, field))
    if held and held != entries:
        raise DataMismatch(f"{where}: dims {dims} need {entries} values, it holds {held}")


def _typed_field(dtype: int, count: int) -> tuple[str | None, int]:
    if dtype in _FLOAT_FIELD:
        return "float_data", count * (2 if dtype == TensorProto.COMPLEX64 else 1)
    if dtype in _DOUBLE_FIELD:
        return "double_data", count * (2 if dtype == TensorProto.COMPLEX128 else 1)
    if dtype in _INT64_FIELD:
        return "int64_data", count
    if dtype in _UINT64_FIELD:
        return "uint64_data", count
    bits = _BITS.get(dtype)
    if bits is None:
        return None, 0
    if bits < 8:  # packed: several elements per int32 entry (onnx packs into bytes)
        return "int32_data", (count * bits + 7) // 8
    return "int32_data", count
