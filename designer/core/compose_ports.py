"""The inputs and outputs two models are composed through: their types as text, whether an
output of A can feed an input of B, and names the two models share.

Used by :mod:`designer.core.compose` and by the Compose Models dialog (its table shows
each pair's types and flags mismatches before anything is composed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import onnx
from onnx import compose

from designer.core.transforms.dtypes import type_name
from designer.core.walk import iter_nodes, nested_graphs

#: One dimension: a size, a symbolic name, or None when unknown.
Dim = int | str | None


@dataclass(frozen=True)
class Port:
    """A graph input or output: its name, its type as a TypeProto and as text."""

    name: str
    type: onnx.TypeProto

    @property
    def elem_type(self) -> int:
        return int(self.type.tensor_type.elem_type) if self.is_tensor else 0

    @property
    def is_tensor(self) -> bool:
        return bool(self.type.WhichOneof("value") == "tensor_type")

    @property
    def shape(self) -> tuple[Dim, ...] | None:
        """The dimensions, or None when the rank is unknown (or it is no tensor)."""
        if not self.is_tensor or not self.type.tensor_type.HasField("shape"):
            return None
        dims: list[Dim] = []
        for d in self.type.tensor_type.shape.dim:
            which = d.WhichOneof("value")
            dims.append(d.dim_value if which == "dim_value" else d.dim_param or None)
        return tuple(dims)

    @property
    def text(self) -> str:
        """``float32[1,3,N]``; ``?`` for an unknown dimension, ``[...]`` for unknown rank."""
        if not self.is_tensor:
            kind = self.type.WhichOneof("value") or "unknown"
            return kind.replace("_type", "")
        elem = self.elem_type
        name = (
            "?" if elem == 0 else ("float32" if elem == onnx.TensorProto.FLOAT else type_name(elem))
        )
        shape = self.shape
        if shape is None:
            return f"{name}[...]"
        return f"{name}[{','.join('?' if d is None else str(d) for d in shape)}]"


def graph_inputs(model: onnx.ModelProto) -> list[Port]:
    """Inputs of the main graph that are not initializers (what a caller must feed)."""
    inits = {t.name for t in model.graph.initializer}
    return [Port(v.name, v.type) for v in model.graph.input if v.name not in inits]


def graph_outputs(model: onnx.ModelProto) -> list[Port]:
    return [Port(v.name, v.type) for v in model.graph.output]


def pair_problem(out: Port, inp: Port) -> str | None:
    """Why output ``out`` of A cannot feed input ``inp`` of B (one phrase), or None.

    Element types must be equal (a type the model does not declare passes); ranks must be
    equal where both are known; sizes must be equal where both are numbers (a symbolic or
    unknown dimension passes). Non-tensor types must be identical."""
    if out.is_tensor != inp.is_tensor or (not out.is_tensor and out.type != inp.type):
        return f"{out.text} cannot feed {inp.text}"
    if out.elem_type and inp.elem_type and out.elem_type != inp.elem_type:
        return f"element type {out.text} ≠ {inp.text}"
    a, b = out.shape, inp.shape
    if a is None or b is None:
        return None
    if len(a) != len(b):
        return f"rank {len(a)} ≠ {len(b)} ({out.text} → {inp.text})"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if isinstance(x, int) and isinstance(y, int) and x != y:
            return f"dimension {i}: {x} ≠ {y} ({out.text} → {inp.text})"
    return None


def suggest_map(a: onnx.ModelProto, b: onnx.ModelProto) -> list[tuple[str, str]]:
    """A first guess at the wiring: outputs of A to inputs of B of the same name; otherwise,
    when A has as many outputs as B has inputs, by position where the types fit."""
    outs, ins = graph_outputs(a), graph_inputs(b)
    by_name = {p.name: p for p in outs}
    named = [(by_name[i.name].name, i.name) for i in ins if i.name in by_name]
    if named:
        return [(o, i) for o, i in named if pair_problem(by_name[o], _find(ins, i)) is None]
    if len(outs) == len(ins):
        return [(o.name, i.name) for o, i in zip(outs, ins, strict=True) if not pair_problem(o, i)]
    return []


def _find(ports: Sequence[Port], name: str) -> Port:
    return next(p for p in ports if p.name == name)


def collisions(
    a: onnx.ModelProto,
    b: onnx.ModelProto,
    io_map: Sequence[tuple[str, str]],
    prefix_a: str = "",
    prefix_b: str = "",
) -> list[str]:
    """Names both models use (values, initializers, nodes, local functions) once the
    prefixes are applied, as ``kind 'name'`` phrases (at most the first few of each kind);
    the wired pairs do not count."""
    ga = _prefixed_graph(a, prefix_a)
    gb = _prefixed_graph(b, prefix_b)
    wired = [(prefix_a + o, prefix_b + i) for o, i in io_map]
    found: list[str] = []
    for kind, overlap in compose.check_overlapping_names(ga, gb, wired):
        names = sorted(overlap)
        shown = ", ".join(f"'{n}'" for n in names[:3])
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        found.append(f"{kind.lower().replace('_', ' ')} {shown}{more}")
    extra = {
        "node": ({n.name for n in ga.node if n.name}, {n.name for n in gb.node if n.name}),
        "graph input": (
            {v.name for v in ga.input},
            {v.name for v in gb.input} - {i for _o, i in wired},
        ),
    }
    for kind, (left, right) in extra.items():
        names = sorted(left & right)
        if names and not any(f.startswith(("edge", kind)) and names[0] in f for f in found):
            shown = ", ".join(f"'{n}'" for n in names[:3])
            more = f" and {len(names) - 3} more" if len(names) > 3 else ""
            found.append(f"{kind} {shown}{more}")
    funcs_a = {(f.domain, prefix_a + f.name) for f in a.functions}
    funcs_b = {(f.domain, prefix_b + f.name) for f in b.functions}
    shared = sorted(funcs_a & funcs_b)
    if shared:
        found.append("local function " + ", ".join(f"'{d}:{n}'" for d, n in shared[:3]))
    return found


def _prefixed_graph(model: onnx.ModelProto, prefix: str) -> onnx.GraphProto:
    """The main graph without weights' data, names prefixed (cheap: weights are not copied)."""
    graph = onnx.GraphProto()
    graph.name = model.graph.name
    graph.node.extend(model.graph.node)
    graph.input.extend(model.graph.input)
    graph.output.extend(model.graph.output)
    graph.value_info.extend(model.graph.value_info)
    for t in model.graph.initializer:
        graph.initializer.add(name=t.name)
    for s in model.graph.sparse_initializer:
        sparse = graph.sparse_initializer.add()
        sparse.values.name = s.values.name
        sparse.indices.name = s.indices.name
    if prefix:
        prefix_graph(graph, prefix)
    return graph


def prefix_graph(graph: onnx.GraphProto, prefix: str) -> None:
    """Put ``prefix`` before every non-empty name of ``graph`` and of every graph nested in
    it, in place: node names, node inputs and outputs, graph inputs, outputs, initializers,
    sparse initializers, value_info and quantization annotations.

    Every name at every depth gets the same prefix, so an If/Loop/Scan body that reads an
    outer value (``x``, an initializer ``w``) still finds it (``a/x``, ``a/w``) and names
    defined inside a body stay distinct from the other model's. ``onnx.compose.add_prefix``
    renames a body before the outer initializers are known and leaves such reads dangling.
    Cost: one pass over the names of every graph."""
    for sub in nested_graphs(graph):
        _prefix_one_graph(sub, prefix)


def _prefix_one_graph(graph: onnx.GraphProto, prefix: str) -> None:
    """One graph's own names (not those of the graphs its nodes hold)."""

    def named(name: str) -> str:
        return prefix + name if name else name

    for node in graph.node:
        node.name = named(node.name)
        node.input[:] = [named(n) for n in node.input]
        node.output[:] = [named(n) for n in node.output]
    for value in (*graph.input, *graph.output, *graph.value_info, *graph.initializer):
        value.name = named(value.name)
    for sparse in graph.sparse_initializer:
        sparse.values.name = named(sparse.values.name)
        sparse.indices.name = named(sparse.indices.name)
    for note in graph.quantization_annotation:
        note.tensor_name = named(note.tensor_name)


def prefix_model(model: onnx.ModelProto, prefix: str) -> None:
    """:func:`prefix_graph` on the main graph, and ``prefix`` before the name of every
    local function and of every call to one (in the main graph, its subgraphs and the
    function bodies, subgraphs included), in place. A function body's own value names are
    local to it and stay as they are."""
    prefix_graph(model.graph, prefix)
    local = {(f.domain, f.name) for f in model.functions}
    if not local:
        return
    for fn in model.functions:
        fn.name = prefix + fn.name
    for node in iter_nodes(model):
        if (node.domain, node.op_type) in local:
            node.op_type = prefix + node.op_type
