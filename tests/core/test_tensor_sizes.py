"""initializer_sizes (one pass over many tensors, used for the parameter counts of module
boxes) gives every tensor's element count and tensor_nbytes, on every tensor of onnx's own
node test models and of the shared exports, and on the odd cases: strings, packed types,
an unknown or undefined data type, negative dims, repeated names."""

from __future__ import annotations

from math import prod

import numpy as np
import onnx
from helpers.models import backend_node_models
from onnx import TensorProto, helper, numpy_helper

from designer.core.io.external import iter_model_tensors
from designer.core.io.load import open_document
from designer.core.tensor_sizes import initializer_sizes, tensor_nbytes
from tests.helpers.shared import MODELS


def expected(tensors: list[TensorProto]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for tensor in tensors:
        out[tensor.name] = (prod(tensor.dims), tensor_nbytes(tensor))
    return out


def test_every_tensor_of_the_backend_models() -> None:
    checked = 0
    for name, model in backend_node_models().items():
        tensors = list(iter_model_tensors(model))
        graph = onnx.GraphProto()
        graph.initializer.extend(tensors)
        assert initializer_sizes(graph.initializer) == expected(tensors), name
        checked += len(tensors)
    assert checked > 1000


def test_the_shared_exports() -> None:
    for path in sorted(MODELS.glob("*.onnx")):
        inits = open_document(path).model.graph.initializer
        assert initializer_sizes(inits) == expected(list(inits)), path.name


def test_odd_tensors() -> None:
    strings = helper.make_tensor("s", TensorProto.STRING, [2], [b"ab", b"cde"])
    packed = helper.make_tensor("i4", TensorProto.INT4, [3], [1, 2, 3])
    unknown = numpy_helper.from_array(np.zeros(4, np.float32), "u")
    unknown.data_type = 999
    undefined = TensorProto(name="x", data_type=TensorProto.UNDEFINED, dims=[5])
    negative = TensorProto(name="n", data_type=TensorProto.FLOAT, dims=[-1, 3])
    scalar = numpy_helper.from_array(np.array(1.5, np.float64), "scalar")
    first = numpy_helper.from_array(np.zeros(2, np.float32), "twice")
    second = numpy_helper.from_array(np.zeros(8, np.int64), "twice")
    tensors = [strings, packed, unknown, undefined, negative, scalar, first, second]
    graph = onnx.GraphProto()
    graph.initializer.extend(tensors)
    sizes = initializer_sizes(graph.initializer)
    assert sizes == expected(tensors)
    assert sizes == {
        "s": (2, 5),
        "i4": (3, 2),
        "u": (4, 0),
        "x": (5, 0),
        "n": (-3, 0),
        "scalar": (1, 8),
        "twice": (8, 64),  # the later one of a name, as a dict built from the field
    }
    assert initializer_sizes(onnx.GraphProto().initializer) == {}
