"""Creating subgraphs (G-2): the inputs and outputs an operator requires of a new graph
attribute, and the edit that sets one (from that template or a copy of an existing subgraph).

A new Loop body, If branch or Scan body is useless until its signature matches the node, and
the ONNX rules for those signatures (iteration count and condition first, carried values,
scan elements without the scan axis) are easy to get wrong by hand, so the template writes
them once, typed from the node's values wherever the type checker knows them.
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx

from designer.core.analysis.checker import CheckResult, check_document
from designer.core.document import Document
from designer.core.edits.base import Edit, Scopes
from designer.core.edits.lookup import (
    names_in_use,
    require_identifier,
    require_node,
    resolve_scope,
    walk_graph_names,
)
from designer.core.edits.nodes import SetAttribute
from designer.core.errors import EditError
from designer.core.functions import rename_graph_tensors
from designer.core.names import unique_name
from designer.core.schema import default_registry
from designer.core.scope import Scope, ScopeId
from designer.core.walk import graph_attributes, iter_graphs, nested_graphs


class _Types:
    """Known types of values visible in a scope: declared ones first, then the type checker's
    (run at most once, only when a declared type is missing)."""

    def __init__(self, doc: Document, scope_id: ScopeId) -> None:
        self.doc = doc
        self.scope_id = scope_id
        self._checked: CheckResult | None = None

    def _declared(self, scope: Scope, name: str) -> onnx.TypeProto | None:
        info = scope.value_info(name)
        if info is not None and info.HasField("type"):
            return info.type
        tensor = scope.initializer(name)
        if tensor is None:
            return None
        type_proto = onnx.TypeProto()
        type_proto.tensor_type.elem_type = tensor.data_type
        for dim in tensor.dims:
            type_proto.tensor_type.shape.dim.add(dim_value=dim)
        return type_proto

    def get(self, name: str) -> onnx.TypeProto | None:
        if not name:
            return None
        scope: Scope | None = self.doc.scope(self.scope_id)
        while scope is not None:
            found = self._declared(scope, name)
            if found is not None:
                return found
            scope = scope.parent
        if self._checked is None:
            self._checked = check_document(self.doc)
        sid: ScopeId | None = self.scope_id
        while sid is not None:
            found = self._checked.type_of(sid, name)
            if found is not None:
                return found
            sid = sid.parent
        return None


def _value(name: str, type_proto: onnx.TypeProto | None) -> onnx.ValueInfoProto:
    info = onnx.ValueInfoProto(name=name)
    if type_proto is not None:
        info.type.CopyFrom(type_proto)
    return info


def _scalar(elem_type: int) -> onnx.TypeProto:
    type_proto = onnx.TypeProto()
    type_proto.tensor_type.elem_type = elem_type
    type_proto.tensor_type.shape.SetInParent()  # rank 0: a scalar
    return type_proto


def _element_type(type_proto: onnx.TypeProto | None, axis: int | None) -> onnx.TypeProto | None:
    """The type of one slice of a tensor along ``axis`` (None: the element type only)."""
    if type_proto is None or not type_proto.HasField("tensor_type"):
        return None
    out = onnx.TypeProto()
    out.tensor_type.elem_type = type_proto.tensor_type.elem_type
    tensor = type_proto.tensor_type
    if axis is not None and tensor.HasField("shape"):
        rank = len(tensor.shape.dim)
        axis = axis + rank if axis < 0 else axis
        if 0 <= axis < rank:
            out.tensor_type.shape.SetInParent()
            for i, dim in enumerate(tensor.shape.dim):
                if i != axis:
                    out.tensor_type.shape.dim.add().CopyFrom(dim)
    return out


def _ints(node: onnx.NodeProto, name: str) -> list[int]:
    for attr in node.attribute:
        if attr.name == name:
            return [attr.i] if attr.type == onnx.AttributeProto.INT else list(attr.ints)
    return []


class _Namer:
    """Fresh tensor names for a template: unique in the scope, its subgraphs and enclosing
    scopes (ONNX forbids a subgraph to redefine a name visible from outside)."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken

    def __call__(self, base: str) -> str:
        name = unique_name(base, self.taken)
        self.taken.add(name)
        return name


def _opset_version(doc: Document, scope_id: ScopeId) -> int:
    if scope_id.function is not None:
        fn = doc.function(*scope_id.function)
        versions = {o.domain: o.version for o in fn.opset_import}
    else:
        versions = doc.opset_imports
    version: int = versions.get("", versions.get("ai.onnx", 0))
    return version


def subgraph_template(
    doc: Document, scope_id: ScopeId, node_key: int, attribute: str, name: str
) -> onnx.GraphProto:
    """An empty graph named ``name`` with the inputs and outputs ``attribute`` of node
    ``node_key`` requires: Loop body (iteration_num, cond_in, carried values → cond_out,
    carried values, scan outputs), If branches (one output per node output), Scan body
    (state variables and scan elements → states and scan output elements). Operators without
    a rule get a graph without inputs or outputs. Types come from the node's values when known.
    """
    scope = resolve_scope(doc, scope_id)
    node = require_node(scope, node_key)
    graph = onnx.GraphProto(name=name)
    if node.domain not in ("", "ai.onnx"):
        return graph
    taken = names_in_use(doc, scope_id)
    for attr_name, _i, old in graph_attributes(node):
        if attr_name == attribute:  # the graph being replaced frees its names
            taken -= set(walk_graph_names(old)) - scope.outer_names() - scope.defined_names()
    fresh = _Namer(taken)
    types = _Types(doc, scope_id)
    rule = (node.op_type, attribute)
    if rule == ("Loop", "body"):
        _loop_body(graph, node, fresh, types)
    elif node.op_type == "If" and attribute in ("then_branch", "else_branch"):
        suffix = attribute.removesuffix("_branch")
        for out in node.output:
            graph.output.append(_value(fresh(f"{out or 'out'}_{suffix}"), types.get(out)))
    elif rule == ("Scan", "body"):
        _scan_body(graph, node, fresh, types, _opset_version(doc, scope_id))
    return graph


def _loop_body(graph: onnx.GraphProto, node: onnx.NodeProto, fresh: _Namer, types: _Types) -> None:
    carried = list(node.input[2:])
    graph.input.append(_value(fresh("iteration_num"), _scalar(onnx.TensorProto.INT64)))
    graph.input.append(_value(fresh("cond_in"), _scalar(onnx.TensorProto.BOOL)))
    carried_types = [types.get(name) for name in carried]
    for i, name in enumerate(carried):
        graph.input.append(_value(fresh(f"{name or f'v{i}'}_in"), carried_types[i]))
    graph.output.append(_value(fresh("cond_out"), _scalar(onnx.TensorProto.BOOL)))
    for i in range(len(carried)):
        out = node.output[i] if i < len(node.output) and node.output[i] else f"v{i}"
        graph.output.append(_value(fresh(f"{out}_out"), carried_types[i] or types.get(out)))
    for out in node.output[len(carried) :]:
        # A scan output stacks one value per iteration along a new first axis.
        element = _element_type(types.get(out), 0)
        graph.output.append(_value(fresh(f"{out or 'scan'}_elem"), element))


def _scan_body(
    graph: onnx.GraphProto, node: onnx.NodeProto, fresh: _Namer, types: _Types, opset: int
) -> None:
    inputs = list(node.input[1:] if 0 < opset < 9 else node.input)  # Scan-8: sequence_lens
    num_scan = (_ints(node, "num_scan_inputs") or [0])[0]
    num_state = max(0, len(inputs) - num_scan)
    in_axes = _ints(node, "scan_input_axes") or [0] * num_scan
    out_axes = _ints(node, "scan_output_axes")
    for i, name in enumerate(inputs[:num_state]):
        graph.input.append(_value(fresh(f"{name or f'state{i}'}_in"), types.get(name)))
    for j, name in enumerate(inputs[num_state:]):
        axis = in_axes[j] if j < len(in_axes) else 0
        element = _element_type(types.get(name), axis if opset >= 9 else 1)
        graph.input.append(_value(fresh(f"{name or f'scan{j}'}_elem"), element))
    for i, out in enumerate(node.output[:num_state]):
        state = inputs[i] if i < len(inputs) else ""
        graph.output.append(_value(fresh(f"{out or f'state{i}'}_out"), types.get(state)))
    for k, out in enumerate(node.output[num_state:]):
        axis = out_axes[k] if k < len(out_axes) else 0
        element = _element_type(types.get(out), axis if opset >= 9 else 1)
        graph.output.append(_value(fresh(f"{out or f'scan{k}'}_elem"), element))


def _graph_names(proto: onnx.GraphProto | onnx.FunctionProto) -> Iterator[str]:
    """Names of the graphs held by nodes of ``proto`` (at any depth)."""
    for walked in iter_graphs(proto):
        if walked.path:  # not ``proto`` itself
            yield walked.graph.name


def _defined_names(graph: onnx.GraphProto) -> set[str]:
    """Every tensor name ``graph`` and its nested subgraphs define."""
    names: set[str] = set()
    for sub in nested_graphs(graph):
        names.update(v.name for v in sub.input)
        names.update(t.name for t in sub.initializer)
        names.update(s.values.name for s in sub.sparse_initializer)
        for node in sub.node:
            names.update(o for o in node.output if o)
    return names


class CreateSubgraph(Edit):
    """Set graph attribute ``attribute`` of node ``node_key`` to a new graph named ``name``:
    the operator's template, or a deep copy of the subgraph ``copy_from``. Tensor names the
    copy defines that are visible where it goes are renamed (ONNX forbids redefining them).
    After ``apply``, ``created`` is the new subgraph's ScopeId."""

    def __init__(
        self,
        scope_id: ScopeId,
        node_key: int,
        attribute: str,
        name: str,
        copy_from: ScopeId | None = None,
    ) -> None:
        self.scope_id = scope_id
        self.node_key = node_key
        self.attribute = attribute
        self.name = name
        self.copy_from = copy_from
        self.created = scope_id.child(node_key, attribute)
        self._set: SetAttribute | None = None
        self.label = f"Create subgraph {name}"

    def _build(self, doc: Document) -> onnx.GraphProto:
        scope = resolve_scope(doc, self.scope_id)
        node = require_node(scope, self.node_key)
        require_identifier(self.attribute, "attribute")
        require_identifier(self.name, "graph")
        self._check_attribute(doc, node)
        taken = {scope.name}
        for other in scope.proto.node:
            for attr_name, _i, graph in graph_attributes(other):
                if other is node and attr_name == self.attribute:
                    continue  # the graph being replaced
                taken.add(graph.name)
                taken.update(_graph_names(graph))
        if self.name in taken:
            raise EditError(f"a graph named '{self.name}' already exists in '{scope.name}'")
        if self.copy_from is None:
            return subgraph_template(doc, self.scope_id, self.node_key, self.attribute, self.name)
        try:
            source = doc.scope(self.copy_from).proto
        except KeyError:
            raise EditError("the subgraph to copy from does not exist any more") from None
        if not isinstance(source, onnx.GraphProto) or not self.copy_from.steps:
            raise EditError("only a subgraph (a graph attribute of a node) can be copied")
        graph = onnx.GraphProto()
        graph.CopyFrom(source)
        graph.name = self.name
        visible = scope.defined_names() | scope.outer_names()
        clashes = sorted(_defined_names(graph) & visible)
        if clashes:
            fresh = _Namer(visible | set(walk_graph_names(graph)))
            rename_graph_tensors(graph, {old: fresh(old) for old in clashes})
        return graph

    def _check_attribute(self, doc: Document, node: onnx.NodeProto) -> None:
        versions = (
            {o.domain: o.version for o in doc.function(*self.scope_id.function).opset_import}
            if self.scope_id.function is not None
            else doc.opset_imports
        )
        domain = "" if node.domain == "ai.onnx" else node.domain
        version = versions.get(domain)
        schema = default_registry().get(node.op_type, domain, version) if version else None
        if schema is None:
            return  # a custom operator: any graph attribute is allowed
        info = schema.attribute(self.attribute)
        if info is None:
            raise EditError(f"{node.op_type} has no attribute '{self.attribute}'")
        if info.type != onnx.AttributeProto.GRAPH:
            raise EditError(f"attribute '{self.attribute}' of {node.op_type} is not a graph")

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        if self._set is None:  # first apply; redo sets the identical graph again
            graph = self._build(doc)
            attr = onnx.AttributeProto(name=self.attribute, type=onnx.AttributeProto.GRAPH)
            attr.g.CopyFrom(graph)
            self._set = SetAttribute(self.scope_id, self.node_key, attr)
            self._set.label = self.label
        self._set.apply(doc)

    def revert(self, doc: Document) -> None:
        assert self._set is not None
        self._set.revert(doc)
