"""Unit tests of every Edit and of the UndoStack: apply changes the model, revert restores the
exact bytes, invalid input raises EditError and changes nothing."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from helpers.models import (
    FN_DOMAIN,
    chain_model,
    function_model,
    rich_model,
    subgraph_model,
    tensor_info,
)
from onnx import TensorProto, helper, numpy_helper

from designer.core.document import ChangeKind, Document, DocumentEvent
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
from designer.core.edits.lookup import walk_graph_names
from designer.core.errors import EditError
from designer.core.names import is_c90_identifier
from designer.core.scope import MAIN_SCOPE, ScopeId

FN_SCOPE = ScopeId((FN_DOMAIN, "ScaledAdd", ""))


# --- helpers -----------------------------------------------------------------------------
def snapshot(doc: Document) -> tuple[bytes, dict[ScopeId, dict[int, tuple[float, float]]]]:
    """The model bytes and the node positions (empty position tables count as absent)."""
    positions = {sid: dict(p) for sid, p in doc.positions.items() if p}
    return doc.model.SerializeToString(), positions


def scope_named(doc: Document, name: str) -> ScopeId:
    """The id of the scope whose graph (or function) is called ``name``."""
    matches = [s.id for s in doc.scopes() if s.name == name]
    assert len(matches) == 1, (name, matches)
    return matches[0]


def key_of(doc: Document, node_name: str, scope_id: ScopeId = MAIN_SCOPE) -> int:
    for key, node in doc.scope(scope_id).nodes():
        if node.name == node_name:
            return key
    raise AssertionError(f"no node {node_name} in {scope_id}")


def node(doc: Document, node_name: str, scope_id: ScopeId = MAIN_SCOPE) -> onnx.NodeProto:
    return doc.scope(scope_id).node(key_of(doc, node_name, scope_id))


def do(doc: Document, edit: Edit, check: Callable[[], None] | None = None) -> None:
    """Push ``edit``; run ``check``; undo must restore the exact state before, redo the state
    after (and ``check`` must hold again)."""
    before = snapshot(doc)
    doc.undo_stack.push(edit)
    after = snapshot(doc)
    assert after != before, "the edit changed nothing"
    if check is not None:
        check()
    doc.undo_stack.undo()
    assert snapshot(doc) == before
    doc.undo_stack.redo()
    assert snapshot(doc) == after
    if check is not None:
        check()


def refused(doc: Document, edit: Edit, match: str) -> None:
    """``edit`` must raise EditError (message matching ``match``) and change nothing."""
    before = snapshot(doc)
    depth, index = len(doc.undo_stack), doc.undo_stack.index
    with pytest.raises(EditError, match=match) as info:
        doc.undo_stack.push(edit)
    assert "\n" not in str(info.value)
    assert snapshot(doc) == before
    assert (len(doc.undo_stack), doc.undo_stack.index) == (depth, index)


@pytest.fixture
def chain() -> Document:
    return Document(chain_model())


@pytest.fixture
def sub() -> Document:
    return Document(subgraph_model())


@pytest.fixture
def fn() -> Document:
    return Document(function_model())


# --- AddNode -----------------------------------------------------------------------------
def test_add_node_generates_unique_c90_names(chain: Document) -> None:
    edits = [AddNode(MAIN_SCOPE, "Relu", inputs=["X"]) for _ in range(3)]
    edits.append(AddNode(MAIN_SCOPE, "int", outputs=2))
    edits.append(AddNode(MAIN_SCOPE, "My-Op", domain="custom"))
    for edit in edits:
        do(chain, edit)
    added = [chain.scope().node(e.key) for e in edits if e.key is not None]
    names = [n.name for n in added]
    assert names == ["Relu", "Relu_1", "Relu_2", "int_", "My_Op"]
    all_names = [n.name for n in chain.model.graph.node]
    assert len(set(all_names)) == len(all_names)
    outputs = [o for n in added for o in n.output]
    assert outputs == [
        "Relu_out0",
        "Relu_1_out0",
        "Relu_2_out0",
        "int__out0",
        "int__out1",
        "My_Op_out0",
    ]
    assert all(is_c90_identifier(x) for x in names + outputs)


def test_add_node_with_everything(chain: Document) -> None:
    attr = helper.make_attribute("alpha", 0.25)
    edit = AddNode(
        MAIN_SCOPE,
        "LeakyRelu",
        inputs=["t1"],
        outputs=["leaky"],
        attributes=[attr],
        name="leaky_relu",
        position=(10.0, 20.0),
        index=1,
    )

    def check() -> None:
        assert edit.key is not None
        assert chain.scope().index_of(edit.key) == 1
        added = chain.model.graph.node[1]
        assert (added.name, added.op_type, list(added.input), list(added.output)) == (
            "leaky_relu",
            "LeakyRelu",
            ["t1"],
            ["leaky"],
        )
        assert added.attribute[0] == attr
        assert chain.positions[MAIN_SCOPE][edit.key] == (10.0, 20.0)

    do(chain, edit, check)
    keys = chain.scope().keys
    assert len(set(keys)) == len(keys) == len(chain.model.graph.node)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "relu0"}, "already exists"),
        ({"name": "1abc"}, "starts with a digit"),
        ({"name": "int"}, "keyword"),
        ({"name": "a-b"}, "contains"),
        ({"name": ""}, "empty"),
        ({"outputs": ["t1"]}, "already exists"),
        ({"outputs": ["X"]}, "already exists"),
    ],
)
def test_add_node_refuses(chain: Document, kwargs: dict[str, object], match: str) -> None:
    refused(chain, AddNode(MAIN_SCOPE, "Relu", **kwargs), match)  # type: ignore[arg-type,unused-ignore]


def test_add_node_refuses_empty_op_and_unknown_scope(chain: Document) -> None:
    refused(chain, AddNode(MAIN_SCOPE, ""), "operator type")
    refused(chain, AddNode(MAIN_SCOPE.child(999, "body"), "Relu"), "scope not found")


# --- RemoveNodes -------------------------------------------------------------------------
def test_remove_nodes_restores_order_keys_and_positions(chain: Document) -> None:
    keys = list(chain.scope().keys)
    chain.undo_stack.push(MoveNodes(MAIN_SCOPE, {keys[1]: (1.0, 2.0), keys[3]: (3.0, 4.0)}))
    edit = RemoveNodes(MAIN_SCOPE, [keys[3], keys[1], keys[1]])

    def check() -> None:
        assert chain.scope().keys == [keys[0], keys[2]]
        assert chain.positions[MAIN_SCOPE] == {}

    do(chain, edit, check)
    chain.undo_stack.undo()
    assert chain.scope().keys == keys
    assert chain.positions[MAIN_SCOPE] == {keys[1]: (1.0, 2.0), keys[3]: (3.0, 4.0)}


def test_remove_nodes_refuses_unknown_key(chain: Document) -> None:
    first = chain.scope().keys[0]
    refused(chain, RemoveNodes(MAIN_SCOPE, [first, 12345]), "not in graph")


def test_remove_node_with_subgraph_keeps_subgraph_keys(sub: Document) -> None:
    """An edit inside a subgraph, then removing the node that holds it: undoing both works
    because the subgraph scopes get their node keys back."""
    body = scope_named(sub, "loop_body")
    inner = scope_named(sub, "inner_then")
    original = snapshot(sub)
    inner_keys = list(sub.scope(inner).keys)
    sub.undo_stack.push(RenameNode(inner, key_of(sub, "inner_add", inner), "renamed_add"))
    sub.undo_stack.push(
        SetAttribute(body, key_of(sub, "body_if", body), helper.make_attribute("note", "x"))
    )
    sub.undo_stack.push(RemoveNodes(MAIN_SCOPE, [key_of(sub, "loop")]))
    with pytest.raises(EditError):
        sub.undo_stack.push(RenameNode(inner, inner_keys[0], "gone"))

    sub.undo_stack.undo()
    assert sub.scope(inner).keys == inner_keys
    sub.undo_stack.undo()
    sub.undo_stack.undo()
    assert snapshot(sub) == original
    for _ in range(3):
        sub.undo_stack.redo()
    assert [n.name for n in sub.model.graph.node] == ["pre_add", "branch"]


# --- SetNodeInput / SetNodeOutput --------------------------------------------------------
def test_set_node_input_pads_and_trims(chain: Document) -> None:
    key = key_of(chain, "add_w")
    do(
        chain,
        SetNodeInput(MAIN_SCOPE, key, 3, "X"),
        lambda: assert_inputs(chain, key, ["Y_pre", "W", "", "X"]),
    )
    do(
        chain,
        SetNodeInput(MAIN_SCOPE, key, 3, ""),
        lambda: assert_inputs(chain, key, ["Y_pre", "W"]),
    )
    do(
        chain,
        SetNodeInput(MAIN_SCOPE, key, 0, "t1"),
        lambda: assert_inputs(chain, key, ["t1", "W"]),
    )


def assert_inputs(doc: Document, key: int, expected: list[str]) -> None:
    assert list(doc.scope().node(key).input) == expected


def test_set_node_input_refuses(chain: Document) -> None:
    with pytest.raises(EditError, match="≥ 0"):
        SetNodeInput(MAIN_SCOPE, 1, -1, "X")
    refused(chain, SetNodeInput(MAIN_SCOPE, 999, 0, "X"), "not in graph")


def test_set_node_output(chain: Document) -> None:
    key = key_of(chain, "relu0")
    do(
        chain,
        SetNodeOutput(MAIN_SCOPE, key, 0, "fresh"),
        lambda: assert_outputs(chain, key, ["fresh"]),
    )
    do(
        chain,
        SetNodeOutput(MAIN_SCOPE, key, 2, "extra"),
        lambda: assert_outputs(chain, key, ["fresh", "", "extra"]),
    )
    chain.undo_stack.push(SetNodeOutput(MAIN_SCOPE, key, 0, "fresh"))  # same name: allowed


def assert_outputs(doc: Document, key: int, expected: list[str]) -> None:
    assert list(doc.scope().node(key).output) == expected


@pytest.mark.parametrize(
    ("name", "match"),
    [("t2", "already exists"), ("X", "already exists"), ("1abc", "digit"), ("int", "keyword")],
)
def test_set_node_output_refuses(chain: Document, name: str, match: str) -> None:
    refused(chain, SetNodeOutput(MAIN_SCOPE, key_of(chain, "relu0"), 0, name), match)


# --- attributes ----------------------------------------------------------------------------
def test_set_attribute_add_replace_and_merge(chain: Document) -> None:
    key = key_of(chain, "relu0")
    do(chain, SetAttribute(MAIN_SCOPE, key, helper.make_attribute("alpha", 1.5)))
    stack = chain.undo_stack
    depth = len(stack)
    stack.push(SetAttribute(MAIN_SCOPE, key, helper.make_attribute("alpha", 2.5)))
    stack.push(SetAttribute(MAIN_SCOPE, key, helper.make_attribute("alpha", 3.5)))
    assert len(stack) == depth  # typing into a field: merged into one step
    assert chain.scope().node(key).attribute[0].f == 3.5
    stack.undo()
    assert not chain.scope().node(key).attribute
    stack.redo()
    assert chain.scope().node(key).attribute[0].f == 3.5


def test_set_attribute_does_not_merge_across_clean_state(chain: Document) -> None:
    key = key_of(chain, "relu0")
    stack = chain.undo_stack
    stack.push(SetAttribute(MAIN_SCOPE, key, helper.make_attribute("alpha", 1.0)))
    stack.set_clean()
    stack.push(SetAttribute(MAIN_SCOPE, key, helper.make_attribute("alpha", 2.0)))
    assert len(stack) == 2
    assert chain.modified
    stack.undo()
    assert not chain.modified


def test_set_attribute_refuses(chain: Document) -> None:
    with pytest.raises(EditError, match="needs a name"):
        SetAttribute(MAIN_SCOPE, 1, onnx.AttributeProto())
    refused(chain, SetAttribute(MAIN_SCOPE, 999, helper.make_attribute("a", 1)), "not in graph")


def test_set_graph_attribute_then_edit_inside_then_redo(sub: Document) -> None:
    """A new subgraph gets node keys; redo after undo gives it the same keys again, so edits
    made inside it afterwards can be redone too."""
    branch = key_of(sub, "branch")
    then_id = scope_named(sub, "then_branch")
    old_keys = list(sub.scope(then_id).keys)
    original = snapshot(sub)
    new_graph = helper.make_graph(
        [
            helper.make_node("Neg", ["A"], ["neg_out"], name="neg"),
            helper.make_node("Abs", ["neg_out"], ["then_out2"], name="abs"),
        ],
        "then_branch",
        [],
        [tensor_info("then_out2")],
    )
    stack = sub.undo_stack
    stack.push(SetAttribute(MAIN_SCOPE, branch, helper.make_attribute("then_branch", new_graph)))
    new_keys = list(sub.scope(then_id).keys)
    assert len(new_keys) == 2 and not set(new_keys) & set(old_keys)
    stack.push(RenameNode(then_id, new_keys[1], "abs_renamed"))
    stack.push(RenameTensor(then_id, "neg_out", "negated"))
    edited = snapshot(sub)
    for _ in range(3):
        stack.undo()
    assert snapshot(sub) == original
    assert sub.scope(then_id).keys == old_keys
    for _ in range(3):
        stack.redo()
    assert snapshot(sub) == edited
    assert sub.scope(then_id).keys == new_keys


def test_clear_attribute(sub: Document) -> None:
    key = key_of(sub, "branch")
    then_id = scope_named(sub, "then_branch")
    then_keys = list(sub.scope(then_id).keys)

    def check() -> None:
        assert [a.name for a in sub.scope().node(key).attribute] == ["else_branch"]
        assert then_id not in {s.id for s in sub.scopes()}

    do(sub, ClearAttribute(MAIN_SCOPE, key, "then_branch"), check)
    sub.undo_stack.undo()
    assert [a.name for a in sub.scope().node(key).attribute] == ["else_branch", "then_branch"]
    assert sub.scope(then_id).keys == then_keys
    refused(sub, ClearAttribute(MAIN_SCOPE, key, "nothing"), "no attribute 'nothing'")
    refused(sub, ClearAttribute(MAIN_SCOPE, 999, "then_branch"), "not in graph")


# --- RenameNode / MoveNodes ----------------------------------------------------------------
def test_rename_node(chain: Document) -> None:
    key = key_of(chain, "relu0")
    do(chain, RenameNode(MAIN_SCOPE, key, "first"), lambda: check_eq(key_of(chain, "first"), key))
    refused(chain, RenameNode(MAIN_SCOPE, key, "relu1"), "already exists")
    refused(chain, RenameNode(MAIN_SCOPE, key, "1abc"), "digit")
    refused(chain, RenameNode(MAIN_SCOPE, key, "while"), "keyword")
    refused(chain, RenameNode(MAIN_SCOPE, 999, "x"), "not in graph")


def test_move_nodes_merge_and_revert(chain: Document) -> None:
    k0, k1 = chain.scope().keys[:2]
    stack = chain.undo_stack
    stack.push(MoveNodes(MAIN_SCOPE, {k0: (0.0, 0.0)}, merge_id="drag"))
    stack.push(MoveNodes(MAIN_SCOPE, {k0: (5.0, 5.0), k1: (1.0, 1.0)}, merge_id="drag"))
    stack.push(MoveNodes(MAIN_SCOPE, {k1: (2.0, 2.0)}, merge_id="drag"))
    assert len(stack) == 1
    assert chain.positions[MAIN_SCOPE] == {k0: (5.0, 5.0), k1: (2.0, 2.0)}
    stack.undo()
    assert snapshot(chain)[1] == {}
    stack.redo()
    assert chain.positions[MAIN_SCOPE] == {k0: (5.0, 5.0), k1: (2.0, 2.0)}
    refused(chain, MoveNodes(MAIN_SCOPE, {999: (0.0, 0.0)}), "not in graph")


def test_separate_moves_stay_separate_undo_steps(chain: Document) -> None:
    k0 = chain.scope().keys[0]
    chain.undo_stack.push(MoveNodes(MAIN_SCOPE, {k0: (1.0, 1.0)}))
    chain.undo_stack.push(MoveNodes(MAIN_SCOPE, {k0: (2.0, 2.0)}))
    chain.undo_stack.push(MoveNodes(MAIN_SCOPE, {k0: (3.0, 3.0)}, merge_id="a"))
    chain.undo_stack.push(MoveNodes(MAIN_SCOPE, {k0: (4.0, 4.0)}, merge_id="b"))
    assert len(chain.undo_stack) == 4


def test_move_nodes_in_other_scope_do_not_merge(sub: Document) -> None:
    then_id = scope_named(sub, "then_branch")
    stack = sub.undo_stack
    stack.push(MoveNodes(MAIN_SCOPE, {key_of(sub, "branch"): (0.0, 0.0)}))
    stack.push(MoveNodes(then_id, {sub.scope(then_id).keys[0]: (1.0, 1.0)}))
    assert len(stack) == 2


# --- RenameTensor --------------------------------------------------------------------------
def _names(doc: Document) -> set[str]:
    return set(walk_graph_names(doc.model.graph))


def test_rename_tensor_updates_nested_subgraphs(sub: Document) -> None:
    def check() -> None:
        names = _names(sub)
        assert "A" not in names and "alpha_sum" in names
        assert list(node(sub, "then_mul", scope_named(sub, "then_branch")).input) == [
            "alpha_sum",
            "outer_w",
        ]
        else_sub = node(sub, "else_sub", scope_named(sub, "else_branch"))
        assert list(else_sub.input) == ["alpha_sum", "X"]
        inner = scope_named(sub, "inner_then")
        assert list(node(sub, "inner_add", inner).input) == ["v_in", "alpha_sum"]
        assert list(node(sub, "loop").input) == ["trip", "cond", "alpha_sum"]

    do(sub, RenameTensor(MAIN_SCOPE, "A", "alpha_sum"), check)


def test_rename_graph_io_and_initializer(rich: Document) -> None:
    do(rich, RenameTensor(MAIN_SCOPE, "X", "image"), lambda: check_io(rich, "image", "Y"))
    do(rich, RenameTensor(MAIN_SCOPE, "Y", "result"), lambda: check_io(rich, "image", "result"))
    do(rich, RenameTensor(MAIN_SCOPE, "W", "weight"), lambda: check_weight(rich))


def check_io(doc: Document, inp: str, out: str) -> None:
    assert [v.name for v in doc.model.graph.input] == [inp]
    assert [v.name for v in doc.model.graph.output] == [out]


def check_weight(doc: Document) -> None:
    graph = doc.model.graph
    assert [t.name for t in graph.initializer] == ["weight"]
    assert "weight" in graph.node[0].input and "weight" in graph.node[1].input
    params = graph.quantization_annotation[0].quant_parameter_tensor_names
    assert [p.value for p in params] == ["weight"]


@pytest.fixture
def rich() -> Document:
    return Document(rich_model())


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("A", "X", "already exists"),
        ("A", "then_out", "already exists"),  # used inside a subgraph
        ("A", "1abc", "digit"),
        ("A", "int", "keyword"),
        ("A", "A", "already named"),
        ("", "x", "empty name"),
        ("nope", "x", "no tensor"),
    ],
)
def test_rename_tensor_refuses(sub: Document, old: str, new: str, match: str) -> None:
    refused(sub, RenameTensor(MAIN_SCOPE, old, new), match)


def test_rename_outer_tensor_from_subgraph_is_refused(sub: Document) -> None:
    then_id = scope_named(sub, "then_branch")
    refused(sub, RenameTensor(then_id, "A", "A2"), "enclosing graph")
    inner = scope_named(sub, "inner_then")
    refused(sub, RenameTensor(inner, "v_in", "v2"), "enclosing graph")
    do(sub, RenameTensor(then_id, "then_out", "then_result"))
    refused(sub, RenameTensor(then_id, "then_result", "outer_w"), "already exists")


def test_rename_tensor_in_function(fn: Document) -> None:
    def check() -> None:
        body = fn.model.functions[0]
        assert list(body.input) == ["a_in", "b"]
        assert list(body.node[1].input) == ["a_in", "b"]

    do(fn, RenameTensor(FN_SCOPE, "a", "a_in"), check)
    do(
        fn,
        RenameTensor(FN_SCOPE, "s", "sum"),
        lambda: check_eq(fn.model.functions[0].value_info[0].name, "sum"),
    )


# --- SetValueType ----------------------------------------------------------------------------
def test_set_value_type(rich: Document) -> None:
    int_type = helper.make_tensor_type_proto(TensorProto.INT32, [4])

    def vi(name: str) -> onnx.ValueInfoProto | None:
        return rich.scope().value_info(name)

    do(rich, SetValueType(MAIN_SCOPE, "T1", int_type), lambda: check_type(vi("T1"), int_type))
    do(rich, SetValueType(MAIN_SCOPE, "X", int_type), lambda: check_type(vi("X"), int_type))
    do(rich, SetValueType(MAIN_SCOPE, "X", None), lambda: check_untyped(vi("X")))
    do(rich, SetValueType(MAIN_SCOPE, "T2", None), lambda: check_missing(vi("T2")))
    refused(rich, SetValueType(MAIN_SCOPE, "W", None), "no declared type")
    do(rich, SetValueType(MAIN_SCOPE, "W", int_type), lambda: check_type(vi("W"), int_type))
    refused(rich, SetValueType(MAIN_SCOPE, "nope", int_type), "no tensor")


def check_type(vi: onnx.ValueInfoProto | None, expected: onnx.TypeProto) -> None:
    assert vi is not None and vi.type == expected


def check_untyped(vi: onnx.ValueInfoProto | None) -> None:
    assert vi is not None and not vi.HasField("type")


def check_missing(vi: onnx.ValueInfoProto | None) -> None:
    assert vi is None


def test_set_value_type_in_function(fn: Document) -> None:
    float_type = helper.make_tensor_type_proto(TensorProto.FLOAT, [7])
    body = fn.model.functions[0]
    do(
        fn,
        SetValueType(FN_SCOPE, "c", float_type),
        lambda: check_type(body.value_info[1], float_type),
    )


# --- graph inputs and outputs ------------------------------------------------------------------
def test_add_and_remove_graph_io(chain: Document) -> None:
    new_input = tensor_info("mask", TensorProto.BOOL, [2, 3])
    do(
        chain,
        AddGraphIO(MAIN_SCOPE, "input", new_input, index=0),
        lambda: check_io_names(chain, ["mask", "X"], ["Y"]),
    )
    do(
        chain,
        AddGraphIO(MAIN_SCOPE, "output", tensor_info("t1")),
        lambda: check_io_names(chain, ["mask", "X"], ["Y", "t1"]),
    )
    do(
        chain,
        RemoveGraphIO(MAIN_SCOPE, "input", "X"),
        lambda: check_io_names(chain, ["mask"], ["Y", "t1"]),
    )
    do(
        chain,
        RemoveGraphIO(MAIN_SCOPE, "output", "Y"),
        lambda: check_io_names(chain, ["mask"], ["t1"]),
    )
    assert chain.model.graph.input[0] == new_input


def check_io_names(doc: Document, inputs: list[str], outputs: list[str]) -> None:
    assert doc.scope().input_names() == inputs
    assert doc.scope().output_names() == outputs


@pytest.mark.parametrize(
    ("kind", "name", "match"),
    [
        ("input", "X", "already a graph input"),
        ("input", "t1", "already exists"),
        ("input", "1abc", "digit"),
        ("input", "int", "keyword"),
        ("output", "Y", "already a graph output"),
        ("output", "", "needs the name"),
    ],
)
def test_add_graph_io_refuses(chain: Document, kind: str, name: str, match: str) -> None:
    refused(chain, AddGraphIO(MAIN_SCOPE, kind, tensor_info(name)), match)


def test_graph_io_refuses_bad_kind_and_unknown_name(chain: Document) -> None:
    with pytest.raises(EditError, match="kind"):
        AddGraphIO(MAIN_SCOPE, "inout", tensor_info("x"))
    with pytest.raises(EditError, match="kind"):
        RemoveGraphIO(MAIN_SCOPE, "both", "x")
    refused(chain, RemoveGraphIO(MAIN_SCOPE, "input", "Y"), "not a graph input")


def test_graph_io_in_function(fn: Document) -> None:
    body = fn.model.functions[0]
    do(
        fn,
        AddGraphIO(FN_SCOPE, "input", tensor_info("extra")),
        lambda: check_fn_io(body, ["a", "b", "extra"], ["c"]),
    )
    do(
        fn,
        AddGraphIO(FN_SCOPE, "output", tensor_info("s"), index=0),
        lambda: check_fn_io(body, ["a", "b", "extra"], ["s", "c"]),
    )
    do(
        fn,
        RemoveGraphIO(FN_SCOPE, "input", "a"),
        lambda: check_fn_io(body, ["b", "extra"], ["s", "c"]),
    )


def check_fn_io(body: onnx.FunctionProto, inputs: list[str], outputs: list[str]) -> None:
    assert (list(body.input), list(body.output)) == (inputs, outputs)


# --- initializers ----------------------------------------------------------------------------
def _tensor(name: str, value: float = 1.0) -> onnx.TensorProto:
    return numpy_helper.from_array(np.full((2, 3), value, dtype=np.float32), name)


def test_initializers(chain: Document) -> None:
    graph = chain.model.graph
    do(
        chain,
        AddInitializer(MAIN_SCOPE, _tensor("bias")),
        lambda: assert_initializers(chain, ["W", "bias"]),
    )
    do(
        chain,
        ReplaceInitializer(MAIN_SCOPE, _tensor("W", 7.0)),
        lambda: check_value(graph.initializer[0], 7.0),
    )
    do(chain, RemoveInitializer(MAIN_SCOPE, "W"), lambda: assert_initializers(chain, ["bias"]))


def assert_initializers(doc: Document, names: list[str]) -> None:
    assert [t.name for t in doc.model.graph.initializer] == names


def check_value(tensor: onnx.TensorProto, value: float) -> None:
    assert (numpy_helper.to_array(tensor) == value).all()


def test_initializers_refuse(chain: Document, fn: Document, sub: Document) -> None:
    refused(chain, AddInitializer(MAIN_SCOPE, _tensor("W")), "already exists")
    refused(chain, AddInitializer(MAIN_SCOPE, _tensor("t1")), "already exists")
    refused(chain, AddInitializer(MAIN_SCOPE, _tensor("")), "needs a name")
    refused(chain, AddInitializer(MAIN_SCOPE, _tensor("1abc")), "digit")
    refused(chain, RemoveInitializer(MAIN_SCOPE, "nope"), "no initializer")
    refused(chain, ReplaceInitializer(MAIN_SCOPE, _tensor("nope")), "no initializer")
    refused(fn, AddInitializer(FN_SCOPE, _tensor("w")), "local function")
    refused(fn, RemoveInitializer(FN_SCOPE, "w"), "local function")
    then_id = scope_named(sub, "then_branch")
    refused(sub, AddInitializer(then_id, _tensor("A")), "already exists")  # outer name
    do(sub, AddInitializer(then_id, _tensor("local_w")))


# --- model properties and metadata ---------------------------------------------------------
def test_set_model_property(chain: Document) -> None:
    assert not chain.model.HasField("model_version")
    do(chain, SetModelProperty("model_version", 3), lambda: check_version(chain, 3))
    do(chain, SetModelProperty("producer_name", "me"))
    do(chain, SetModelProperty("doc_string", ""))  # set to empty: still a change on disk
    with pytest.raises(EditError, match="not an editable"):
        SetModelProperty("ir_version", 3)
    with pytest.raises(EditError, match="must be a int"):
        SetModelProperty("model_version", "3")


def check_version(doc: Document, version: int) -> None:
    assert doc.model.model_version == version


def test_set_metadata_prop(rich: Document) -> None:
    def props() -> dict[str, str]:
        return {p.key: p.value for p in rich.model.metadata_props}

    do(rich, SetMetadataProp("license", "MIT"), lambda: check_eq(props()["license"], "MIT"))
    do(rich, SetMetadataProp("author", "someone"), lambda: check_eq(props()["author"], "someone"))
    do(rich, SetMetadataProp("author", None), lambda: check_eq("author" in props(), False))
    refused(rich, SetMetadataProp("nope", None), "no metadata property")
    with pytest.raises(EditError, match="needs a key"):
        SetMetadataProp("", "x")


def check_eq(a: object, b: object) -> None:
    assert a == b


# --- ReplaceModel / CompoundEdit -------------------------------------------------------------
def test_replace_model_undo_redo(sub: Document) -> None:
    sub.undo_stack.push(MoveNodes(MAIN_SCOPE, {key_of(sub, "loop"): (4.0, 4.0)}))
    keys = sub.all_keys()
    before = snapshot(sub)
    replacement = chain_model()
    edit = ReplaceModel("Convert to chain", replacement)
    sub.undo_stack.push(edit)
    assert sub.model is replacement and snapshot(sub)[1] == {}
    new_keys = list(sub.scope().keys)
    sub.undo_stack.push(MoveNodes(MAIN_SCOPE, {new_keys[0]: (9.0, 9.0)}))
    sub.undo_stack.push(RenameNode(MAIN_SCOPE, new_keys[1], "second"))
    after = snapshot(sub)
    for _ in range(3):
        sub.undo_stack.undo()
    assert snapshot(sub) == before
    assert sub.all_keys() == keys
    for _ in range(3):
        sub.undo_stack.redo()
    assert snapshot(sub) == after
    assert sub.scope().keys == new_keys
    refused(sub, ReplaceModel("empty", onnx.ModelProto()), "no graph")


def test_compound_edit_is_all_or_nothing(chain: Document) -> None:
    key = key_of(chain, "relu0")
    good = CompoundEdit("Two", [RenameNode(MAIN_SCOPE, key, "a"), SetModelProperty("domain", "d")])
    do(chain, good, lambda: check_eq(chain.model.domain, "d"))
    chain.undo_stack.undo()
    bad = CompoundEdit("Bad", [RenameNode(MAIN_SCOPE, key, "b"), RenameNode(MAIN_SCOPE, key, "1")])
    refused(chain, bad, "digit")


# --- subgraph and function scopes ------------------------------------------------------------
def test_edits_in_subgraph_scopes(sub: Document) -> None:
    then_id = scope_named(sub, "then_branch")
    inner = scope_named(sub, "inner_else")
    add = AddNode(then_id, "Neg", inputs=["then_out"], outputs=1)
    do(sub, add, lambda: check_eq(len(sub.scope(then_id)), 2))
    assert add.key is not None
    do(sub, AddGraphIO(then_id, "output", tensor_info("Neg_out0")))
    do(sub, RenameNode(inner, sub.scope(inner).keys[0], "inner_copy"))
    do(sub, SetNodeInput(inner, sub.scope(inner).keys[0], 0, "A"))
    refused(sub, RenameNode(then_id, key_of(sub, "then_mul", then_id), "Neg"), "already exists")
    do(sub, RemoveNodes(then_id, [add.key]))
    # node names are unique per scope: a subgraph may reuse a name of the main graph
    do(sub, RenameNode(then_id, key_of(sub, "then_mul", then_id), "pre_add"))
    refused(sub, AddNode(then_id, "Relu", outputs=["A"]), "already exists")


def test_edits_in_function_scope(fn: Document) -> None:
    add = AddNode(FN_SCOPE, "Relu", inputs=["c"], outputs=["c_relu"], position=(1.0, 1.0))
    do(fn, add, lambda: check_eq(fn.model.functions[0].node[-1].output[0], "c_relu"))
    do(fn, RenameNode(FN_SCOPE, key_of(fn, "fn_add", FN_SCOPE), "adder"))
    do(fn, SetAttribute(FN_SCOPE, key_of(fn, "fn_mul", FN_SCOPE), helper.make_attribute("k", 1)))
    assert add.key is not None
    do(fn, RemoveNodes(FN_SCOPE, [add.key, key_of(fn, "fn_mul", FN_SCOPE)]))
    refused(fn, AddNode(FN_SCOPE, "Relu", name="fn_alpha"), "already exists")


# --- UndoStack and listeners ----------------------------------------------------------------
def test_undo_stack_clean_state_and_modified(chain: Document) -> None:
    stack = chain.undo_stack
    changes: list[int] = []
    stack.on_change(lambda: changes.append(stack.index))
    assert not chain.modified and not stack.can_undo and not stack.can_redo
    assert chain.title == "Untitled"
    stack.push(SetModelProperty("domain", "a"))
    stack.push(SetModelProperty("domain", "b"))
    assert chain.modified and chain.title == "Untitled*"
    assert stack.labels() == ["Set domain", "Set domain"]
    stack.set_clean()
    assert not chain.modified
    stack.undo()
    assert chain.modified and stack.can_redo
    stack.redo()
    assert not chain.modified
    stack.undo()
    stack.undo()
    stack.push(SetModelProperty("domain", "c"))  # drops the redo part holding the clean state
    assert stack.clean_index is None and chain.modified and len(stack) == 1
    stack.undo()
    assert chain.modified  # the saved state cannot be reached any more
    stack.undo()  # nothing to undo: no change, no error
    stack.redo()
    stack.redo()
    assert changes == [1, 2, 2, 1, 2, 1, 0, 1, 0, 1]


def test_failing_push_records_nothing(chain: Document) -> None:
    stack = chain.undo_stack
    stack.push(SetModelProperty("domain", "a"))
    stack.undo()
    refused(chain, RenameNode(MAIN_SCOPE, 999, "x"), "not in graph")
    assert stack.can_redo  # the redo part is kept when a push fails


def test_listeners_receive_events(chain: Document) -> None:
    events: list[DocumentEvent] = []
    unsubscribe = chain.subscribe(events.append)
    key = key_of(chain, "relu0")
    chain.undo_stack.push(RenameNode(MAIN_SCOPE, key, "r"))
    chain.undo_stack.push(RenameTensor(MAIN_SCOPE, "t1", "u1"))
    add = AddNode(MAIN_SCOPE, "Relu")
    chain.undo_stack.push(add)
    chain.undo_stack.push(MoveNodes(MAIN_SCOPE, {key: (1.0, 1.0)}))
    chain.undo_stack.push(RemoveInitializer(MAIN_SCOPE, "W"))
    chain.undo_stack.push(SetModelProperty("domain", "d"))
    chain.undo_stack.undo()
    assert add.key is not None
    assert events == [
        DocumentEvent(ChangeKind.NODE, MAIN_SCOPE, frozenset({key})),
        DocumentEvent(ChangeKind.TENSORS, MAIN_SCOPE, names=frozenset({"t1", "u1"})),
        DocumentEvent(ChangeKind.NODES, MAIN_SCOPE, frozenset({add.key})),
        DocumentEvent(ChangeKind.POSITIONS, MAIN_SCOPE, frozenset({key})),
        DocumentEvent(ChangeKind.INITIALIZERS, MAIN_SCOPE, names=frozenset({"W"})),
        DocumentEvent(ChangeKind.MODEL),
        DocumentEvent(ChangeKind.MODEL),
    ]
    unsubscribe()
    chain.undo_stack.undo()
    assert len(events) == 7
