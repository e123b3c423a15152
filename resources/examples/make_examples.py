"""Regenerate the bundled example models: ``python resources/examples/make_examples.py``.

tiny_cnn.onnx: a small image classifier (Conv/Relu/MaxPool/…/Gemm/Softmax) with seeded
random weights; valid under onnx.checker's full check.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def tiny_cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(7)

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)

    inits = [
        weight("conv1_w", 8, 3, 3, 3),
        weight("conv1_b", 8),
        weight("conv2_w", 16, 8, 3, 3),
        weight("conv2_b", 16),
        weight("fc_w", 16, 10),
        weight("fc_b", 10),
    ]
    nodes = [
        helper.make_node(
            "Conv", ["input", "conv1_w", "conv1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node(
            "MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]
        ),
        helper.make_node(
            "Conv", ["p1", "conv2_w", "conv2_b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc"),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx-designer examples"
    )
    model.ir_version = 8
    model.doc_string = "A tiny CNN classifier bundled with ONNX Designer."
    onnx.checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    here = Path(__file__).parent
    onnx.save(tiny_cnn(), here / "tiny_cnn.onnx")
    print("wrote", here / "tiny_cnn.onnx")
