"""Engine lint basics: the finding record, the rule base class and graph helpers (Qt-free)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Literal

from designer.activities.reports.engine_bundle import EngineBundle
from designer.activities.reports.trt_engine import EngineGraph, EngineLayer

__all__ = [
    "COMPUTE_KINDS",
    "DATA_MOVEMENT",
    "FLOAT",
    "GEMM_KINDS",
    "SEVERITIES",
    "Finding",
    "LintRule",
    "Severity",
    "consumers_through_noops",
    "io_names_through_noops",
    "latency_share",
    "live_layers",
    "severity_rank",
    "share_text",
]

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")
FLOAT = {"FP32", "FP16", "BF16"}
COMPUTE_KINDS = {
    "Convolution",
    "Deconvolution",
    "FullyConnected",
    "MatrixMultiply",
    "gemm",
    "Gemm",
    "Pooling",
    "ElementWise",
    "Activation",
    "Scale",
    "Reduce",
    "Softmax",
    "Normalization",
    "PointWise",
    "PointWiseV2",
    "kgen",
    "Resize",
}
GEMM_KINDS = {"Convolution", "Deconvolution", "FullyConnected", "MatrixMultiply", "gemm", "Gemm"}
DATA_MOVEMENT = {
    "Slice",
    "Shuffle",
    "Padding",
    "Concatenation",
    "Gather",
    "Reformat",
    "Copy",
    "Transpose",
}


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity) if severity in SEVERITIES else -1


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    layers: tuple[str, ...]
    found: str
    fix: str

    def as_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "layers": list(self.layers),
            "found": self.found,
            "fix": self.fix,
        }


class LintRule:
    """One hazard. Subclasses set ``id`` / ``title`` and implement :meth:`check`."""

    id: ClassVar[str] = ""
    title: ClassVar[str] = ""

    def check(self, bundle: EngineBundle) -> list[Finding]:
        raise NotImplementedError


def live_layers(graph: EngineGraph) -> list[EngineLayer]:
    return [layer for layer in graph.layers if layer.kind != "NoOp"]


def consumers_through_noops(graph: EngineGraph, layer: EngineLayer) -> list[EngineLayer]:
    """Layers reading ``layer``'s outputs, looking through NoOp layers."""
    consumers = graph.consumers()
    out: list[EngineLayer] = []
    stack = [t.name for t in layer.outputs]
    seen: set[str] = set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        for c in consumers.get(name, []):
            if c.kind == "NoOp":
                stack.extend(t.name for t in c.outputs)
            elif c not in out:
                out.append(c)
    return out


def io_names_through_noops(graph: EngineGraph) -> tuple[set[str], set[str]]:
    """(tensors equal to a graph input, tensors equal to a graph output), NoOps folded."""
    inputs = {t.name for t in graph.io_tensors if t.mode == "Input"}
    outputs = {t.name for t in graph.io_tensors if t.mode == "Output"}
    changed = True
    while changed:
        changed = False
        for layer in graph.layers:
            if layer.kind != "NoOp" or not layer.inputs or not layer.outputs:
                continue
            i, o = layer.inputs[0].name, layer.outputs[0].name
            if i in inputs and o not in inputs:
                inputs.add(o)
                changed = True
            if o in outputs and i not in outputs:
                outputs.add(i)
                changed = True
    return inputs, outputs


def latency_share(bundle: EngineBundle, layers: Iterable[EngineLayer]) -> float | None:
    if bundle.profile is None or not bundle.profile.sum_average_ms:
        return None
    total = bundle.profile.sum_average_ms
    return 100.0 * sum(bundle.latency_of(layer.name) or 0.0 for layer in layers) / total


def share_text(share: float | None) -> str:
    return f", {share:.1f} % of the layer time" if share is not None else ""
