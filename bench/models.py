"""Generated models for benchmarks: residual conv blocks of any size, with real weights."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def residual_model(node_count: int, channels: int = 8, seed: int = 0) -> onnx.ModelProto:
    """A valid model of about ``node_count`` nodes: repeated Conv→BatchNorm-free Relu→Add
    residual blocks (4 nodes each) on a [1, C, 16, 16] input, each conv with its own weight."""
    rng = np.random.default_rng(seed)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    current = "input"
    block = 0
    while len(nodes) + 4 <= max(node_count, 4):
        w = numpy_helper.from_array(
            (rng.standard_normal((channels, channels, 3, 3)) * 0.05).astype(np.float32), f"w{block}"
        )
        b = numpy_helper.from_array(np.zeros(channels, np.float32), f"b{block}")
        inits += [w, b]
        c, r, s, a = (f"conv{block}", f"relu{block}", f"scale{block}", f"add{block}")
        nodes += [
            helper.make_node("Conv", [current, w.name, b.name], [c], name=c, pads=[1, 1, 1, 1]),
            helper.make_node("Relu", [c], [r], name=r),
            helper.make_node("Mul", [r, "half"], [s], name=s),
            helper.make_node("Add", [current, s], [a], name=a),
        ]
        current = a
        block += 1
    inits.append(numpy_helper.from_array(np.array(0.5, np.float32), "half"))
    graph = helper.make_graph(
        nodes,
        "residual",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, channels, 16, 16])],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, [1, channels, 16, 16])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model
