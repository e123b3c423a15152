"""The open path's shortcuts (issue 15 point 5): the load walk also says whether a tensor
may be external, so the external-data check runs only then; tensors of the common kind are
checked in one go. Neither lets through anything the full checks refuse."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.models import chain_model, subgraph_model
from onnx import TensorProto, helper, numpy_helper

from designer.core.errors import ModelLoadError
from designer.core.io import load as load_module
from designer.core.io import read_model
from designer.core.tensor_sizes import tensor_bytes_needed
from designer.core.validate import ModelProblem, _Walker, check_model, model_problem


def _spy_external(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = load_module._check_external

    def spy(model: onnx.ModelProto, path: Path, base_dir: Path) -> None:
        calls.append(str(path))
        real(model, path, base_dir)

    monkeypatch.setattr(load_module, "_check_external", spy)
    return calls


def test_weights_that_look_like_external_markers_skip_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raw weights holding the bytes of "data_location = EXTERNAL" and a tensor named
    "location" (what the old byte test took for external data) are inline: no check."""
    model = chain_model()
    marker = np.frombuffer(b"\x70\x01" * 12, dtype=np.float32).reshape(2, 3)
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(marker, "W"))
    model.graph.node[0].name = "location"
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    assert b"\x70\x01" in path.read_bytes() and b"location" in path.read_bytes()
    calls = _spy_external(monkeypatch)
    read_model(path)
    assert calls == []
    assert check_model(model).maybe_external is False


def test_external_tensors_are_still_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = chain_model()
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.ones((64, 64), np.float32), "W"))
    model.graph.initializer[0].dims[:] = [64, 64]
    path = tmp_path / "m.onnx"
    onnx.save(model, path, save_as_external_data=True, size_threshold=0, location="w.bin")
    calls = _spy_external(monkeypatch)
    read_model(path)
    assert calls == [str(path)]
    (tmp_path / "w.bin").write_bytes(b"short")
    with pytest.raises(ModelLoadError, match=r"w\.bin"):
        read_model(path)


def _external_without_location(tensor: onnx.TensorProto) -> None:
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL


def test_external_tensor_in_a_subgraph_without_location_is_refused(tmp_path: Path) -> None:
    model = subgraph_model()
    then_branch = model.graph.node[1].attribute[0].g
    then_branch.initializer.append(numpy_helper.from_array(np.ones(2, np.float32), "inner_w"))
    _external_without_location(then_branch.initializer[0])
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(ModelLoadError, match="names no data file"):
        read_model(path)


def test_tensor_in_an_attribute_of_another_type_is_still_checked(tmp_path: Path) -> None:
    """An attribute typed FLOAT that also holds an external tensor: the load walk does not
    look into it, so the external check must (as it always did)."""
    model = chain_model()
    attr = helper.make_attribute("alpha", 1.0)
    attr.t.CopyFrom(numpy_helper.from_array(np.ones(2, np.float32), "hidden"))
    _external_without_location(attr.t)
    model.graph.node[0].attribute.append(attr)
    assert check_model(model).maybe_external is True
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(ModelLoadError, match="names no data file"):
        read_model(path)


@pytest.mark.parametrize(
    ("dtype", "dims", "raw", "words"),
    [
        (TensorProto.FLOAT, [2, 3], b"\0" * 24, None),
        (TensorProto.FLOAT, [2, 3], b"\0" * 20, "need 24 bytes of data, it holds 20"),
        (TensorProto.INT4, [3], b"\0" * 2, None),
        (TensorProto.INT4, [3], b"\0" * 1, "need 2 bytes of data, it holds 1"),
        (TensorProto.FLOAT, [0, 3], b"", None),
        (TensorProto.FLOAT, [2, -3], b"\0" * 24, "dimension -3 is negative"),
        (TensorProto.INT4, [2**50, 2], b"\0" * 8, "too large"),
        (TensorProto.FLOAT, [1] * 65, b"\0" * 4, "rank 65 is over 64"),
        (TensorProto.UNDEFINED, [2], b"\0" * 8, "data type 0"),
        (TensorProto.STRING, [2], b"", None),
    ],
)
def test_tensor_checks(dtype: int, dims: list[int], raw: bytes, words: str | None) -> None:
    model = chain_model()
    tensor = model.graph.initializer[0]
    tensor.data_type = dtype
    tensor.dims[:] = dims
    tensor.raw_data = raw
    problem = model_problem(model)
    if words is None:
        assert problem is None
    else:
        assert problem is not None and words in problem and "'W'" in problem, problem


def test_node_text_checks_name_the_node() -> None:
    model = chain_model()
    data = model.SerializeToString().replace(b"relu1", b"\xffelu1")
    broken = onnx.ModelProto.FromString(data)
    problem = model_problem(broken)
    assert problem is not None and "not valid UTF-8" in problem


def _verdict(check: object, tensor: onnx.TensorProto) -> str | None:
    try:
        check(tensor, "initializer")  # type: ignore[operator]
    except ModelProblem as exc:
        return str(exc)
    return None


def test_fast_tensor_check_agrees_with_the_full_one() -> None:
    """For every data type, shapes and data lengths around the right one: the common-case
    test says what the full test says."""
    walker = _Walker()
    for dtype in sorted(TensorProto.DataType.values()):
        for dims in ([], [0], [3], [2, 5], [7, 1, 3], [2**25, 2**25], [-1, 4], [-2, -3]):
            for delta in (-1, 0, 1):
                tensor = onnx.TensorProto(name="t", data_type=dtype, dims=dims)
                needed = tensor_bytes_needed(tensor) if min(dims, default=0) >= 0 else 4
                length = (needed or 0) + delta
                if 0 <= length < 2**20:
                    tensor.raw_data = b"\0" * length
                want = _verdict(walker._tensor, tensor)
                assert _verdict(walker.tensor, tensor) == want, (dtype, dims, delta, want)
