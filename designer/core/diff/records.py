"""Plain records of a model diff (what :func:`designer.core.diff.diff_models` returns).

Every record is frozen and turns into JSON-ready dicts with ``to_json()``; the schema is
described in :data:`designer.core.diff.JSON_SCHEMA_VERSION` and the README."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True)
class NodeInfo:
    """One node of one side: its position in its graph's node list and what it is."""

    index: int
    name: str
    op_type: str
    domain: str

    @property
    def label(self) -> str:
        """The name, or ``Op #index`` for an unnamed node."""
        return self.name or f"{self.op_type} #{self.index}"

    def to_json(self) -> Json:
        return {
            "index": self.index,
            "name": self.name,
            "op_type": self.op_type,
            "domain": self.domain,
        }


@dataclass(frozen=True)
class FieldChange:
    """One field that differs: ``before`` is None when added, ``after`` None when removed."""

    field: str
    before: str | None
    after: str | None

    @property
    def kind(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "changed"

    def to_json(self) -> Json:
        return {"field": self.field, "kind": self.kind, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class NodeChange:
    """A node present on both sides (matched ``by`` "name" or "structure") that differs."""

    before: NodeInfo
    after: NodeInfo
    by: str
    fields: tuple[FieldChange, ...]
    subgraphs: tuple[tuple[str, GraphDiff], ...] = ()

    @property
    def renamed(self) -> bool:
        return self.before.name != self.after.name

    def to_json(self) -> Json:
        return {
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "matched_by": self.by,
            "fields": [f.to_json() for f in self.fields],
            "subgraphs": {name: g.to_json() for name, g in self.subgraphs},
        }


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]

    def to_json(self) -> Json:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape)}


@dataclass(frozen=True)
class TensorChange:
    """An initializer on both sides (same name, or renamed: found through the nodes that
    read it) whose name, type, shape or values differ. ``max_abs_diff`` is over all
    elements when the shapes agree and both are numeric (None otherwise); ``note`` says
    why it is missing or that NaN/Inf positions differ."""

    before: TensorInfo
    after: TensorInfo
    values_differ: bool
    max_abs_diff: float | None
    note: str = ""

    @property
    def renamed(self) -> bool:
        return self.before.name != self.after.name

    def to_json(self) -> Json:
        return {
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "renamed": self.renamed,
            "values_differ": self.values_differ,
            "max_abs_diff": self.max_abs_diff,
            "note": self.note,
        }


@dataclass(frozen=True)
class GraphDiff:
    """The differences of one graph (the main graph, a subgraph or a function body)."""

    scope: str
    nodes_added: tuple[NodeInfo, ...] = ()
    nodes_removed: tuple[NodeInfo, ...] = ()
    nodes_changed: tuple[NodeChange, ...] = ()
    nodes_unchanged: int = 0
    #: (index in A, index in B) of every matched node, changed or not (for the canvas)
    matches: tuple[tuple[int, int], ...] = ()
    initializers_added: tuple[TensorInfo, ...] = ()
    initializers_removed: tuple[TensorInfo, ...] = ()
    initializers_changed: tuple[TensorChange, ...] = ()
    inputs: tuple[FieldChange, ...] = ()
    outputs: tuple[FieldChange, ...] = ()

    @property
    def change_count(self) -> int:
        return (
            len(self.nodes_added)
            + len(self.nodes_removed)
            + len(self.nodes_changed)
            + len(self.initializers_added)
            + len(self.initializers_removed)
            + len(self.initializers_changed)
            + len(self.inputs)
            + len(self.outputs)
        )

    @property
    def identical(self) -> bool:
        return self.change_count == 0

    def to_json(self) -> Json:
        return {
            "scope": self.scope,
            "nodes": {
                "added": [n.to_json() for n in self.nodes_added],
                "removed": [n.to_json() for n in self.nodes_removed],
                "changed": [c.to_json() for c in self.nodes_changed],
                "unchanged": self.nodes_unchanged,
            },
            "initializers": {
                "added": [t.to_json() for t in self.initializers_added],
                "removed": [t.to_json() for t in self.initializers_removed],
                "changed": [t.to_json() for t in self.initializers_changed],
            },
            "inputs": [c.to_json() for c in self.inputs],
            "outputs": [c.to_json() for c in self.outputs],
        }


@dataclass(frozen=True)
class ModelDiff:
    """Everything that differs between model A (before) and model B (after)."""

    a: str
    b: str
    graph: GraphDiff
    opsets: tuple[FieldChange, ...] = ()
    metadata: tuple[FieldChange, ...] = ()
    functions_added: tuple[str, ...] = ()
    functions_removed: tuple[str, ...] = ()
    functions_changed: tuple[tuple[str, GraphDiff], ...] = ()
    warnings: tuple[str, ...] = field(default=())

    @property
    def change_count(self) -> int:
        return (
            self.graph.change_count
            + len(self.opsets)
            + len(self.metadata)
            + len(self.functions_added)
            + len(self.functions_removed)
            + len(self.functions_changed)
        )

    @property
    def identical(self) -> bool:
        return self.change_count == 0

    def to_json(self) -> Json:
        from designer.core.diff.model import JSON_SCHEMA_VERSION

        return {
            "schema": JSON_SCHEMA_VERSION,
            "a": self.a,
            "b": self.b,
            "identical": self.identical,
            "change_count": self.change_count,
            "graph": self.graph.to_json(),
            "opsets": [c.to_json() for c in self.opsets],
            "metadata": [c.to_json() for c in self.metadata],
            "functions": {
                "added": list(self.functions_added),
                "removed": list(self.functions_removed),
                "changed": {name: g.to_json() for name, g in self.functions_changed},
            },
            "warnings": list(self.warnings),
        }
