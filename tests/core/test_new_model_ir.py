"""File > New with an old opset makes a model that can become valid: IR 3 (what opsets 1–8
map to) wants every initializer listed as a graph input, so a model built the normal way
could never pass the checker."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from designer.core.new_model import latest_opset, new_model


@pytest.mark.parametrize("opset", [7, 8])
def test_a_model_built_on_an_old_opset_passes_and_runs(opset: int) -> None:
    model = new_model(opset)
    assert model.ir_version >= 4
    graph = model.graph
    graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2]))
    graph.initializer.append(numpy_helper.from_array(np.ones((2, 2), np.float32), "W"))
    graph.node.append(helper.make_node("MatMul", ["x", "W"], ["y"], name="mm"))
    graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2]))
    onnx.checker.check_model(
        model, full_check=True
    )  # IR 3: "W in initializer but not in graph input"
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {"x": np.ones((1, 2), np.float32)})
    assert out.tolist() == [[2.0, 2.0]]


def test_a_new_opset_keeps_its_own_ir_version() -> None:
    opset = latest_opset()
    expected = helper.find_min_ir_version_for([helper.make_opsetid("", opset)], True)
    assert new_model(opset).ir_version == max(4, expected)
