"""Converting tensor values between element types, counting what the conversion changes.

Shared by FP16 conversion and Batch Tensor Cast. Every function works on numpy arrays and
costs O(elements) time and one or two temporary arrays of the input's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT_TYPES = frozenset(
    {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE}
)
INT_TYPES = frozenset(
    {
        TensorProto.INT8,
        TensorProto.INT16,
        TensorProto.INT32,
        TensorProto.INT64,
        TensorProto.UINT8,
        TensorProto.UINT16,
        TensorProto.UINT32,
        TensorProto.UINT64,
    }
)
#: Element types a cast can read or write.
CASTABLE_TYPES = FLOAT_TYPES | INT_TYPES | {TensorProto.BOOL}


def type_name(elem_type: int) -> str:
    """``float16`` for TensorProto.FLOAT16 and so on."""
    try:
        return str(helper.tensor_dtype_to_string(elem_type)).removeprefix("TensorProto.").lower()
    except (KeyError, ValueError):
        return f"type{elem_type}"


def parse_type(text: str) -> int:
    """The TensorProto element type for a name like ``float16``, ``fp16``, ``int8``."""
    aliases = {
        "fp16": "float16",
        "half": "float16",
        "fp32": "float",
        "float32": "float",
        "bf16": "bfloat16",
        "fp64": "double",
        "float64": "double",
    }
    key = aliases.get(text.strip().lower(), text.strip().lower())
    value = getattr(TensorProto, key.upper(), None)
    if not isinstance(value, int) or value not in CASTABLE_TYPES:
        names = ", ".join(sorted(type_name(t) for t in CASTABLE_TYPES))
        raise ValueError(f"unknown or unsupported data type '{text}' (use one of: {names})")
    return value


def np_dtype(elem_type: int) -> np.dtype[Any]:
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


def _float_max(dtype: np.dtype[Any]) -> float:
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)  # type: ignore[no-untyped-call]
    return float(np.finfo(dtype).max)


@dataclass
class ConversionCounts:
    """``clipped``: values outside the target's range (saturated, or NaN to an integer);
    ``rounded``: other values that changed; ``flushed``: non-zero values that became zero."""

    clipped: int = 0
    rounded: int = 0
    flushed: int = 0

    def add(self, other: ConversionCounts) -> None:
        self.clipped += other.clipped
        self.rounded += other.rounded
        self.flushed += other.flushed

    @property
    def lossy(self) -> bool:
        return bool(self.clipped or self.rounded)


def convert_array(
    values: np.ndarray, target: int, *, clip: bool = True
) -> tuple[np.ndarray, ConversionCounts]:
    """``values`` as element type ``target`` and what changed.

    Floats narrow with round-to-nearest; finite values beyond the target's range saturate to
    its largest finite value when ``clip`` (else they become ±inf). Floats to integers
    truncate toward zero and saturate; NaN becomes 0. Integers saturate. Anything to bool is
    ``!= 0``.
    """
    shape = np.shape(values)
    flat = np.asarray(values).reshape(-1)
    if flat.size <= CHUNK_ELEMENTS:
        out, counts = _convert_flat(flat, target, clip)
        return out.reshape(shape), counts
    # In chunks: the float64 temporaries stay small, a memory-mapped input is read once.
    out = np.empty(flat.size, dtype=np_dtype(target))
    counts = ConversionCounts()
    for start in range(0, flat.size, CHUNK_ELEMENTS):
        part, part_counts = _convert_flat(flat[start : start + CHUNK_ELEMENTS], target, clip)
        out[start : start + part.size] = part
        counts.add(part_counts)
    return out.reshape(shape), counts


#: Elements converted at a time (temporaries of a few times 4M × 8 bytes).
CHUNK_ELEMENTS = 1 << 22


def _convert_flat(
    values: np.ndarray, target: int, clip: bool
) -> tuple[np.ndarray, ConversionCounts]:
    dst = np_dtype(target)
    src = values.dtype
    counts = ConversionCounts()
    if src == dst:
        return np.array(values, copy=True), counts
    if target == TensorProto.BOOL:
        out = values != 0
        if src != np.bool_:
            counts.rounded = int(np.count_nonzero((values != 0) & (values != 1)))
        return out, counts
    src_float = src.kind == "f" or src == np.dtype(ml_dtypes.bfloat16)
    if target in FLOAT_TYPES:
        wide = values.astype(np.float64)
        limit = _float_max(dst)
        over = np.isfinite(wide) & (np.abs(wide) > limit)
        counts.clipped = int(np.count_nonzero(over))
        if clip and counts.clipped:
            wide = np.where(over, np.sign(wide) * limit, wide)
        with np.errstate(over="ignore"):
            out = wide.astype(dst)
        back = out.astype(np.float64)
        same = (back == wide) | (np.isnan(back) & np.isnan(wide))
        changed = ~same & ~over
        counts.rounded = int(np.count_nonzero(changed))
        counts.flushed = int(np.count_nonzero((wide != 0) & (back == 0)))
        if not src_float and src.itemsize == 8:  # int64 beyond 2**53: compare exactly
            exact = out.astype(src) if not counts.clipped else None
            if exact is not None:
                counts.rounded = int(np.count_nonzero(exact != values))
        return out, counts
    info = np.iinfo(dst)
    if src_float:
        wide = values.astype(np.float64)
        nan = np.isnan(wide)
        low, high = wide < info.min, wide > info.max
        counts.clipped = int(np.count_nonzero(nan | low | high))
        truncated = np.trunc(np.where(nan, 0.0, np.clip(wide, info.min, info.max)))
        counts.rounded = int(np.count_nonzero((truncated != wide) & ~nan & ~low & ~high))
        with np.errstate(invalid="ignore"):  # float(iinfo.max) may round up: fixed below
            out = truncated.astype(dst)
        if high.any():  # float64 cannot hold iinfo.max exactly for 64-bit types
            out[high] = info.max
        return out, counts
    if src == np.bool_:
        return values.astype(dst), counts
    src_info = np.iinfo(src)
    low_mask = values < info.min if info.min > src_info.min else np.zeros(values.shape, bool)
    high_mask = values > info.max if info.max < src_info.max else np.zeros(values.shape, bool)
    counts.clipped = int(np.count_nonzero(low_mask | high_mask))
    out = values.astype(dst)
    out[low_mask] = info.min
    out[high_mask] = info.max
    return out, counts


def array_to_tensor(values: np.ndarray, name: str, elem_type: int) -> onnx.TensorProto:
    """A TensorProto of ``elem_type`` holding ``values`` as raw little-endian bytes."""
    if elem_type == TensorProto.BOOL or values.dtype == np.dtype(ml_dtypes.bfloat16):
        tensor = TensorProto(name=name, data_type=elem_type, dims=list(values.shape))
        tensor.raw_data = (
            np.array(values, order="C", copy=None).astype(values.dtype.newbyteorder("<")).tobytes()
        )
        return tensor
    tensor = numpy_helper.from_array(np.array(values, order="C", copy=None), name)
    tensor.data_type = elem_type
    return tensor


def describe_counts(counts: ConversionCounts, target: int) -> str:
    """What a conversion changed, for a log line: ``1,234 clipped to the float16 range,
    56,789 rounded`` (``exact`` when nothing); counts with thousands separators, as every
    transform's log writes sizes and counts."""
    parts = []
    if counts.clipped:
        parts.append(f"{counts.clipped:,} clipped to the {type_name(target)} range")
    if counts.rounded:
        parts.append(f"{counts.rounded:,} rounded")
    if counts.flushed:
        parts.append(f"{counts.flushed:,} flushed to zero")
    return ", ".join(parts) if parts else "exact"
