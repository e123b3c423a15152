"""The P-2 value syntax: parse and format the text typed into attribute and tensor fields.

Grammar (whitespace is allowed between any two tokens)::

    value  := list | string | number | 'true' | 'false'
    list   := '[' ( value ( ',' value )* )? ']'
    string := "'" ( any char but ' or \\ | '\\' one of ' \\ n t )* "'"
    number := [+-]? ( digits [ '.' digits? ] | '.' digits ) [ [eE] [+-]? digits ] | [+-]? inf | nan

``true``, ``false``, ``inf``, ``infinity`` and ``nan`` are case-insensitive. A number without
``.`` or an exponent is an ``int``; every other number is a ``float``. Every error is a
:class:`~designer.core.errors.ValueSyntaxError` naming the 0-based position and what was
expected there. The parser is hand-written recursive descent; nothing is evaluated.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, cast

import numpy as np
import onnx

from designer.core.errors import ValueSyntaxError

Scalar = int | float | bool | str
Value = Scalar | list["Value"]

_MAX_DEPTH = 64
_SPACE = re.compile(r"\s*")
_DIGITS = re.compile(r"[0-9]*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN = re.compile(r"[^'\\]*")
_ESCAPES = {"'": "'", "\\": "\\", "n": "\n", "t": "\t"}
_VALUE = "a value (number, 'string', true, false or [list])"
_RECTANGULAR = "(nested lists must be rectangular)"


def _end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``pattern`` (which matches the empty string too) stops matching from ``pos``."""
    match = pattern.match(text, pos)
    return match.end() if match else pos


@dataclass(slots=True)
class _Item:
    """A parsed value with the 0-based positions where its text starts and ends."""

    pos: int
    value: Scalar | list[_Item]
    end: int


class _Parser:
    """Recursive-descent parser over one text; :meth:`document` parses all of it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, expected: str, pos: int | None = None) -> NoReturn:
        raise ValueSyntaxError(self.text, self.pos if pos is None else pos, expected)

    def skip(self) -> None:
        self.pos = _end(_SPACE, self.text, self.pos)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def document(self) -> _Item:
        self.skip()
        item = self.value(0, _VALUE)
        self.skip()
        if self.pos < len(self.text):
            self.error("end of text")
        return item

    def value(self, depth: int, expected: str) -> _Item:
        c = self.peek()
        if c == "[":
            return self.list(depth)
        if c == "'":
            return self.string()
        if c and (c in "+-." or (c.isascii() and (c.isalnum() or c == "_"))):
            return self.scalar()
        self.error(expected)

    def list(self, depth: int) -> _Item:
        if depth >= _MAX_DEPTH:
            self.error(f"at most {_MAX_DEPTH} levels of nested lists")
        start = self.pos
        self.pos += 1
        self.skip()
        items: list[_Item] = []
        if self.peek() == "]":
            self.pos += 1
            return _Item(start, items, self.pos)
        while True:
            items.append(self.value(depth + 1, _VALUE if items else f"{_VALUE} or ']'"))
            self.skip()
            c = self.peek()
            if c not in (",", "]"):
                self.error("',' or ']'")
            self.pos += 1
            if c == "]":
                return _Item(start, items, self.pos)
            self.skip()

    def string(self) -> _Item:
        start, text, parts = self.pos, self.text, []
        self.pos += 1
        while True:
            end = _end(_PLAIN, text, self.pos)
            parts.append(text[self.pos : end])
            self.pos = end
            if end >= len(text):
                self.error('a closing quote "\'"')
            self.pos += 1
            if text[end] == "'":
                return _Item(start, "".join(parts), self.pos)
            escape = text[end + 1 : end + 2]
            if escape not in _ESCAPES:
                self.error("one of ' \\ n t after a backslash")
            parts.append(_ESCAPES[escape])
            self.pos += 1

    def scalar(self) -> _Item:
        text, start = self.text, self.pos
        p = start + (text[start] in "+-")
        word = _WORD.match(text, p)
        if word:
            name = word.group().lower()
            self.pos = word.end()
            if name in ("inf", "infinity", "nan"):
                return _Item(start, float(text[start : self.pos]), self.pos)
            if name in ("true", "false") and p == start:
                return _Item(start, name == "true", self.pos)
            self.error("a number" if p > start else _VALUE, p)
        end = _end(_DIGITS, text, p)
        has_int, is_float = end > p, False
        if text[end : end + 1] == ".":
            is_float, p = True, end + 1
            end = _end(_DIGITS, text, p)
            if not has_int and end == p:
                self.error("a digit", p)
        elif not has_int:
            self.error("a digit", end)
        if text[end : end + 1] in ("e", "E"):
            is_float, p = True, end + 1 + (text[end + 1 : end + 2] in ("+", "-"))
            end = _end(_DIGITS, text, p)
            if end == p:
                self.error("a digit in the exponent", p)
        self.pos = end
        try:
            number = float(text[start:end]) if is_float else int(text[start:end])
        except ValueError:  # more digits than int() converts
            self.error("a number of at most 4300 digits", start)
        if isinstance(number, float) and math.isinf(number):
            self.error("a number within the range of a double", start)
        return _Item(start, number, end)


def _plain(item: _Item) -> Value:
    if isinstance(item.value, list):
        return [_plain(child) for child in item.value]
    return item.value


def parse_value(text: str) -> Value:
    """Parse ``text`` into nested Python lists of ``int``/``float``/``bool``/``str``."""
    return _plain(_Parser(text).document())


def _quote(text: str) -> str:
    for raw, escaped in (("\\", "\\\\"), ("'", "\\'"), ("\n", "\\n"), ("\t", "\\t")):
        text = text.replace(raw, escaped)
    return f"'{text}'"


def _special_float(value: float) -> str | None:
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return None


def format_value(value: Value | np.ndarray | np.generic) -> str:
    """Format ``value`` so that :func:`parse_value` gives it back (floats use ``repr``).

    Arrays and numpy scalars are formatted with :func:`format_tensor`.
    """
    if isinstance(value, np.ndarray | np.generic):
        return format_tensor(np.asarray(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _special_float(value) or repr(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_value(item) for item in value) + "]"
    raise TypeError(f"cannot format a value of type {type(value).__name__}")


def _format_float(x: Any, dtype: np.dtype[Any]) -> str:
    number = float(x)
    special = _special_float(number)
    if special is not None:
        return special
    text = str(x)  # numpy's shortest text for the dtype; fall back when it does not round-trip
    text = text if any(c in text for c in ".e") else text + ".0"
    if np.asarray(float(text)).astype(dtype).tobytes() == np.asarray(x, dtype).tobytes():
        return text
    return repr(number)


def _format_object(x: object) -> str:
    if isinstance(x, bytes):  # numpy_helper.to_array gives bytes for STRING tensors
        return _quote(x.decode("utf-8", errors="replace"))
    return _quote(str(x)) if isinstance(x, str) else format_value(x)  # type: ignore[arg-type]


def _formatter(dtype: np.dtype[Any]) -> Callable[[Any], str]:
    if dtype == np.bool_:
        return lambda x: "true" if x else "false"
    if dtype.kind in "iu" or dtype.name in ("int4", "uint4", "int2", "uint2"):
        return lambda x: str(int(x))
    if dtype.kind == "f" or dtype.name.startswith(("float", "bfloat")):
        return functools.partial(_format_float, dtype=dtype)
    if dtype.kind in "OUS":
        return _format_object
    raise ValueError(f"cannot format a tensor of dtype {dtype}")


def format_tensor(array: np.ndarray, max_elements: int | None = None) -> str:
    """Format ``array`` as nested lists that :func:`parse_tensor` reads back bit-exactly.

    Round trips keep every value but NaN payloads; an axis of length 0 ends the nesting, so
    shape ``(0, 3)`` formats as ``[]``. With ``max_elements``, an array of more elements is a
    *preview*: only the first ``max_elements`` (in C order) are written and each list cut
    short ends in ``...``, e.g. ``[[1, 2, 3], [4, ...]]``; such text is deliberately not valid
    value syntax.
    """
    array = np.asarray(array)
    fmt = _formatter(array.dtype)
    if max_elements is not None and max_elements < 0:
        raise ValueError("max_elements must be >= 0")
    if array.ndim == 0:
        return "..." if max_elements == 0 else fmt(array[()])
    cut_short = max_elements is not None and array.size > max_elements
    budget = [max_elements if max_elements is not None and cut_short else array.size + 1]

    def nested(part: np.ndarray) -> tuple[str, bool]:
        texts: list[str] = []
        cut = False
        for sub in part:
            if budget[0] <= 0:
                texts.append("...")
                cut = True
            elif part.ndim == 1:
                texts.append(fmt(sub))
                budget[0] -= 1
            else:
                text, cut = nested(sub)
                texts.append(text)
            if cut:
                break
        return "[" + ", ".join(texts) + "]", cut

    return nested(array)[0]


@functools.cache
def _float_limits(dtype: np.dtype[Any]) -> tuple[bool, bool, float]:
    """(has NaN, has infinity, largest finite value) of a floating dtype."""
    if dtype.itemsize > 2:  # float32/float64: IEEE with NaN and infinity
        return True, True, math.inf
    every = np.arange(2 ** (8 * dtype.itemsize), dtype=f"u{dtype.itemsize}").view(dtype)
    with np.errstate(invalid="ignore"):
        values = every.astype(np.float64)
    finite = values[np.isfinite(values)]
    return bool(np.isnan(values).any()), bool(np.isinf(values).any()), float(finite.max())


def _as_int(v: object) -> int | None:
    """``v`` as an int if it is an integer or an integral float (not a bool), else None."""
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _as_float(v: object) -> float | None:
    """``v`` as a float if it is a number (not a bool) that a float can hold, else None."""
    try:
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
    except OverflowError:
        return None


def _tensor_dtype(text: str, elem_type: int) -> tuple[str, np.dtype[Any]]:
    try:
        name = onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        name = f"elem_type {elem_type}"
    unsupported = ValueSyntaxError(
        text, 0, f"a tensor type supported for text entry ({name} is not)"
    )
    if name.startswith(("elem_type", "UNDEFINED", "COMPLEX")):
        raise unsupported
    try:
        return name, np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, ValueError, TypeError, ImportError):
        raise unsupported from None


def _shape_and_leaves(root: _Item, text: str) -> tuple[tuple[int, ...], list[_Item]]:
    """The rectangular shape of ``root`` and its scalars in C order."""
    shape: list[int] = []
    leaves: list[_Item] = []
    node = root
    while isinstance(node.value, list):
        shape.append(len(node.value))
        if not node.value:
            break
        node = node.value[0]

    def check(item: _Item, dims: list[int]) -> None:
        if not dims:
            if isinstance(item.value, list):
                raise ValueSyntaxError(text, item.pos, f"a scalar {_RECTANGULAR}")
            leaves.append(item)
            return
        if not isinstance(item.value, list) or len(item.value) != dims[0]:
            raise ValueSyntaxError(text, item.pos, f"a list of {dims[0]} elements {_RECTANGULAR}")
        for child in item.value:
            check(child, dims[1:])

    check(root, shape)
    return tuple(shape), leaves


class ValueFitError(ValueSyntaxError):
    """Well-formed text with a value that does not fit the tensor type.

    ``expected`` says what would fit there, as for any :class:`ValueSyntaxError`; the
    message names the value as typed and what is wrong with it, e.g.
    ``at position 0: 1.5 is not an integer (INT64)``.
    """

    def __init__(self, text: str, position: int, expected: str, problem: str) -> None:
        super().__init__(text, position, expected)
        self.problem = problem
        self.args = (f"at position {position}: {problem}",)


_TOKEN_LIMIT = 40


def _token(text: str, item: _Item) -> str:
    """The text of ``item`` as typed, cut to about 40 characters."""
    token = text[item.pos : item.end]
    return token if len(token) <= _TOKEN_LIMIT else token[: _TOKEN_LIMIT - 1] + "…"


def _typed_array(text: str, leaves: list[_Item], name: str, dtype: np.dtype[Any]) -> np.ndarray:
    """The flat array of ``leaves`` as ``dtype`` (ONNX type ``name``), each checked to fit."""

    def fail(item: _Item, expected: str, problem: str) -> NoReturn:
        raise ValueFitError(text, item.pos, expected, f"{_token(text, item)} {problem}")

    values: list[Scalar] = []
    if name == "STRING":
        for leaf in leaves:
            if not isinstance(leaf.value, str):
                fail(leaf, "a quoted string for STRING", "is not a quoted string (STRING)")
            values.append(leaf.value)
        return np.array(values, dtype=object)
    if name == "BOOL":
        for leaf in leaves:
            v = leaf.value
            if isinstance(v, float) or (not isinstance(v, bool) and _as_int(v) not in (0, 1)):
                fail(leaf, "true, false, 1 or 0 for BOOL", "is not true, false, 1 or 0 (BOOL)")
            values.append(bool(v))
        return np.array(values, dtype=np.bool_)
    if name.startswith(("INT", "UINT")):
        bits = int(name.removeprefix("U").removeprefix("INT"))
        low, high = (
            (0, 2**bits - 1) if name[0] == "U" else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        )
        expected = f"an integer in [{low}, {high}] for {name}"
        for leaf in leaves:
            integer = _as_int(leaf.value)
            if integer is None:
                fail(leaf, expected, f"is not an integer ({name})")
            if not low <= integer <= high:
                fail(leaf, expected, f"is not in [{low}, {high}] for {name}")
            values.append(integer)
        return np.array(values, dtype=dtype)
    for leaf in leaves:
        number = _as_float(leaf.value)
        if number is None:
            v = leaf.value
            too_big = isinstance(v, int) and not isinstance(v, bool)
            problem = f"is outside the range of {name}" if too_big else f"is not a number ({name})"
            fail(leaf, f"a number within the range of {name}", problem)
        values.append(number)
    source = np.array(values, dtype=np.float64)
    with np.errstate(all="ignore"):
        array = source.astype(dtype)
        back = array.astype(np.float64)
    has_nan, has_inf, largest = _float_limits(dtype)
    finite = np.isfinite(source)
    saturated = finite & (np.abs(source) > largest) & (not (has_nan or has_inf))
    for bad, expected, problem in (
        (
            finite & ~np.isfinite(back),
            f"a finite number within the range of {name}",
            f"is outside the range of {name}",
        ),
        (
            saturated,
            f"a number within ±{largest} for {name}",
            f"is not within ±{largest} for {name}",
        ),
        (
            np.isnan(source) & ~np.isnan(back),
            f"a number ({name} has no nan)",
            f"is not allowed ({name} has no nan)",
        ),
        (
            np.isinf(source) & (back != source),
            f"a finite number ({name} has no infinity)",
            f"is not allowed ({name} has no infinity)",
        ),
    ):
        if bad.any():
            fail(leaves[int(np.flatnonzero(bad)[0])], expected, problem)
    return array


def parse_tensor(text: str, elem_type: int) -> np.ndarray:
    """Parse ``text`` as a tensor of ONNX ``elem_type`` (a ``TensorProto.DataType`` value).

    The shape comes from the nesting, which must be rectangular (a bare scalar gives a 0-d
    array). Values must fit the dtype: integers in range (integral floats like ``2.0`` too),
    floats that do not overflow to infinity (or past the largest value of types without
    one), ``true``/``false``/``1``/``0`` for BOOL, quoted strings for STRING (an object array
    of ``str``). Types without a numpy dtype (complex ones) raise :class:`ValueSyntaxError`.
    """
    name, dtype = _tensor_dtype(text, elem_type)
    root = _Parser(text).document()
    shape, leaves = _shape_and_leaves(root, text)
    return _typed_array(text, leaves, name, dtype).reshape(shape)


def parse_tensor_like(text: str, elem_type: int, before: np.ndarray) -> np.ndarray:
    """:func:`parse_tensor` for ``text`` edited from ``format_tensor(before)``.

    Text cannot show the dims of an empty tensor (shapes ``(0, 4)`` and ``(0,)`` both format
    as ``[]``), so text that formats the same as an empty ``before`` keeps ``before``'s
    shape; any other text gets the shape of its nesting.
    """
    array = parse_tensor(text, elem_type)
    lossy = array.size == 0 and before.size == 0 and array.shape != before.shape
    if lossy and format_tensor(array) == format_tensor(before):
        return array.reshape(before.shape)
    return array


_LIST_KINDS = {
    "ints": (onnx.TensorProto.INT64, "an integer"),
    "floats": (onnx.TensorProto.FLOAT, "a number"),
    "strings": (onnx.TensorProto.STRING, "a quoted string"),
}


def parse_list(text: str, kind: str) -> list[int] | list[float] | list[str]:
    """Parse a flat list for an ONNX INTS, FLOATS or STRINGS attribute (``kind`` names which).

    INTS take integers within int64 (integral floats like ``2.0`` too), FLOATS take numbers
    that stay finite as float32 (returned unrounded), STRINGS take quoted strings.
    """
    if kind not in _LIST_KINDS:
        raise ValueError(f"kind must be 'ints', 'floats' or 'strings', not {kind!r}")
    elem_type, what = _LIST_KINDS[kind]
    root = _Parser(text).document()
    if not isinstance(root.value, list):
        raise ValueSyntaxError(text, root.pos, "a list '[...]'")
    for item in root.value:
        if isinstance(item.value, list):
            raise ValueSyntaxError(text, item.pos, f"{what} (the list must be flat)")
    name, dtype = _tensor_dtype(text, elem_type)
    array = _typed_array(text, root.value, name, dtype)
    if kind == "floats":
        return [float(cast(float, item.value)) for item in root.value]
    return cast(list[int] | list[str], array.tolist())
