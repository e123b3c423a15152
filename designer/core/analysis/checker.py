"""The type checker (T-1, T-2): every problem of a document, and the inferred type of every
value, in one call."""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx

from designer.core.analysis.diagnostics import Diagnostic, Severity
from designer.core.analysis.inference import (
    InferenceProblem,
    run_checker,
    run_inference,
    weightless_copy,
)
from designer.core.analysis.structure import ScopeChecker
from designer.core.document import Document
from designer.core.schema import OpSchemaInfo, SchemaRegistry, default_registry
from designer.core.scope import MAIN_SCOPE, Scope, ScopeId, graph_attributes


@dataclass
class CheckResult:
    """Diagnostics sorted by severity (errors first), and the inferred type of each value by
    scope (graph inputs, initializers, and every tensor onnx could infer)."""

    diagnostics: list[Diagnostic]
    types: dict[ScopeId, dict[str, onnx.TypeProto]] = field(default_factory=dict)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == Severity.ERROR]

    @property
    def has_errors(self) -> bool:
        return any(d.severity == Severity.ERROR for d in self.diagnostics)

    def for_node(self, scope: ScopeId, key: int) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.scope == scope and d.node_key == key]

    def type_of(self, scope: ScopeId, name: str) -> onnx.TypeProto | None:
        return self.types.get(scope, {}).get(name)


def scope_title(doc: Document, scope: Scope) -> str:
    """``main ▸ If_0 ▸ then_branch`` style name of a scope, for messages and tab titles."""
    parts: list[str] = []
    sid = scope.id
    current: Scope | None = scope
    while current is not None and current.id.steps:
        step = current.id.steps[-1]
        assert current.parent is not None
        node = current.parent.node(step.node_key)
        label = node.name or node.op_type
        attr = step.attribute if step.index < 0 else f"{step.attribute}[{step.index}]"
        parts.append(f"{label} ▸ {attr}")
        current = current.parent
    if sid.function is not None:
        domain, name, overload = sid.function
        root = f"{domain}:{name}" + (f":{overload}" if overload else "")
    else:
        root = doc.model.graph.name or "main"
    return " ▸ ".join([root, *reversed(parts)])


def check_document(doc: Document, registry: SchemaRegistry | None = None) -> CheckResult:
    """Check every scope of ``doc``; never raises for a bad model (problems are diagnostics).

    Cost: one Python pass over every node, plus onnx's checker and strict shape inference
    on a copy of the model without its large weights.
    """
    registry = registry or default_registry()
    model_opsets = doc.opset_imports
    functions = {(f.domain, f.name) for f in doc.model.functions}
    cache: dict[tuple[str, str, int], OpSchemaInfo | None] = {}
    diagnostics: list[Diagnostic] = []
    by_name: dict[str, tuple[ScopeId, int, str]] = {}
    for scope in doc.scopes():
        title = scope_title(doc, scope)
        if scope.id.function is not None:
            fn = doc.function(*scope.id.function)
            opsets = {o.domain: o.version for o in fn.opset_import}
        else:
            opsets = model_opsets
        diagnostics.extend(ScopeChecker(scope, title, opsets, functions, registry, cache).run())
        for key, node in scope.nodes():
            if node.name:
                by_name.setdefault(node.name, (scope.id, key, title))
    skeleton = weightless_copy(doc.model)
    problems = run_checker(skeleton)
    inferred, inference_problems = run_inference(skeleton)
    problems.extend(inference_problems)
    diagnostics.extend(_from_problem(p, by_name, doc) for p in problems)
    diagnostics.sort(key=lambda d: -d.severity)
    return CheckResult(diagnostics, _collect_types(doc, inferred))


def _from_problem(
    problem: InferenceProblem, by_name: dict[str, tuple[ScopeId, int, str]], doc: Document
) -> Diagnostic:
    code = "onnx-checker" if problem.source == "checker" else "shape-inference"
    located = by_name.get(problem.node_name) if problem.node_name else None
    if located is None:
        title = doc.model.graph.name or "main"
        return Diagnostic(
            Severity.ERROR, code, problem.message, MAIN_SCOPE, title, None, problem.node_name
        )
    scope_id, key, title = located
    return Diagnostic(Severity.ERROR, code, problem.message, scope_id, title, key, problem.node_name)


def _collect_types(
    doc: Document, inferred: onnx.ModelProto
) -> dict[ScopeId, dict[str, onnx.TypeProto]]:
    """Types from the inferred copy, mapped onto the document's scopes (same structure)."""
    out: dict[ScopeId, dict[str, onnx.TypeProto]] = {}

    def visit(scope_id: ScopeId, graph: onnx.GraphProto) -> None:
        table = out.setdefault(scope_id, {})
        for tensor in graph.initializer:
            type_proto = onnx.TypeProto()
            type_proto.tensor_type.elem_type = tensor.data_type
            for dim in tensor.dims:
                type_proto.tensor_type.shape.dim.add(dim_value=dim)
            table[tensor.name] = type_proto
        for group in (graph.input, graph.value_info, graph.output):
            for vi in group:
                if vi.HasField("type"):
                    table[vi.name] = vi.type
        try:
            scope = doc.scope(scope_id)
        except KeyError:
            return
        if len(scope.keys) != len(graph.node):
            return
        for key, node in zip(scope.keys, graph.node, strict=True):
            for attr, index, subgraph in graph_attributes(node):
                visit(scope_id.child(key, attr, index), subgraph)

    visit(MAIN_SCOPE, inferred.graph)
    return out
