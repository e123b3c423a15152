"""Engine lint rules: static checks of an engine's layers, one small class per hazard.

Each finding names its rule, a severity (``error`` > ``warning`` > ``info``), the layer(s),
what was found and one actionable fix. Rules read only the :class:`EngineBundle` (layer JSON,
build options, profile when present) and stay silent when what they need is not recorded.
"""

from __future__ import annotations

from collections.abc import Sequence

from designer.activities.reports.engine_bundle import EngineBundle
from designer.activities.reports.engine_lint_base import (
    DATA_MOVEMENT,
    SEVERITIES,
    Finding,
    LintRule,
    io_names_through_noops,
    latency_share,
    live_layers,
    severity_rank,
    share_text,
)
from designer.activities.reports.engine_lint_precision import (
    ChannelAlignment,
    Fp32WhereReducedAllowed,
    Fp32WithoutTf32,
    Int8ConvFloatOutput,
    SlowerThanRequested,
    UnfusedQdq,
)
from designer.activities.reports.trt_engine import EngineLayer

__all__ = [
    "RULES",
    "SEVERITIES",
    "ChannelAlignment",
    "Finding",
    "Fp32WhereReducedAllowed",
    "Fp32WithoutTf32",
    "Int8ConvFloatOutput",
    "LintRule",
    "ReformatAtIO",
    "SliceShuffleSegments",
    "SlowerThanRequested",
    "TooManyReformats",
    "UnfusedQdq",
    "lint",
    "severity_rank",
]


class TooManyReformats(LintRule):
    id = "too-many-reformats"
    title = "Reformat layers take a large share of the time"
    SHARE = 10.0  # % of the per-layer time
    COUNT_FRACTION = 0.10  # without a profile: reformats / layers

    def check(self, bundle: EngineBundle) -> list[Finding]:
        graph = bundle.graph
        inputs, outputs = io_names_through_noops(graph)
        inner = [
            layer
            for layer in live_layers(graph)
            if layer.is_reformat
            and not any(t.name in inputs for t in layer.inputs)
            and not any(t.name in outputs for t in layer.outputs)
        ]
        if not inner:
            return []
        share = latency_share(bundle, inner)
        live = len(live_layers(graph))
        if share is not None and share < self.SHARE:
            return []
        if share is None and len(inner) < self.COUNT_FRACTION * live:
            return []
        amount = f"{share:.1f} % of the layer time" if share is not None else f"of {live} layers"
        return [
            Finding(
                self.id,
                "warning",
                tuple(layer.name for layer in inner),
                f"{len(inner)} reformat layers inside the network, {amount}",
                "Reduce precision/layout changes: keep neighbouring layers in one precision "
                "(add Q/DQ around float islands in QAT models, or allow FP16 everywhere), and "
                "avoid layers that force a layout (Shuffle/Slice between convolutions)",
            )
        ]


class ReformatAtIO(LintRule):
    id = "reformat-at-io"
    title = "Reformats at the engine's inputs or outputs"

    def check(self, bundle: EngineBundle) -> list[Finding]:
        graph = bundle.graph
        inputs, outputs = io_names_through_noops(graph)
        out = []
        for layer in live_layers(graph):
            if not layer.is_reformat or layer.is_qdq:
                continue
            side = (
                "input"
                if any(t.name in inputs for t in layer.inputs)
                else "output"
                if any(t.name in outputs for t in layer.outputs)
                else None
            )
            if side is None:
                continue
            src, dst = (
                layer.inputs[0] if layer.inputs else None,
                layer.outputs[0] if layer.outputs else None,
            )
            want = dst if side == "input" else src
            hint = (
                f"{(want.precision or '').lower()}:{(want.layout or 'linear').lower()}"
                if want is not None
                else "the format of the first/last layer"
            )
            flag = "--inputIOFormats" if side == "input" else "--outputIOFormats"
            out.append(
                Finding(
                    self.id,
                    "info",
                    (layer.name,),
                    f"the engine {side} is converted "
                    f"{src.label() if src else '?'} -> {dst.label() if dst else '?'}"
                    f"{share_text(latency_share(bundle, [layer]))}",
                    f"Build with trtexec {flag}={hint} (IBuilderConfig: set the network "
                    f"{side}'s allowed formats and type) so the engine takes data as its "
                    f"{'first' if side == 'input' else 'last'} layer wants it",
                )
            )
        return out


class SliceShuffleSegments(LintRule):
    id = "slice-shuffle-segment"
    title = "Slice/Shuffle-heavy segments"
    SHARE = 5.0  # % of the per-layer time for one segment
    LENGTH = 3  # consecutive data-movement layers without a profile

    def check(self, bundle: EngineBundle) -> list[Finding]:
        segments: list[list[EngineLayer]] = []
        current: list[EngineLayer] = []
        for layer in live_layers(bundle.graph):
            if layer.kind in DATA_MOVEMENT or layer.is_reformat:
                current.append(layer)
                continue
            segments.append(current)
            current = []
        segments.append(current)
        out = []
        for seg in segments:
            if len(seg) < 2 or not any(layer.kind in ("Slice", "Shuffle") for layer in seg):
                continue
            share = latency_share(bundle, seg)
            if (share is not None and share < self.SHARE) or (
                share is None and len(seg) < self.LENGTH
            ):
                continue
            out.append(
                Finding(
                    self.id,
                    "warning",
                    tuple(layer.name for layer in seg),
                    f"{len(seg)} consecutive data-movement layers "
                    f"({', '.join(layer.kind for layer in seg)}){share_text(share)}",
                    "Remove the copies in the model: fold the Pad into the convolution's padding, "
                    "keep the layout the convolution wants (NCHW export, not NHWC + Transpose), "
                    "and quantize after the reshape rather than before it",
                )
            )
        return out


RULES: tuple[type[LintRule], ...] = (
    Int8ConvFloatOutput,
    UnfusedQdq,
    TooManyReformats,
    ReformatAtIO,
    Fp32WhereReducedAllowed,
    Fp32WithoutTf32,
    ChannelAlignment,
    SlowerThanRequested,
    SliceShuffleSegments,
)


def lint(bundle: EngineBundle, rules: Sequence[type[LintRule]] = RULES) -> list[Finding]:
    """Run ``rules`` on one engine; findings sorted most severe first, then by layer order."""
    order = {layer.name: layer.index for layer in bundle.graph.layers}
    findings = [f for rule in rules for f in rule().check(bundle)]
    findings.sort(key=lambda f: (-severity_rank(f.severity), order.get(f.layers[0], 1 << 30)))
    return findings
