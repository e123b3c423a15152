"""The document's one history (revisions, the saved revision, ``modified``), ``Edit.scopes``
and the notifying path for positions that are no undo step."""

from __future__ import annotations

import inspect

import onnx
from helpers.models import FN_DOMAIN, chain_model, function_model, subgraph_model
from onnx import helper

from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.edits import (
    AddNode,
    CompoundEdit,
    Edit,
    MoveNodes,
    RenameNode,
    ReplaceModel,
    SetAttribute,
    SetModelProperty,
)
from designer.core.edits.function_calls import GroupIntoFunction
from designer.core.edits.functions import AddFunction, AddFunctionAttribute, RemoveFunction
from designer.core.edits.scopes import ReplaceScope
from designer.core.edits.trt import SetLayerPrecision, SetOptimizationProfiles
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.subgraphs import CreateSubgraph


def key_of(doc: Document, name: str, scope_id: ScopeId = MAIN_SCOPE) -> int:
    return next(k for k, n in doc.scope(scope_id).nodes() if n.name == name)


# --- revisions --------------------------------------------------------------------------------
def test_modified_is_revision_against_saved_revision() -> None:
    doc = Document(chain_model())
    stack = doc.undo_stack
    base = stack.revision
    assert stack.saved_revision == base and not doc.modified and doc.title == "Untitled"
    stack.push(SetModelProperty("domain", "a"))
    first = stack.revision
    stack.push(SetModelProperty("domain", "b"))
    assert len({base, first, stack.revision}) == 3 and doc.modified
    stack.set_clean()
    saved = stack.revision
    stack.set_index(0)
    assert stack.revision == base and doc.modified and doc.title == "Untitled*"
    stack.set_index(2)
    assert stack.revision == saved and not doc.modified
    stack.reset_clean()  # e.g. restored crash-recovery work
    assert doc.modified and stack.clean_index is None


def test_a_merged_step_is_a_new_revision() -> None:
    doc = Document(chain_model())
    stack = doc.undo_stack
    key = key_of(doc, "relu0")
    stack.push(MoveNodes(MAIN_SCOPE, {key: (1.0, 1.0)}, merge_id="drag"))
    before = stack.revision
    stack.push(MoveNodes(MAIN_SCOPE, {key: (2.0, 2.0)}, merge_id="drag"))
    assert len(stack) == 1 and stack.revision != before and doc.modified
    stack.set_clean()
    stack.push(MoveNodes(MAIN_SCOPE, {key: (3.0, 3.0)}, merge_id="drag"))
    assert len(stack) == 2  # never merged into the saved state: undo must reach it
    stack.undo()
    assert not doc.modified


def test_clear_makes_the_current_state_clean() -> None:
    doc = Document(chain_model())
    stack = doc.undo_stack
    seen: list[int] = []
    unsubscribe = stack.on_change(lambda: seen.append(stack.revision))
    stack.push(SetModelProperty("domain", "a"))
    stack.clear()
    assert not doc.modified and len(stack) == 0 and not stack.can_undo
    assert seen[-1] == stack.revision == stack.base_revision
    unsubscribe()
    stack.push(SetModelProperty("domain", "b"))
    assert len(seen) == 2 and doc.modified


# --- Edit.scopes ------------------------------------------------------------------------------
def all_edit_classes() -> list[type[Edit]]:
    """Every Edit class of the designer (the imports above load each module defining one)."""
    out: list[type[Edit]] = []
    todo: list[type[Edit]] = [Edit]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in out if c.__module__.startswith("designer.")]


def test_every_edit_says_which_scopes_it_changes() -> None:
    concrete = [c for c in all_edit_classes() if not c.__name__.startswith("_")]
    concrete = [c for c in concrete if c is not Edit]
    assert len(concrete) >= 25
    for cls in concrete:
        assert not inspect.isabstract(cls), f"{cls.__name__} lacks apply/revert/scopes"


def test_scopes_of_each_kind_of_edit() -> None:
    doc = Document(subgraph_model())
    then = MAIN_SCOPE.child(key_of(doc, "branch"), "then_branch")
    fid = (FN_DOMAIN, "ScaledAdd", "")
    attr = helper.make_attribute("alpha", 1.0)
    assert AddNode(then, "Relu").scopes() == (then,)
    assert RenameNode(MAIN_SCOPE, 1, "x").scopes() == (MAIN_SCOPE,)
    assert SetAttribute(then, 1, attr).scopes() == (then,)
    assert SetLayerPrecision(MAIN_SCOPE, [1], "fp16").scopes() == (MAIN_SCOPE,)
    assert ReplaceScope(then, onnx.GraphProto(), {}).scopes() == (then,)
    assert CreateSubgraph(MAIN_SCOPE, 1, "body", "g").scopes() == (MAIN_SCOPE,)
    assert AddFunctionAttribute(fid, "beta", None).scopes() == (ScopeId(fid),)
    for whole in (
        SetModelProperty("domain", "d"),
        ReplaceModel("Sanitize", onnx.ModelProto()),
        SetOptimizationProfiles([]),
        AddFunction("d", "f", {"": 17}),
        RemoveFunction(fid),
        GroupIntoFunction(MAIN_SCOPE, [1], "g"),
    ):
        assert whole.scopes() is None, type(whole).__name__


def test_compound_edits_combine_their_childrens_scopes() -> None:
    then = MAIN_SCOPE.child(5, "then_branch")
    both = CompoundEdit("two", [AddNode(then, "Relu"), RenameNode(MAIN_SCOPE, 1, "x")])
    assert both.scopes() == (then, MAIN_SCOPE)
    again = CompoundEdit("same", [RenameNode(then, 1, "a"), RenameNode(then, 2, "b")])
    assert again.scopes() == (then,)
    nested = CompoundEdit("nested", [both, again])
    assert nested.scopes() == (then, MAIN_SCOPE)
    assert CompoundEdit("model", [both, SetModelProperty("domain", "d")]).scopes() is None


# --- positions that are no undo step -----------------------------------------------------------
def test_set_positions_notifies_the_keys_that_changed() -> None:
    doc = Document(function_model())
    events: list[DocumentEvent] = []
    doc.subscribe(events.append)
    a, b = key_of(doc, "call1"), doc.io_key(MAIN_SCOPE, "input", "X")
    doc.set_positions(MAIN_SCOPE, {a: (1.0, 2.0), b: (3.0, 4.0)})
    doc.set_positions(MAIN_SCOPE, {a: (1.0, 2.0)})  # unchanged: no event
    doc.set_positions(MAIN_SCOPE, {a: (5.0, 6.0)}, replace=True)  # b dropped
    assert [(e.kind, e.scope, e.node_keys) for e in events] == [
        (ChangeKind.POSITIONS, MAIN_SCOPE, frozenset({a, b})),
        (ChangeKind.POSITIONS, MAIN_SCOPE, frozenset({a, b})),
    ]
    assert doc.positions[MAIN_SCOPE] == {a: (5.0, 6.0)}
    assert not doc.modified and len(doc.undo_stack) == 0  # view state, not an edit
    doc.clear_positions()
    doc.clear_positions()  # nothing left: no event
    assert doc.positions == {} and len(events) == 3 and events[-1].scope is None
