"""Data types, layouts and ONNX node names in TensorRT's engine descriptions (Qt-free).

The format strings of the layer JSON (``"Thirty-two wide channel vectorized row major Int8
format"``, 11.x ``"Row major linear FP32 format (kLINEAR)"``, Myelin's bare ``"Half"``) are
read into a normalised precision (``FP32``, ``FP16``, ``INT8`` …) and a TensorFormat name
(``LINEAR``, ``CHW32``, ``HWC8`` …); ``Metadata`` strings into ONNX node names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "REFORMAT_NAME",
    "EngineTensor",
    "as_dims",
    "as_int",
    "as_str",
    "bytes_per_element",
    "layout_of",
    "names_from_layer_name",
    "parse_tensor",
    "precision_of",
    "split_metadata",
]

# Precision words as they appear in format strings and DataType fields, longest first so that
# "BFloat16" wins over "Float" and "UInt8" over "Int8".
_PRECISION_WORDS: tuple[tuple[str, str], ...] = (
    ("bfloat16", "BF16"),
    ("bf16", "BF16"),
    ("doublecomplex", "COMPLEX128"),
    ("floatcomplex", "COMPLEX64"),
    ("double", "FP64"),
    ("fp32", "FP32"),
    ("float32", "FP32"),
    ("float", "FP32"),
    ("fp16", "FP16"),
    ("float16", "FP16"),
    ("half", "FP16"),
    ("fp8", "FP8"),
    ("e4m3", "FP8"),
    ("fp4", "FP4"),
    ("e2m1", "FP4"),
    ("uint8", "UINT8"),
    ("uint16", "UINT16"),
    ("uint32", "UINT32"),
    ("uint64", "UINT64"),
    ("int4", "INT4"),
    ("int8", "INT8"),
    ("int16", "INT16"),
    ("int32", "INT32"),
    ("int64", "INT64"),
    ("bool", "BOOL"),
)
_PRECISION_BY_WORD = dict(_PRECISION_WORDS)
_BYTES: dict[str, float] = {
    "FP64": 8,
    "FP32": 4,
    "FP16": 2,
    "BF16": 2,
    "FP8": 1,
    "FP4": 0.5,
    "INT4": 0.5,
    "INT8": 1,
    "UINT8": 1,
    "INT16": 2,
    "UINT16": 2,
    "INT32": 4,
    "UINT32": 4,
    "INT64": 8,
    "UINT64": 8,
    "BOOL": 1,
    "COMPLEX64": 8,
    "COMPLEX128": 16,
}
_VECTOR_WIDTH = {"two": 2, "four": 4, "sixteen": 16, "thirty-two": 32}
_META_SEPARATORS = re.compile("[\u001e\u001f]")
_ONNX_LAYER = re.compile(r"\[ONNX Layer:\s*(.*?)\]\s*$", re.S)
REFORMAT_NAME = re.compile(r"^Reformatting CopyNode for (Input|Output) Tensor \d+ to ")


def precision_of(text: str | None) -> str | None:
    """The data type named in a format or DataType string (``"FP32"``, ``"INT8"``, …), or None."""
    if not text:
        return None
    for token in re.split(r"[^A-Za-z0-9]+", text):
        found = _PRECISION_BY_WORD.get(token.lower())
        if found is not None:
            return found
    return None


def bytes_per_element(precision: str | None) -> float | None:
    """Storage of one element of ``precision`` in bytes (0.5 for 4-bit types), or None."""
    return _BYTES.get(precision) if precision else None


def layout_of(text: str | None) -> str | None:
    """The memory layout named in a format string as TensorRT's TensorFormat name
    (``LINEAR``, ``CHW32``, ``HWC8``, …), or None when the string names only a data type."""
    if not text:
        return None
    explicit = re.search(r"\(k([A-Z0-9_]+)\)", text)
    if explicit:
        return explicit.group(1)
    low = text.lower()
    spatial3 = "3 spatial" in low
    vector = re.search(r"(two|four|sixteen|thirty-two) wide channel vectorized", low)
    if vector:
        width = _VECTOR_WIDTH[vector.group(1)]
        return f"CDHW{width}" if spatial3 else f"CHW{width}"
    if "channel major" in low:
        mult = re.search(r"channel (?:%|==) (\d+)", low)
        base = "DHWC" if spatial3 else "HWC"
        return f"{base}{mult.group(1)}" if mult else base
    if "row major" in low:
        return "LINEAR"
    return None


def split_metadata(metadata: str | None) -> tuple[str, ...]:
    """ONNX node names from a 10.x ``Metadata`` string, in order, without repeats."""
    if not metadata:
        return ()
    names: list[str] = []
    for part in _META_SEPARATORS.split(metadata):
        part = part.strip()
        if not part:
            continue
        match = _ONNX_LAYER.match(part)
        name = match.group(1).strip() if match else part
        if name and name not in names:
            names.append(name)
    return tuple(names)


def names_from_layer_name(name: str) -> tuple[str, ...]:
    """Best guess of ONNX node names from a fused 8.x layer name (``"Conv_5 + Add_6 + Relu_7"``,
    ``"PWN(Clip_16)"``); weights, unnamed layers and reformat nodes give nothing."""
    if REFORMAT_NAME.match(name):
        return ()
    out: list[str] = []
    for part in name.split(" + "):
        part = re.sub(r"\s*\[[^\]]*\]\s*$", "", part.strip())  # "[0.0,6.0]", "[Shuffle]"
        while part.startswith("PWN(") and part.endswith(")"):
            part = part[4:-1]
        for piece in part.split(","):
            piece = piece.strip().removeprefix("PWN(").rstrip(")")
            if (
                not piece
                or piece.startswith("(Unnamed Layer")
                or piece.endswith((".weight", ".bias"))
            ):
                continue
            if piece not in out:
                out.append(piece)
    return tuple(out)


def as_dims(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, (list, tuple)) and all(
        isinstance(d, int) and not isinstance(d, bool) for d in value
    ):
        return tuple(value)
    return None


def as_str(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value)
    return text if text else None


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class EngineTensor:
    """One tensor at a layer's input or output.

    ``format`` is the recorded format text (10.x ``Format/Datatype``, 11.x ``Format``);
    ``datatype`` the recorded 11.x ``DataType`` (None in 8.x/10.x); ``precision`` the normalised
    data type from either (``FP32``, ``FP16``, ``INT8``, …); ``layout`` the TensorFormat name."""

    name: str
    dims: tuple[int, ...] | None = None
    format: str | None = None
    datatype: str | None = None
    precision: str | None = None
    layout: str | None = None
    location: str | None = None

    @property
    def volume(self) -> int | None:
        """Element count (dynamic dims, recorded as -1, give None)."""
        if self.dims is None or any(d < 0 for d in self.dims):
            return None
        return math.prod(self.dims)

    @property
    def size_bytes(self) -> int | None:
        size = bytes_per_element(self.precision)
        volume = self.volume
        return None if size is None or volume is None else int(volume * size)

    def label(self) -> str:
        """``"FP16 HWC8 [1,64,56,56]"``-style short text for tooltips and edges."""
        dims = "[" + ",".join(str(d) for d in self.dims) + "]" if self.dims is not None else ""
        parts = [p for p in (self.precision, self.layout, dims) if p]
        return " ".join(parts) if parts else "not recorded"


def parse_tensor(raw: Any) -> EngineTensor:
    """One tensor record of either schema; a bare string is a tensor known only by name."""
    if isinstance(raw, str):
        return EngineTensor(name=raw)
    if not isinstance(raw, Mapping):
        return EngineTensor(name=str(raw))
    fmt = as_str(raw.get("Format/Datatype", raw.get("Format")))
    datatype = as_str(raw.get("DataType", raw.get("Datatype")))
    precision = precision_of(datatype) or precision_of(fmt)
    return EngineTensor(
        name=str(raw.get("Name", "")),
        dims=as_dims(raw.get("Dimensions")),
        format=fmt,
        datatype=datatype,
        precision=precision,
        layout=layout_of(fmt),
        location=as_str(raw.get("Location")),
    )
