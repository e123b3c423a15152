"""Structural checks of one graph scope, in Python: operators, arity, attributes, names,
references. O(nodes + edges) per scope with one schema look-up per distinct operator."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence

import onnx

from designer.core.analysis.diagnostics import Diagnostic, Severity
from designer.core.names import is_c90_identifier
from designer.core.schema import OpSchemaInfo, SchemaRegistry, normalize_domain
from designer.core.scope import Scope
from designer.core.walk import iter_graphs

_UNSET = object()


class ScopeChecker:
    """Checks one scope; ``functions`` maps the model's local functions, by (domain, name,
    overload), to the attributes each call must set (those without a default)."""

    def __init__(
        self,
        scope: Scope,
        scope_name: str,
        opsets: Mapping[str, int],
        functions: Mapping[tuple[str, str, str], Sequence[str]],
        registry: SchemaRegistry,
        schema_cache: dict[tuple[str, str, int], OpSchemaInfo | None],
        findings_cache: dict[tuple[object, ...], tuple[Finding, ...]] | None = None,
    ) -> None:
        self.scope = scope
        self.scope_name = scope_name
        self.opsets = {normalize_domain(d): v for d, v in opsets.items()}
        self.functions = {(normalize_domain(d), n, o): r for (d, n, o), r in functions.items()}
        self.registry = registry
        self.cache = schema_cache
        self.findings = findings_cache if findings_cache is not None else {}
        self.out: list[Diagnostic] = []

    def _add(
        self,
        severity: Severity,
        code: str,
        message: str,
        key: int | None = None,
        node: onnx.NodeProto | None = None,
        tensor: str = "",
    ) -> None:
        self.out.append(
            Diagnostic(
                severity,
                code,
                message,
                self.scope.id,
                self.scope_name,
                key,
                node.name if node is not None else "",
                tensor,
            )
        )

    def schema(self, node: onnx.NodeProto) -> OpSchemaInfo | object | None:
        """The node's schema, None when unknown, or _UNSET when it cannot be looked up."""
        domain = normalize_domain(node.domain)
        version = self.opsets.get(domain)
        if version is None:
            return _UNSET
        cache_key = (domain, node.op_type, version)
        if cache_key not in self.cache:
            self.cache[cache_key] = self.registry.get(node.op_type, domain, version)
        return self.cache[cache_key]

    def run(self) -> list[Diagnostic]:
        self._check_names()
        self._check_nodes()
        self._check_outputs_and_initializers()
        return self.out

    # --- names ---------------------------------------------------------------------------
    def _check_names(self) -> None:
        counts = Counter(n.name for n in self.scope.proto.node if n.name)
        for key, node in self.scope.nodes():
            if node.name and counts[node.name] > 1:
                self._add(  # SPEC C-2; ONNX Runtime refuses to load such a model
                    Severity.ERROR,
                    "duplicate-node-name",
                    f"node name '{node.name}' is used by {counts[node.name]} nodes; names "
                    "must be unique (ONNX Runtime refuses to load the model): rename the others",
                    key,
                    node,
                )
        unnamed = sum(1 for n in self.scope.proto.node if not n.name)
        invalid = [name for name in counts if not is_c90_identifier(name)]
        if unnamed:
            self._add(
                Severity.INFO,
                "unnamed-nodes",
                f"{unnamed} node(s) have no name; the designer shows generated names",
            )
        if invalid:
            example = ", ".join(f"'{n}'" for n in invalid[:3])
            self._add(
                Severity.INFO,
                "non-identifier-names",
                f"{len(invalid)} node name(s) are not C identifiers (e.g. {example})",
            )

    # --- nodes ---------------------------------------------------------------------------
    def _check_nodes(self) -> None:
        defined = set(self.scope.input_names()) | set(self.scope.initializer_names())
        outer = self._outer = self.scope.outer_names()
        produced_later = {o for n in self.scope.proto.node for o in n.output if o}
        used: set[str] = set()
        self._used = used
        for key, node in self.scope.nodes():
            self._check_operator(key, node)
            used.update(node.input)
            for name in node.input:
                if not name or name in defined or name in outer:
                    continue
                if name in produced_later:
                    self._add(
                        Severity.ERROR,
                        "not-topological",
                        f"input '{name}' is produced by a node that comes later; "
                        "the graph is not in topological order",
                        key,
                        node,
                        name,
                    )
                else:
                    self._add(
                        Severity.ERROR,
                        "dangling-input",
                        f"input '{name}' is not produced by any node, graph input or initializer",
                        key,
                        node,
                        name,
                    )
            for name in node.output:
                if not name:
                    continue
                if name in defined:
                    self._add(
                        Severity.ERROR,
                        "duplicate-tensor",
                        f"tensor '{name}' is already defined; every tensor must have exactly "
                        "one producer",
                        key,
                        node,
                        name,
                    )
                defined.add(name)
        self._defined = defined

    def _check_operator(self, key: int, node: onnx.NodeProto) -> None:
        signature = _signature(node)
        findings = self.findings.get(signature)
        if findings is None:
            findings = self.findings[signature] = tuple(self._operator_findings(node))
        for severity, code, message in findings:
            self._add(severity, code, message, key, node)

    def _operator_findings(self, node: onnx.NodeProto) -> Iterator[Finding]:
        """Problems of the operator use itself: the same for every node of equal signature."""
        domain = normalize_domain(node.domain)
        required = self.functions.get((domain, node.op_type, node.overload))
        if required is not None:  # a local function call; its body is its own scope
            given = {a.name for a in node.attribute}
            for name in required:
                if name not in given:
                    yield (
                        Severity.ERROR,
                        "missing-attribute",
                        f"required attribute '{name}' of local function "
                        f"'{domain}:{node.op_type}' is not set",
                    )
            return
        schema = self.schema(node)
        if schema is _UNSET:
            yield (
                Severity.ERROR,
                "domain-not-imported",
                f"operator domain '{node.domain}' is not in the model's opset imports",
            )
            return
        if schema is None:
            if self.registry.has_domain(domain):
                version = self.opsets[domain]
                yield (
                    Severity.ERROR,
                    "unknown-operator",
                    f"no operator or local function '{node.op_type}' in opset {version} of "
                    f"domain '{domain or 'ai.onnx'}'",
                )
            else:
                yield (
                    Severity.WARNING,
                    "custom-operator",
                    f"no operator or local function '{domain}:{node.op_type}': a custom "
                    "operator (only a runtime that provides it can run it); it cannot be "
                    "checked",
                )
            return
        assert isinstance(schema, OpSchemaInfo)
        if schema.deprecated:
            yield (
                Severity.ERROR,
                "deprecated-operator",
                f"'{node.op_type}' was removed in opset {schema.since_version}",
            )
            return
        yield from _arity_findings(node, schema)
        yield from _attribute_findings(node, schema)

    # --- graph outputs and initializers ---------------------------------------------------
    def _check_outputs_and_initializers(self) -> None:
        available = self._defined | self._outer
        for name in self.scope.output_names():
            if name not in available:
                self._add(
                    Severity.ERROR,
                    "dangling-output",
                    f"graph output '{name}' is not produced by any node",
                    tensor=name,
                )
        initializers = self.scope.initializer_names()
        if not initializers:
            return
        used = self._used | set(self.scope.output_names()) | set(self.scope.input_names())
        if any(name not in used for name in initializers):
            _collect_uses(self.scope.proto, used)  # subgraphs may read them (rare: walk then)
        for name in initializers:
            if name not in used:
                self._add(
                    Severity.WARNING,
                    "unused-initializer",
                    f"initializer '{name}' is not used by any node",
                    tensor=name,
                )


Finding = tuple[Severity, str, str]


def _signature(node: onnx.NodeProto) -> tuple[object, ...]:
    """What the operator checks depend on: op, which terminals are filled, attribute names,
    types and string values. Nodes with equal signatures get the same findings."""
    attrs = tuple(
        (a.name, a.type, a.s if a.type == onnx.AttributeProto.STRING else b"", a.ref_attr_name)
        for a in node.attribute
    )
    return (
        node.domain,
        node.op_type,
        node.overload,
        tuple(not i for i in node.input),
        tuple(not o for o in node.output),
        attrs,
    )


def _arity_findings(node: onnx.NodeProto, schema: OpSchemaInfo) -> Iterator[Finding]:
    for kind, actual, low, high, param_at in (
        ("input", list(node.input), schema.min_input, schema.max_input, schema.input_param),
        ("output", list(node.output), schema.min_output, schema.max_output, schema.output_param),
    ):
        if len(actual) > high:
            yield (
                Severity.ERROR,
                f"too-many-{kind}s",
                f"{node.op_type} takes at most {high} {kind}s, not {len(actual)}",
            )
        for index in _required_positions(low, param_at):
            if index >= len(actual) or not actual[index]:
                param = param_at(index)
                label = f" ({param.name})" if param is not None else ""
                yield (
                    Severity.ERROR,
                    f"missing-{kind}",
                    f"required {kind} {index}{label} of {node.op_type} is not connected",
                )


def _attribute_findings(node: onnx.NodeProto, schema: OpSchemaInfo) -> Iterator[Finding]:
    seen = set()
    for attr in node.attribute:
        seen.add(attr.name)
        info = schema.attribute(attr.name)
        if info is None:
            yield (
                Severity.ERROR,
                "unknown-attribute",
                f"{node.op_type} has no attribute '{attr.name}'",
            )
        elif attr.ref_attr_name:
            continue  # bound at the call site of a local function
        elif attr.type != info.type:
            actual = onnx.AttributeProto.AttributeType.Name(attr.type)
            yield (
                Severity.ERROR,
                "attribute-type",
                f"attribute '{attr.name}' must be {info.type_name}, not {actual}",
            )
        elif info.allowed_values and attr.type == onnx.AttributeProto.STRING:
            value = attr.s.decode("utf-8", "replace")
            if value not in info.allowed_values:
                yield (
                    Severity.WARNING,
                    "attribute-value",
                    f"attribute '{attr.name}' is '{value}'; known values: "
                    + ", ".join(info.allowed_values),
                )
    for info in schema.required_attributes:
        if info.name not in seen:
            yield (
                Severity.ERROR,
                "missing-attribute",
                f"required attribute '{info.name}' of {node.op_type} is not set",
            )


def _required_positions(minimum: int, param_at: Callable[[int], object]) -> list[int]:
    """Actual positions that must be non-empty: the first ``minimum`` ones that are not
    optional formal parameters."""
    required = []
    for index in range(max(minimum, 0)):
        param = param_at(index)
        if getattr(param, "option", "single") != "optional":
            required.append(index)
    return required


def _collect_uses(proto: onnx.GraphProto | onnx.FunctionProto, used: set[str]) -> None:
    """Add every name used as a node input in ``proto`` or its subgraphs to ``used``."""
    for walked in iter_graphs(proto):
        graph = walked.graph
        if isinstance(graph, onnx.GraphProto) and walked.path:
            used.update(v.name for v in graph.output)  # read by the node holding the graph
        for node in graph.node:
            used.update(node.input)
