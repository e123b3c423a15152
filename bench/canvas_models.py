"""A generated transformer decoder stack for the canvas benchmark and tests.

Each layer is an unrolled pre-norm decoder block as exporters write it (about 50 nodes:
decomposed LayerNorm, Q/K/V projections with head reshapes, masked softmax attention, output
projection, GELU feed-forward, two residual Adds). One ``mask`` graph input feeds every layer,
the high fan-out case the canvas draws as one proxy per consumer.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 8
HEADS = 2
NODES_PER_LAYER = 50


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def op(self, op_type: str, inputs: list[str], prefix: str, **attrs: object) -> str:
        name = f"{prefix}/{op_type}_{self.count}"
        self.count += 1
        out = name + "_out"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out

    def weight(self, name: str, shape: tuple[int, ...], rng: np.random.Generator) -> str:
        data = (rng.standard_normal(shape) * 0.05).astype(np.float32)
        self.inits.append(numpy_helper.from_array(data, name))
        return name


def _layer_norm(g: _Graph, x: str, p: str) -> str:
    mean = g.op("ReduceMean", [x], p, axes=[-1])
    centered = g.op("Sub", [x, mean], p)
    sq = g.op("Pow", [centered, "two"], p)
    var = g.op("ReduceMean", [sq], p, axes=[-1])
    eps = g.op("Add", [var, "eps"], p)
    std = g.op("Sqrt", [eps], p)
    norm = g.op("Div", [centered, std], p)
    scaled = g.op("Mul", [norm, f"{p}/gamma"], p)
    return g.op("Add", [scaled, f"{p}/beta"], p)


def decoder_stack_model(layers: int, seed: int = 0) -> onnx.ModelProto:
    """A valid decoder stack of ``layers`` layers (about 50 nodes each) on [1, 4, HIDDEN]."""
    rng = np.random.default_rng(seed)
    g = _Graph()
    x = "hidden_in"
    for i in range(layers):
        p = f"layer{i}"
        for part in ("ln1", "ln2"):
            g.weight(f"{p}/{part}/gamma", (HIDDEN,), rng)
            g.weight(f"{p}/{part}/beta", (HIDDEN,), rng)
        h = _layer_norm(g, x, f"{p}/ln1")
        heads = []
        for proj in ("q", "k", "v"):
            w = g.weight(f"{p}/{proj}_w", (HIDDEN, HIDDEN), rng)
            b = g.weight(f"{p}/{proj}_b", (HIDDEN,), rng)
            t = g.op("Add", [g.op("MatMul", [h, w], f"{p}/{proj}"), b], f"{p}/{proj}")
            t = g.op("Reshape", [t, "heads_shape"], f"{p}/{proj}")
            perm = [0, 2, 3, 1] if proj == "k" else [0, 2, 1, 3]
            heads.append(g.op("Transpose", [t], f"{p}/{proj}", perm=perm))
        q, k, v = heads
        scores = g.op("Div", [g.op("MatMul", [q, k], f"{p}/attn"), "scale"], f"{p}/attn")
        probs = g.op("Softmax", [g.op("Add", [scores, "mask"], f"{p}/attn")], f"{p}/attn", axis=-1)
        ctx = g.op("MatMul", [probs, v], f"{p}/attn")
        ctx = g.op("Transpose", [ctx], f"{p}/attn", perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, "merge_shape"], f"{p}/attn")
        ow = g.weight(f"{p}/o_w", (HIDDEN, HIDDEN), rng)
        ob = g.weight(f"{p}/o_b", (HIDDEN,), rng)
        attn = g.op("Add", [g.op("MatMul", [ctx, ow], f"{p}/o"), ob], f"{p}/o")
        r1 = g.op("Add", [x, attn], f"{p}/res1")
        h2 = _layer_norm(g, r1, f"{p}/ln2")
        w1 = g.weight(f"{p}/ff1_w", (HIDDEN, 2 * HIDDEN), rng)
        b1 = g.weight(f"{p}/ff1_b", (2 * HIDDEN,), rng)
        f = g.op("Add", [g.op("MatMul", [h2, w1], f"{p}/ff1"), b1], f"{p}/ff1")
        erf = g.op("Erf", [g.op("Div", [f, "sqrt2"], f"{p}/gelu")], f"{p}/gelu")
        gelu = g.op(
            "Mul",
            [g.op("Mul", [f, g.op("Add", [erf, "one"], f"{p}/gelu")], f"{p}/gelu"), "half"],
            f"{p}/gelu",
        )
        w2 = g.weight(f"{p}/ff2_w", (2 * HIDDEN, HIDDEN), rng)
        b2 = g.weight(f"{p}/ff2_b", (HIDDEN,), rng)
        ff = g.op("Add", [g.op("MatMul", [gelu, w2], f"{p}/ff2"), b2], f"{p}/ff2")
        x = g.op("Add", [r1, ff], f"{p}/res2")
    head = HIDDEN // HEADS
    consts = {
        "two": np.array(2.0, np.float32),
        "eps": np.array(1e-5, np.float32),
        "scale": np.array(np.sqrt(head), np.float32),
        "sqrt2": np.array(np.sqrt(2.0), np.float32),
        "one": np.array(1.0, np.float32),
        "half": np.array(0.5, np.float32),
        "heads_shape": np.array([1, 4, HEADS, head], np.int64),
        "merge_shape": np.array([1, 4, HIDDEN], np.int64),
    }
    g.inits.extend(numpy_helper.from_array(v, k) for k, v in consts.items())
    graph = helper.make_graph(
        g.nodes,
        "decoder_stack",
        [
            helper.make_tensor_value_info("hidden_in", TensorProto.FLOAT, [1, 4, HIDDEN]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 4, 4]),
        ],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 4, HIDDEN])],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model
