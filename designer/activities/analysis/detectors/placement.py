"""Detectors about where and how work runs: nodes that fell back from a GPU provider to the
CPU, memory copies, many Cast/reformat layers, and a run dominated by tiny kernels."""

from __future__ import annotations

from designer.activities.analysis.detectors.base import Context, Detector, Finding, Severity
from designer.activities.analysis.stats import NodeTimes

__all__ = ["CastReformat", "CpuFallback", "MemcpyNodes", "TinyKernels"]

_GPU_PROVIDERS = (
    "CUDAExecutionProvider",
    "TensorrtExecutionProvider",
    "ROCMExecutionProvider",
    "MIGraphXExecutionProvider",
    "DmlExecutionProvider",
)


def _names(items: list[NodeTimes]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for t in items for n in (t.node.onnx_nodes or (t.node.name,))))


class CpuFallback(Detector):
    id = "cpu-fallback"
    title = "Nodes that fell back to the CPU"

    def detect(self, context: Context) -> list[Finding]:
        stats = context.stats
        gpu = sorted(d for d in stats.profile.devices if d in _GPU_PROVIDERS)
        if not gpu:
            return []
        cpu = [
            t
            for t in stats.nodes
            if t.node.device == "CPUExecutionProvider" and not t.node.op_type.startswith("Memcpy")
        ]
        if not cpu:
            return []
        ops = ", ".join(sorted({t.node.op_type for t in cpu}))
        share = sum(t.percent for t in cpu)
        return [
            Finding(
                self.id,
                "high" if share >= 10.0 else "medium",
                f"{len(cpu)} node(s) ({ops}) ran on CPUExecutionProvider although "
                f"{', '.join(gpu)} was used: {share:.1f}% of node time plus the copies around them",
                "Make them run on the GPU: check the provider's supported operators and "
                "types (ORT logs 'Fallback to CPU' at log level 1), replace the unsupported "
                "ops or cast their inputs to a supported type, or raise the opset",
                _names(cpu),
                None,
                None,
            )
        ]


class MemcpyNodes(Detector):
    id = "memcpy"
    title = "Memory copies between devices"

    def detect(self, context: Context) -> list[Finding]:
        copies = [
            t
            for t in context.stats.nodes
            if t.node.op_type.startswith("Memcpy")
            or t.node.name.startswith("Memcpy")
            or t.node.op_type in ("Copy", "CopyNode")
        ]
        if not copies:
            return []
        us = sum(t.per_iteration_us for t in copies)
        share = sum(t.percent for t in copies)
        return [
            Finding(
                self.id,
                "high" if share >= 5.0 else "medium",
                f"{len(copies)} memory-copy node(s) between host and device: {share:.1f}% of "
                "node time",
                "Keep the data on one device: move the nodes that force the copies (usually "
                "CPU-only ops or fallbacks) to the GPU provider, and bind inputs/outputs on the "
                "device (IOBinding) so the run starts and ends there",
                tuple(t.node.name for t in copies),
                *context.gain(us),
            )
        ]


_CASTS = {"Cast", "ReorderInput", "ReorderOutput", "Reformat"}


class CastReformat(Detector):
    """Cast / layout-reorder / reformat layers, and apart from them TensorRT's stand-alone
    quantize/dequantize layers (typed Reformat by TensorRT 8.x): those are Q/DQ placement,
    fixed by moving the Q/DQ nodes so TensorRT fuses them, never by leaving INT8."""

    id = "cast-reformat"
    title = "Many Cast / reformat layers"
    #: Fires from this share of node time, or from this many such nodes when they are
    #: also at least MIN_NODE_SHARE percent of the profiled nodes.
    MIN_PERCENT = 5.0
    MIN_NODES = 16
    MIN_NODE_SHARE = 5.0

    def detect(self, context: Context) -> list[Finding]:
        items = [
            t
            for t in context.stats.nodes
            if t.node.op_type != "NoOp"  # TensorRT's NoOp copy nodes do no work
            # nor do zero-time TensorRT copies (NoOp when the layer JSON is there to say so)
            and (t.total_us > 0.0 or t.node.device != "TensorRT")
            and (t.node.op_type in _CASTS or t.node.name.startswith("Reformatting CopyNode"))
        ]
        qdq = [t for t in items if t.node.qdq]
        casts = [t for t in items if not t.node.qdq]
        int8 = any(t.node.precision == "INT8" for t in context.stats.nodes) or bool(qdq)
        out = []
        if self._fires(context, casts):
            out.append(self._casts(context, casts, int8))
        if self._fires(context, qdq):
            out.append(self._qdq(context, qdq))
        return out

    def _fires(self, context: Context, items: list[NodeTimes]) -> bool:
        share = sum(t.percent for t in items)
        many = len(items) >= self.MIN_NODES and (
            100.0 * len(items) / max(len(context.stats.nodes), 1) >= self.MIN_NODE_SHARE
        )
        return bool(items) and (share >= self.MIN_PERCENT or many)

    def _severity(self, items: list[NodeTimes]) -> Severity:
        return "medium" if sum(t.percent for t in items) >= self.MIN_PERCENT else "low"

    def _casts(self, context: Context, items: list[NodeTimes], int8: bool) -> Finding:
        kinds = ", ".join(sorted({t.node.op_type for t in items}))
        share = sum(t.percent for t in items)
        if int8:  # INT8: converting to FP16 would give up INT8's speed
            fix = (
                "Keep one precision and layout between the INT8 layers: quantize the inputs "
                "and outputs of the layers the reformats sit between (Q/DQ on both inputs "
                "of Add/Concat, on pooling) so they run in INT8 too, and give TensorRT I/O "
                "formats that match the first/last layers (--inputIOFormats/--outputIOFormats)"
            )
        else:
            fix = (
                "Keep one precision and layout through the graph: convert the whole model "
                "(FP16 with --keep-io-types puts the casts only at the inputs and outputs), "
                "remove Cast pairs that cancel (Sanitize), and give TensorRT I/O formats that "
                "match the first/last layers (--inputIOFormats/--outputIOFormats)"
            )
        return Finding(
            self.id,
            self._severity(items),
            f"{len(items)} Cast/reformat/layout node(s) ({kinds}): {share:.1f}% of node time",
            fix,
            _names(items),
            *context.gain(sum(t.per_iteration_us for t in items)),
        )

    def _qdq(self, context: Context, items: list[NodeTimes]) -> Finding:
        share = sum(t.percent for t in items)
        return Finding(
            self.id,
            self._severity(items),
            f"{len(items)} stand-alone quantize/dequantize layer(s) that TensorRT did not fuse "
            f"into a neighbour (Q/DQ placement): {share:.1f}% of node time",
            "Keep the engine INT8 and move the Q/DQ pairs so each sits directly on an input "
            "of a quantizable layer (Conv/Gemm/MatMul), quantize both inputs of Add/Concat "
            "(the residual input too), so TensorRT fuses them into the layers; a Q/DQ on the "
            "network input stays unless the input is fed as INT8 (--inputIOFormats=int8:…). "
            "`onnx-designer engine lint` lists them (unfused-qdq)",
            _names(items),
            *context.gain(sum(t.per_iteration_us for t in items)),
        )


class TinyKernels(Detector):
    id = "tiny-kernels"
    title = "Many tiny kernels"
    #: A kernel/node execution at most this long (µs) counts as tiny.
    TINY_US = 20.0
    #: Fires when at least this share of executions are tiny, they take at least this
    #: share of node time, and there are at least this many per iteration.
    MIN_COUNT_SHARE = 80.0
    MIN_TIME_SHARE = 20.0
    MIN_PER_ITERATION = 50

    def detect(self, context: Context) -> list[Finding]:
        stats = context.stats
        p, rng = stats.profile, stats.range
        if p.kernel_calls:
            durations = [k.dur_us for k in p.kernel_calls if rng is None or k.iteration in rng]
            per = stats.iteration_count
        elif p.executions:
            durations = [e.dur_us for e in p.executions if rng is None or e.iteration in rng]
            per = stats.iteration_count
        else:  # aggregates: one mean per layer and iteration
            durations, per = [t.mean_us for t in stats.nodes], 1
        total = sum(durations)
        if not durations or total <= 0:
            return []
        tiny = [d for d in durations if d <= self.TINY_US]
        per_iteration = len(tiny) / per
        count_share = 100.0 * len(tiny) / len(durations)
        share = 100.0 * sum(tiny) / total
        if (
            count_share < self.MIN_COUNT_SHARE
            or share < self.MIN_TIME_SHARE
            or per_iteration < self.MIN_PER_ITERATION
        ):
            return []
        return [
            Finding(
                self.id,
                "medium",
                f"{per_iteration:.0f} executions per iteration ({count_share:.0f}%) last ≤ "
                f"{self.TINY_US:.0f} µs and make {share:.0f}% of node time: launch and "
                "scheduling overhead dominates (batch too small)",
                "Give each run more work: a larger batch (or several requests batched "
                "together), fewer, fused nodes (ORT graph optimizations on, TensorRT), or "
                "CUDA graphs for a fixed-shape GPU run",
            )
        ]
