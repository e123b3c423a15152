"""ReplaceScope: a subgraph or function body replaced as one edit; revert is byte exact and
node keys come out as given (renumbered only where they clash)."""

from __future__ import annotations

import onnx
import pytest
from helpers.models import FN_DOMAIN, function_model, subgraph_model
from onnx import helper

from designer.core.document import Document
from designer.core.edits import AddNode, SetAttribute
from designer.core.edits.scopes import ReplaceScope, outside_digest
from designer.core.errors import EditError
from designer.core.scope import ScopeId


def _key(doc: Document, scope_id: ScopeId, name: str) -> int:
    return next(k for k, n in doc.scope(scope_id).nodes() if n.name == name)


def _branch(doc: Document) -> ScopeId:
    return ScopeId().child(_key(doc, ScopeId(), "branch"), "then_branch")


def test_subgraph_replaced_and_reverted_byte_for_byte() -> None:
    doc = Document(subgraph_model())
    before = doc.model.SerializeToString()
    scope_id = _branch(doc)
    work = doc.working_copy()
    work.undo_stack.push(AddNode(scope_id, "Relu", inputs=["then_out"], name="extra"))
    keys = work.scope_keys(scope_id)
    new = work.scope(scope_id).proto
    edit = ReplaceScope(scope_id, new, keys, {scope_id: {keys[scope_id][1]: (5.0, 6.0)}})
    doc.undo_stack.push(edit)
    assert [n.name for n in doc.scope(scope_id).proto.node] == ["then_mul", "extra"]
    assert doc.scope(scope_id).keys == keys[scope_id]  # keys came over unchanged
    assert edit.remapped == {}
    assert doc.positions[scope_id] == {keys[scope_id][1]: (5.0, 6.0)}
    assert doc.new_key() > max(keys[scope_id])  # the counter stays above every key held
    onnx.checker.check_model(doc.model, full_check=True)
    doc.undo_stack.undo()
    assert doc.model.SerializeToString() == before
    assert [n.name for n in doc.scope(scope_id).proto.node] == ["then_mul"]
    doc.undo_stack.redo()
    assert doc.scope(scope_id).keys == keys[scope_id]


def test_nested_scopes_keep_their_keys() -> None:
    doc = Document(subgraph_model())
    loop = _key(doc, ScopeId(), "loop")
    body = ScopeId().child(loop, "body")
    inner = body.child(_key(doc, body, "body_if"), "then_branch")
    old_inner_keys = list(doc.scope(inner).keys)
    work = doc.working_copy()
    work.undo_stack.push(AddNode(inner, "Relu", inputs=["inner_then_out"], attributes=[]))
    keys = work.scope_keys(body)
    doc.undo_stack.push(ReplaceScope(body, work.scope(body).proto, keys))
    assert doc.scope(inner).keys[: len(old_inner_keys)] == old_inner_keys
    assert doc.scope(inner).keys == keys[inner]


def test_clashing_keys_are_renumbered() -> None:
    doc = Document(subgraph_model())
    scope_id = _branch(doc)
    main_key = _key(doc, ScopeId(), "pre_add")
    proto = onnx.GraphProto()
    proto.CopyFrom(doc.scope(scope_id).proto)
    edit = ReplaceScope(scope_id, proto, {scope_id: [main_key]}, {scope_id: {main_key: (1, 2)}})
    doc.undo_stack.push(edit)
    new_key = doc.scope(scope_id).keys[0]
    assert new_key != main_key and edit.remapped == {main_key: new_key}
    assert doc.positions[scope_id] == {new_key: (1, 2)}
    assert doc.scope(ScopeId()).has_node(main_key)


def test_function_replaced_in_place() -> None:
    doc = Document(function_model())
    fid = (FN_DOMAIN, "ScaledAdd", "")
    scope_id = ScopeId(fid)
    before = doc.model.SerializeToString()
    fn = onnx.FunctionProto()
    fn.CopyFrom(doc.function(*fid))
    fn.node[-1].op_type = "Add"  # (a + b) + alpha instead of times
    keys = doc.scope_keys(scope_id)
    doc.undo_stack.push(ReplaceScope(scope_id, fn, keys, label="Confirm"))
    assert doc.model.functions[0].node[-1].op_type == "Add"
    assert doc.scope(scope_id).keys == keys[scope_id]
    doc.undo_stack.undo()
    assert doc.model.SerializeToString() == before


def test_invalid_replacements_are_refused() -> None:
    doc = Document(function_model())
    with pytest.raises(EditError, match="main graph"):
        ReplaceScope(ScopeId(), onnx.GraphProto())
    with pytest.raises(EditError, match="GraphProto"):
        ReplaceScope(ScopeId((FN_DOMAIN, "ScaledAdd", "")), onnx.GraphProto())
    other = onnx.FunctionProto(domain=FN_DOMAIN, name="Other")
    with pytest.raises(EditError, match="not the function"):
        ReplaceScope(ScopeId((FN_DOMAIN, "ScaledAdd", "")), other)
    gone = ScopeId((FN_DOMAIN, "Missing", ""))
    before = doc.model.SerializeToString()
    with pytest.raises(EditError, match="no longer exists"):
        doc.undo_stack.push(
            ReplaceScope(gone, onnx.FunctionProto(domain=FN_DOMAIN, name="Missing"))
        )
    assert doc.model.SerializeToString() == before


def test_outside_digest_sees_only_changes_outside() -> None:
    doc = Document(subgraph_model())
    scope_id = _branch(doc)
    digest = outside_digest(doc, scope_id)
    before = doc.model.SerializeToString()
    assert doc.model.SerializeToString() == before  # the scope was restored
    key = doc.scope(scope_id).keys[0]
    doc.undo_stack.push(SetAttribute(scope_id, key, helper.make_attribute("unused", 1)))
    assert outside_digest(doc, scope_id) == digest
    doc.undo_stack.push(AddNode(ScopeId(), "Relu", inputs=["Y"]))
    assert outside_digest(doc, scope_id) != digest
