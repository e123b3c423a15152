"""Generated fills, .npy loading and external references for new initializers (I-2, I-3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T

from designer.core.io.external import tensor_array
from designer.core.tensorgen import (
    TENSOR_TYPES,
    Fill,
    TensorGenError,
    external_tensor,
    fill_problem,
    generate,
    load_npy,
    make_tensor,
    parse_shape,
)


@pytest.mark.parametrize(
    ("fill", "allowed", "refused"),
    [
        (
            Fill.STANDARD_NORMAL,
            [T.FLOAT, T.FLOAT16, T.BFLOAT16, T.DOUBLE],
            [T.FLOAT8E4M3FN, T.INT8],
        ),
        (Fill.ZEROS, list(TENSOR_TYPES), []),
        (Fill.UNIFORM_POSITIVE, [T.INT8, T.UINT8, T.INT64, T.UINT64], [T.FLOAT, T.BOOL]),
        (Fill.UNIFORM_NEGATIVE, [T.INT8, T.INT16, T.INT32, T.INT64], [T.UINT8, T.FLOAT]),
    ],
)
def test_fill_rules(fill: Fill, allowed: list[int], refused: list[int]) -> None:
    for elem_type in allowed:
        assert fill_problem(fill, elem_type) is None
        array = generate((2, 3), elem_type, fill, np.random.default_rng(0))
        assert array.shape == (2, 3)
        tensor = make_tensor("t", array, elem_type)
        assert tensor.data_type == elem_type
    for elem_type in refused:
        problem = fill_problem(fill, elem_type)
        assert problem is not None and onnx.TensorProto.DataType.Name(elem_type) in problem
        with pytest.raises(TensorGenError):
            generate((2,), elem_type, fill)


def test_random_signs() -> None:
    rng = np.random.default_rng(1)
    assert (generate((100,), T.UINT8, Fill.UNIFORM_POSITIVE, rng) > 0).all()
    negative = generate((100,), T.INT8, Fill.UNIFORM_NEGATIVE, rng)
    assert (negative < 0).all() and negative.dtype == np.int8
    assert generate((), T.STRING, Fill.ZEROS).shape == ()


def test_parse_shape() -> None:
    assert parse_shape("[1, 2, 3, 4]") == (1, 2, 3, 4)
    assert parse_shape("[]") == ()
    for bad, words in (
        ("[1, -2]", "dimension 1"),
        ("3", "list"),
        ("[1,", "position"),
        ("[1.5]", "dimension 0"),
    ):
        with pytest.raises(TensorGenError, match=words):
            parse_shape(bad)


def test_load_npy_checks_dtype(tmp_path: Path) -> None:
    path = tmp_path / "w.npy"
    np.save(path, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert load_npy(path, T.FLOAT).shape == (2, 3)
    with pytest.raises(TensorGenError, match=r"float32.*INT64 needs int64"):
        load_npy(path, T.INT64)
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(TensorGenError, match=r"not a \.npy file"):
        load_npy(tmp_path / "junk.npy", T.FLOAT)
    with pytest.raises(TensorGenError, match="no such file"):
        load_npy(tmp_path / "missing.npy", T.FLOAT)


def test_external_tensor(tmp_path: Path) -> None:
    data = np.arange(12, dtype=np.float32)
    (tmp_path / "w.bin").write_bytes(b"\0" * 8 + data.tobytes())
    tensor = external_tensor("w", T.FLOAT, (3, 4), "w.bin", 8, None, tmp_path)
    assert np.array_equal(tensor_array(tensor, tmp_path).ravel(), data)
    with pytest.raises(TensorGenError, match="save the model first"):
        external_tensor("w", T.FLOAT, (3, 4), "w.bin", 8, None, None)
    with pytest.raises(TensorGenError, match="needs 48 bytes, not 40"):
        external_tensor("w", T.FLOAT, (3, 4), "w.bin", 8, 40, tmp_path)
    with pytest.raises(TensorGenError, match="only 56"):
        external_tensor("w", T.FLOAT, (3, 4), "w.bin", 16, None, tmp_path)
    with pytest.raises(TensorGenError, match="outside"):
        external_tensor("w", T.FLOAT, (3, 4), "../w.bin", 0, None, tmp_path)
    with pytest.raises(TensorGenError, match="missing"):
        external_tensor("w", T.FLOAT, (3, 4), "nope.bin", 0, None, tmp_path)
