"""Engine lint rules about precision and kernels (INT8/Q/DQ, FP32 vs FP16/TF32, alignment)."""

from __future__ import annotations

from designer.activities.reports.engine_bundle import EngineBundle
from designer.activities.reports.engine_lint_base import (
    COMPUTE_KINDS,
    FLOAT,
    GEMM_KINDS,
    Finding,
    LintRule,
    consumers_through_noops,
    io_names_through_noops,
    latency_share,
    live_layers,
    share_text,
)

__all__ = [
    "ChannelAlignment",
    "Fp32WhereReducedAllowed",
    "Fp32WithoutTf32",
    "Int8ConvFloatOutput",
    "SlowerThanRequested",
    "UnfusedQdq",
]


class Int8ConvFloatOutput(LintRule):
    id = "int8-conv-float-output"
    title = "INT8 convolution with a float output feeding an INT8 layer"

    def check(self, bundle: EngineBundle) -> list[Finding]:
        graph = bundle.graph
        out = []
        for layer in live_layers(graph):
            if layer.kind != "Convolution" or layer.precision != "INT8":
                continue
            if layer.output_precision not in FLOAT:
                continue
            int8_next = [
                c.name
                for c in consumers_through_noops(graph, layer)
                if c.precision == "INT8" or c.output_precision == "INT8"
            ]
            if int8_next:
                out.append(
                    Finding(
                        self.id,
                        "warning",
                        (layer.name, *int8_next),
                        f"INT8 convolution writes {layer.output_precision} that feeds INT8 "
                        f"layer(s) {', '.join(int8_next)}",
                        "Add a QuantizeLinear/DequantizeLinear pair on this convolution's output "
                        "(for ResNet-style blocks: on the residual input of the Add) so TensorRT "
                        "fuses the quantization and writes INT8 directly",
                    )
                )
        return out


class UnfusedQdq(LintRule):
    id = "unfused-qdq"
    title = "Q/DQ layers that were not fused (QDQ placement)"

    def check(self, bundle: EngineBundle) -> list[Finding]:
        inputs, _ = io_names_through_noops(bundle.graph)
        out = []
        for layer in live_layers(bundle.graph):
            if not layer.is_qdq:
                continue
            at_input = any(t.name in inputs for t in layer.inputs)
            src = layer.inputs[0].precision if layer.inputs else None
            dst = layer.output_precision
            if at_input:
                out.append(
                    Finding(
                        self.id,
                        "info",
                        (layer.name,),
                        f"the network input is quantized by a separate layer ({src} -> {dst})"
                        f"{share_text(latency_share(bundle, [layer]))}",
                        "Expected when the input is float; to remove it, feed INT8 input "
                        "(trtexec --inputIOFormats=int8:chw32 with a matching calibration scale)",
                    )
                )
                continue
            out.append(
                Finding(
                    self.id,
                    "warning",
                    (layer.name,),
                    f"stand-alone Q/DQ layer converting {src} -> {dst}"
                    f"{share_text(latency_share(bundle, [layer]))}",
                    "Move the Q/DQ pair so it sits directly on the input of a quantizable layer "
                    "(Conv/Gemm/MatMul) and quantize both inputs of Add/Concat, so TensorRT can "
                    "fuse it instead of running it as its own kernel",
                )
            )
        return out


class Fp32WhereReducedAllowed(LintRule):
    id = "fp32-where-fp16-allowed"
    title = "FP32 layers where FP16/INT8 was allowed"

    def check(self, bundle: EngineBundle) -> list[Finding]:
        allowed = bundle.allowed_precisions
        if not allowed or not (allowed & {"FP16", "BF16", "INT8"}):
            return []
        faster = "/".join(sorted(allowed & {"FP16", "BF16", "INT8"}))
        out = []
        for layer in live_layers(bundle.graph):
            if layer.kind not in COMPUTE_KINDS or layer.precision != "FP32":
                continue
            out.append(
                Finding(
                    self.id,
                    "warning",
                    (layer.name,),
                    f"{layer.kind} runs in FP32 although the build allowed {faster}"
                    f"{share_text(latency_share(bundle, [layer]))}",
                    "Find why TensorRT kept it in FP32: a neighbour forces FP32 (add Q/DQ or FP16 "
                    "casts around it), or no faster kernel exists for its shape; check with "
                    "--precisionConstraints=prefer --layerPrecisions=<layer>:fp16",
                )
            )
        return out


class Fp32WithoutTf32(LintRule):
    """TF32 allowed (trtexec's default unless --noTF32), yet a convolution/GEMM with at least 8
    input channels ran an FP32 SIMT kernel: its tactic name shows no ``tf32`` (matrix-vector
    ``gemv`` kernels are memory-bound and not counted)."""

    id = "fp32-without-tf32"
    title = "FP32 convolutions/GEMMs not using TF32 where TF32 was allowed"

    def check(self, bundle: EngineBundle) -> list[Finding]:
        allowed = bundle.allowed_precisions
        if not allowed or "TF32" not in allowed:
            return []
        out = []
        for layer in live_layers(bundle.graph):
            if layer.kind not in GEMM_KINDS or layer.precision != "FP32" or not layer.tactic_name:
                continue
            dims = layer.inputs[0].dims if layer.inputs else None
            channels = (dims[1] if len(dims) >= 4 else dims[-1]) if dims else None
            tactic = layer.tactic_name.lower()
            if channels is None or channels < 8 or "tf32" in tactic or "gemv" in tactic:
                continue  # tiny, TF32 already, or a memory-bound matrix-vector product
            out.append(
                Finding(
                    self.id,
                    "info",
                    (layer.name,),
                    f"FP32 {layer.kind} ({channels} input channels) runs the non-Tensor-Core "
                    f"kernel {layer.tactic_name}{share_text(latency_share(bundle, [layer]))}",
                    "TensorRT timed TF32 slower for this shape: align channels to multiples of 8, "
                    "or allow FP16 (--fp16) so the layer can use Tensor Cores",
                )
            )
        return out


class ChannelAlignment(LintRule):
    id = "channel-alignment"
    title = "Channel / GEMM dimensions not multiples of 8 (16 for INT8)"

    def check(self, bundle: EngineBundle) -> list[Finding]:
        graph = bundle.graph
        inputs, _ = io_names_through_noops(graph)
        producers = graph.producers()
        out = []
        for layer in live_layers(graph):
            if layer.kind not in GEMM_KINDS or not layer.inputs or not layer.outputs:
                continue
            groups = layer.raw.get("Groups")
            if isinstance(groups, int) and groups > 1:
                continue  # depthwise / grouped: per-group channels are what matter
            step = 16 if layer.precision == "INT8" else 8
            src, dst = layer.inputs[0], layer.outputs[0]
            dims_in, dims_out = src.dims, dst.dims
            if dims_in is None or dims_out is None or len(dims_in) < 2 or len(dims_out) < 2:
                continue
            is_conv = len(dims_in) >= 4
            c, k = (dims_in[1], dims_out[1]) if is_conv else (dims_in[-1], dims_out[-1])
            bad = []
            near_input = src.name in inputs or (
                src.name in producers
                and producers[src.name].is_reformat
                and any(t.name in inputs for t in producers[src.name].inputs)
            )
            if c % step and not (near_input and c <= 4):
                bad.append(f"input channels {c}")
            if k % step:
                bad.append(f"output channels {k}")
            if bad:
                out.append(
                    Finding(
                        self.id,
                        "info",
                        (layer.name,),
                        f"{layer.precision} {layer.kind} with {' and '.join(bad)} "
                        f"(not a multiple of {step})",
                        f"Pad the channel/feature count to a multiple of {step} in the model "
                        "(e.g. round the layer width up) so Tensor Core kernels can be used",
                    )
                )
        return out


_PRECISION_SPEED = {"FP32": 0, "TF32": 1, "BF16": 2, "FP16": 2, "FP8": 3, "INT8": 3, "FP4": 4}
_FLAG_PRECISION = {"fp32": "FP32", "fp16": "FP16", "bf16": "BF16", "int8": "INT8", "fp8": "FP8"}


class SlowerThanRequested(LintRule):
    """Requested = ``--layerPrecisions``/``--layerOutputTypes`` on the trtexec command line, or
    explicit quantization (a QuantizeLinear fused into the layer's name) for INT8."""

    id = "slower-than-requested"
    title = "Layers that stayed in a slower precision than requested"

    @staticmethod
    def _requests(bundle: EngineBundle) -> dict[str, str]:
        wanted: dict[str, str] = {}
        for log in bundle.logs:
            for flag in log.flags:
                key, _, value = flag.partition("=")
                if key not in ("--layerPrecisions", "--layerOutputTypes"):
                    continue
                for item in value.split(","):
                    name, _, prec = item.rpartition(":")
                    if name and prec.lower() in _FLAG_PRECISION:
                        wanted[name] = _FLAG_PRECISION[prec.lower()]
        return wanted

    def check(self, bundle: EngineBundle) -> list[Finding]:
        wanted = self._requests(bundle)
        out = []
        for layer in live_layers(bundle.graph):
            got = layer.precision
            if got is None or got not in _PRECISION_SPEED or layer.is_reformat:
                continue
            requested = None
            for node in layer.onnx_nodes:
                if node in wanted or "*" in wanted:
                    requested = wanted.get(node, wanted.get("*"))
                    break
            if requested is None and layer.kind in GEMM_KINDS and "QuantizeLinear" in layer.name:
                requested = "INT8"
            if requested is None or _PRECISION_SPEED[got] >= _PRECISION_SPEED.get(requested, 0):
                continue
            out.append(
                Finding(
                    self.id,
                    "warning",
                    (layer.name,),
                    f"{layer.kind} runs in {got} although {requested} was requested"
                    f"{share_text(latency_share(bundle, [layer]))}",
                    "Make the request binding: build with --precisionConstraints=obey (or a "
                    "strongly typed network with explicit casts / Q/DQ on every input) and read "
                    "the build log for why the faster kernel was rejected",
                )
            )
        return out
