"""Tests of the P-2 value syntax (designer.core.values)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import TensorProto, helper

from designer.core.errors import ValueSyntaxError
from designer.core.values import (
    Value,
    format_tensor,
    format_value,
    parse_list,
    parse_tensor,
    parse_value,
)

VALUE = "a value (number, 'string', true, false or [list])"
RECT = "(nested lists must be rectangular)"


def _same(a: Any, b: Any) -> bool:
    """Structural equality with exact types; floats compare by bits (NaN sign included)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b) and math.copysign(1, a) == math.copysign(1, b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


def _error(call: Any, *args: Any) -> ValueSyntaxError:
    with pytest.raises(ValueSyntaxError) as info:
        call(*args)
    return info.value


# --- parse_value -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2, 3, 4]", [1, 2, 3, 4]),
        ("[[1, 2], [3, 4]]", [[1, 2], [3, 4]]),
        ("[]", []),
        ("[[], [[]]]", [[], [[]]]),
        ("'Some text'", "Some text"),
        ("'It\\'s alive!'", "It's alive!"),
        ("'a\\\\b'", "a\\b"),
        ("'tab\\there\\nnew'", "tab\there\nnew"),
        ("''", ""),
        ("'[1, 2]'", "[1, 2]"),
        ("'ünï ✓'", "ünï ✓"),
        ("-3", -3),
        ("+7", 7),
        ("007", 7),
        ("1.5", 1.5),
        ("-2e-3", -0.002),
        ("2E+3", 2000.0),
        (".5", 0.5),
        ("3.", 3.0),
        ("-0.0", -0.0),
        ("1e-400", 0.0),
        ("inf", math.inf),
        ("-INF", -math.inf),
        ("+Infinity", math.inf),
        ("true", True),
        ("FALSE", False),
        ("True", True),
        ("  \t[ 1 ,\n2 ]  ", [1, 2]),
        ("[1,[2,'x'],true]", [1, [2, "x"], True]),
        (str(2**70), 2**70),
    ],
)
def test_parse_value(text: str, expected: Value) -> None:
    assert _same(parse_value(text), expected)


def test_parse_value_nan() -> None:
    for text in ("nan", "NaN", "+nan"):
        value = parse_value(text)
        assert isinstance(value, float) and math.isnan(value)
    negative = parse_value("-nan")
    assert isinstance(negative, float) and math.copysign(1, negative) < 0


def test_ints_stay_int_and_floats_float() -> None:
    assert [type(v) for v in parse_value("[1, 1.0, 1e0, true]")] == [int, float, float, bool]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ("", 0, VALUE),
        ("   ", 3, VALUE),
        ("@", 0, VALUE),
        ("foo", 0, VALUE),
        ("_x", 0, VALUE),
        ("[", 1, f"{VALUE} or ']'"),
        ("[ )", 2, f"{VALUE} or ']'"),
        ("[1,", 3, VALUE),
        ("[1,]", 3, VALUE),
        ("[1, , 2]", 4, VALUE),
        ("[1 2]", 3, "',' or ']'"),
        ("[1", 2, "',' or ']'"),
        ("[[1, 2], [3, 4]", 15, "',' or ']'"),
        ("[1, 2, 3, x]", 10, VALUE),
        ("[1, 2, 3x]", 8, "',' or ']'"),
        ("[1]]", 3, "end of text"),
        ("1 2", 2, "end of text"),
        ("12abc", 2, "end of text"),
        ("1.2.3", 3, "end of text"),
        ("[1] x", 4, "end of text"),
        ("'abc", 4, 'a closing quote "\'"'),
        ("['a', 'b]", 9, 'a closing quote "\'"'),
        ("'a\\qb'", 3, "one of ' \\ n t after a backslash"),
        ("'a\\\"'", 3, "one of ' \\ n t after a backslash"),
        ("'a\\", 3, "one of ' \\ n t after a backslash"),
        ("-true", 1, "a number"),
        ("+foo", 1, "a number"),
        ("[-x]", 2, "a number"),
        ("-", 1, "a digit"),
        ("+", 1, "a digit"),
        ("-[1]", 1, "a digit"),
        (".", 1, "a digit"),
        ("-.", 2, "a digit"),
        (".e5", 1, "a digit"),
        ("...", 1, "a digit"),
        ("1e", 2, "a digit in the exponent"),
        ("1e+", 3, "a digit in the exponent"),
        ("[2.5E-x]", 6, "a digit in the exponent"),
        ("1" * 5000, 0, "a number of at most 4300 digits"),
        ("1e400", 0, "a number within the range of a double"),
        ("[1, -1e400]", 4, "a number within the range of a double"),
        ("[" * 65 + "]" * 65, 64, "at most 64 levels of nested lists"),
    ],
)
def test_parse_value_errors(text: str, position: int, expected: str) -> None:
    error = _error(parse_value, text)
    assert (error.position, error.expected, error.text) == (position, expected, text)
    assert str(error).startswith(f"at position {position}: expected {expected}, found ")


def test_error_message_names_position_and_found() -> None:
    assert (
        str(_error(parse_value, "[1, 2, 3 x]")) == "at position 9: expected ',' or ']', found 'x'"
    )
    assert str(_error(parse_value, "[1")).endswith("found end of text")


def test_deep_nesting_within_limit() -> None:
    assert parse_value("[" * 64 + "]" * 64) is not None


# --- format_value ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ([1, 2, 3, 4], "[1, 2, 3, 4]"),
        ([[1, 2], [3, 4]], "[[1, 2], [3, 4]]"),
        ([], "[]"),
        ("It's alive!", "'It\\'s alive!'"),
        ("a\\b\n\t", "'a\\\\b\\n\\t'"),
        (True, "true"),
        (False, "false"),
        (-3, "-3"),
        (0.1, "0.1"),
        (1e16, "1e+16"),
        (2.0, "2.0"),
        (-0.0, "-0.0"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (math.nan, "nan"),
        (-math.nan, "-nan"),
        ([1.5, "x", [True]], "[1.5, 'x', [true]]"),
        (np.float32(0.1), "0.1"),
        (np.int8(-5), "-5"),
        (np.bool_(True), "true"),
        (np.str_("a'b"), "'a\\'b'"),
        (np.array([[1, 2]], dtype=np.int64), "[[1, 2]]"),
    ],
)
def test_format_value(value: Any, text: str) -> None:
    assert format_value(value) == text


def test_format_value_rejects_other_types() -> None:
    with pytest.raises(TypeError):
        format_value({"a": 1})  # type: ignore[arg-type]


scalars = st.one_of(
    st.integers(),
    st.floats(),
    st.booleans(),
    st.text(),
)
values = st.recursive(scalars, lambda children: st.lists(children, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)  # a loaded CI host is slow, not wrong
@given(values)
def test_format_parse_round_trip(value: Value) -> None:
    assert _same(parse_value(format_value(value)), value)


# --- parse_tensor ------------------------------------------------------------------------


def test_parse_tensor_shapes_and_dtypes() -> None:
    a = parse_tensor("[[1, 2], [3, 4]]", TensorProto.INT8)
    assert a.dtype == np.int8 and a.shape == (2, 2) and a.tolist() == [[1, 2], [3, 4]]
    scalar = parse_tensor("5", TensorProto.FLOAT)
    assert scalar.dtype == np.float32 and scalar.shape == () and scalar == 5
    assert parse_tensor("[]", TensorProto.INT64).shape == (0,)
    assert parse_tensor("[[], []]", TensorProto.DOUBLE).shape == (2, 0)
    assert parse_tensor("[[[1], [2]]]", TensorProto.UINT16).shape == (1, 2, 1)
    assert parse_tensor("[1.0, -2.0]", TensorProto.INT32).tolist() == [1, -2]
    assert parse_tensor("[1e2]", TensorProto.UINT8).tolist() == [100]
    big = parse_tensor(f"[{2**64 - 1}, 0]", TensorProto.UINT64)
    assert big.dtype == np.uint64 and int(big[0]) == 2**64 - 1
    assert parse_tensor(f"[{-(2**63)}]", TensorProto.INT64).tolist() == [-(2**63)]


def test_parse_tensor_floats() -> None:
    a = parse_tensor("[1, 0.1, -inf, nan, 65519]", TensorProto.FLOAT16)
    assert a.dtype == np.float16
    assert a[1] == np.float16(0.1) and a[2] == -np.inf and np.isnan(a[3]) and a[4] == 65504
    assert parse_tensor("[0.1]", TensorProto.DOUBLE)[0] == 0.1
    assert parse_tensor("[1e-50]", TensorProto.FLOAT)[0] == 0.0  # underflow is rounding


def test_parse_tensor_bool_and_string() -> None:
    b = parse_tensor("[true, FALSE, 1, 0]", TensorProto.BOOL)
    assert b.dtype == np.bool_ and b.tolist() == [True, False, True, False]
    s = parse_tensor("[['a', 'It\\'s'], ['', 'c']]", TensorProto.STRING)
    assert s.dtype == object and s.shape == (2, 2) and s.tolist() == [["a", "It's"], ["", "c"]]
    assert all(type(x) is str for x in s.flat)
    assert parse_tensor("'x'", TensorProto.STRING).shape == ()


INT_RANGES: dict[int, tuple[str, int, int]] = {
    TensorProto.INT8: ("INT8", -(2**7), 2**7 - 1),
    TensorProto.UINT8: ("UINT8", 0, 2**8 - 1),
    TensorProto.INT16: ("INT16", -(2**15), 2**15 - 1),
    TensorProto.UINT16: ("UINT16", 0, 2**16 - 1),
    TensorProto.INT32: ("INT32", -(2**31), 2**31 - 1),
    TensorProto.UINT32: ("UINT32", 0, 2**32 - 1),
    TensorProto.INT64: ("INT64", -(2**63), 2**63 - 1),
    TensorProto.UINT64: ("UINT64", 0, 2**64 - 1),
    TensorProto.INT4: ("INT4", -8, 7),
    TensorProto.UINT4: ("UINT4", 0, 15),
}


@pytest.mark.parametrize("elem_type", list(INT_RANGES))
def test_parse_tensor_int_ranges(elem_type: int) -> None:
    name, low, high = INT_RANGES[elem_type]
    a = parse_tensor(f"[{low}, {high}]", elem_type)
    assert a.dtype == helper.tensor_dtype_to_np_dtype(elem_type)
    assert [int(x) for x in a] == [low, high]
    expected = f"an integer in [{low}, {high}] for {name}"
    for bad in (low - 1, high + 1):
        error = _error(parse_tensor, f"[0, {bad}]", elem_type)
        assert (error.position, error.expected) == (4, expected)
    for bad_text in ("1.5", "nan", "inf", "'1'", "true"):
        error = _error(parse_tensor, f"[[0], [{bad_text}]]", elem_type)
        assert (error.position, error.expected) == (7, expected)


@pytest.mark.parametrize(
    ("text", "elem_type", "position", "expected"),
    [
        ("[[1, 2], [3]]", TensorProto.FLOAT, 9, f"a list of 2 elements {RECT}"),
        ("[[1, 2], 3]", TensorProto.FLOAT, 9, f"a list of 2 elements {RECT}"),
        ("[1, [2]]", TensorProto.FLOAT, 4, f"a scalar {RECT}"),
        ("[[1], [[2]]]", TensorProto.INT32, 7, f"a scalar {RECT}"),
        ("[[], [1]]", TensorProto.INT32, 5, f"a list of 0 elements {RECT}"),
        ("[[1, 2], [3, 4], [5, 6, 7]]", TensorProto.INT32, 17, f"a list of 2 elements {RECT}"),
        ("['a']", TensorProto.FLOAT, 1, "a number within the range of FLOAT"),
        ("[true]", TensorProto.DOUBLE, 1, "a number within the range of DOUBLE"),
        (f"[{10**400}]", TensorProto.DOUBLE, 1, "a number within the range of DOUBLE"),
        ("[1, 70000]", TensorProto.FLOAT16, 4, "a finite number within the range of FLOAT16"),
        ("[-65520]", TensorProto.FLOAT16, 1, "a finite number within the range of FLOAT16"),
        ("[1e39]", TensorProto.FLOAT, 1, "a finite number within the range of FLOAT"),
        ("[2]", TensorProto.BOOL, 1, "true, false, 1 or 0 for BOOL"),
        ("[1.0]", TensorProto.BOOL, 1, "true, false, 1 or 0 for BOOL"),
        ("[true, 'x']", TensorProto.BOOL, 7, "true, false, 1 or 0 for BOOL"),
        ("[-1]", TensorProto.BOOL, 1, "true, false, 1 or 0 for BOOL"),
        ("['a', 1]", TensorProto.STRING, 6, "a quoted string for STRING"),
        ("[true]", TensorProto.STRING, 1, "a quoted string for STRING"),
        ("[1 2]", TensorProto.INT8, 3, "',' or ']'"),
    ],
)
def test_parse_tensor_errors(text: str, elem_type: int, position: int, expected: str) -> None:
    error = _error(parse_tensor, text, elem_type)
    assert (error.position, error.expected) == (position, expected)


@pytest.mark.parametrize(
    ("elem_type", "name"),
    [
        (TensorProto.COMPLEX64, "COMPLEX64"),
        (TensorProto.COMPLEX128, "COMPLEX128"),
        (TensorProto.UNDEFINED, "UNDEFINED"),
        (999, "elem_type 999"),
    ],
)
def test_parse_tensor_unsupported_types(elem_type: int, name: str) -> None:
    error = _error(parse_tensor, "[1]", elem_type)
    expected = f"a tensor type supported for text entry ({name} is not)"
    assert (error.position, error.expected) == (0, expected)


def test_parse_tensor_ml_dtypes() -> None:
    bf = parse_tensor("[0.1, 1e6, -inf, nan]", TensorProto.BFLOAT16)
    assert bf.dtype == helper.tensor_dtype_to_np_dtype(TensorProto.BFLOAT16)
    assert float(bf[1]) == 999424.0 and float(bf[2]) == -math.inf
    f8 = parse_tensor("[448, 464, -1]", TensorProto.FLOAT8E4M3FN)
    assert [float(x) for x in f8] == [448.0, 448.0, -1.0]
    for text, position, expected in [
        ("[0, 470]", 4, "a finite number within the range of FLOAT8E4M3FN"),
        ("[inf]", 1, "a finite number (FLOAT8E4M3FN has no infinity)"),
    ]:
        error = _error(parse_tensor, text, TensorProto.FLOAT8E4M3FN)
        assert (error.position, error.expected) == (position, expected)
    f4 = parse_tensor("[[6, -0.5], [1.5, 0]]", TensorProto.FLOAT4E2M1)
    assert f4.shape == (2, 2) and float(f4[0, 0]) == 6.0
    for text, position, expected in [
        ("[6.5]", 1, "a number within ±6.0 for FLOAT4E2M1"),
        ("[1, -7]", 4, "a number within ±6.0 for FLOAT4E2M1"),
        ("[nan]", 1, "a number (FLOAT4E2M1 has no nan)"),
        ("[-inf]", 1, "a finite number (FLOAT4E2M1 has no infinity)"),
    ]:
        error = _error(parse_tensor, text, TensorProto.FLOAT4E2M1)
        assert (error.position, error.expected) == (position, expected)
    i4 = parse_tensor("[-8, 7]", TensorProto.INT4)
    assert [int(x) for x in i4] == [-8, 7]


# --- format_tensor -----------------------------------------------------------------------


def test_format_tensor() -> None:
    assert format_tensor(np.array([[1, 2], [3, 4]], dtype=np.int8)) == "[[1, 2], [3, 4]]"
    assert format_tensor(np.array(2.5, dtype=np.float32)) == "2.5"
    assert format_tensor(np.array([0.1], dtype=np.float32)) == "[0.1]"
    assert format_tensor(np.array([True, False])) == "[true, false]"
    assert format_tensor(np.array([np.nan, -np.inf, -0.0])) == "[nan, -inf, -0.0]"
    assert format_tensor(np.zeros((0,), dtype=np.int32)) == "[]"
    assert format_tensor(np.zeros((2, 0), dtype=np.int32)) == "[[], []]"
    assert format_tensor(np.zeros((0, 3), dtype=np.int32)) == "[]"  # documented: lossy
    assert format_tensor(np.array(["a'b", "c"], dtype=object)) == "['a\\'b', 'c']"
    assert format_tensor(np.array([b"x", b"\xff"], dtype=object)) == "['x', '\ufffd']"
    assert format_tensor(np.array(["u"])) == "['u']"


def test_format_tensor_max_elements() -> None:
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    full = "[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]"
    assert format_tensor(a, max_elements=12) == full
    assert format_tensor(a, max_elements=100) == full
    assert format_tensor(a, max_elements=5) == "[[0, 1, 2, 3], [4, ...]]"
    assert format_tensor(a, max_elements=4) == "[[0, 1, 2, 3], ...]"
    assert format_tensor(a, max_elements=8) == "[[0, 1, 2, 3], [4, 5, 6, 7], ...]"
    assert format_tensor(a, max_elements=0) == "[...]"
    assert format_tensor(np.arange(5), max_elements=2) == "[0, 1, ...]"
    assert format_tensor(np.array(3), max_elements=0) == "..."
    assert format_tensor(np.array(3), max_elements=1) == "3"
    assert format_tensor(np.zeros((2, 0)), max_elements=0) == "[[], []]"
    for n in range(12):
        with pytest.raises(ValueSyntaxError):
            parse_tensor(format_tensor(a, max_elements=n), TensorProto.INT32)
    with pytest.raises(ValueError, match="max_elements"):
        format_tensor(a, max_elements=-1)


def test_format_tensor_rejects_complex() -> None:
    with pytest.raises(ValueError, match="complex"):
        format_tensor(np.array([1j]))


STANDARD = [
    TensorProto.BOOL,
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.INT16,
    TensorProto.UINT16,
    TensorProto.INT32,
    TensorProto.UINT32,
    TensorProto.INT64,
    TensorProto.UINT64,
    TensorProto.FLOAT16,
    TensorProto.FLOAT,
    TensorProto.DOUBLE,
]


def _assert_bit_exact(back: np.ndarray, array: np.ndarray) -> None:
    assert back.dtype == array.dtype and back.shape == array.shape
    if array.dtype.kind == "f":
        np.testing.assert_array_equal(back, array)  # NaN positions agree
        nan = np.isnan(array)
        assert np.array_equal(np.signbit(back[nan]), np.signbit(array[nan]))
        bits = f"u{array.dtype.itemsize}"
        assert np.array_equal(back[~nan].view(bits), array[~nan].view(bits))  # -0.0 too
    else:
        assert np.array_equal(back, array)


@pytest.mark.parametrize("elem_type", STANDARD)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_tensor_round_trip(elem_type: int, data: st.DataObject) -> None:
    dtype = helper.tensor_dtype_to_np_dtype(elem_type)
    shape = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)
    array = data.draw(hnp.arrays(dtype, shape))
    _assert_bit_exact(parse_tensor(format_tensor(array), elem_type), array)


@pytest.mark.parametrize(
    "elem_type",
    [
        TensorProto.FLOAT16,
        TensorProto.BFLOAT16,
        TensorProto.FLOAT8E4M3FN,
        TensorProto.FLOAT8E4M3FNUZ,
        TensorProto.FLOAT8E5M2,
        TensorProto.FLOAT8E5M2FNUZ,
        TensorProto.FLOAT4E2M1,
    ],
)
def test_small_float_round_trip_every_value(elem_type: int) -> None:
    dtype = helper.tensor_dtype_to_np_dtype(elem_type)
    every = np.arange(2 ** (8 * dtype.itemsize), dtype=f"u{dtype.itemsize}").view(dtype)
    if elem_type == TensorProto.FLOAT4E2M1:
        every = every[:16]  # only the low 4 bits are meaningful
    with np.errstate(invalid="ignore"):
        every = every[~np.isnan(every.astype(np.float64))]
    back = parse_tensor(format_tensor(every), elem_type)
    assert back.tobytes() == every.tobytes()


def test_int4_round_trip() -> None:
    dtype = helper.tensor_dtype_to_np_dtype(TensorProto.INT4)
    array = np.arange(-8, 8).astype(dtype).reshape(4, 4)
    back = parse_tensor(format_tensor(array), TensorProto.INT4)
    assert back.dtype == dtype and np.array_equal(back.astype(np.int8), array.astype(np.int8))


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.int16, hnp.array_shapes(min_dims=1, max_dims=3)), st.integers(0, 50))
def test_preview_is_never_parseable(array: np.ndarray, limit: int) -> None:
    text = format_tensor(array, max_elements=limit)
    if array.size <= limit:
        assert text == format_tensor(array)
    else:
        assert "..." in text
        with pytest.raises(ValueSyntaxError):
            parse_value(text)


# --- parse_list --------------------------------------------------------------------------


def test_parse_list() -> None:
    ints = parse_list("[1, -2, 3.0, 1e2]", "ints")
    assert ints == [1, -2, 3, 100] and all(type(x) is int for x in ints)
    floats = parse_list("[0.1, 1, -inf, nan]", "floats")
    assert floats[:3] == [0.1, 1.0, -math.inf] and math.isnan(floats[3])  # type: ignore[arg-type]
    assert all(type(x) is float for x in floats)
    assert parse_list("['a', 'It\\'s']", "strings") == ["a", "It's"]
    assert parse_list("[]", "ints") == [] and parse_list(" [ ] ", "strings") == []


@pytest.mark.parametrize(
    ("text", "kind", "position", "expected"),
    [
        ("1", "ints", 0, "a list '[...]'"),
        ("  'a'", "strings", 2, "a list '[...]'"),
        ("[1, [2]]", "ints", 4, "an integer (the list must be flat)"),
        ("[[]]", "floats", 1, "a number (the list must be flat)"),
        ("['a', ['b']]", "strings", 6, "a quoted string (the list must be flat)"),
        ("[1, 1.5]", "ints", 4, f"an integer in [{-(2**63)}, {2**63 - 1}] for INT64"),
        (f"[{2**63}]", "ints", 1, f"an integer in [{-(2**63)}, {2**63 - 1}] for INT64"),
        ("[true]", "ints", 1, f"an integer in [{-(2**63)}, {2**63 - 1}] for INT64"),
        ("['1']", "ints", 1, f"an integer in [{-(2**63)}, {2**63 - 1}] for INT64"),
        ("[1, 1e39]", "floats", 4, "a finite number within the range of FLOAT"),
        ("[false]", "floats", 1, "a number within the range of FLOAT"),
        ("['x']", "floats", 1, "a number within the range of FLOAT"),
        ("['a', 1]", "strings", 6, "a quoted string for STRING"),
        ("[1,", "ints", 3, VALUE),
    ],
)
def test_parse_list_errors(text: str, kind: str, position: int, expected: str) -> None:
    error = _error(parse_list, text, kind)
    assert (error.position, error.expected) == (position, expected)


def test_parse_list_bad_kind() -> None:
    with pytest.raises(ValueError, match="kind"):
        parse_list("[1]", "graphs")


def test_parse_list_floats_unrounded() -> None:
    assert parse_list("[0.1]", "floats") == [0.1]
    assert format_value(parse_list("[0.1, 2]", "floats")) == "[0.1, 2.0]"  # type: ignore[arg-type]
