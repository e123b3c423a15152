"""The plain-text summary of a :class:`~designer.core.diff.records.ModelDiff` (what
``onnx-designer diff`` prints without ``--json``)."""

from __future__ import annotations

from designer.core.diff.records import (
    FieldChange,
    GraphDiff,
    ModelDiff,
    NodeInfo,
    TensorChange,
    TensorInfo,
)


def _node(n: NodeInfo) -> str:
    name = f" {n.name}" if n.name else ""
    domain = f"{n.domain}:" if n.domain else ""
    return f"{domain}{n.op_type}{name} (#{n.index})"


def _tensor(t: TensorInfo) -> str:
    return f"{t.name}: {t.dtype}{list(t.shape)}"


def _field(c: FieldChange) -> str:
    if c.before is None:
        return f"{c.field}: added {c.after}"
    if c.after is None:
        return f"{c.field}: removed (was {c.before})"
    return f"{c.field}: {c.before} → {c.after}"


def tensor_change_text(c: TensorChange, *, name: bool = True) -> str:
    """``w → w2 (renamed), float32[64] → float16[64], max abs diff 1.2e-04`` (without
    the leading name when ``name`` is False; a rename is still said)."""
    a, b = c.before, c.after
    parts = [a.name] if name and not c.renamed else []
    if c.renamed:
        parts.append(f"{a.name} → {b.name} (renamed)" if name else "renamed")
    if a.dtype != b.dtype or a.shape != b.shape:
        parts.append(f"{a.dtype}{list(a.shape)} → {b.dtype}{list(b.shape)}")
    if c.max_abs_diff is not None and c.values_differ:
        parts.append(f"max abs diff {c.max_abs_diff:.6g}")
    elif c.values_differ and not c.note:
        parts.append("values differ")
    if c.note:
        parts.append(c.note)
    return ", ".join(parts)


def count_text(diff: GraphDiff) -> str:
    """``2 nodes removed, 1 changed; 1 initializer changed`` (empty when identical)."""
    parts: list[str] = []
    for n, word in (
        (len(diff.nodes_added), "added"),
        (len(diff.nodes_removed), "removed"),
        (len(diff.nodes_changed), "changed"),
    ):
        if n:
            parts.append(f"{n} node{'s' if n != 1 else ''} {word}")
    for n, word in (
        (len(diff.initializers_added), "added"),
        (len(diff.initializers_removed), "removed"),
        (len(diff.initializers_changed), "changed"),
    ):
        if n:
            parts.append(f"{n} initializer{'s' if n != 1 else ''} {word}")
    if diff.inputs:
        parts.append(f"{len(diff.inputs)} input change(s)")
    if diff.outputs:
        parts.append(f"{len(diff.outputs)} output change(s)")
    return ", ".join(parts)


def model_count_text(diff: ModelDiff) -> str:
    """The main graph's :func:`count_text`, then opset, metadata and function changes: every
    item of :attr:`ModelDiff.change_count` is counted once, so the parts add up to the total
    said before them (empty when identical)."""
    parts = [count_text(diff.graph)] if not diff.graph.identical else []
    if diff.opsets:
        parts.append(f"{len(diff.opsets)} opset change(s)")
    if diff.metadata:
        parts.append(f"{len(diff.metadata)} metadata change(s)")
    for n, word in (
        (len(diff.functions_added), "added"),
        (len(diff.functions_removed), "removed"),
        (len(diff.functions_changed), "changed"),
    ):
        if n:
            parts.append(f"{n} function{'s' if n != 1 else ''} {word}")
    return ", ".join(parts)


def _graph_lines(diff: GraphDiff, indent: str) -> list[str]:
    lines: list[str] = []

    def section(title: str, items: list[str], count: int | None = None) -> None:
        if items:
            lines.append(f"{indent}{title} ({len(items) if count is None else count}):")
            lines.extend(f"{indent}  {item}" for item in items)

    section("Nodes removed", [f"- {_node(n)}" for n in diff.nodes_removed])
    section("Nodes added", [f"+ {_node(n)}" for n in diff.nodes_added])
    changed: list[str] = []
    for c in diff.nodes_changed:
        target = _node(c.before) if not c.renamed else f"{_node(c.before)} → {_node(c.after)}"
        changed.append(f"~ {target}, matched by {c.by}")
        changed.extend(f"    {_field(f)}" for f in c.fields)
        for where, sub in c.subgraphs:
            changed.append(f"    subgraph {where}: {count_text(sub)}")
            changed.extend(_graph_lines(sub, indent + "      "))
    section("Nodes changed", changed, len(diff.nodes_changed))
    section("Initializers removed", [f"- {_tensor(t)}" for t in diff.initializers_removed])
    section("Initializers added", [f"+ {_tensor(t)}" for t in diff.initializers_added])
    section(
        "Initializers changed", [f"~ {tensor_change_text(c)}" for c in diff.initializers_changed]
    )
    section("Graph inputs", [_field(c) for c in diff.inputs])
    section("Graph outputs", [_field(c) for c in diff.outputs])
    return lines


def summary_text(diff: ModelDiff) -> str:
    """Every difference, grouped, one per line; the first lines say what was compared."""
    lines = [f"A: {diff.a}", f"B: {diff.b}"]
    if diff.identical:
        lines.append(
            "The models are identical (nodes with their attributes and metadata, "
            "initializers, inputs/outputs, opsets, model and graph metadata, functions)."
        )
        return "\n".join(lines)
    g = diff.graph
    lines.append(
        f"{diff.change_count} difference(s): {model_count_text(diff)}; "
        f"{g.nodes_unchanged} node(s) unchanged"
    )
    lines.extend(_graph_lines(g, ""))
    if diff.opsets:
        lines.append(f"Opsets ({len(diff.opsets)}):")
        lines.extend(f"  {_field(c)}" for c in diff.opsets)
    if diff.metadata:
        lines.append(f"Metadata ({len(diff.metadata)}):")
        lines.extend(f"  {_field(c)}" for c in diff.metadata)
    for title, names in (
        ("Functions removed", diff.functions_removed),
        ("Functions added", diff.functions_added),
    ):
        if names:
            lines.append(f"{title} ({len(names)}):")
            lines.extend(f"  {n}" for n in names)
    if diff.functions_changed:
        lines.append(f"Functions changed ({len(diff.functions_changed)}):")
        for name, sub in diff.functions_changed:
            lines.append(f"  ~ {name}: {count_text(sub) or 'attributes differ'}")
            lines.extend(_graph_lines(sub, "    "))
    lines.extend(f"warning: {w}" for w in diff.warnings)
    return "\n".join(lines)
