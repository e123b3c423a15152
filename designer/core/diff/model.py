"""Diff of two whole models: the main graph (recursively into subgraphs), local functions,
opsets and metadata."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import onnx

from designer.core.diff.nodes import Matcher, Side, compare_nodes, metadata_changes, node_info
from designer.core.diff.records import FieldChange, GraphDiff, ModelDiff
from designer.core.diff.tensors import diff_initializers
from designer.core.diff.values import format_type

#: version of the JSON written by ``onnx-designer diff --json`` (bumped on any change)
JSON_SCHEMA_VERSION = 1

MAIN = "main"


class _Context:
    def __init__(self, a_dir: Path | None, b_dir: Path | None) -> None:
        self.a_dir, self.b_dir = a_dir, b_dir

    def graph(
        self, a: onnx.GraphProto, b: onnx.GraphProto, scope: str, outer: Mapping[str, str]
    ) -> GraphDiff:
        sources_a = {t.name for t in a.initializer} | {v.name for v in a.input}
        sources_b = {t.name for t in b.initializer} | {v.name for v in b.input}
        matcher = Matcher(Side(a.node, sources_a), Side(b.node, sources_b), outer)
        changed, unchanged = compare_nodes(matcher, scope, self.graph)
        init_names_b = {t.name for t in b.initializer}
        renames = {y: x for y, x in matcher.b2a.items() if y in init_names_b and x != y}
        added, removed, inits_changed = diff_initializers(
            a.initializer, b.initializer, renames, self.a_dir, self.b_dir
        )
        return GraphDiff(
            scope=scope,
            nodes_added=tuple(
                node_info(n, j) for j, n in enumerate(b.node) if j not in matcher.pairs
            ),
            nodes_removed=tuple(
                node_info(n, i) for i, n in enumerate(a.node) if i not in matcher.taken
            ),
            nodes_changed=tuple(changed),
            nodes_unchanged=unchanged,
            matches=tuple(sorted((i, j) for j, i in matcher.pairs.items())),
            initializers_added=tuple(added),
            initializers_removed=tuple(removed),
            initializers_changed=tuple(inits_changed),
            inputs=tuple(_values(a.input, b.input)),
            outputs=tuple(_values(a.output, b.output)),
        )

    def function(self, a: onnx.FunctionProto, b: onnx.FunctionProto, scope: str) -> GraphDiff:
        matcher = Matcher(Side(a.node, set(a.input)), Side(b.node, set(b.input)))
        changed, unchanged = compare_nodes(matcher, scope, self.graph)
        return GraphDiff(
            scope=scope,
            nodes_added=tuple(
                node_info(n, j) for j, n in enumerate(b.node) if j not in matcher.pairs
            ),
            nodes_removed=tuple(
                node_info(n, i) for i, n in enumerate(a.node) if i not in matcher.taken
            ),
            nodes_changed=tuple(changed),
            nodes_unchanged=unchanged,
            matches=tuple(sorted((i, j) for j, i in matcher.pairs.items())),
            inputs=tuple(_names("input", a.input, b.input)),
            outputs=tuple(_names("output", a.output, b.output)),
        )


def _values(
    a: Iterable[onnx.ValueInfoProto], b: Iterable[onnx.ValueInfoProto]
) -> list[FieldChange]:
    """Graph inputs/outputs by name: added, removed, or changed type/shape."""
    types_a = {v.name: format_type(v.type) for v in a}
    types_b = {v.name: format_type(v.type) for v in b}
    out: list[FieldChange] = []
    for name, text in types_a.items():
        if name not in types_b:
            out.append(FieldChange(name, text, None))
        elif types_b[name] != text:
            out.append(FieldChange(name, text, types_b[name]))
    out.extend(
        FieldChange(name, None, text) for name, text in types_b.items() if name not in types_a
    )
    return out


def _names(kind: str, a: Iterable[str], b: Iterable[str]) -> list[FieldChange]:
    """A function's inputs/outputs (names only, in order)."""
    la, lb = list(a), list(b)
    return [
        FieldChange(f"{kind} {k}", la[k] if k < len(la) else None, lb[k] if k < len(lb) else None)
        for k in range(max(len(la), len(lb)))
        if (la[k] if k < len(la) else None) != (lb[k] if k < len(lb) else None)
    ]


def _opsets(a: onnx.ModelProto, b: onnx.ModelProto) -> list[FieldChange]:
    def table(m: onnx.ModelProto) -> dict[str, int]:
        return {("" if o.domain == "ai.onnx" else o.domain): o.version for o in m.opset_import}

    ta, tb = table(a), table(b)
    out: list[FieldChange] = []
    for domain in sorted(ta.keys() | tb.keys()):
        x, y = ta.get(domain), tb.get(domain)
        if x != y:
            out.append(
                FieldChange(
                    domain or "ai.onnx",
                    None if x is None else str(x),
                    None if y is None else str(y),
                )
            )
    return out


_MODEL_FIELDS = ("ir_version", "producer_name", "producer_version", "domain", "model_version")


def _metadata(a: onnx.ModelProto, b: onnx.ModelProto) -> list[FieldChange]:
    out: list[FieldChange] = []
    for name in _MODEL_FIELDS:
        x, y = str(getattr(a, name)), str(getattr(b, name))
        if x != y:
            out.append(FieldChange(name, x, y))
    if a.graph.name != b.graph.name:
        out.append(FieldChange("graph name", a.graph.name, b.graph.name))
    out.extend(metadata_changes(a.metadata_props, b.metadata_props))
    out.extend(metadata_changes(a.graph.metadata_props, b.graph.metadata_props, "graph metadata"))
    return out


def _function_metadata(
    fa: Mapping[str, onnx.FunctionProto], fb: Mapping[str, onnx.FunctionProto]
) -> list[FieldChange]:
    """``metadata_props`` of the local functions both models have (``function ID metadata
    KEY``): a function's own metadata, not its body, so it is listed with the metadata."""
    out: list[FieldChange] = []
    for name in sorted(fa.keys() & fb.keys()):
        prefix = f"function {name} metadata"
        out.extend(metadata_changes(fa[name].metadata_props, fb[name].metadata_props, prefix))
    return out


def _function_id(fn: onnx.FunctionProto) -> str:
    text = f"{fn.domain}:{fn.name}"
    return f"{text}:{fn.overload}" if fn.overload else text


def diff_models(
    a: onnx.ModelProto,
    b: onnx.ModelProto,
    a_dir: Path | None = None,
    b_dir: Path | None = None,
    *,
    a_label: str = "A",
    b_label: str = "B",
) -> ModelDiff:
    """Everything that differs from model ``a`` (before) to ``b`` (after). ``a_dir`` and
    ``b_dir`` are where their external data lives. Neither model is changed. Cost: O(nodes)
    to match, plus one read of every initializer pair whose bytes are not trivially equal."""
    ctx = _Context(a_dir, b_dir)
    graph = ctx.graph(a.graph, b.graph, MAIN, {})
    fa = {_function_id(f): f for f in a.functions}
    fb = {_function_id(f): f for f in b.functions}
    changed: list[tuple[str, GraphDiff]] = []
    for name in sorted(fa.keys() & fb.keys()):
        x, y = fa[name], fb[name]
        if x.SerializeToString(deterministic=True) == y.SerializeToString(deterministic=True):
            continue
        sub = ctx.function(x, y, f"function {name}")
        attrs = list(x.attribute) != list(y.attribute) or list(x.attribute_proto) != list(
            y.attribute_proto
        )
        if not sub.identical or attrs:
            changed.append((name, sub))
    return ModelDiff(
        a=a_label,
        b=b_label,
        graph=graph,
        opsets=tuple(_opsets(a, b)),
        metadata=(*_metadata(a, b), *_function_metadata(fa, fb)),
        functions_added=tuple(sorted(fb.keys() - fa.keys())),
        functions_removed=tuple(sorted(fa.keys() - fb.keys())),
        functions_changed=tuple(changed),
    )


def diff_files(a: Path, b: Path) -> ModelDiff:
    """Read two model files (external data stays on disk, read one tensor at a time) and
    diff them. Raises ModelLoadError with one line naming a file that cannot be read."""
    from designer.core.io import read_model

    ma, mb = read_model(a), read_model(b)
    return diff_models(ma, mb, a.parent, b.parent, a_label=str(a), b_label=str(b))
