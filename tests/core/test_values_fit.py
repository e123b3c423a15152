"""Messages for values that do not fit their tensor type, and the text round trip of empty
tensors (designer.core.values)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from designer.core.errors import ValueSyntaxError
from designer.core.values import ValueFitError, format_tensor, parse_list, parse_tensor_like
from designer.core.values import parse_tensor as parse

INT64 = f"[{-(2**63)}, {2**63 - 1}]"


@pytest.mark.parametrize(
    ("text", "elem_type", "message"),
    [
        ("1.5", TensorProto.INT64, "at position 0: 1.5 is not an integer (INT64)"),
        ("[0, -2.5e-1]", TensorProto.INT32, "at position 4: -2.5e-1 is not an integer (INT32)"),
        ("'abc'", TensorProto.INT64, "at position 0: 'abc' is not an integer (INT64)"),
        ("[true]", TensorProto.UINT8, "at position 1: true is not an integer (UINT8)"),
        ("[1, 300]", TensorProto.INT8, "at position 4: 300 is not in [-128, 127] for INT8"),
        ("[-1]", TensorProto.UINT4, "at position 1: -1 is not in [0, 15] for UINT4"),
        ("['a']", TensorProto.FLOAT, "at position 1: 'a' is not a number (FLOAT)"),
        ("[70000]", TensorProto.FLOAT16, "at position 1: 70000 is outside the range of FLOAT16"),
        ("[6.5]", TensorProto.FLOAT4E2M1, "at position 1: 6.5 is not within ±6.0 for FLOAT4E2M1"),
        (
            "[nan]",
            TensorProto.FLOAT4E2M1,
            "at position 1: nan is not allowed (FLOAT4E2M1 has no nan)",
        ),
        (
            "[-inf]",
            TensorProto.FLOAT8E4M3FN,
            "at position 1: -inf is not allowed (FLOAT8E4M3FN has no infinity)",
        ),
        ("[2]", TensorProto.BOOL, "at position 1: 2 is not true, false, 1 or 0 (BOOL)"),
        ("[1]", TensorProto.STRING, "at position 1: 1 is not a quoted string (STRING)"),
    ],
)
def test_misfit_names_the_value_as_typed(text: str, elem_type: int, message: str) -> None:
    with pytest.raises(ValueFitError) as info:
        parse(text, elem_type)
    assert str(info.value) == message
    assert isinstance(info.value, ValueSyntaxError)  # callers catching that still do


def test_misfit_keeps_position_and_expected() -> None:
    with pytest.raises(ValueFitError) as info:
        parse("[[0], [1.5]]", TensorProto.INT64)
    error = info.value
    assert (error.position, error.expected) == (7, f"an integer in {INT64} for INT64")
    assert error.problem == "1.5 is not an integer (INT64)"


def test_misfit_cuts_long_values() -> None:
    with pytest.raises(ValueFitError) as info:
        parse(f"['{'x' * 100}']", TensorProto.INT64)
    assert str(info.value) == f"at position 1: '{'x' * 38}… is not an integer (INT64)"
    with pytest.raises(ValueFitError) as info:
        parse(f"[{10**400}]", TensorProto.DOUBLE)
    assert str(info.value) == f"at position 1: 1{'0' * 38}… is outside the range of DOUBLE"


def test_list_misfit_names_the_value() -> None:
    with pytest.raises(ValueFitError, match=r"^at position 4: 1\.5 is not an integer \(INT64\)$"):
        parse_list("[1, 1.5]", "ints")


@pytest.mark.parametrize("shape", [(0, 4), (2, 0, 3), (0,), (3, 0), (0, 0, 5)])
def test_empty_tensor_text_round_trip_keeps_dims(shape: tuple[int, ...]) -> None:
    before = np.zeros(shape, np.float32)
    text = format_tensor(before)
    after = parse_tensor_like(text, TensorProto.FLOAT, before)
    assert after.shape == shape and after.dtype == np.float32
    spaced = parse_tensor_like(f"  {text} ", TensorProto.FLOAT, before)
    assert spaced.shape == shape


def test_parse_tensor_like_takes_other_text_as_typed() -> None:
    before = np.zeros((0, 4), np.int64)
    assert parse_tensor_like("[[]]", TensorProto.INT64, before).shape == (1, 0)
    assert parse_tensor_like("[1, 2]", TensorProto.INT64, before).tolist() == [1, 2]
    full = np.arange(4, dtype=np.int64).reshape(2, 2)
    assert parse_tensor_like("[]", TensorProto.INT64, full).shape == (0,)
    strings = np.zeros((0, 2), object)
    assert parse_tensor_like("[]", TensorProto.STRING, strings).shape == (0, 2)
