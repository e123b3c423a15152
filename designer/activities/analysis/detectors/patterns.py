"""Decomposed patterns that have fused equivalents (LayerNorm, RMSNorm, GELU, attention),
found by subgraph isomorphism (networkx's DiGraphMatcher) on the ONNX model's main graph,
then checked against the profile: a pattern is reported only where at least two of its
nodes ran as separate nodes (ORT: a profiled node of the same name and op type; TensorRT: a
layer made of that node alone), so a profile of an optimized session, where ONNX Runtime
or TensorRT fused the pattern, does not report it.

Expected gain: the pattern's node time minus its slowest node (a fused kernel makes about
one pass over the data instead of one per node).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import onnx

from designer.activities.analysis.detectors.base import Context, Detector, Finding

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["PATTERNS", "FusedPatterns", "Match", "find_patterns"]


@dataclass(frozen=True)
class Pattern:
    name: str  # the fused equivalent
    edges: tuple[tuple[str, str], ...]  # "i:Op" node labels; edges producer -> consumer
    fix: str


def _chain(*ops: str) -> tuple[tuple[str, str], ...]:
    labels = [f"{i}:{op}" for i, op in enumerate(ops)]
    return tuple(itertools.pairwise(labels))


_LN_FIX = (
    "Use the fused LayerNormalization: export with opset >= 17, or let ONNX Runtime fuse it "
    "(graph optimizations ORT_ENABLE_EXTENDED or higher; profile with --optimize); TensorRT "
    "fuses it itself"
)
_GELU_FIX = (
    "Use a fused GELU: ONNX Runtime fuses it at ORT_ENABLE_EXTENDED or higher (profile with "
    "--optimize), opset 20 has Gelu, or run the transformer optimizer (plugins/"
    "ort_transformer_optimizer.py)"
)
_ATT_FIX = (
    "Use a fused attention kernel: run ONNX Runtime's transformer optimizer (plugins/"
    "ort_transformer_optimizer.py --model-type gpt2/bert) to get Attention/"
    "MultiHeadAttention, or build with TensorRT, which fuses it into one kernel"
)


def _attention() -> list[Pattern]:
    out = []
    for scale, mask, cast in itertools.product(
        (None, "Mul", "Div"), (None, "Add", "Where"), (None, "Cast")
    ):
        ops = [
            "MatMul",
            *(o for o in (scale, mask) if o),
            "Softmax",
            *([cast] if cast else []),
            "MatMul",
        ]
        out.append(Pattern("Attention", _chain(*ops), _ATT_FIX))
    out.sort(key=lambda p: -len(p.edges))  # longest first: a match keeps its longest form
    return out


PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "LayerNormalization",
        (
            ("0:ReduceMean", "1:Sub"),
            ("1:Sub", "2:Pow"),
            ("2:Pow", "3:ReduceMean"),
            ("3:ReduceMean", "4:Add"),
            ("4:Add", "5:Sqrt"),
            ("5:Sqrt", "6:Div"),
            ("1:Sub", "6:Div"),
        ),
        _LN_FIX,
    ),
    Pattern(
        "LayerNormalization",
        (
            ("0:ReduceMean", "1:Sub"),
            ("1:Sub", "2:Mul"),
            ("2:Mul", "3:ReduceMean"),
            ("3:ReduceMean", "4:Add"),
            ("4:Add", "5:Sqrt"),
            ("5:Sqrt", "6:Div"),
            ("1:Sub", "6:Div"),
        ),
        _LN_FIX,
    ),
    Pattern("RMSNormalization", _chain("Pow", "ReduceMean", "Add", "Sqrt", "Div"), _LN_FIX),
    Pattern("RMSNormalization", _chain("Pow", "ReduceMean", "Add", "Sqrt", "Reciprocal"), _LN_FIX),
    Pattern("RMSNormalization", _chain("Pow", "ReduceMean", "Add", "Rsqrt"), _LN_FIX),
    Pattern("Gelu", _chain("Div", "Erf", "Add", "Mul", "Mul"), _GELU_FIX),
    Pattern("Gelu", _chain("Mul", "Erf", "Add", "Mul", "Mul"), _GELU_FIX),
    Pattern("Gelu", _chain("Div", "Erf", "Add", "Mul"), _GELU_FIX),
    Pattern("FastGelu", _chain("Pow", "Mul", "Add", "Mul", "Tanh", "Add", "Mul"), _GELU_FIX),
    Pattern("FastGelu", _chain("Mul", "Mul", "Add", "Mul", "Tanh", "Add", "Mul"), _GELU_FIX),
    *_attention(),
)


@dataclass(frozen=True)
class Match:
    pattern: Pattern
    nodes: tuple[str, ...]  # ONNX node names, in pattern order
    op_types: tuple[str, ...]


def _graph(model: onnx.ModelProto) -> nx.DiGraph:
    import networkx as nx  # imported on first use: the GUI starts without it

    g = nx.DiGraph()
    producer: dict[str, int] = {}
    for i, node in enumerate(model.graph.node):
        g.add_node(i, op=node.op_type)
        for out in node.output:
            if out:
                producer[out] = i
    for i, node in enumerate(model.graph.node):
        for inp in node.input:
            j = producer.get(inp)
            if j is not None and j != i:
                g.add_edge(j, i)
    return g


def _pattern_graph(pattern: Pattern) -> nx.DiGraph:
    import networkx as nx

    p = nx.DiGraph()
    for a, b in pattern.edges:
        p.add_node(a, op=a.split(":", 1)[1])
        p.add_node(b, op=b.split(":", 1)[1])
        p.add_edge(a, b)
    return p


def find_patterns(model: onnx.ModelProto) -> Iterator[Match]:
    """Every non-overlapping decomposed pattern in the main graph (a node belongs to at most
    one match; earlier patterns win). Cost: VF2 on the subgraph of the pattern's op types."""
    from networkx.algorithms.isomorphism import DiGraphMatcher

    g = _graph(model)
    names = [n.name or f"#{i}" for i, n in enumerate(model.graph.node)]
    used: set[int] = set()
    for pattern in PATTERNS:
        pg = _pattern_graph(pattern)
        ops = {d["op"] for _n, d in pg.nodes(data=True)}
        sub = g.subgraph([n for n, d in g.nodes(data=True) if d["op"] in ops and n not in used])
        matcher = DiGraphMatcher(sub, pg, node_match=lambda a, b: a["op"] == b["op"])
        order = list(pg.nodes)
        for mapping in matcher.subgraph_isomorphisms_iter():
            inverse = {v: k for k, v in mapping.items()}
            members = [inverse[label] for label in order]
            if used.intersection(members):
                continue
            used.update(members)
            yield Match(
                pattern,
                tuple(names[i] for i in members),
                tuple(g.nodes[i]["op"] for i in members),
            )


class FusedPatterns(Detector):
    id = "fused-patterns"
    title = "Decomposed patterns with fused equivalents"

    def detect(self, context: Context) -> list[Finding]:
        model = context.model or context.profile.model
        if model is None:
            return []
        alone: dict[str, float] = {}  # ONNX node name -> per-iteration µs when it ran alone
        for t in context.stats.nodes:
            n = t.node
            if context.profile.kind == "onnxruntime":
                if n.onnx_nodes == (n.name,) and n.mapping in ("exact", "unmapped"):
                    alone[n.name] = alone.get(n.name, 0.0) + t.per_iteration_us
            elif len(n.onnx_nodes) == 1:
                alone[n.onnx_nodes[0]] = alone.get(n.onnx_nodes[0], 0.0) + t.per_iteration_us
        groups: dict[str, list[tuple[Match, list[float]]]] = {}
        for match in find_patterns(model):
            times = [alone[name] for name in match.nodes if name in alone]
            if len(times) >= 2:
                groups.setdefault(match.pattern.name, []).append((match, times))
        findings = []
        for name, items in groups.items():
            gain = sum(sum(times) - max(times) for _m, times in items)
            nodes = tuple(n for m, _t in items for n in m.nodes)
            findings.append(
                Finding(
                    self.id,
                    "medium",
                    f"{len(items)} decomposed {name} pattern(s) ran as {len(nodes)} separate "
                    f"nodes ({' → '.join(items[0][0].op_types)})",
                    items[0][0].pattern.fix,
                    nodes,
                    *context.gain(gain),
                )
            )
        return findings
