"""What the Parameters window shows for a selection of nodes (Qt-free): the attributes of
their schemas (only the common ones for several nodes) with current values and defaults."""

from __future__ import annotations

import onnx

from designer.core.document import Document
from designer.core.schema import OpSchemaInfo, default_registry, normalize_domain
from designer.core.scope import ScopeId
from designer.ui.params.attribute_row import AttributeState


def scope_opsets(doc: Document, scope_id: ScopeId) -> dict[str, int]:
    """Opset imports that apply in ``scope_id`` (a local function has its own)."""
    if scope_id.function is not None:
        fn = doc.function(*scope_id.function)
        return {normalize_domain(o.domain): o.version for o in fn.opset_import}
    return {normalize_domain(d): v for d, v in doc.opset_imports.items()}


def node_schema(doc: Document, scope_id: ScopeId, node: onnx.NodeProto) -> OpSchemaInfo | None:
    """The schema of ``node`` at the scope's opset, or None (unknown op, local function)."""
    domain = normalize_domain(node.domain)
    version = scope_opsets(doc, scope_id).get(domain)
    if version is None:
        return None
    if any(
        normalize_domain(f.domain) == domain and f.name == node.op_type for f in doc.model.functions
    ):
        return None
    return default_registry().get(node.op_type, domain, version)


def _node_states(
    doc: Document, scope_id: ScopeId, node: onnx.NodeProto
) -> dict[str, AttributeState]:
    states: dict[str, AttributeState] = {}
    schema = node_schema(doc, scope_id, node)
    if schema is not None:
        for info in schema.attributes.values():
            states[info.name] = AttributeState(
                info.name,
                info.type,
                info.description,
                info.required,
                info.default,
                info.allowed_values,
            )
    for attr in node.attribute:
        state = states.get(attr.name)
        if state is None:
            state = states[attr.name] = AttributeState(
                attr.name, attr.type, "not in the operator's schema"
            )
        state.value = attr
    return states


def selection_states(doc: Document, scope_id: ScopeId, keys: list[int]) -> list[AttributeState]:
    """Attribute states for the nodes ``keys``: every attribute of one node; for several,
    those all share (same name and type). A value set on some nodes only, or set to
    different values, is ``mixed``."""
    scope = doc.scope(scope_id)
    per_node = [_node_states(doc, scope_id, scope.node(k)) for k in keys]
    if not per_node:
        return []
    first = per_node[0]
    out: list[AttributeState] = []
    for name, state in first.items():
        others = [states.get(name) for states in per_node[1:]]
        if any(o is None or o.type != state.type for o in others):
            continue
        values = [state.value] + [o.value for o in others if o is not None]
        set_values = [v for v in values if v is not None]
        merged = AttributeState(
            state.name,
            state.type,
            state.description,
            state.required,
            state.default,
            state.allowed,
            set_values[0] if set_values else None,
        )
        if set_values:
            texts = {v.SerializeToString(deterministic=True) for v in set_values}
            merged.mixed = len(texts) > 1 or len(set_values) != len(values)
        out.append(merged)
    return out


def function_attribute_types(doc: Document, scope_id: ScopeId) -> dict[str, int] | None:
    """The attributes of the local function whose body holds ``scope_id`` (name → type;
    UNDEFINED for a required attribute without a default), or None outside function bodies.

    Nodes there (nested subgraphs included) may refer to them through ``ref_attr_name``."""
    if scope_id.function is None:
        return None
    try:
        fn = doc.function(*scope_id.function)
    except KeyError:
        return None
    types: dict[str, int] = {name: onnx.AttributeProto.UNDEFINED for name in fn.attribute}
    types.update({a.name: int(a.type) for a in fn.attribute_proto})
    return types
