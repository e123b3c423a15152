"""The type checker (T-1, T-2): every problem of a document, and the inferred type of every
value, in one call."""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx

from designer.core.analysis.diagnostics import Diagnostic, Severity
from designer.core.analysis.inference import (
    IN_PROCESS,
    SKIPPED,
    InferenceProblem,
    OnnxCalls,
    weightless_copy,
)
from designer.core.analysis.op_shapes import op_shape_diagnostics
from designer.core.analysis.structure import Finding, ScopeChecker
from designer.core.document import Document
from designer.core.schema import OpSchemaInfo, SchemaRegistry, default_registry
from designer.core.scope import MAIN_SCOPE, Scope, ScopeId
from designer.core.trt.diagnostics import trt_diagnostics
from designer.core.walk import graph_at

#: Error codes that leave onnx's shape inference as sound as on a valid model: with only
#: these, types are still inferred strictly and no node is left out of inference.
_NO_EFFECT_ON_INFERENCE = frozenset({"duplicate-node-name"})


@dataclass
class CheckResult:
    """Diagnostics sorted by severity (errors first), and the inferred types of values.

    Types are read from onnx's inferred copy of the model on demand, one scope at a time
    (graph inputs, initializers and every tensor onnx could infer).
    """

    diagnostics: list[Diagnostic]
    inferred: onnx.ModelProto | None = None
    keys: dict[ScopeId, list[int]] = field(default_factory=dict)
    _types: dict[ScopeId, dict[str, onnx.TypeProto]] = field(default_factory=dict)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == Severity.ERROR]

    @property
    def has_errors(self) -> bool:
        return any(d.severity == Severity.ERROR for d in self.diagnostics)

    def for_node(self, scope: ScopeId, key: int) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.scope == scope and d.node_key == key]

    def types(self, scope: ScopeId) -> dict[str, onnx.TypeProto]:
        """Name → inferred type for every value of ``scope`` that has one (O(scope) once)."""
        table = self._types.get(scope)
        if table is None:
            graph = self._graph(scope)
            table = graph_types(graph) if graph is not None else {}
            self._types[scope] = table
        return table

    def type_of(self, scope: ScopeId, name: str) -> onnx.TypeProto | None:
        return self.types(scope).get(name)

    def _graph(self, scope: ScopeId) -> onnx.GraphProto | None:
        if self.inferred is None or scope.function is not None:
            return None  # onnx infers no types inside function bodies
        graph: onnx.GraphProto | None = self.inferred.graph
        current = MAIN_SCOPE
        for step in scope.steps:
            assert graph is not None
            keys = self.keys.get(current)
            if keys is None or step.node_key not in keys:
                return None
            node = graph.node[keys.index(step.node_key)]
            graph = graph_at(node, step.attribute, step.index)
            if graph is None:
                return None
            current = current.child(step.node_key, step.attribute, step.index)
        return graph


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


def check_document(
    doc: Document, registry: SchemaRegistry | None = None, calls: OnnxCalls = IN_PROCESS
) -> CheckResult:
    """Check every scope of ``doc``; never raises for a bad model (problems are diagnostics).

    Cost: one Python pass over every node, plus onnx's checker and strict shape inference
    on a copy of the model without its large weights, run where ``calls`` says (the window
    runs them in a helper process for big models: :mod:`designer.core.analysis.onnx_process`).
    """
    registry = registry or default_registry()
    model_opsets = doc.opset_imports
    functions = {(f.domain, f.name, f.overload): tuple(f.attribute) for f in doc.model.functions}
    cache: dict[tuple[str, str, int], OpSchemaInfo | None] = {}
    findings: dict[tuple[object, ...], tuple[Finding, ...]] = {}
    diagnostics: list[Diagnostic] = []
    keys: dict[ScopeId, list[int]] = {}
    titled: list[tuple[Scope, str]] = []
    for scope in doc.scopes():
        title = scope_title(doc, scope)
        titled.append((scope, title))
        if scope.id.function is not None:
            fn = doc.function(*scope.id.function)
            opsets = {o.domain: o.version for o in fn.opset_import}
        else:
            opsets = model_opsets
        diagnostics.extend(
            ScopeChecker(scope, title, opsets, functions, registry, cache, findings).run()
        )
        if scope.id.function is None:
            keys[scope.id] = list(scope.keys)
    skeleton = weightless_copy(doc.model)
    by_name = _NodeLocator(doc)
    checked = calls.check(skeleton)
    skipped = [p for p in checked if p.source == SKIPPED]
    diagnostics.extend(_from_problem(p, by_name, doc) for p in checked if p not in skipped)
    errors = [
        d
        for d in diagnostics
        if d.severity == Severity.ERROR and d.code not in _NO_EFFECT_ON_INFERENCE
    ]
    inferred: onnx.ModelProto | None
    if skipped:
        title = doc.model.graph.name or "main"
        diagnostics.extend(
            Diagnostic(Severity.WARNING, "onnx-not-run", p.message, MAIN_SCOPE, title)
            for p in skipped
        )
        inferred = None
    elif not errors:
        inferred, problems = calls.infer(skeleton)
        diagnostics.extend(_from_problem(p, by_name, doc) for p in problems)
    else:
        inferred = _infer_around_errors(doc, skeleton, errors, calls)
        if inferred is None:
            where = (
                "the errors inside subgraphs or functions"
                if any(d.scope != MAIN_SCOPE for d in errors)
                else "the errors onnx reports for the model as a whole"
            )
            diagnostics.append(
                Diagnostic(
                    Severity.INFO,
                    "inference-skipped",
                    f"shapes and types are inferred again once {where} are fixed",
                    MAIN_SCOPE,
                    doc.model.graph.name or "main",
                )
            )
    result = CheckResult(diagnostics, inferred, keys)
    if inferred is not None:
        diagnostics.extend(_op_shape_errors(result, titled, model_opsets.get("", 0)))
    diagnostics.extend(trt_diagnostics(doc))
    diagnostics.sort(key=lambda d: -d.severity)
    return result


def _op_shape_errors(
    result: CheckResult, titled: list[tuple[Scope, str]], opset: int
) -> list[Diagnostic]:
    """The operator shape rules onnx's inference leaves out (:mod:`op_shapes`), on the
    inferred types; nodes already in error are not blamed twice."""
    flagged = {(d.scope, d.node_key) for d in result.diagnostics if d.severity == Severity.ERROR}
    return list(op_shape_diagnostics(titled, result.types, opset, lambda s, k: (s, k) in flagged))


def _infer_around_errors(
    doc: Document, skeleton: onnx.ModelProto, errors: list[Diagnostic], calls: OnnxCalls
) -> onnx.ModelProto | None:
    """Lenient inference with the erroneous nodes left out, so values elsewhere keep their
    types while the user fixes them. onnx's inference may crash on a malformed node, so
    only nodes of the main graph are removed; with errors elsewhere nothing is inferred."""
    if any(
        d.scope != MAIN_SCOPE or (d.node_key is None and d.code == "onnx-checker") for d in errors
    ):
        return None
    scope = doc.scope(MAIN_SCOPE)
    bad = sorted({scope.index_of(d.node_key) for d in errors if d.node_key is not None})
    for index in reversed(bad):
        del skeleton.graph.node[index]
    inferred = calls.infer_lenient(skeleton)
    if not bad:
        return inferred
    # Put placeholders back so node indices match the document's again.
    nodes = list(inferred.graph.node)
    del inferred.graph.node[:]
    for index in bad:
        nodes.insert(index, onnx.NodeProto(op_type="Skipped"))
    inferred.graph.node.extend(nodes)
    return inferred


class _NodeLocator:
    """Node name → (scope, key, scope title), built only when onnx reports a problem (a
    clean check never pays for the O(nodes) walk)."""

    def __init__(self, doc: Document) -> None:
        self._doc = doc
        self._table: dict[str, tuple[ScopeId, int, str]] | None = None

    def get(self, name: str) -> tuple[ScopeId, int, str] | None:
        if self._table is None:
            self._table = {}
            for scope in self._doc.scopes():
                title = scope_title(self._doc, scope)
                for key, node in scope.nodes():
                    if node.name:
                        self._table.setdefault(node.name, (scope.id, key, title))
        return self._table.get(name)


def _from_problem(problem: InferenceProblem, by_name: _NodeLocator, doc: Document) -> Diagnostic:
    code = "onnx-checker" if problem.source == "checker" else "shape-inference"
    located = by_name.get(problem.node_name) if problem.node_name else None
    if located is None:
        title = doc.model.graph.name or "main"
        return Diagnostic(
            Severity.ERROR, code, problem.message, MAIN_SCOPE, title, None, problem.node_name
        )
    scope_id, key, title = located
    return Diagnostic(
        Severity.ERROR, code, problem.message, scope_id, title, key, problem.node_name
    )


def graph_types(graph: onnx.GraphProto) -> dict[str, onnx.TypeProto]:
    """Declared types of ``graph``'s values: initializers, inputs, value_info, outputs."""
    table: dict[str, onnx.TypeProto] = {}
    for tensor in graph.initializer:
        type_proto = onnx.TypeProto()
        type_proto.tensor_type.elem_type = tensor.data_type
        for dim in tensor.dims:
            type_proto.tensor_type.shape.dim.add(dim_value=dim)
        table[tensor.name] = type_proto
    for group in (graph.input, graph.value_info, graph.output):
        for vi in group:
            if vi.HasField("type") and vi.type.WhichOneof("value") is not None:
                table[vi.name] = vi.type
    return table
