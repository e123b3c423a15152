"""Links keep every scope's node list topologically sorted (QA editing findings 1 and 6).

A link into an earlier node moves the fewest nodes in the same edit, saves a model that
onnx.checker accepts, and undo restores the old order byte for byte; a link that would close
a cycle is refused before anything changes. Main graph, If bodies, local function bodies,
and a subgraph confirmed back into its parent (ReplaceScope).
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from helpers.models import FN_DOMAIN, chain_model, function_model, subgraph_model, tensor_info
from onnx import helper

from designer.core.document import Document
from designer.core.edits import AddNode, CompoundEdit, Edit, SetNodeInput
from designer.core.edits.order import plan_read
from designer.core.edits.scopes import ReplaceScope
from designer.core.errors import EditError
from designer.core.io import save_document
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.transforms.toposort import is_sorted

FN_SCOPE = ScopeId((FN_DOMAIN, "ScaledAdd", ""))


def key_of(doc: Document, name: str, scope_id: ScopeId = MAIN_SCOPE) -> int:
    return next(k for k, n in doc.scope(scope_id).nodes() if n.name == name)


def names(doc: Document, scope_id: ScopeId = MAIN_SCOPE) -> list[str]:
    return [n.name for n in doc.scope(scope_id).proto.node]


def state(doc: Document) -> tuple[bytes, dict[ScopeId, list[int]]]:
    return doc.model.SerializeToString(), doc.all_keys()


def insert_relu(doc: Document, after: str, before: str, scope_id: ScopeId = MAIN_SCOPE) -> Edit:
    """What the canvas does for "insert a layer": Quick Add appends a node, then two links.
    Returns the second link (the one that needs the move), already pushed."""
    add = AddNode(scope_id, "Relu", name="inserted", outputs=["inserted_out"])
    doc.undo_stack.push(add)
    assert add.key is not None
    producer = doc.scope(scope_id).node(key_of(doc, after, scope_id)).output[0]
    doc.undo_stack.push(SetNodeInput(scope_id, add.key, 0, producer))
    link = SetNodeInput(scope_id, key_of(doc, before, scope_id), 0, "inserted_out")
    doc.undo_stack.push(link)
    return link


def test_insert_into_chain_moves_the_new_node_and_saves_a_valid_model(tmp_path: Path) -> None:
    doc = Document(chain_model(4))
    before = state(doc)
    insert_relu(doc, "relu0", "relu1")
    assert names(doc) == ["relu0", "inserted", "relu1", "relu2", "relu3", "add_w"]
    assert is_sorted(doc.model.graph)
    assert [n.input[0] for n in doc.model.graph.node[:3]] == ["X", "t1", "inserted_out"]
    save_document(doc, tmp_path / "inserted.onnx")
    onnx.checker.check_model(onnx.load(tmp_path / "inserted.onnx"), full_check=True)
    # one undo step for the link: the node goes back to the end, exactly
    doc.undo_stack.undo()
    assert names(doc) == ["relu0", "relu1", "relu2", "relu3", "add_w", "inserted"]
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert state(doc) == before
    for _ in range(3):
        doc.undo_stack.redo()
    assert names(doc) == ["relu0", "inserted", "relu1", "relu2", "relu3", "add_w"]


def test_the_smaller_block_moves_consumer_and_its_users_down() -> None:
    """Consumer first, then a long chain ending in the producer: moving the consumer (and
    what reads it) after the producer moves 2 nodes instead of 4."""
    nodes = [
        helper.make_node("Neg", ["X"], ["c_out"], name="consumer"),
        helper.make_node("Relu", ["c_out"], ["c_user"], name="consumer_user"),
        helper.make_node("Relu", ["X"], ["p1"], name="p1"),
        helper.make_node("Relu", ["p1"], ["p2"], name="p2"),
        helper.make_node("Relu", ["p2"], ["p3"], name="p3"),
        helper.make_node("Relu", ["p3"], ["p"], name="producer"),
        helper.make_node("Sum", ["p", "c_user"], ["Y"], name="tail"),
    ]
    graph = helper.make_graph(nodes, "g", [tensor_info("X")], [tensor_info("Y")])
    doc = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    before = state(doc)
    doc.undo_stack.push(SetNodeInput(MAIN_SCOPE, key_of(doc, "consumer"), 0, "p"))
    assert names(doc) == ["p1", "p2", "p3", "producer", "consumer", "consumer_user", "tail"]
    assert is_sorted(doc.model.graph)
    onnx.checker.check_model(doc.model, full_check=True)
    doc.undo_stack.undo()
    assert state(doc) == before


def test_the_smaller_block_moves_producer_and_its_needs_up() -> None:
    """The producer needs one node between the two; the consumer feeds the rest."""
    nodes = [
        helper.make_node("Neg", ["X"], ["c_out"], name="consumer"),
        helper.make_node("Relu", ["c_out"], ["u1"], name="u1"),
        helper.make_node("Relu", ["X"], ["n1"], name="need"),
        helper.make_node("Relu", ["u1"], ["u2"], name="u2"),
        helper.make_node("Relu", ["n1"], ["p"], name="producer"),
        helper.make_node("Sum", ["p", "u2"], ["Y"], name="tail"),
    ]
    graph = helper.make_graph(nodes, "g", [tensor_info("X")], [tensor_info("Y")])
    doc = Document(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    doc.undo_stack.push(SetNodeInput(MAIN_SCOPE, key_of(doc, "consumer"), 0, "p"))
    assert names(doc) == ["need", "producer", "consumer", "u1", "u2", "tail"]
    onnx.checker.check_model(doc.model, full_check=True)


def test_link_closing_a_cycle_is_refused_and_changes_nothing() -> None:
    doc = Document(chain_model(4))
    before = state(doc)
    events: list[object] = []
    doc.subscribe(events.append)
    with pytest.raises(EditError, match="would create a cycle") as caught:
        doc.undo_stack.push(SetNodeInput(MAIN_SCOPE, key_of(doc, "relu1"), 0, "t3"))
    message = str(caught.value)
    assert message.startswith("the link would create a cycle: 'relu1' → 'relu2' → 'relu1'")
    assert "\n" not in message
    assert state(doc) == before
    assert events == [] and doc.undo_stack.index == 0
    with pytest.raises(EditError, match="its own output"):
        doc.undo_stack.push(SetNodeInput(MAIN_SCOPE, key_of(doc, "relu1"), 0, "t2"))
    assert state(doc) == before


def test_a_long_cycle_message_stays_short() -> None:
    doc = Document(chain_model(12))
    with pytest.raises(EditError) as caught:
        plan_read(doc, MAIN_SCOPE, key_of(doc, "relu0"), ["Y_pre"])
    message = str(caught.value)
    assert "… 7 more …" in message
    assert message.endswith("'relu10' → 'relu11' → 'relu0'")


def test_unchanged_order_when_the_producer_comes_first() -> None:
    doc = Document(chain_model(4))
    assert plan_read(doc, MAIN_SCOPE, key_of(doc, "relu3"), ["t1"]) == []
    doc.undo_stack.push(SetNodeInput(MAIN_SCOPE, key_of(doc, "relu3"), 0, "t1"))
    assert names(doc) == ["relu0", "relu1", "relu2", "relu3", "add_w"]


def test_inside_an_if_body_the_body_stays_sorted_and_subscopes_keep_keys() -> None:
    doc = Document(subgraph_model())
    then_id = MAIN_SCOPE.child(key_of(doc, "branch"), "then_branch")
    then = doc.scope(then_id)
    mul = then.proto.node[0]
    before = state(doc)
    add = AddNode(then_id, "Neg", name="inserted", inputs=[mul.input[0]], outputs=["neg_out"])
    doc.undo_stack.push(add)
    doc.undo_stack.push(SetNodeInput(then_id, key_of(doc, mul.name, then_id), 0, "neg_out"))
    assert names(doc, then_id) == ["inserted", mul.name]
    assert is_sorted(doc.scope(then_id).proto)
    onnx.checker.check_model(doc.model, full_check=True)
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert state(doc) == before


def test_moving_a_node_that_holds_subgraphs_keeps_their_keys() -> None:
    """The If (with bodies) is the producer moved up (a tie: the producer moves); its
    bodies keep their keys and content, and their cached scopes see the new parent."""
    doc = Document(subgraph_model())
    if_key = key_of(doc, "branch")
    then_id = MAIN_SCOPE.child(if_key, "then_branch")
    body_keys = list(doc.scope(then_id).keys)
    add = AddNode(MAIN_SCOPE, "Identity", name="reader", inputs=["X"], outputs=["r"], index=1)
    doc.undo_stack.push(add)
    assert add.key is not None
    assert names(doc) == ["pre_add", "reader", "branch", "loop"]
    before = state(doc)
    doc.undo_stack.push(SetNodeInput(MAIN_SCOPE, add.key, 0, "Y"))
    assert names(doc) == ["pre_add", "branch", "reader", "loop"]
    assert doc.scope(then_id).keys == body_keys
    assert doc.scope(then_id).parent is doc.scope()
    assert doc.scope(then_id).proto.node[0].name == "then_mul"
    assert doc.scope().node(if_key).name == "branch"
    onnx.checker.check_model(doc.model, full_check=True)
    doc.undo_stack.undo()
    assert state(doc) == before
    assert doc.scope(then_id).keys == body_keys


def test_function_body_stays_sorted() -> None:
    doc = Document(function_model())
    before = state(doc)
    add = AddNode(FN_SCOPE, "Neg", name="inserted", inputs=["a"], outputs=["neg_out"])
    doc.undo_stack.push(add)
    doc.undo_stack.push(SetNodeInput(FN_SCOPE, key_of(doc, "fn_add", FN_SCOPE), 0, "neg_out"))
    assert names(doc, FN_SCOPE) == ["fn_alpha", "inserted", "fn_add", "fn_mul"]
    onnx.checker.check_model(doc.model, full_check=True)
    with pytest.raises(EditError, match="cycle"):
        doc.undo_stack.push(SetNodeInput(FN_SCOPE, key_of(doc, "inserted", FN_SCOPE), 0, "c"))
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert state(doc) == before


def _if_model() -> onnx.ModelProto:
    """X → pre → If(then: Identity(pre_out)) → post(If_out) → Y, plus an independent
    ``late`` node after the If."""
    then = helper.make_graph(
        [helper.make_node("Identity", ["pre_out"], ["then_out"], name="then_id")],
        "then_branch",
        [],
        [tensor_info("then_out")],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["pre_out"], ["else_out"], name="else_id")],
        "else_branch",
        [],
        [tensor_info("else_out")],
    )
    cond = helper.make_tensor_value_info("C", onnx.TensorProto.BOOL, [])
    nodes = [
        helper.make_node("Relu", ["X"], ["pre_out"], name="pre"),
        helper.make_node(
            "If", ["C"], ["if_out"], name="the_if", then_branch=then, else_branch=other
        ),
        helper.make_node("Relu", ["if_out"], ["Y"], name="post"),
        helper.make_node("Neg", ["X"], ["late_out"], name="late"),
    ]
    outputs = [tensor_info("Y"), tensor_info("late_out")]
    graph = helper.make_graph(nodes, "g", [tensor_info("X"), cond], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_body_reading_a_later_enclosing_value_that_depends_on_it_is_refused() -> None:
    doc = Document(_if_model())
    if_key = key_of(doc, "the_if")
    then_id = MAIN_SCOPE.child(if_key, "then_branch")
    before = state(doc)
    with pytest.raises(EditError, match=r"cycle: 'the_if' → 'post' → 'the_if' \(read inside"):
        doc.undo_stack.push(SetNodeInput(then_id, key_of(doc, "then_id", then_id), 0, "Y"))
    assert state(doc) == before


def test_confirming_a_body_that_reads_a_later_value_moves_the_enclosing_nodes() -> None:
    """A subgraph tab (working copy) links the enclosing ``late_out`` into the then body;
    the confirm (ReplaceScope) moves ``late`` before the If in the same undo step."""
    doc = Document(_if_model())
    if_key = key_of(doc, "the_if")
    then_id = MAIN_SCOPE.child(if_key, "then_branch")
    copy = doc.working_copy()
    copy.undo_stack.push(SetNodeInput(then_id, key_of(copy, "then_id", then_id), 0, "late_out"))
    assert names(copy) == ["pre", "the_if", "post", "late"]  # the tab changes only its body
    before = state(doc)
    confirm = ReplaceScope(then_id, copy.scope(then_id).proto, copy.scope_keys(then_id))
    doc.undo_stack.push(CompoundEdit("Confirm", [confirm]))
    assert names(doc) == ["pre", "late", "the_if", "post"]
    assert doc.scope(then_id).proto.node[0].input[0] == "late_out"
    onnx.checker.check_model(doc.model, full_check=True)
    doc.undo_stack.undo()
    assert state(doc) == before
    doc.undo_stack.redo()
    assert names(doc) == ["pre", "late", "the_if", "post"]
