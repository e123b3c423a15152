"""Formatting attribute values and types for a diff, and comparing tensor values.

Tensor values are compared one tensor at a time; external data is memory-mapped through
:func:`designer.core.io.external.tensor_array` and compared in chunks, so memory stays
bounded by a chunk, not by the model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from designer.core.diff.records import TensorInfo
from designer.core.io.external import ExternalDataError, is_external, tensor_array
from designer.core.walk import attribute_graphs

#: elements compared per step (float64 working copies of two chunks: 16 MiB)
CHUNK = 1 << 20
_TEXT_LIMIT = 80


def dtype_name(elem_type: int) -> str:
    try:
        return str(onnx.TensorProto.DataType.Name(elem_type)).lower()
    except ValueError:
        return f"type {elem_type}"


def tensor_info(tensor: onnx.TensorProto) -> TensorInfo:
    return TensorInfo(tensor.name, dtype_name(tensor.data_type), tuple(int(d) for d in tensor.dims))


def format_type(type_proto: onnx.TypeProto) -> str:
    """``float32[1,3,N,224]``; other types as onnx prints them."""
    if type_proto.HasField("tensor_type"):
        t = type_proto.tensor_type
        text = dtype_name(t.elem_type)
        if t.HasField("shape"):
            dims = [
                str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")
                for d in t.shape.dim
            ]
            text += f"[{','.join(dims)}]"
        return text
    return str(onnx.helper.printable_type(type_proto))


def _short(text: str) -> str:
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def format_attribute(attr: onnx.AttributeProto, other: onnx.AttributeProto | None = None) -> str:
    """A one-line text of the attribute's value; a tensor shows its type and shape (and,
    given the ``other`` side with the same type and shape, the largest difference)."""
    if attr.ref_attr_name:
        return f"@{attr.ref_attr_name}"
    if attr.type == onnx.AttributeProto.TENSOR:
        info = tensor_info(attr.t)
        text = f"tensor {info.dtype}{list(info.shape)}"
        if other is not None and other.type == onnx.AttributeProto.TENSOR:
            cmp = compare_values(other.t, attr.t, None, None)
            if cmp.max_abs_diff is not None:
                text += f" (max abs diff {cmp.max_abs_diff:.6g})"
            elif cmp.note:
                text += f" ({cmp.note})"
        return text
    if attr.type == onnx.AttributeProto.SPARSE_TENSOR:
        return f"sparse tensor {list(attr.sparse_tensor.dims)}"
    if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        graphs = attribute_graphs(attr)
        return ", ".join(f"graph {g.name or '?'} ({len(g.node)} nodes)" for g in graphs)
    if attr.type == onnx.AttributeProto.TENSORS:
        return f"{len(attr.tensors)} tensors"
    value = onnx.helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return _short(repr(value.decode("utf-8", "replace")))
    if isinstance(value, list):
        items = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value]
        return _short(repr(items))
    return _short(repr(value))


@dataclass(frozen=True)
class ValueComparison:
    """``differ``: the values are not bit-equal (or cannot be compared); ``max_abs_diff``
    over all elements when shapes match and both are numeric; ``note`` why not, or that
    NaN/Inf positions differ."""

    differ: bool
    max_abs_diff: float | None
    note: str = ""


def _same_raw(a: onnx.TensorProto, b: onnx.TensorProto) -> bool | None:
    """Fast path: both hold raw bytes in the file (True/False), else None."""
    if is_external(a) or is_external(b) or not a.HasField("raw_data") or not b.HasField("raw_data"):
        return None
    if a.data_type != b.data_type or list(a.dims) != list(b.dims):
        return None
    return a.raw_data == b.raw_data


def _no_data(t: onnx.TensorProto) -> bool:
    """True for a non-empty tensor that carries no values (a structural copy's)."""
    if is_external(t) or t.HasField("raw_data") or not t.dims or 0 in t.dims:
        return False
    return not any(
        len(getattr(t, f))
        for f in (
            "float_data",
            "int32_data",
            "string_data",
            "int64_data",
            "double_data",
            "uint64_data",
        )
    )


def compare_values(
    a: onnx.TensorProto, b: onnx.TensorProto, a_dir: Path | None, b_dir: Path | None
) -> ValueComparison:
    """Compare the values of two tensors (reads each once; see the module docstring)."""
    same = _same_raw(a, b)
    if same is True:
        return ValueComparison(False, 0.0)
    if _no_data(a) and _no_data(b):  # structural copies (skeleton): nothing to compare
        return ValueComparison(False, None, "values not compared")
    try:
        xa = tensor_array(a, a_dir)
        xb = tensor_array(b, b_dir)
    except (ExternalDataError, ValueError, TypeError) as exc:
        return ValueComparison(True, None, f"values unreadable: {exc}")
    if xa.shape != xb.shape:
        return ValueComparison(True, None, "shapes differ")
    numeric = all(_numeric_kind(x) for x in (xa, xb))
    if not numeric:
        equal = xa.dtype == xb.dtype and bool(np.array_equal(xa, xb))
        return ValueComparison(not equal, None, "" if equal else "non-numeric values differ")
    return _numeric(xa.reshape(-1), xb.reshape(-1), a.data_type == b.data_type)


def _numeric_kind(x: np.ndarray) -> bool:
    """Plain numbers, or ml_dtypes' float types (bfloat16, float8: kind "V") that cast to
    float64."""
    if x.dtype.kind in "biufc":
        return True
    if x.dtype.kind != "V" or x.dtype.fields is not None:
        return False
    try:
        np.zeros(1, x.dtype).astype(np.float64)
    except (TypeError, ValueError):
        return False
    return True


def _numeric(xa: np.ndarray, xb: np.ndarray, same_type: bool) -> ValueComparison:
    worst = 0.0
    differ = not same_type
    special = False
    for start in range(0, max(xa.size, 1), CHUNK):
        ca = np.asarray(xa[start : start + CHUNK])
        cb = np.asarray(xb[start : start + CHUNK])
        if ca.dtype.kind == "c" or cb.dtype.kind == "c":
            fa, fb = ca.astype(np.complex128), cb.astype(np.complex128)
        else:
            fa, fb = ca.astype(np.float64), cb.astype(np.float64)
        finite = np.isfinite(fa) & np.isfinite(fb)
        # NaN/Inf in the same places with the same value count as equal
        same_special = ~finite & ((fa == fb) | (np.isnan(fa) & np.isnan(fb)))
        if not np.all(finite | same_special):
            special = True
        if finite.any():
            d = float(np.max(np.abs(fa[finite] - fb[finite])))
            worst = max(worst, d)
        if not differ and not np.array_equal(ca, cb, equal_nan=ca.dtype.kind in "fc"):
            differ = True
    if special:
        return ValueComparison(True, worst, "NaN/Inf positions differ")
    return ValueComparison(differ or worst > 0.0, worst)
