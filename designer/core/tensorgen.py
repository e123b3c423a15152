"""Make initializer values (SPEC I-2, I-3): generated fills, ``.npy`` files, external data.

Qt-free. Every function checks its input and raises :class:`TensorGenError` with a message a
user can act on; nothing here changes a document (the caller wraps the result in an edit).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from designer.core.errors import DesignerError, ValueSyntaxError
from designer.core.io.external import external_problem
from designer.core.values import parse_value

T = onnx.TensorProto

#: Tensor types offered for initializers, in the order a user looks for them.
TENSOR_TYPES: tuple[int, ...] = (
    T.FLOAT,
    T.FLOAT16,
    T.BFLOAT16,
    T.DOUBLE,
    T.INT8,
    T.INT16,
    T.INT32,
    T.INT64,
    T.UINT8,
    T.UINT16,
    T.UINT32,
    T.UINT64,
    T.BOOL,
    T.STRING,
    T.FLOAT8E4M3FN,
    T.FLOAT8E4M3FNUZ,
    T.FLOAT8E5M2,
    T.FLOAT8E5M2FNUZ,
)

_FLOATS = {
    T.FLOAT,
    T.FLOAT16,
    T.BFLOAT16,
    T.DOUBLE,
    T.FLOAT8E4M3FN,
    T.FLOAT8E4M3FNUZ,
    T.FLOAT8E5M2,
    T.FLOAT8E5M2FNUZ,
}
_SIGNED = {T.INT8, T.INT16, T.INT32, T.INT64}
_UNSIGNED = {T.UINT8, T.UINT16, T.UINT32, T.UINT64}

#: Largest magnitude a random integer fill uses (keeps values readable and small types happy).
RANDOM_INT_LIMIT = 100


class TensorGenError(DesignerError):
    """A fill, shape, file or external reference cannot make the requested tensor."""


class Fill(Enum):
    STANDARD_NORMAL = "Standard normal"
    ZEROS = "Zeros"
    UNIFORM_POSITIVE = "Uniform random positive"
    UNIFORM_NEGATIVE = "Uniform random negative"


def type_name(elem_type: int) -> str:
    """``"FLOAT"`` for ``TensorProto.FLOAT`` (``elem_type N`` for unknown numbers)."""
    try:
        return str(T.DataType.Name(elem_type))
    except ValueError:
        return f"elem_type {elem_type}"


def np_dtype(elem_type: int) -> np.dtype[Any]:
    """The numpy dtype holding values of ONNX ``elem_type``."""
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, ValueError, TypeError):
        raise TensorGenError(f"{type_name(elem_type)} has no numpy equivalent") from None


def fill_problem(fill: Fill, elem_type: int) -> str | None:
    """Why ``fill`` cannot make ``elem_type`` values (None when it can): standard normal needs
    a floating type of 2+ bytes, uniform positive an integer type, uniform negative a signed
    integer type; zeros works for every type."""
    name = type_name(elem_type)
    if fill is Fill.ZEROS:
        return None
    if fill is Fill.STANDARD_NORMAL:
        if elem_type in _FLOATS and np_dtype(elem_type).itemsize >= 2:
            return None
        return f"standard normal needs a floating type of 2 or more bytes, not {name}"
    if fill is Fill.UNIFORM_POSITIVE:
        if elem_type in _SIGNED | _UNSIGNED:
            return None
        return f"uniform random positive needs an integer type, not {name}"
    if elem_type in _SIGNED:
        return None
    return f"uniform random negative needs a signed integer type, not {name}"


def parse_shape(text: str) -> tuple[int, ...]:
    """Parse a shape written ``[1, 2, 3, 4]`` (``[]`` for a scalar); dims must be ints ≥ 0."""
    try:
        value = parse_value(text)
    except ValueSyntaxError as exc:
        raise TensorGenError(f"shape: {exc}") from None
    if not isinstance(value, list):
        raise TensorGenError("shape: expected a list of dimensions such as [1, 2, 3, 4]")
    dims: list[int] = []
    for i, dim in enumerate(value):
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 0:
            raise TensorGenError(f"shape: dimension {i} must be an integer ≥ 0, not {dim!r}")
        dims.append(dim)
    return tuple(dims)


def element_count(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def generate(
    shape: tuple[int, ...],
    elem_type: int,
    fill: Fill,
    rng: np.random.Generator | None = None,
    max_elements: int = 1 << 28,
) -> np.ndarray:
    """A new array of ``shape`` and ``elem_type`` filled by ``fill`` (see :func:`fill_problem`).

    Costs O(elements); refuses more than ``max_elements`` (256 Mi by default)."""
    problem = fill_problem(fill, elem_type)
    if problem is not None:
        raise TensorGenError(problem)
    count = element_count(shape)
    if count > max_elements:
        raise TensorGenError(f"{count} elements is more than the {max_elements} allowed")
    dtype = np_dtype(elem_type)
    rng = rng or np.random.default_rng()
    if fill is Fill.ZEROS:
        if elem_type == T.STRING:
            return np.full(shape, "", dtype=object)
        return np.zeros(shape, dtype=dtype)
    if fill is Fill.STANDARD_NORMAL:
        return rng.standard_normal(shape).astype(dtype)
    high = min(RANDOM_INT_LIMIT, int(np.iinfo(dtype).max))
    values = rng.integers(1, high, size=shape, endpoint=True)
    if fill is Fill.UNIFORM_NEGATIVE:
        values = -values
    return values.astype(dtype)


def check_array(array: np.ndarray, elem_type: int, what: str = "the values") -> np.ndarray:
    """``array`` if its dtype is exactly the one of ``elem_type``; else a clear error."""
    expected = np_dtype(elem_type)
    if elem_type == T.STRING:
        if array.dtype.kind in "US":
            return array.astype(object)
        if array.dtype == object and all(isinstance(x, str | bytes) for x in array.flat):
            return array
    elif array.dtype == expected:
        return array
    raise TensorGenError(
        f"{what} have dtype {array.dtype}, but {type_name(elem_type)} needs {expected};"
        " choose the matching tensor type or convert the data"
    )


def load_npy(path: Path | str, elem_type: int) -> np.ndarray:
    """Read a ``.npy`` file whose dtype must match ``elem_type`` exactly (no pickles)."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            head = f.read(6)
    except FileNotFoundError:
        raise TensorGenError(f"{path}: no such file") from None
    except OSError as exc:
        raise TensorGenError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not head.startswith((b"\x93NUMPY", b"PK")):  # a .npy, or a .npz (said below)
        # numpy would say "pickled (object) data … allow_pickle=": advice for programmers
        raise TensorGenError(
            f"{path}: not a .npy file (it does not start with NumPy's header); save the "
            "array with numpy.save"
        )
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        if "allow_pickle" in str(exc):
            raise TensorGenError(
                f"{path}: holds Python objects, not numbers; save a numeric array with numpy.save"
            ) from None
        raise TensorGenError(f"{path}: not a readable .npy file ({exc})") from None
    if not isinstance(array, np.ndarray):
        raise TensorGenError(f"{path}: holds several arrays; save one array with numpy.save")
    return check_array(array, elem_type, f"{path.name}")


def make_tensor(name: str, array: np.ndarray, elem_type: int) -> onnx.TensorProto:
    """A TensorProto ``name`` holding ``array`` as ``elem_type`` (dtype checked)."""
    array = check_array(np.asarray(array), elem_type)
    tensor = numpy_helper.from_array(array, name)
    if tensor.data_type != elem_type:
        raise TensorGenError(
            f"the values became {type_name(tensor.data_type)}, not {type_name(elem_type)}"
        )
    return tensor


def external_tensor(
    name: str,
    elem_type: int,
    shape: tuple[int, ...],
    location: str,
    offset: int,
    length: int | None,
    base_dir: Path | None,
) -> onnx.TensorProto:
    """A TensorProto ``name`` whose values are ``length`` bytes at ``offset`` of ``location``
    (a file relative to the saved model's folder ``base_dir``).

    Refused for a never-saved model (``base_dir`` None), for paths outside the model folder,
    missing files, ranges past the end of the file and lengths that do not match the shape.
    """
    if base_dir is None:
        raise TensorGenError(
            "external data is relative to the model file; save the model first,"
            " then create the external initializer"
        )
    if elem_type == T.STRING:
        raise TensorGenError("STRING tensors cannot be stored as external data")
    if offset < 0 or (length is not None and length < 0):
        raise TensorGenError("offset and length must not be negative")
    itemsize = np_dtype(elem_type).itemsize
    needed = element_count(shape) * itemsize
    if length is None:
        length = needed
    if length != needed:
        raise TensorGenError(
            f"shape {list(shape)} of {type_name(elem_type)} needs {needed} bytes, not {length}"
        )
    tensor = onnx.TensorProto(name=name, data_type=elem_type, dims=list(shape))
    tensor.data_location = T.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        tensor.external_data.add(key=key, value=value)
    problem = external_problem(tensor, base_dir)
    if problem is not None:
        raise TensorGenError(problem)
    return tensor
