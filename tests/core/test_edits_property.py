"""Property: any sequence of edits on real models undoes back to the original bytes and
positions exactly, and redoes to the edited ones (SPEC D-4).

Edits are drawn from the document as it is at each step (scopes, node keys, tensor names),
mixed with names that must be refused. An edit that raises EditError is skipped, but must
leave the model and positions untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import onnx
from helpers.models import (
    SUBGRAPH_NODE_MODELS,
    backend_node_model,
    function_model,
    rich_model,
    subgraph_model,
)
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from designer.core.document import Document
from designer.core.edits import (
    AddGraphIO,
    AddInitializer,
    AddNode,
    ClearAttribute,
    CompoundEdit,
    Edit,
    MoveNodes,
    RemoveGraphIO,
    RemoveInitializer,
    RemoveNodes,
    RenameNode,
    RenameTensor,
    ReplaceInitializer,
    ReplaceModel,
    SetAttribute,
    SetMetadataProp,
    SetModelProperty,
    SetNodeInput,
    SetNodeOutput,
    SetValueType,
)
from designer.core.edits.lookup import names_in_use
from designer.core.errors import EditError
from designer.core.scope import Scope, ScopeId

Snapshot = tuple[bytes, dict[ScopeId, dict[int, tuple[float, float]]]]

MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "subgraph_model": subgraph_model,
    "function_model": function_model,
    "rich_model": rich_model,
}
for _name in SUBGRAPH_NODE_MODELS:
    MODELS[_name] = functools.partial(backend_node_model, _name)

INVALID_NAMES = ("1abc", "int", "a-b", "", "while")
BOGUS_KEY = 10**9
OPS = ("Relu", "Add", "Identity", "Neg", "My-Op", "int")


def snapshot(doc: Document) -> Snapshot:
    """Model bytes and positions (an empty position table counts as none)."""
    return doc.model.SerializeToString(), {s: dict(p) for s, p in doc.positions.items() if p}


# --- strategies drawing from the live document ---------------------------------------------
fresh_names = st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True)
positions = st.tuples(
    st.floats(-1e4, 1e4, allow_nan=False, width=32), st.floats(-1e4, 1e4, width=32)
)


def _names(draw: st.DataObject, existing: list[str]) -> str:
    options: list[st.SearchStrategy[str]] = [fresh_names, fresh_names]
    options.append(st.sampled_from(INVALID_NAMES))
    if existing:
        options.append(st.sampled_from(existing))
    return draw.draw(st.one_of(options))


def _pick(draw: st.DataObject, items: list[str], extra: tuple[str, ...] = ("nope",)) -> str:
    """Mostly one of ``items``, sometimes one of ``extra`` (names that should be refused)."""
    if items and draw.draw(st.integers(0, 3)) > 0:
        return draw.draw(st.sampled_from(items))
    return draw.draw(st.sampled_from(extra))


def _key(draw: st.DataObject, scope: Scope) -> int:
    return int(draw.draw(st.sampled_from([*scope.keys, BOGUS_KEY])))


def _attribute(draw: st.DataObject, existing: list[str]) -> onnx.AttributeProto:
    name = draw.draw(st.sampled_from([*existing, "alpha", "axis", "mode", "note"]))
    value = draw.draw(
        st.one_of(
            st.integers(-5, 5),
            st.floats(-10, 10, width=32),
            st.text("abcxyz", max_size=4),
            st.lists(st.integers(-3, 3), min_size=1, max_size=3),
            st.lists(st.floats(-2, 2, width=32), min_size=1, max_size=3),
        )
    )
    return helper.make_attribute(name, value)


def _graph_attribute(draw: st.DataObject, name: str) -> onnx.AttributeProto:
    """A tiny subgraph (1–2 nodes) as a graph attribute called ``name``."""
    count = draw.draw(st.integers(1, 2))
    prefix = draw.draw(st.sampled_from(["g", "h"])) + str(draw.draw(st.integers(0, 99)))
    nodes = [
        helper.make_node("Identity", [f"{prefix}_{i}"], [f"{prefix}_{i + 1}"], name=f"n{i}")
        for i in range(count)
    ]
    graph = helper.make_graph(
        nodes,
        f"{prefix}_graph",
        [],
        [helper.make_tensor_value_info(f"{prefix}_{count}", TensorProto.FLOAT, None)],
    )
    return helper.make_attribute(name, graph)


def _type(draw: st.DataObject) -> onnx.TypeProto | None:
    if draw.draw(st.booleans()):
        return None
    elem = draw.draw(st.sampled_from([TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL]))
    shape = draw.draw(
        st.none() | st.lists(st.integers(1, 4) | st.sampled_from(["N", "M"]), max_size=3)
    )
    return helper.make_tensor_type_proto(elem, shape)


def _tensor(draw: st.DataObject, name: str) -> onnx.TensorProto:
    size = draw.draw(st.integers(1, 5))
    dtype = draw.draw(st.sampled_from([np.float32, np.int64]))
    values = draw.draw(st.lists(st.integers(-100, 100), min_size=size, max_size=size))
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def _value_info(draw: st.DataObject, name: str) -> onnx.ValueInfoProto:
    type_proto = _type(draw)
    if type_proto is None:
        return onnx.ValueInfoProto(name=name)
    return helper.make_value_info(name, type_proto)


def _scope_edit(draw: st.DataObject, doc: Document, scope: Scope) -> Edit:
    """One edit of one scope (may be invalid on purpose)."""
    sid = scope.id
    names = sorted(names_in_use(doc, sid))
    outer = sorted(scope.outer_names())
    kind = draw.draw(
        st.sampled_from(
            [
                "add_node",
                "add_if",
                "remove_nodes",
                "set_input",
                "set_output",
                "set_attr",
                "set_graph_attr",
                "clear_attr",
                "rename_node",
                "move",
                "rename_tensor",
                "set_type",
                "add_io",
                "remove_io",
                "add_init",
                "remove_init",
                "replace_init",
            ]
        )
    )
    if kind == "add_node":
        inputs = draw.draw(st.lists(st.sampled_from([*names, ""]), max_size=3)) if names else []
        count = draw.draw(st.integers(0, 2))
        outputs: int | list[str] = count
        if draw.draw(st.booleans()):
            outputs = [_names(draw, names) for _ in range(count)]
        node_names = sorted(scope.node_names())
        return AddNode(
            sid,
            draw.draw(st.sampled_from(OPS)),
            inputs=inputs,
            outputs=outputs,
            attributes=[_attribute(draw, []) for _ in range(draw.draw(st.integers(0, 2)))],
            name=_names(draw, node_names) if draw.draw(st.booleans()) else None,
            position=draw.draw(st.none() | positions),
            index=draw.draw(st.none() | st.integers(0, len(scope) + 1)),
        )
    if kind == "add_if":
        return AddNode(
            sid,
            "If",
            inputs=draw.draw(st.lists(st.sampled_from(names), max_size=1)) if names else [],
            attributes=[
                _graph_attribute(draw, "then_branch"),
                _graph_attribute(draw, "else_branch"),
            ],
            index=draw.draw(st.none() | st.integers(0, len(scope))),
        )
    if kind == "remove_nodes":
        keys = draw.draw(st.lists(st.sampled_from([*scope.keys, BOGUS_KEY]), max_size=3))
        return RemoveNodes(sid, keys)
    if kind in ("set_input", "set_output") and scope.keys:
        key = _key(draw, scope)
        slot = draw.draw(st.integers(-1, 4))
        if kind == "set_input":
            return SetNodeInput(sid, key, slot, _pick(draw, names, ("",)))
        return SetNodeOutput(sid, key, slot, _names(draw, names))
    if kind == "set_attr" and scope.keys:
        key = _key(draw, scope)
        existing = [a.name for a in scope.node(key).attribute] if key != BOGUS_KEY else []
        return SetAttribute(sid, key, _attribute(draw, existing))
    if kind == "set_graph_attr" and scope.keys:
        key = _key(draw, scope)
        name = draw.draw(st.sampled_from(["then_branch", "else_branch", "body", "extra"]))
        return SetAttribute(sid, key, _graph_attribute(draw, name))
    if kind == "clear_attr" and scope.keys:
        key = _key(draw, scope)
        existing = [a.name for a in scope.node(key).attribute] if key != BOGUS_KEY else []
        return ClearAttribute(sid, key, _pick(draw, existing))
    if kind == "rename_node" and scope.keys:
        return RenameNode(sid, _key(draw, scope), _names(draw, sorted(scope.node_names())))
    if kind == "move" and scope.keys:
        keys = draw.draw(st.lists(st.sampled_from(scope.keys), min_size=1, max_size=3))
        return MoveNodes(sid, {k: draw.draw(positions) for k in keys})
    if kind == "rename_tensor":
        own = sorted(scope.defined_names() - set(outer)) or names
        old = _pick(draw, own, ("nope", "", *outer[:2]))  # an outer name must be refused
        return RenameTensor(sid, old, _names(draw, names))
    if kind == "set_type":
        return SetValueType(sid, _pick(draw, names), _type(draw))
    if kind == "add_io":
        io = draw.draw(st.sampled_from(["input", "output"]))
        value = _value_info(draw, _names(draw, names))
        return AddGraphIO(sid, io, value, draw.draw(st.none() | st.integers(0, 3)))
    if kind == "remove_io":
        io = draw.draw(st.sampled_from(["input", "output"]))
        existing = scope.input_names() if io == "input" else scope.output_names()
        return RemoveGraphIO(sid, io, _pick(draw, existing))
    if kind == "add_init":
        return AddInitializer(sid, _tensor(draw, _names(draw, names)))
    if kind == "remove_init":
        return RemoveInitializer(sid, _pick(draw, scope.initializer_names()))
    if kind == "replace_init":
        return ReplaceInitializer(sid, _tensor(draw, _pick(draw, scope.initializer_names())))
    return MoveNodes(sid, {})  # a scope without nodes: an empty move


def _model_edit(draw: st.DataObject, doc: Document) -> Edit:
    kind = draw.draw(st.sampled_from(["property", "metadata", "replace"]))
    if kind == "property":
        name = draw.draw(
            st.sampled_from(["producer_name", "producer_version", "domain", "doc_string"])
        )
        return SetModelProperty(name, draw.draw(st.text("abc ", max_size=4)))
    if kind == "metadata":
        keys = [p.key for p in doc.model.metadata_props]
        key = _pick(draw, keys, ("k1", "k2"))
        return SetMetadataProp(key, draw.draw(st.none() | st.text("xyz", max_size=3)))
    replacement = onnx.ModelProto()
    replacement.CopyFrom(doc.model)
    replacement.producer_name = "replaced"
    if replacement.graph.node and draw.draw(st.booleans()):
        del replacement.graph.node[0]
    return ReplaceModel("Global modification", replacement)


def draw_edit(draw: st.DataObject, doc: Document) -> Edit:
    """A random edit of ``doc`` as it is now (constructors may raise EditError)."""
    choice = draw.draw(st.integers(0, 9))
    if choice == 0:
        return _model_edit(draw, doc)
    scope = draw.draw(st.sampled_from(list(doc.scopes())))
    if choice == 1:
        return CompoundEdit("Two", [_scope_edit(draw, doc, scope), _scope_edit(draw, doc, scope)])
    return _scope_edit(draw, doc, scope)


def _check_keys(doc: Document) -> None:
    """Node keys are unique within every scope and across the document."""
    seen: set[int] = set()
    for scope in doc.scopes():
        assert len(scope.keys) == len(scope.proto.node)
        assert not seen & set(scope.keys), scope.id
        seen |= set(scope.keys)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(model_name=st.sampled_from(sorted(MODELS)), draw=st.data())
def test_random_edits_undo_and_redo_exactly(model_name: str, draw: st.DataObject) -> None:
    doc = Document(MODELS[model_name]())
    for i, key in enumerate(doc.scope().keys[:3]):  # some nodes already placed
        doc.positions.setdefault(doc.scope().id, {})[key] = (float(i), float(-i))
    original = snapshot(doc)
    states = [original]  # states[i]: the document with i edits of the stack applied
    stack = doc.undo_stack
    for _ in range(draw.draw(st.integers(1, 15), label="edit count")):
        before = snapshot(doc)
        try:
            edit = draw_edit(draw, doc)
            stack.push(edit)
        except EditError:
            assert snapshot(doc) == before
            continue
        event(f"applied {type(edit).__name__}")
        del states[stack.index :]
        states.append(snapshot(doc))
        _check_keys(doc)
    edited = snapshot(doc)
    assert len(states) == stack.index + 1

    while stack.can_undo:
        stack.undo()
        assert snapshot(doc) == states[stack.index], f"undo to step {stack.index}"
    assert snapshot(doc) == original
    _check_keys(doc)
    while stack.can_redo:
        stack.redo()
        assert snapshot(doc) == states[stack.index], f"redo to step {stack.index}"
    assert snapshot(doc) == edited
