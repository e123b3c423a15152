"""An engine graph as the canvas's plain view records (Qt-free).

The canvas draws :class:`~designer.core.viewgraph.ViewGraph` records: nodes with terminals and
links between terminals. :func:`build_engine_view` turns an
:class:`~designer.activities.reports.trt_engine.EngineGraph` into one: every layer is an OP
node (key = layer index) whose terminals are its input and output tensors, every engine input
and output an INPUT/OUTPUT node (keys -1, -2, …), and every tensor written by one layer and
read by another a link. Beside the graph it keeps what the engine view adds: the colour key of
each layer's type, reformat marks, the latency share when a profile is known, and the
precision of each link's tensor. O(layers + tensors).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from designer.activities.reports.trt_engine import (
    EngineGraph,
    EngineIOTensor,
    EngineLayer,
    EngineTensor,
)
from designer.core.scope import MAIN_SCOPE
from designer.core.viewgraph import (
    NodeKind,
    Terminal,
    TerminalState,
    ViewEdge,
    ViewGraph,
    ViewNode,
)

__all__ = [
    "EngineNodeInfo",
    "EngineViewGraph",
    "build_engine_view",
    "dims_text",
    "layer_category",
]

# (substring of the lower-cased layer kind / implementation, colour key), first match wins.
_CATEGORY_RULES: tuple[tuple[str, str], ...] = (
    ("reformat", "reformat"),
    ("noop", "noop"),
    ("quantize", "quantization"),
    ("conv", "convolution"),
    ("matrixmultiply", "matmul"),
    ("fullyconnected", "matmul"),
    ("gemm", "matmul"),
    ("pool", "pooling"),
    ("softmax", "softmax"),
    ("normalization", "normalization"),
    ("layernorm", "normalization"),
    ("reduce", "reduction"),
    ("activation", "activation"),
    ("pointwise", "elementwise"),
    ("elementwise", "elementwise"),
    ("unary", "elementwise"),
    ("scale", "elementwise"),
    ("shuffle", "shape"),
    ("slice", "shape"),
    ("padding", "shape"),
    ("concatenation", "shape"),
    ("gather", "shape"),
    ("resize", "shape"),
    ("shape", "shape"),
    ("constant", "shape"),
    ("attention", "attention"),
    ("mha", "attention"),
    ("plugin", "plugin"),
)


def layer_category(layer: EngineLayer) -> str:
    """Colour key of a layer's type: convolution, matmul, pooling, activation, elementwise,
    normalization, reduction, softmax, shape, quantization, reformat, noop, attention,
    plugin or other."""
    if layer.is_reformat:
        return "reformat"
    if layer.is_qdq:
        return "quantization"
    for text in (layer.parameter_type, layer.layer_type):
        low = (text or "").lower()
        for needle, category in _CATEGORY_RULES:
            if needle in low:
                return category
    return "other"


def dims_text(dims: tuple[int, ...] | None) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]" if dims is not None else "[?]"


@dataclass(frozen=True, slots=True)
class EngineNodeInfo:
    """What the engine view knows of one drawn node beside its ViewNode."""

    key: int
    layer: EngineLayer | None  # None for an engine input/output
    io: EngineIOTensor | None  # the engine input/output (None for a layer)
    category: str  # colour key (see layer_category); "input" / "output" for the I/O
    is_reformat: bool
    caption: str  # the second text line: kind, precision, latency share
    ms: float | None = None  # mean latency of the layer when a profile is loaded
    share: float | None = None  # its share of the summed layer latencies (0..1)


@dataclass
class EngineViewGraph:
    """The drawable engine: ``graph`` for the canvas, ``info`` per node key, ``precision``
    per link (FP32, FP16, INT8, … or "other"), ``tensors`` by name (first record seen)."""

    graph: ViewGraph
    info: dict[int, EngineNodeInfo]
    precision: dict[ViewEdge, str]
    title: str
    tensors: dict[str, EngineTensor] = field(default_factory=dict)
    profiled: bool = False

    def layer_key(self, name: str) -> int | None:
        for key, info in self.info.items():
            if info.layer is not None and info.layer.name == name:
                return key
        return None

    def node_tooltip(self, key: int) -> str:
        info = self.info.get(key)
        if info is None:
            return ""
        if info.io is not None:
            io = info.io
            lines = [f"engine {(io.mode or 'I/O').lower()} {io.name}"]
            lines.append(
                f"{io.precision or io.datatype or 'type not recorded'} {dims_text(io.dims)}"
            )
            if io.format:
                lines.append(io.format)
            for i, p in enumerate(io.profiles):
                lines.append(
                    f"profile {i}: min {dims_text(p.min_shape)} opt {dims_text(p.opt_shape)} "
                    f"max {dims_text(p.max_shape)}"
                )
            return "\n".join(lines)
        layer = info.layer
        assert layer is not None
        lines = [layer.name, f"{layer.kind} ({layer.layer_type or 'implementation not recorded'})"]
        if layer.tactic:
            lines.append(f"tactic {layer.tactic}")
        if info.ms is not None and info.share is not None:
            lines.append(f"latency {info.ms:.4f} ms ({100.0 * info.share:.2f} % of the layers)")
        lines += [f"in  {t.name}: {t.label()}" for t in layer.inputs[:6]]
        lines += [f"out {t.name}: {t.label()}" for t in layer.outputs[:6]]
        return "\n".join(lines)

    def edge_tooltip(self, edge: ViewEdge) -> str:
        tensor = self.tensors.get(edge.tensor)
        if tensor is None:
            return edge.tensor
        text = f"{tensor.name}\n{tensor.label()}"
        return text + (f"\n{tensor.format}" if tensor.format else "")


def _caption(layer: EngineLayer, ms: float | None, share: float | None) -> str:
    parts = [f"⇄ {layer.kind}" if layer.is_reformat else layer.kind]
    if layer.precision:
        parts.append(layer.precision)
    if share is not None:
        parts.append(f"{100.0 * share:.1f} %")
    return " · ".join(parts)


def _io_label(io: EngineIOTensor) -> str:
    what = io.precision or io.datatype or "?"
    return f"{io.name} · {what} {dims_text(io.dims)}"


def build_engine_view(
    graph: EngineGraph,
    latency_ms: Mapping[str, float] | None = None,
    *,
    title: str = "",
) -> EngineViewGraph:
    """The view records of ``graph``; ``latency_ms`` maps layer names to mean times (from a
    profile). Shares are of the sum of every time in ``latency_ms`` (the report card's total)."""
    linked = TerminalState.LINKED
    nodes: list[ViewNode] = []
    info: dict[int, EngineNodeInfo] = {}
    tensors: dict[str, EngineTensor] = {}
    producers: dict[str, tuple[int, int]] = {}
    inputs = [io for io in graph.io_tensors if (io.mode or "").lower() == "input"]
    outputs = [io for io in graph.io_tensors if (io.mode or "").lower() == "output"]
    others = [io for io in graph.io_tensors if io not in inputs and io not in outputs]
    times = dict(latency_ms or {})
    total = sum(times.values())  # the whole profile, as the report card counts it

    for j, io in enumerate(inputs):
        key = -1 - j
        producers[io.name] = (key, 0)
        nodes.append(
            ViewNode(
                key,
                NodeKind.INPUT,
                _io_label(io),
                "Input",
                outputs=[Terminal(0, io.name, io.name, linked)],
            )
        )
        info[key] = EngineNodeInfo(key, None, io, "input", False, "engine input")
    for layer in graph.layers:
        key = layer.index
        ms = times.get(layer.name) if times else None
        share = ms / total if ms is not None and total > 0 else None
        outs = [
            Terminal(i, t.name, t.name, TerminalState.UNCONNECTED)
            for i, t in enumerate(layer.outputs)
        ]
        for i, t in enumerate(layer.outputs):
            producers.setdefault(t.name, (key, i))
            tensors.setdefault(t.name, t)
        for t in layer.inputs:
            tensors.setdefault(t.name, t)
        nodes.append(ViewNode(key, NodeKind.OP, layer.name, layer.kind, outputs=outs))
        info[key] = EngineNodeInfo(
            key,
            layer,
            None,
            layer_category(layer),
            layer.is_reformat,
            _caption(layer, ms, share),
            ms,
            share,
        )

    edges: list[ViewEdge] = []
    precision: dict[ViewEdge, str] = {}
    for node in nodes:
        info_ = info[node.key]
        if info_.layer is None:
            continue
        for slot, t in enumerate(info_.layer.inputs):
            terminal = Terminal(slot, t.name, t.name, TerminalState.UNCONNECTED)
            node.inputs.append(terminal)
            source = producers.get(t.name)
            if source is not None and source[0] != node.key:
                terminal.state = linked
                edge = ViewEdge(source[0], source[1], node.key, slot, t.name)
                edges.append(edge)
                precision[edge] = _precision_of(tensors.get(t.name), t)
    base = len(inputs)
    for j, io in enumerate([*outputs, *others]):
        key = -1 - base - j
        terminal = Terminal(0, io.name, io.name, TerminalState.UNCONNECTED)
        nodes.append(ViewNode(key, NodeKind.OUTPUT, _io_label(io), "Output", inputs=[terminal]))
        info[key] = EngineNodeInfo(key, None, io, "output", False, "engine output")
        source = producers.get(io.name)
        if source is not None and source[0] >= 0:
            terminal.state = linked
            edge = ViewEdge(source[0], source[1], key, 0, io.name)
            edges.append(edge)
            precision[edge] = (
                _precision_of(tensors.get(io.name), None) if io.precision is None else io.precision
            )
    used = {(e.source, e.source_index) for e in edges}
    for node in nodes:
        for terminal in node.outputs:
            terminal.state = (
                linked if (node.key, terminal.index) in used else TerminalState.UNCONNECTED
            )
    view = ViewGraph(MAIN_SCOPE, nodes, edges)
    return EngineViewGraph(view, info, precision, title, tensors, profiled=bool(times))


def _precision_of(produced: EngineTensor | None, consumed: EngineTensor | None) -> str:
    for tensor in (produced, consumed):
        if tensor is not None and tensor.precision:
            return tensor.precision
    return "other"
