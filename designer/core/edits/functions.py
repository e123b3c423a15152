"""Edits of local functions: add, remove, attributes, group nodes into one, inline a call.

Every edit here changes ``model.functions`` (and maybe ``opset_import``) and notifies
``ChangeKind.MODEL``, on which views rebuild. A removed function takes its scopes' node keys
and positions with it and gets them back on undo, so keys stay unique across the document.
Grouping and inlining plan with the proto helpers of :mod:`designer.core.functions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx

from designer.core.document import Document
from designer.core.edits.base import Edit, Scopes
from designer.core.edits.function_calls import GroupIntoFunction, InlineFunctionCall
from designer.core.edits.function_support import (
    MODEL_EVENT,
    Removed,
    TakenFunction,
    add_opset,
    drop_unused_opset,
    forget_scopes,
    function_scope_ids,
    put_function,
    require_function,
    require_new_function,
    restore_opset,
    take_function,
)
from designer.core.edits.lookup import require_identifier
from designer.core.errors import EditError
from designer.core.functions import (
    FunctionId,
    attribute_users,
    function_title,
)
from designer.core.scope import ScopeId


class AddFunction(Edit):
    """A new, empty local function (its body is edited in its own tab)."""

    def __init__(
        self,
        domain: str,
        name: str,
        opset_imports: Mapping[str, int],
        inputs: Sequence[str] = (),
        outputs: Sequence[str] = (),
        doc_string: str = "",
    ) -> None:
        self.domain = domain
        self.name = name
        self.opset_imports = dict(opset_imports)
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.doc_string = doc_string
        self.fid: FunctionId = (domain, name, "")
        self._added_opset = False
        self.label = f"Add local function {domain}:{name}"

    def _build(self) -> onnx.FunctionProto:
        names = [*self.inputs, *self.outputs]
        for value in names:
            require_identifier(value, "function input/output")
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise EditError(f"function inputs and outputs must be unique: {duplicates[0]}")
        fn = onnx.FunctionProto(
            domain=self.domain, name=self.name, input=self.inputs, output=self.outputs
        )
        for domain, version in self.opset_imports.items():
            if version < 1:
                raise EditError(f"opset version of '{domain or 'ai.onnx'}' must be ≥ 1")
            fn.opset_import.add(domain=domain, version=version)
        if self.doc_string:
            fn.doc_string = self.doc_string
        return fn

    def scopes(self) -> Scopes:
        return None  # the list of local functions

    def apply(self, doc: Document) -> None:
        require_new_function(doc, self.domain, self.name)
        fn = self._build()
        doc.model.functions.append(fn)
        self._added_opset = add_opset(doc.model.opset_import, self.domain)
        doc.notify(MODEL_EVENT)

    def revert(self, doc: Document) -> None:
        forget_scopes(doc, function_scope_ids(doc, self.fid))
        doc.model.functions.pop()
        if self._added_opset:
            doc.model.opset_import.pop()
        doc.notify(MODEL_EVENT)


class RemoveFunction(Edit):
    """Delete a local function. Its call sites stay (as unknown custom operators the type
    checker flags); the model's import of its domain goes when nothing uses it any more."""

    def __init__(self, fid: FunctionId) -> None:
        self.fid = fid
        self._taken: TakenFunction | None = None
        self._opset: Removed = None
        self.label = f"Delete local function {function_title(fid)}"

    def scopes(self) -> Scopes:
        return None  # the list of local functions

    def apply(self, doc: Document) -> None:
        self._taken = take_function(doc, self.fid)
        self._opset = drop_unused_opset(doc, self.fid[0])
        doc.notify(MODEL_EVENT)

    def revert(self, doc: Document) -> None:
        assert self._taken is not None
        restore_opset(doc.model.opset_import, self._opset)
        put_function(doc, self._taken)
        doc.notify(MODEL_EVENT)


class AddFunctionAttribute(Edit):
    """Declare an attribute of a function: ``default`` None makes it required (every call
    site supplies it); otherwise ``default`` gives its type and default value."""

    def __init__(self, fid: FunctionId, name: str, default: onnx.AttributeProto | None) -> None:
        self.fid = fid
        self.name = name
        self.default = default
        self.label = f"Add attribute {name} to {function_title(fid)}"

    def scopes(self) -> Scopes:
        return (ScopeId(self.fid),)

    def apply(self, doc: Document) -> None:
        _index, fn = require_function(doc, self.fid)
        require_identifier(self.name, "attribute")
        if self.name in fn.attribute or any(a.name == self.name for a in fn.attribute_proto):
            raise EditError(f"{function_title(self.fid)} already has an attribute '{self.name}'")
        if self.default is None:
            fn.attribute.append(self.name)
        else:
            if self.default.type == onnx.AttributeProto.UNDEFINED:
                raise EditError(f"the default of attribute '{self.name}' needs a type")
            if self.default.ref_attr_name:
                raise EditError("a default value cannot refer to another attribute")
            attr = fn.attribute_proto.add()
            attr.CopyFrom(self.default)
            attr.name = self.name
        doc.notify(MODEL_EVENT)

    def revert(self, doc: Document) -> None:
        _index, fn = require_function(doc, self.fid)
        (fn.attribute if self.default is None else fn.attribute_proto).pop()
        doc.notify(MODEL_EVENT)


class RemoveFunctionAttribute(Edit):
    """Remove a function attribute; refused while body nodes refer to it."""

    def __init__(self, fid: FunctionId, name: str) -> None:
        self.fid = fid
        self.name = name
        self._old: tuple[int, onnx.AttributeProto | None] | None = None
        self.label = f"Remove attribute {name} from {function_title(fid)}"

    def scopes(self) -> Scopes:
        return (ScopeId(self.fid),)

    def apply(self, doc: Document) -> None:
        _index, fn = require_function(doc, self.fid)
        users = attribute_users(fn, self.name)
        if users:
            raise EditError(
                f"attribute '{self.name}' of {function_title(self.fid)} is still used by "
                + ", ".join(f"'{u}'" for u in users)
                + "; change those attributes first"
            )
        if self.name in fn.attribute:
            index = list(fn.attribute).index(self.name)
            del fn.attribute[index]
            self._old = (index, None)
        else:
            index = next((i for i, a in enumerate(fn.attribute_proto) if a.name == self.name), -1)
            if index < 0:
                raise EditError(f"{function_title(self.fid)} has no attribute '{self.name}'")
            old = onnx.AttributeProto()
            old.CopyFrom(fn.attribute_proto[index])
            del fn.attribute_proto[index]
            self._old = (index, old)
        doc.notify(MODEL_EVENT)

    def revert(self, doc: Document) -> None:
        assert self._old is not None
        _index, fn = require_function(doc, self.fid)
        index, old = self._old
        if old is None:
            fn.attribute.insert(index, self.name)
        else:
            fn.attribute_proto.insert(index, old)
        doc.notify(MODEL_EVENT)


__all__ = [
    "AddFunction",
    "AddFunctionAttribute",
    "GroupIntoFunction",
    "InlineFunctionCall",
    "RemoveFunction",
    "RemoveFunctionAttribute",
    "require_function",
    "require_new_function",
]
