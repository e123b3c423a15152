"""Small but realistic models for the transform tests, built with ``onnx.helper``: a
ResNet-like CNN, a MobileNet-like block, a tiny transformer block, Resize with scales, shape
computations (Shape→Gather→Concat→Reshape), If/Loop, Cast(to=float), dynamic batch.

Weights are random with a fixed seed and scaled so float16 keeps outputs close.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
F = TensorProto.FLOAT


class _Builder:
    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def weight(self, name: str, shape: Sequence[int], scale: float = 0.1) -> str:
        data = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(data, name))
        return name

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: Sequence[str], n_out: int = 1, **attrs: object) -> str:
        self.count += 1
        name = f"{op_type.lower()}_{self.count}"
        outs = [name if n_out == 1 else f"{name}_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **attrs))
        return outs[0]

    def model(
        self,
        name: str,
        inputs: Sequence[onnx.ValueInfoProto],
        outputs: Sequence[onnx.ValueInfoProto],
        opset: int = OPSET,
    ) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, list(inputs), list(outputs), self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        return model


def _io(name: str, shape: Sequence[int | str | None], elem: int = F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, list(shape))


def _conv_bn(
    b: _Builder, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1
) -> str:
    w = b.weight(f"w{b.count}", (cout, cin // group, k, k), scale=(2.0 / (cin * k * k)) ** 0.5)
    y = b.op("Conv", [x, w], pads=[k // 2] * 4, strides=[stride, stride], group=group)
    s = b.const(f"bn_s{b.count}", (1 + 0.1 * b.rng.standard_normal(cout)).astype(np.float32))
    o = b.const(f"bn_b{b.count}", (0.1 * b.rng.standard_normal(cout)).astype(np.float32))
    m = b.const(f"bn_m{b.count}", (0.1 * b.rng.standard_normal(cout)).astype(np.float32))
    v = b.const(f"bn_v{b.count}", (1 + 0.1 * b.rng.random(cout)).astype(np.float32))
    return b.op("BatchNormalization", [y, s, o, m, v])


def resnet_like(
    channels: int = 16, blocks: int = 3, size: int = 32, seed: int = 0
) -> onnx.ModelProto:
    """Stem conv + ``blocks`` residual blocks (Conv-BN-Relu-Conv-BN-Add-Relu) + global pool
    + Gemm classifier over 10 classes; input [N, 3, size, size] with a symbolic batch."""
    b = _Builder(seed)
    x = b.op("Relu", [_conv_bn(b, "input", 3, channels, 3)])
    for _ in range(blocks):
        y = b.op("Relu", [_conv_bn(b, x, channels, channels, 3)])
        y = _conv_bn(b, y, channels, channels, 3)
        x = b.op("Relu", [b.op("Add", [x, y])])
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x])])
    w = b.weight("fc_w", (10, channels), 0.3)
    bias = b.weight("fc_b", (10,), 0.1)
    b.nodes.append(helper.make_node("Gemm", [x, w, bias], ["logits"], name="fc", transB=1))
    return b.model("resnet_like", [_io("input", ["N", 3, size, size])], [_io("logits", ["N", 10])])


def mobilenet_like(channels: int = 16, size: int = 16, seed: int = 1) -> onnx.ModelProto:
    """Inverted residual blocks: 1x1 expand, 3x3 depthwise (group=C), Clip(0, 6) as ReLU6,
    1x1 project, residual Add; then a HardSigmoid-gated squeeze-excite and Softmax head."""
    b = _Builder(seed)
    zero = b.const("clip_min", np.array(0.0, np.float32))
    six = b.const("clip_max", np.array(6.0, np.float32))
    x = b.op("Clip", [_conv_bn(b, "input", 3, channels, 3, stride=2), zero, six])
    for _ in range(2):
        e = b.op("Clip", [_conv_bn(b, x, channels, channels * 4, 1), zero, six])
        d = b.op(
            "Clip", [_conv_bn(b, e, channels * 4, channels * 4, 3, group=channels * 4), zero, six]
        )
        p = _conv_bn(b, d, channels * 4, channels, 1)
        x = b.op("Add", [x, p])
    pooled = b.op("GlobalAveragePool", [x])
    w = b.weight("se_w", (channels, channels, 1, 1), 0.2)
    gate = b.op("HardSigmoid", [b.op("Conv", [pooled, w])])
    x = b.op("Mul", [x, gate])
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x])])
    logits = b.op("MatMul", [x, b.weight("head_w", (channels, 8), 0.3)])
    b.nodes.append(helper.make_node("Softmax", [logits], ["probs"], name="softmax", axis=-1))
    return b.model("mobilenet_like", [_io("input", [1, 3, size, size])], [_io("probs", [1, 8])])


def tiny_transformer(dim: int = 32, heads: int = 2, seq: int = 8, seed: int = 2) -> onnx.ModelProto:
    """One pre-norm transformer block: LayerNormalization, Q/K/V MatMuls, scaled QK^T,
    Softmax, attention·V, output projection, residual, LayerNorm, GELU-by-Erf MLP, residual.
    Input [batch, seq, dim] with a symbolic batch; heads are split with Reshape/Transpose
    whose shapes are computed from Shape (a foldable-at-runtime shape subgraph)."""
    b = _Builder(seed)
    head_dim = dim // heads
    ln1 = b.op(
        "LayerNormalization",
        [
            "x",
            b.const("ln1_g", np.ones(dim, np.float32)),
            b.const("ln1_b", np.zeros(dim, np.float32)),
        ],
        axis=-1,
    )
    shape = b.op("Shape", [ln1])
    batch = b.op("Gather", [shape, b.const("idx0", np.array([0], np.int64))], axis=0)
    split_shape = b.op(
        "Concat", [batch, b.const("rest", np.array([seq, heads, head_dim], np.int64))], axis=0
    )

    def heads_of(w_name: str, perm: list[int]) -> str:
        proj = b.op("MatMul", [ln1, b.weight(w_name, (dim, dim), dim**-0.5)])
        return b.op("Transpose", [b.op("Reshape", [proj, split_shape])], perm=perm)

    q = heads_of("wq", [0, 2, 1, 3])
    k = heads_of("wk", [0, 2, 3, 1])
    v = heads_of("wv", [0, 2, 1, 3])
    scale = b.const("attn_scale", np.array(head_dim**-0.5, np.float32))
    scores = b.op("Mul", [b.op("MatMul", [q, k]), scale])
    attn = b.op("Softmax", [scores], axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [attn, v])], perm=[0, 2, 1, 3])
    merged_shape = b.op(
        "Concat", [batch, b.const("merged", np.array([seq, dim], np.int64))], axis=0
    )
    ctx = b.op("Reshape", [ctx, merged_shape])
    h = b.op("Add", ["x", b.op("MatMul", [ctx, b.weight("wo", (dim, dim), dim**-0.5)])])
    ln2 = b.op(
        "LayerNormalization",
        [
            h,
            b.const("ln2_g", np.ones(dim, np.float32)),
            b.const("ln2_b", np.zeros(dim, np.float32)),
        ],
        axis=-1,
    )
    up = b.op(
        "Add",
        [
            b.op("MatMul", [ln2, b.weight("w1", (dim, 4 * dim), dim**-0.5)]),
            b.weight("b1", (4 * dim,), 0.02),
        ],
    )
    erf = b.op("Erf", [b.op("Div", [up, b.const("sqrt2", np.array(2**0.5, np.float32))])])
    gelu = b.op(
        "Mul",
        [
            b.op("Mul", [up, b.op("Add", [erf, b.const("one", np.array(1.0, np.float32))])]),
            b.const("half", np.array(0.5, np.float32)),
        ],
    )
    down = b.op("MatMul", [gelu, b.weight("w2", (4 * dim, dim), (4 * dim) ** -0.5)])
    b.nodes.append(helper.make_node("Add", [h, down], ["y"], name="residual_out"))
    return b.model(
        "tiny_transformer", [_io("x", ["batch", seq, dim])], [_io("y", ["batch", seq, dim])]
    )


def resize_scales_model() -> onnx.ModelProto:
    """Conv → Resize(scales=[1, 1, 2, 2] as a float32 initializer) → Conv: the Resize scales
    must stay float32 after conversion."""
    b = _Builder(3)
    x = b.op("Conv", ["input", b.weight("w_a", (4, 3, 3, 3), 0.2)], pads=[1, 1, 1, 1])
    scales = b.const("scales", np.array([1, 1, 2, 2], np.float32))
    up = b.op("Resize", [x, "", scales], mode="nearest")
    b.nodes.append(
        helper.make_node("Conv", [up, b.weight("w_b", (2, 4, 1, 1), 0.3)], ["out"], name="conv_out")
    )
    return b.model("resize_scales", [_io("input", [1, 3, 8, 8])], [_io("out", [1, 2, 16, 16])])


def cast_to_float_model() -> onnx.ModelProto:
    """An int64 input Cast(to=FLOAT) feeding float math, a float Cast(to=FLOAT) no-op and a
    Cast to int32 of a float: every Cast must get a type that matches its consumers."""
    b = _Builder(4)
    as_float = b.op("Cast", ["ids"], to=F)
    x = b.op("Mul", [b.op("Add", ["input", as_float]), b.weight("gain", (4,), 0.5)])
    again = b.op("Cast", [x], to=F)
    as_int = b.op("Cast", [again], to=TensorProto.INT32)
    b.nodes.append(helper.make_node("Cast", [as_int], ["counts"], name="back", to=F))
    b.nodes.append(helper.make_node("Sigmoid", [again], ["out"], name="sig"))
    return b.model(
        "cast_to_float",
        [_io("input", [2, 4]), _io("ids", [2, 4], TensorProto.INT64)],
        [_io("out", [2, 4]), _io("counts", [2, 4])],
    )


def shape_subgraph_model(dynamic_batch: bool = False) -> onnx.ModelProto:
    """``input`` [B, 4, 6] → Shape → Gather(1), Gather(2) → Mul → Unsqueeze → Concat with
    Gather(0) → Reshape to [B, 24] → MatMul; also a ConstantOfShape and a Constant chain
    (Constant → Add → Mul) whose result feeds an Add. With ``dynamic_batch`` B is symbolic,
    so only the static part of the shape computation folds."""
    b = _Builder(5)
    shape = b.op("Shape", ["input"])
    d0 = b.op("Gather", [shape, b.const("i0", np.array(0, np.int64))], axis=0)
    d1 = b.op("Gather", [shape, b.const("i1", np.array(1, np.int64))], axis=0)
    d2 = b.op("Gather", [shape, b.const("i2", np.array(2, np.int64))], axis=0)
    flat = b.op("Mul", [d1, d2])
    axes = b.const("axes0", np.array([0], np.int64))
    new_shape = b.op(
        "Concat", [b.op("Unsqueeze", [d0, axes]), b.op("Unsqueeze", [flat, axes])], axis=0
    )
    x = b.op("Reshape", ["input", new_shape])
    y = b.op("MatMul", [x, b.weight("proj", (24, 5), 0.2)])
    c = b.op("Constant", [], value=numpy_helper.from_array(np.full(5, 0.5, np.float32), "c"))
    c = b.op(
        "Mul",
        [
            b.op("Add", [c, b.const("one_f", np.ones(5, np.float32))]),
            b.const("two", np.array(2.0, np.float32)),
        ],
    )
    filled = b.op(
        "ConstantOfShape",
        [b.const("five", np.array([5], np.int64))],
        value=numpy_helper.from_array(np.array([0.25], np.float32), "v"),
    )
    unused = b.op("Relu", [c])  # dead: nobody reads it
    del unused
    b.nodes.append(helper.make_node("Add", [b.op("Add", [y, c]), filled], ["out"], name="out_add"))
    batch: int | str = "B" if dynamic_batch else 2
    return b.model("shape_subgraph", [_io("input", [batch, 4, 6])], [_io("out", [batch, 5])])


def if_loop_model() -> onnx.ModelProto:
    """An If whose branches compute with float weights of the main graph and a Loop whose body
    (3 iterations) multiplies a carried float tensor by a main-graph weight and adds a
    constant made inside the body."""
    rng = np.random.default_rng(6)
    w = numpy_helper.from_array((rng.standard_normal((4, 4)) * 0.3).astype(np.float32), "w_shared")
    bias = numpy_helper.from_array(np.full(4, 0.1, np.float32), "bias")
    trip = numpy_helper.from_array(np.array(3, np.int64), "trip")
    then_g = helper.make_graph(
        [helper.make_node("MatMul", ["h", "w_shared"], ["then_y"], name="then_mm")],
        "then",
        [],
        [_io("then_y", [2, 4])],
    )
    else_g = helper.make_graph(
        [helper.make_node("Add", ["h", "bias"], ["else_y"], name="else_add")],
        "else",
        [],
        [_io("else_y", [2, 4])],
    )
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
            helper.make_node("MatMul", ["carry", "w_shared"], ["mm"], name="body_mm"),
            helper.make_node(
                "Constant",
                [],
                ["step"],
                name="body_const",
                value=numpy_helper.from_array(np.full(4, 0.01, np.float32), "step_v"),
            ),
            helper.make_node("Add", ["mm", "step"], ["summed"], name="body_add"),
            helper.make_node("Tanh", ["summed"], ["carry_out"], name="body_tanh"),
        ],
        "body",
        [
            _io("iter", [], TensorProto.INT64),
            _io("cond_in", [], TensorProto.BOOL),
            _io("carry", [2, 4]),
        ],
        [_io("cond_out", [], TensorProto.BOOL), _io("carry_out", [2, 4])],
    )
    nodes = [
        helper.make_node("Relu", ["input"], ["h"], name="pre"),
        helper.make_node(
            "If", ["flag"], ["branch_out"], name="branch", then_branch=then_g, else_branch=else_g
        ),
        helper.make_node("Loop", ["trip", "", "branch_out"], ["loop_out"], name="loop", body=body),
        helper.make_node("Sigmoid", ["loop_out"], ["out"], name="post"),
    ]
    graph = helper.make_graph(
        nodes,
        "if_loop",
        [_io("input", [2, 4]), _io("flag", [], TensorProto.BOOL)],
        [_io("out", [2, 4])],
        [w, bias, trip],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model


def custom_op_model() -> onnx.ModelProto:
    """A model with an operator of an unknown domain: onnx accepts it, onnxruntime cannot
    run it."""
    b = _Builder(7)
    x = b.op("MatMul", ["input", b.weight("w", (4, 4))])
    b.nodes.append(helper.make_node("Mystery", [x], ["out"], name="mystery", domain="acme.ops"))
    model = b.model("custom", [_io("input", [2, 4])], [_io("out", [2, 4])])
    model.opset_import.append(helper.make_opsetid("acme.ops", 1))
    return model


def unsorted(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model with its node list reversed (not topologically sorted)."""
    nodes = list(model.graph.node)[::-1]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


def overflow_model() -> onnx.ModelProto:
    """x → Mul(1e5) → Sigmoid... : the weight 1e5 is beyond float16 (clipped to 65504), so
    converting ``scale_up`` changes the output by ~35%; auto-block must keep it float32."""
    b = _Builder(8)
    x = b.op("Mul", ["input", b.const("k_up", np.array(1e5, np.float32))])
    x = b.op("Mul", [x, b.const("k_down", np.array(1e-5, np.float32))])
    x = b.op("Sigmoid", [x])
    b.nodes.append(helper.make_node("Relu", [x], ["out"], name="relu_out"))
    return b.model("overflow", [_io("input", [8, 8])], [_io("out", [8, 8])])


def two_pass_model() -> onnx.ModelProto:
    """Reshape(x, Abs(Neg(c))) then Shape of the result → Reshape: shape inference only knows
    the reshaped shape once ``Abs(Neg(c))`` is folded, so the Shape folds in pass 2."""
    b = _Builder(9)
    target = b.op("Abs", [b.op("Neg", [b.const("c", np.array([-2, -24], np.int64))])])
    y = b.op("Reshape", ["input", target])
    s = b.op("Shape", [y])
    z = b.op("Reshape", [b.op("Relu", [y]), s])
    b.nodes.append(helper.make_node("Identity", [z], ["out"], name="out_id"))
    return b.model("two_pass", [_io("input", [2, 4, 6])], [_io("out", [2, 24])])


def function_fold_model() -> onnx.ModelProto:
    """A local function whose body adds two Constants (foldable into one) to its input,
    and a main graph whose output is a pure constant chain (kept as an output)."""
    fn_nodes = [
        helper.make_node("Constant", [], ["a"], value_float=1.5),
        helper.make_node("Constant", [], ["b"], value_float=2.5),
        helper.make_node("Add", ["a", "b"], ["ab"]),
        helper.make_node("Add", ["x", "ab"], ["y"]),
    ]
    fn = helper.make_function(
        "local", "AddFour", ["x"], ["y"], fn_nodes, [helper.make_opsetid("", OPSET)]
    )
    nodes = [
        helper.make_node("AddFour", ["input"], ["out"], name="call", domain="local"),
        helper.make_node(
            "Constant",
            [],
            ["c"],
            name="const_c",
            value=numpy_helper.from_array(np.arange(3, dtype=np.float32), "cv"),
        ),
        helper.make_node("Mul", ["c", "c"], ["const_out"], name="square"),
    ]
    graph = helper.make_graph(
        nodes, "fn_fold", [_io("input", [2])], [_io("out", [2]), _io("const_out", [3])]
    )
    model = helper.make_model(
        graph,
        functions=[fn],
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("local", 1)],
    )
    model.ir_version = 8
    return model


def save_external(model: onnx.ModelProto, path: str) -> None:
    """Save ``model`` with every tensor of 16 bytes or more in ``<name>.data`` beside it."""
    onnx.save_model(
        model,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=f"{path.rsplit('/', 1)[-1]}.data",
        size_threshold=16,
    )
