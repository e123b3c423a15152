"""Detectors about arithmetic: FP32 where Tensor Cores could run FP16/BF16, and channel or
GEMM dimensions that are not multiples of 8 (Tensor Core kernels need them; judged only for
nodes that ran on a GPU provider or in a TensorRT engine)."""

from __future__ import annotations

from onnx import TensorProto

from designer.activities.analysis.detectors.base import Context, Detector, Finding
from designer.activities.analysis.stats import NodeTimes

__all__ = ["Alignment8", "Fp32TensorCore", "compute_heavy"]

_ORT_HEAVY = {
    "Conv",
    "ConvTranspose",
    "FusedConv",
    "NhwcConv",
    "MatMul",
    "FusedMatMul",
    "Gemm",
    "FusedGemm",
    "Attention",
    "MultiHeadAttention",
    "GroupQueryAttention",
    "PackedAttention",
}
_TRT_HEAVY = {
    "Convolution",
    "Deconvolution",
    "MatrixMultiply",
    "FullyConnected",
    "CaskConvolution",
    "CaskGemmConvolution",
    "CaskDeconvolution",
    "CaskGemmMatrixMultiply",
    "gemm",
}
_GPU = (
    "CUDAExecutionProvider",
    "TensorrtExecutionProvider",
    "ROCMExecutionProvider",
    "DmlExecutionProvider",
    "TensorRT",
)
#: Assumed speed-up of FP16/BF16 Tensor Core kernels over FP32 ones (conservative: the
#: peak ratio over TF32 on A100/H100 is 2x, over plain FP32 far more).
SPEEDUP = 2.0


def compute_heavy(t: NodeTimes) -> bool:
    op = t.node.op_type
    return op in _ORT_HEAVY or op in _TRT_HEAVY or "Attention" in op


class Fp32TensorCore(Detector):
    id = "fp32-tensor-core"
    title = "Compute-heavy layers in FP32"

    def detect(self, context: Context) -> list[Finding]:
        heavy = [
            t
            for t in context.stats.nodes
            if compute_heavy(t) and t.node.precision in ("FP32", "TF32")
        ]
        if not heavy:
            return []
        us = sum(t.per_iteration_us for t in heavy)
        share = sum(t.percent for t in heavy)
        gpu = any(t.node.device in _GPU for t in heavy)
        nodes = tuple(
            dict.fromkeys(n for t in heavy for n in (t.node.onnx_nodes or (t.node.name,)))
        )
        ops = ", ".join(sorted({t.node.op_type for t in heavy}))
        problem = (
            f"{len(heavy)} compute-heavy node(s) ({ops}) run in FP32: {share:.1f}% of node time"
        )
        if gpu:
            fix = (
                "Run them in FP16 (or BF16) so Tensor Cores do the work: convert the model "
                "(Tools > Global Model Modification > FP16, or onnx-designer fp16 IN OUT "
                "--keep-io-types) or build the TensorRT engine with --fp16/--bf16"
            )
            gain: tuple[float | None, float | None] = context.gain(us * (1.0 - 1.0 / SPEEDUP))
        else:
            stored = _stored_half(context, nodes)
            if stored:
                problem += (
                    f"; the model stores {stored} of them in FP16, but this CPU provider has "
                    "no FP16 kernels for them, so ONNX Runtime ran them in FP32 behind Cast "
                    "nodes it inserted"
                )
                fix = (
                    "Profile the FP16 model on a GPU provider (CUDA or TensorRT), where these "
                    "run on FP16 Tensor Cores; on the CPU keep the FP32 model"
                )
            else:
                fix = (
                    "On a GPU these would use FP16/BF16 Tensor Cores: profile with the CUDA or "
                    "TensorRT execution provider after converting the model to FP16 "
                    "(onnx-designer fp16 IN OUT --keep-io-types); on this CPU provider FP16 "
                    "gives no such gain"
                )
            gain = (None, None)
        return [
            Finding(
                self.id,
                "high" if gpu and share >= 20.0 else "medium" if gpu else "low",
                problem,
                fix,
                nodes,
                *gain,
            )
        ]


def _stored_half(context: Context, names: tuple[str, ...]) -> int:
    """How many of the ONNX nodes ``names`` have FP16/BF16 weights in the model."""
    model = context.model or context.profile.model
    if model is None:
        return 0
    half = {TensorProto.FLOAT16, TensorProto.BFLOAT16}
    weights = {i.name for i in model.graph.initializer if i.data_type in half}
    wanted = set(names)
    return sum(
        1
        for node in model.graph.node
        if node.name in wanted and any(i in weights for i in node.input)
    )


_ORT_CONV = ("Conv", "FusedConv", "ConvTranspose")
_GEMM = ("MatMul", "FusedMatMul", "Gemm", "FusedGemm", "MatrixMultiply")
_TRT_CONV = (
    "Convolution",
    "Deconvolution",
    "CaskConvolution",
    "CaskGemmConvolution",
    "CaskDeconvolution",
)


def _dims(t: NodeTimes) -> list[tuple[str, int]]:
    """(what, size) of the dimensions Tensor Core kernels want as multiples of 8.

    ONNX Runtime records a Conv's inputs as (X, W[, B]): the channels come from the weight
    ``[K, C/g, kh, kw]``. A TensorRT layer records only activations, and a convolution with a
    fused residual (``Conv + Add``) has that residual as its second input (``[N, K, H, W]``,
    not a weight), so its channels come from the layer's own first input and output
    ``[N, C, H, W]``, as ``engine lint`` reads them."""
    op = t.node.op_type
    ins = t.node.input_shapes
    outs = t.node.output_shapes
    out: list[tuple[str, int]] = []
    if t.node.device == "TensorRT":
        if op in _TRT_CONV:
            if ins and len(ins[0]) >= 2:
                out.append(("input channels", ins[0][1]))
            if outs and len(outs[0]) >= 2:
                out.append(("output channels", outs[0][1]))
    elif op in _ORT_CONV:
        if len(ins) >= 2 and len(ins[1]) >= 2:  # the weight [K, C/g, kh, kw]
            out += [("output channels", ins[1][0]), ("input channels", ins[1][1])]
        elif ins and len(ins[0]) >= 2:  # no weight recorded: activations [N, C, H, W]
            out.append(("input channels", ins[0][1]))
            if outs and len(outs[0]) >= 2:
                out.append(("output channels", outs[0][1]))
    gemm = op in _GEMM
    if gemm and ins and ins[0] and outs and outs[0]:  # K from input 0, N from the output
        out += [("K", ins[0][-1]), ("N", outs[0][-1])]
    return [(w, d) for w, d in out if d > 0]


def _weighted(context: Context, t: NodeTimes) -> bool | None:
    """Whether the ONNX GEMM node(s) a profiled GEMM came from multiply by a weight: an
    A or B input that is constant (an initializer, a Constant's output, or computed from
    constants only, such as a Transpose, Cast or DequantizeLinear of a weight). None when
    the model is not given or does not have those nodes. Cost: one pass over the graph."""
    model = context.model or context.profile.model
    if model is None:
        return None
    graph = model.graph
    constant = {i.name for i in graph.initializer}
    for node in graph.node:  # ONNX graphs are topologically sorted
        if node.op_type == "Constant" or all(i in constant for i in node.input if i):
            constant.update(node.output)
    wanted = set(t.node.onnx_nodes or (t.node.name,))
    found = [n for n in graph.node if n.name in wanted]
    gemms = [n for n in found if n.op_type in _GEMM or "MatMul" in n.op_type] or found
    if not gemms:
        return None
    return any(i in constant for n in gemms for i in n.input[:2] if i)


def _fix(context: Context, t: NodeTimes, padded: str) -> str:
    """What to pad: a Conv's and a weighted GEMM's sizes are the weights'; a GEMM without
    weights (attention's Q·Kᵀ, scores·V) multiplies activations, whose sizes are the
    sequence length, batch or head size."""
    weighted = _weighted(context, t) if t.node.op_type in _GEMM else True
    if weighted:
        return (
            f"Pad the weights to multiples of 8 ({padded}) or choose layer sizes that are "
            "multiples of 8 when training"
        )
    if weighted is False:
        return (
            f"This product has no weights: its sizes come from the data (sequence length, "
            f"batch or head size). Run with sequence lengths/batch sizes that are multiples "
            f"of 8 (pad the inputs: {padded}), or choose a head size that is one"
        )
    return (
        f"Pad to multiples of 8 ({padded}): the weights where the size is a layer width, the "
        "inputs (sequence length, batch) where it comes from the data (with the profiled "
        "model given, the report tells which)"
    )


class Alignment8(Detector):
    """Only nodes that ran on a GPU provider or in a TensorRT engine: Tensor Cores are GPU
    units, and a CPU provider's kernels have no such multiple-of-8 rule."""

    id = "alignment-8"
    title = "Channel/GEMM dimensions not multiples of 8"

    def detect(self, context: Context) -> list[Finding]:
        findings = []
        for t in context.stats.nodes:
            if not compute_heavy(t) or t.node.device not in _GPU:
                continue
            # An image's 1-4 input channels cannot be changed; every other size can be padded.
            bad = [(w, d) for w, d in _dims(t) if d % 8 and not (w == "input channels" and d <= 4)]
            if not bad:
                continue
            sizes = ", ".join(f"{w} {d}" for w, d in bad)
            padded = ", ".join(f"{d} -> {d + (-d) % 8}" for _w, d in bad)
            findings.append(
                Finding(
                    self.id,
                    "medium" if t.percent >= 5.0 else "low",
                    f"{t.node.op_type} {t.node.name} on {t.node.device}: {sizes} not a "
                    f"multiple of 8 ({t.percent:.1f}% of node time); Tensor Core kernels need "
                    "multiples of 8",
                    _fix(context, t, padded),
                    t.node.onnx_nodes or (t.node.name,),
                )
            )
        return findings
