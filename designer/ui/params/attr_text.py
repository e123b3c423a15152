"""Attribute values as P-2 text and back (Qt-free helpers of the Parameters window)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from designer.core.errors import ValueSyntaxError
from designer.core.values import format_tensor, format_value, parse_list, parse_tensor, parse_value

A = onnx.AttributeProto

#: Attribute types edited as text in one field.
TEXT_TYPES = (A.INT, A.FLOAT, A.STRING, A.INTS, A.FLOATS, A.STRINGS, A.TENSOR)
#: Attribute types that also open in the Tensor Editor.
TABLE_TYPES = (A.INTS, A.FLOATS, A.STRINGS, A.TENSOR)
#: Tensors with more elements are shown as a preview; only the Tensor Editor changes them.
PREVIEW_LIMIT = 256

_LIST_KIND: dict[int, str] = {A.INTS: "ints", A.FLOATS: "floats", A.STRINGS: "strings"}


class AttributeTextError(ValueError):
    """Text that cannot become the attribute; ``str()`` is the message shown at the field."""


def _float_text(value: float) -> str:
    return format_tensor(np.asarray(value, dtype=np.float32))


def attribute_text(attr: A) -> str:
    """The attribute's value in P-2 syntax (a ``...`` preview for big tensors)."""
    t = attr.type
    if t == A.INT:
        return str(attr.i)
    if t == A.FLOAT:
        return _float_text(attr.f)
    if t == A.STRING:
        return format_value(attr.s.decode("utf-8", errors="replace"))
    if t == A.INTS:
        return format_value(list(attr.ints))
    if t == A.FLOATS:
        return format_tensor(np.asarray(attr.floats, dtype=np.float32))
    if t == A.STRINGS:
        return format_value([s.decode("utf-8", errors="replace") for s in attr.strings])
    if t == A.TENSOR:
        return format_tensor(numpy_helper.to_array(attr.t), max_elements=PREVIEW_LIMIT)
    if t == A.GRAPH:
        return f"graph '{attr.g.name}'"
    if t == A.GRAPHS:
        return f"{len(attr.graphs)} graphs"
    return f"({A.AttributeType.Name(t)} value)"


def is_preview(attr: A) -> bool:
    """True when :func:`attribute_text` of ``attr`` is a cut-short preview."""
    return attr.type == A.TENSOR and int(np.prod(attr.t.dims)) > PREVIEW_LIMIT


def _string(text: str) -> str:
    stripped = text.strip()
    if not stripped.startswith("'"):
        raise AttributeTextError("expected a string in single quotes, e.g. 'NOTSET'")
    value = parse_value(stripped)
    if not isinstance(value, str):
        raise AttributeTextError("expected one string in single quotes")
    return value


def parse_attribute(name: str, attr_type: int, text: str, elem_type: int = 1) -> A:
    """Build attribute ``name`` of ``attr_type`` from P-2 ``text``; ``elem_type`` is the tensor
    type of a TENSOR attribute. Raises AttributeTextError with a message for the field."""
    try:
        if attr_type == A.INT:
            value = parse_value(text)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise AttributeTextError("expected an integer")
            if isinstance(value, float) and not value.is_integer():
                raise AttributeTextError(f"expected an integer, not {value}")
            if not -(2**63) <= int(value) < 2**63:
                raise AttributeTextError("expected an integer within int64")
            return onnx.helper.make_attribute(name, int(value))
        if attr_type == A.FLOAT:
            array = parse_tensor(text, onnx.TensorProto.FLOAT)
            if array.ndim:
                raise AttributeTextError("expected one number, not a list")
            return onnx.helper.make_attribute(name, float(array), attr_type=A.FLOAT)
        if attr_type == A.STRING:
            return onnx.helper.make_attribute(name, _string(text), attr_type=A.STRING)
        if attr_type in _LIST_KIND:
            values = parse_list(text, _LIST_KIND[attr_type])
            return onnx.helper.make_attribute(name, values, attr_type=attr_type)
        if attr_type == A.TENSOR:
            return tensor_attribute(name, parse_tensor(text, elem_type), elem_type)
    except ValueSyntaxError as exc:
        raise AttributeTextError(str(exc)) from None
    raise AttributeTextError(f"{A.AttributeType.Name(attr_type)} values cannot be typed here")


def tensor_attribute(name: str, array: np.ndarray, elem_type: int) -> A:
    """A TENSOR attribute holding ``array`` (of ONNX ``elem_type``)."""
    tensor = numpy_helper.from_array(np.asarray(array), name="")
    if tensor.data_type != elem_type:
        raise AttributeTextError(
            f"the values are {onnx.TensorProto.DataType.Name(tensor.data_type)},"
            f" not {onnx.TensorProto.DataType.Name(elem_type)}"
        )
    return onnx.helper.make_attribute(name, tensor, attr_type=A.TENSOR)


def list_attribute(name: str, attr_type: int, array: np.ndarray) -> A:
    """An INTS/FLOATS/STRINGS attribute from a 1-D array edited in the Tensor Editor."""
    values = np.asarray(array).ravel().tolist()
    if attr_type == A.STRINGS:
        values = [v.decode() if isinstance(v, bytes) else str(v) for v in values]
    return onnx.helper.make_attribute(name, values, attr_type=attr_type)


def attribute_array(attr: A) -> tuple[np.ndarray, int]:
    """(values, ONNX elem type) of a list or tensor attribute for the Tensor Editor."""
    T = onnx.TensorProto
    if attr.type == A.INTS:
        return np.asarray(attr.ints, dtype=np.int64), T.INT64
    if attr.type == A.FLOATS:
        return np.asarray(attr.floats, dtype=np.float32), T.FLOAT
    if attr.type == A.STRINGS:
        return np.asarray([s.decode("utf-8", "replace") for s in attr.strings], object), T.STRING
    if attr.type == A.TENSOR:
        return numpy_helper.to_array(attr.t), attr.t.data_type
    raise ValueError(f"{A.AttributeType.Name(attr.type)} is not a list or tensor")


def empty_array(attr_type: int) -> tuple[np.ndarray, int]:
    """An empty value for a list/tensor attribute that is unset and has no default."""
    T = onnx.TensorProto
    kinds: dict[int, tuple[object, int]] = {
        A.INTS: (np.int64, T.INT64),
        A.FLOATS: (np.float32, T.FLOAT),
        A.STRINGS: (object, T.STRING),
        A.TENSOR: (np.float32, T.FLOAT),
    }
    dtype, elem = kinds[attr_type]
    return np.zeros((0,), dtype=dtype), elem  # type: ignore[call-overload]
