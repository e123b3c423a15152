"""Extract Model Subgraph (G-3): any subgraph or local function body of a document as a
standalone model that passes ``onnx.checker`` full check.

A subgraph reads values of the scopes around it and a function body has untyped formal
inputs and attribute references, so neither is a model by itself. The extracted graph gets
the outer values it reads as typed graph inputs (initializers are copied instead), a
function body gets the types and attribute values of one of its call sites, and the model
carries the opset imports and the local functions the graph calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Literal

import onnx
from onnx import shape_inference

from designer.core.analysis.checker import CheckResult, check_document, graph_types
from designer.core.analysis.inference import weightless_copy
from designer.core.document import Document
from designer.core.errors import DesignerError
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.walk import graph_at, graph_attributes, iter_nodes


class ExtractError(DesignerError):
    """A subgraph or function cannot be extracted (unknown name, types unknown, …)."""


@dataclass(frozen=True)
class ExtractChoice:
    """One extractable scope. ``parent`` is the node name (``#<index>`` when unnamed) or
    ``domain:name`` for a function body; ``subgraph`` the attribute name (``attr[i]`` for an
    element of a GRAPHS attribute) or ``(body)``. Subgraphs inside function bodies have kind
    "function"."""

    kind: Literal["operator", "function"]
    parent: str
    subgraph: str
    scope_id: ScopeId


def extract_choices(doc: Document) -> list[ExtractChoice]:
    """Every operator subgraph and function body of ``doc``, parents before children."""
    choices: list[ExtractChoice] = []
    for scope in doc.scopes():
        sid = scope.id
        kind: Literal["operator", "function"] = "function" if sid.function else "operator"
        if sid.function is not None and not sid.steps:
            domain, name, _overload = sid.function
            choices.append(ExtractChoice("function", f"{domain}:{name}", "(body)", sid))
        elif sid.steps:
            assert scope.parent is not None
            step = sid.steps[-1]
            index = scope.parent.index_of(step.node_key)
            parent = scope.parent.proto.node[index].name or f"#{index}"
            attr = step.attribute if step.index < 0 else f"{step.attribute}[{step.index}]"
            choices.append(ExtractChoice(kind, parent, attr, sid))
    return choices


def extract_subgraph(
    doc: Document, node_name: str, attribute: str, index: int = -1
) -> onnx.ModelProto:
    """Extract graph attribute ``attribute`` (element ``index`` of a GRAPHS attribute) of the
    node named ``node_name``; the main graph's node wins when several scopes have one."""
    found = False
    held: list[str] = []
    for scope in doc.scopes():
        for position, (key, node) in enumerate(scope.nodes()):
            unnamed_match = not node.name and f"#{position}" == node_name
            if node.name != node_name and not unnamed_match:
                continue
            found = True
            for attr, i, _graph in graph_attributes(node):
                if attr == attribute and i == index:
                    return extract_scope(doc, scope.id.child(key, attr, i))
                held.append(attr if i < 0 else f"{attr}[{i}]")
    if not found:
        raise ExtractError(f"no node named '{node_name}' in the model")
    what = attribute if index < 0 else f"{attribute}[{index}]"
    has = ", ".join(dict.fromkeys(held)) or "none"
    raise ExtractError(f"node '{node_name}' has no graph attribute '{what}' (it has: {has})")


def extract_function(doc: Document, domain: str, name: str) -> onnx.ModelProto:
    """Extract the body of local function ``domain:name`` (typed from a call site)."""
    for fn in doc.model.functions:
        if fn.domain == domain and fn.name == name:
            return extract_scope(doc, ScopeId((fn.domain, fn.name, fn.overload)))
    known = ", ".join(f"{f.domain}:{f.name}" for f in doc.model.functions) or "none"
    raise ExtractError(f"no local function '{domain}:{name}' in the model (functions: {known})")


def extract_scope(doc: Document, scope_id: ScopeId) -> onnx.ModelProto:
    """The subgraph or function body ``scope_id`` as a standalone model.

    Outer-scope values the graph reads become typed graph inputs (initializers are copied),
    the graph's own inputs and outputs keep or get their inferred types, opset imports and
    the local functions it calls (transitively) are carried. A function body, or a subgraph
    inside one, is typed from a call site of the function, with attribute references
    replaced by that call site's values or the defaults. Costs one type check of ``doc``.
    """
    if scope_id == MAIN_SCOPE:
        raise ExtractError("the main graph is the model itself; choose a subgraph or function")
    try:
        doc.scope(scope_id)
    except KeyError as exc:
        raise ExtractError(f"graph scope not found: {exc.args[0]}") from None
    checked = check_document(doc)
    if scope_id.function is None:
        levels = _main_levels(doc, scope_id, checked)
        opsets = dict(doc.opset_imports)
    else:
        levels, opsets = _function_levels(doc, scope_id, checked)
    graph = onnx.GraphProto()
    graph.CopyFrom(levels[-1].graph)
    _add_outer_values(graph, levels)
    _type_own_values(graph, levels[-1].types)
    _type_loop_body(graph, _holder(doc, scope_id, levels), levels)
    _require_input_shapes(graph)
    model = _assemble(doc, graph, opsets)
    _type_outputs_by_inference(model)
    _verify(model)
    return model


# --- levels: the graph at each depth from the top-level scope down to the target -----------
@dataclass
class _Level:
    graph: onnx.GraphProto
    types: dict[str, onnx.TypeProto]


def _type_table(
    graph: onnx.GraphProto, inferred: dict[str, onnx.TypeProto]
) -> dict[str, onnx.TypeProto]:
    """Declared types of ``graph``'s values, overridden by inferred ones."""
    return {**graph_types(graph), **inferred}


def _main_levels(doc: Document, scope_id: ScopeId, checked: CheckResult) -> list[_Level]:
    levels = []
    sid: ScopeId | None = scope_id
    while sid is not None:
        proto = doc.scope(sid).proto
        assert isinstance(proto, onnx.GraphProto)
        levels.append(_Level(proto, _type_table(proto, checked.types(sid))))
        sid = sid.parent
    return levels[::-1]


def _function_levels(
    doc: Document, scope_id: ScopeId, checked: CheckResult
) -> tuple[list[_Level], dict[str, int]]:
    """Levels of a scope within a function body: the body becomes a graph typed from a call
    site, onnx infers the types inside it, and the steps are followed by node position."""
    assert scope_id.function is not None
    fn = doc.function(*scope_id.function)
    root = _function_graph(doc, fn, checked)
    opsets = _own_opsets(fn)
    inferred = _inferred_graph(doc, root, opsets)
    levels = [_Level(root, _type_table(inferred, {}))]
    graph, inferred_graph = root, inferred
    current = ScopeId(scope_id.function)
    for step in scope_id.steps:
        index = doc.scope(current).index_of(step.node_key)
        graph = _nth_graph(graph.node[index], step.attribute, step.index)
        inferred_graph = _nth_graph(inferred_graph.node[index], step.attribute, step.index)
        levels.append(_Level(graph, _type_table(inferred_graph, {})))
        current = current.child(step.node_key, step.attribute, step.index)
    return levels, opsets


def _own_opsets(fn: onnx.FunctionProto) -> dict[str, int]:
    return {o.domain: o.version for o in fn.opset_import}


def _inferred_graph(
    doc: Document, graph: onnx.GraphProto, opsets: dict[str, int]
) -> onnx.GraphProto:
    """``graph`` after onnx's (lenient) shape inference, as a model with ``doc``'s local
    functions; ``graph`` itself when inference fails."""
    probe = _assemble(doc, graph, opsets)
    try:
        return shape_inference.infer_shapes(probe, check_type=False, strict_mode=False).graph
    except (shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError):
        return probe.graph


def _holder(doc: Document, scope_id: ScopeId, levels: list[_Level]) -> onnx.NodeProto | None:
    """The node holding the extracted subgraph (as copied into ``levels[-2]``), None for a
    function body. Levels keep the node order of their scopes, so positions match."""
    parent = scope_id.parent
    if not scope_id.steps or parent is None:
        return None
    index = doc.scope(parent).index_of(scope_id.steps[-1].node_key)
    holder: onnx.NodeProto = levels[-2].graph.node[index]
    return holder


def _nth_graph(node: onnx.NodeProto, attribute: str, index: int) -> onnx.GraphProto:
    graph = graph_at(node, attribute, index)
    if graph is not None:
        return graph
    raise ExtractError(f"node '{node.name}' has no graph attribute '{attribute}'")


# --- function bodies ----------------------------------------------------------------------
_FunctionKey = tuple[str, str, str]
_Lookup = Callable[[str], onnx.TypeProto | None]


def _key(fn: onnx.FunctionProto | onnx.NodeProto) -> _FunctionKey:
    if isinstance(fn, onnx.FunctionProto):
        return (fn.domain, fn.name, fn.overload)
    return (fn.domain, fn.op_type, fn.overload)


def _call_sites(
    doc: Document, fn: onnx.FunctionProto, checked: CheckResult, seen: frozenset[_FunctionKey]
) -> Iterator[tuple[onnx.NodeProto, _Lookup]]:
    """Call sites of ``fn`` with a lookup of the types visible at each: first those outside
    function bodies (typed by the checker), then those inside other local functions, whose
    bodies are typed from their own call sites in turn (a function called only from another
    function, as module-as-function exports nest them). ``seen`` stops call cycles."""
    for sid, call in _calls(doc, fn):
        yield call, partial(_visible_type, checked, doc, sid)
    for caller in doc.model.functions:
        if _key(caller) in seen or _key(fn) not in set(_called(caller.node)):
            continue
        try:
            body = _function_graph(doc, caller, checked, seen)
        except ExtractError:
            continue
        yield from _calls_in(_inferred_graph(doc, body, _own_opsets(caller)), _key(fn), [])


def _calls_in(
    graph: onnx.GraphProto, key: _FunctionKey, outer: list[dict[str, onnx.TypeProto]]
) -> Iterator[tuple[onnx.NodeProto, _Lookup]]:
    """Calls of function ``key`` in ``graph`` and its subgraphs, with the types visible there
    (the innermost scope first)."""
    tables = [_type_table(graph, {}), *outer]
    for node in graph.node:
        if _key(node) == key:
            yield node, partial(_first_type, tables)
        for _attr, _i, sub in graph_attributes(node):
            yield from _calls_in(sub, key, tables)


def _first_type(tables: list[dict[str, onnx.TypeProto]], name: str) -> onnx.TypeProto | None:
    return next((t[name] for t in tables if name in t), None)


def _calls(doc: Document, fn: onnx.FunctionProto) -> Iterator[tuple[ScopeId, onnx.NodeProto]]:
    """Call sites of ``fn`` outside function bodies (only there does the checker type values)."""
    for scope in doc.scopes():
        if scope.id.function is not None:
            continue
        for _key, node in scope.nodes():
            if (node.domain, node.op_type, node.overload) == (fn.domain, fn.name, fn.overload):
                yield scope.id, node


def _visible_type(
    checked: CheckResult, doc: Document, sid: ScopeId, name: str
) -> onnx.TypeProto | None:
    current: ScopeId | None = sid
    while current is not None:
        proto = doc.scope(current).proto
        assert isinstance(proto, onnx.GraphProto)
        found = _type_table(proto, checked.types(current)).get(name)
        if found is not None:
            return found
        current = current.parent
    return None


def _function_graph(
    doc: Document,
    fn: onnx.FunctionProto,
    checked: CheckResult,
    seen: frozenset[_FunctionKey] = frozenset(),
) -> onnx.GraphProto:
    """``fn``'s body as a graph, typed from the first call site whose inputs have known
    types, attribute references replaced by its values or the function's defaults."""
    label = f"{fn.domain}:{fn.name}"
    site = None
    for call, lookup in _call_sites(doc, fn, checked, seen | {_key(fn)}):
        actual = [call.input[i] if i < len(call.input) else "" for i in range(len(fn.input))]
        types = [lookup(name) if name else None for name in actual]
        if all(t is not None for t, name in zip(types, actual, strict=True) if name):
            site = (call, lookup, actual, types)
            break
    if site is None:
        raise ExtractError(
            f"the input types of local function '{label}' are unknown: it has no call site "
            "with typed inputs, neither outside function bodies nor in a local function "
            "that can be typed; call it once from the main graph with inputs of known types "
            "(or fix the type checker's errors), then extract again"
        )
    call, lookup, actual, types = site
    graph = onnx.GraphProto(name=fn.name, doc_string=fn.doc_string)
    graph.node.extend(fn.node)
    graph.value_info.extend(fn.value_info)
    missing = {formal: "" for formal, name in zip(fn.input, actual, strict=True) if not name}
    for formal, type_proto in zip(fn.input, types, strict=True):
        if formal not in missing:
            info = graph.input.add(name=formal)
            assert type_proto is not None
            info.type.CopyFrom(type_proto)
    for i, formal in enumerate(fn.output):
        info = graph.output.add(name=formal)
        name = call.output[i] if i < len(call.output) else ""
        type_proto = lookup(name) if name else None
        if type_proto is not None:
            info.type.CopyFrom(type_proto)
    if missing:
        _replace_uses(graph.node, missing)
    values = {a.name: a for a in fn.attribute_proto}
    values.update((a.name, a) for a in call.attribute)
    _substitute_refs(graph.node, values)
    return graph


def _replace_uses(nodes: Iterable[onnx.NodeProto], mapping: dict[str, str]) -> None:
    for node in iter_nodes(nodes):
        for i, name in enumerate(node.input):
            node.input[i] = mapping.get(name, name)


def _substitute_refs(
    nodes: Iterable[onnx.NodeProto], values: dict[str, onnx.AttributeProto]
) -> None:
    """Replace attributes that refer to function attributes (``ref_attr_name``) by the
    referenced value; one without a value is dropped (ONNX treats it as not given). The walk
    descends into a node's subgraphs after the node is changed, so substituted graphs count."""
    for node in iter_nodes(nodes):
        for i in reversed(range(len(node.attribute))):
            attr = node.attribute[i]
            if not attr.ref_attr_name:
                continue
            value = values.get(attr.ref_attr_name)
            if value is None:
                del node.attribute[i]
                continue
            name, doc_string = attr.name, attr.doc_string
            attr.CopyFrom(value)
            attr.name = name
            attr.ClearField("ref_attr_name")
            if doc_string:
                attr.doc_string = doc_string


# --- outer values, types, assembly --------------------------------------------------------
def _free_names(graph: onnx.GraphProto) -> list[str]:
    """Names ``graph`` (and its nested subgraphs) read without defining them, in first-use
    order."""
    defined = {v.name for v in graph.input}
    defined.update(t.name for t in graph.initializer)
    defined.update(s.values.name for s in graph.sparse_initializer)
    used: list[str] = []
    for node in graph.node:
        used.extend(node.input)
        defined.update(node.output)
        for _a, _i, sub in graph_attributes(node):
            used.extend(_free_names(sub))
    used.extend(v.name for v in graph.output)
    return [n for n in dict.fromkeys(used) if n and n not in defined]


def _add_outer_values(graph: onnx.GraphProto, levels: list[_Level]) -> None:
    """Turn the outer-scope values ``graph`` reads into graph inputs or initializers."""
    for name in _free_names(graph):
        for level in reversed(levels[:-1]):
            outer = level.graph
            inputs = {v.name for v in outer.input}
            tensor = next((t for t in outer.initializer if t.name == name), None)
            if tensor is not None and name not in inputs:
                graph.initializer.append(tensor)
                break
            sparse = next((s for s in outer.sparse_initializer if s.values.name == name), None)
            if sparse is not None and name not in inputs:
                graph.sparse_initializer.append(sparse)
                break
            produced = name in inputs or any(name in n.output for n in outer.node)
            if produced:
                type_proto = level.types.get(name)
                if type_proto is None:
                    raise _unknown_type("outer value", name)
                graph.input.append(onnx.helper.make_value_info(name, type_proto))
                break
        else:
            raise ExtractError(f"'{name}' is read in the subgraph but defined nowhere around it")


def _unknown_type(what: str, name: str) -> ExtractError:
    return ExtractError(
        f"the type of {what} '{name}' is unknown; fix the type checker's errors "
        "(or declare its type), then extract again"
    )


def _lacks_shape(type_proto: onnx.TypeProto) -> bool:
    """True when ``type_proto`` does not do for a model's input or output: onnx's checker
    wants a main graph's inputs and outputs typed, a (sparse) tensor with a shape (its rank
    at least; dims may be unknown), though subgraphs may leave it out (as exporters do)."""
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return not type_proto.tensor_type.HasField("shape")
    if kind == "sparse_tensor_type":
        return not type_proto.sparse_tensor_type.HasField("shape")
    return kind is None


def _type_own_values(graph: onnx.GraphProto, types: dict[str, onnx.TypeProto]) -> None:
    """Give the graph's inputs and outputs the inferred type where the declared one is
    missing or has no shape (the inferred one merges the declared one)."""
    for group in (graph.input, graph.output):
        for vi in group:
            known = types.get(vi.name)
            if known is None or not _lacks_shape(vi.type):
                continue
            if vi.type.WhichOneof("value") is None or not _lacks_shape(known):
                vi.type.CopyFrom(known)


def _type_loop_body(
    graph: onnx.GraphProto, holder: onnx.NodeProto | None, levels: list[_Level]
) -> None:
    """Shape a Loop body's inputs by the Loop's signature where they have none: the
    iteration number is an int64 scalar, the condition a bool scalar, and loop-carried
    values get the types of the Loop's initial values. onnx's inference leaves those
    unshaped (a body may change them between iterations); the extracted body computes one
    iteration, from values like the initial ones."""
    if holder is None or holder.op_type != "Loop" or holder.domain not in ("", "ai.onnx"):
        return
    if graph_at(holder, "body") is None:
        return
    for position, vi in enumerate(graph.input[: len(levels[-1].graph.input)]):
        if not _lacks_shape(vi.type):
            continue
        if position < 2:
            elem = onnx.TensorProto.INT64 if position == 0 else onnx.TensorProto.BOOL
            vi.type.CopyFrom(onnx.helper.make_tensor_type_proto(elem, []))
            continue
        actual = holder.input[position] if position < len(holder.input) else ""
        known = _outer_type(levels[:-1], actual) if actual else None
        if known is not None and not _lacks_shape(known):
            vi.type.CopyFrom(known)


def _outer_type(levels: list[_Level], name: str) -> onnx.TypeProto | None:
    return next((lv.types[name] for lv in reversed(levels) if name in lv.types), None)


def _require_input_shapes(graph: onnx.GraphProto) -> None:
    for vi in graph.input:
        if vi.type.WhichOneof("value") is None:
            raise _unknown_type("input", vi.name)
        if _lacks_shape(vi.type):
            raise _unknown_shape("input", vi.name)


def _unknown_shape(what: str, name: str) -> ExtractError:
    return ExtractError(
        f"the shape of {what} '{name}' is unknown, not even its rank, and a model's inputs "
        "and outputs need one (only subgraphs may leave it out); declare its shape in the "
        "original graph (dims may be unknown), then extract again"
    )


def _called(nodes: Iterable[onnx.NodeProto]) -> Iterator[tuple[str, str, str]]:
    for node in iter_nodes(nodes):
        yield (node.domain, node.op_type, node.overload)


def _assemble(doc: Document, graph: onnx.GraphProto, opsets: dict[str, int]) -> onnx.ModelProto:
    """A model around ``graph`` with the local functions it calls (transitively, in model
    order) and opset imports for every domain they use."""
    functions = {(f.domain, f.name, f.overload): f for f in doc.model.functions}
    wanted: set[tuple[str, str, str]] = set()
    pending = [k for k in _called(graph.node) if k in functions]
    while pending:
        key = pending.pop()
        if key not in wanted:
            wanted.add(key)
            pending.extend(k for k in _called(functions[key].node) if k in functions)
    model = onnx.ModelProto(ir_version=doc.model.ir_version, producer_name="onnx-designer")
    model.graph.CopyFrom(graph)
    model.functions.extend(f for k, f in functions.items() if k in wanted)
    versions = dict(opsets)
    for fn in model.functions:
        versions.setdefault(fn.domain, doc.opset_imports.get(fn.domain, 1))
        for imp in fn.opset_import:
            versions.setdefault(imp.domain, imp.version)
    used = {d for d, _op, _o in _called(graph.node)}
    for domain in used:
        versions.setdefault(domain, doc.opset_imports.get(domain, 1))
    for domain, version in versions.items():
        model.opset_import.add(domain=domain, version=version)
    return model


def _type_outputs_by_inference(model: onnx.ModelProto) -> None:
    """Give graph outputs that are untyped or unshaped the type onnx infers for them."""
    untyped = [vi for vi in model.graph.output if _lacks_shape(vi.type)]
    if not untyped:
        return
    try:
        inferred = shape_inference.infer_shapes(weightless_copy(model), strict_mode=False)
    except (shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError, ValueError):
        inferred = model
    types = _type_table(inferred.graph, {})
    for vi in untyped:
        known = types.get(vi.name)
        if known is not None and (vi.type.WhichOneof("value") is None or not _lacks_shape(known)):
            vi.type.CopyFrom(known)
        if vi.type.WhichOneof("value") is None:
            raise _unknown_type("output", vi.name)
        if _lacks_shape(vi.type):
            raise _unknown_shape("output", vi.name)


def _verify(model: onnx.ModelProto) -> None:
    """onnx's full check, on a copy without weights: external data is resolved against the
    source folder only when the model is saved, so those tensors are checked as inputs."""
    skeleton = weightless_copy(model)
    graph = skeleton.graph
    inputs = {v.name for v in graph.input}
    for tensor in [t for t in graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]:
        graph.initializer.remove(tensor)
        if tensor.name not in inputs:
            info = onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims)
            graph.input.append(info)
    try:
        onnx.checker.check_model(skeleton, full_check=True)
    except (onnx.checker.ValidationError, shape_inference.InferenceError) as exc:
        first = next((line for line in str(exc).splitlines() if line.strip()), str(exc))
        raise ExtractError(f"the extracted model is not valid ONNX: {first.strip()}") from None
    except ValueError as exc:  # onnx's C++ side cannot parse it: protobuf's nesting limit
        raise ExtractError(
            "the extracted model cannot be checked: it is nested deeper than onnx's protobuf "
            f"recursion limit of 100 message levels ({str(exc).splitlines()[0]})"
        ) from None
