"""Edits of the model as a whole: properties, metadata, opset imports, full replacement."""

from __future__ import annotations

import onnx

from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.edits.base import Edit, Scopes
from designer.core.errors import EditError
from designer.core.scope import ScopeId

_EVENT = DocumentEvent(ChangeKind.MODEL)

#: Model fields a user may edit (P-4) and their Python types.
EDITABLE_PROPERTIES: dict[str, type] = {
    "producer_name": str,
    "producer_version": str,
    "domain": str,
    "model_version": int,
    "doc_string": str,
}


class SetModelProperty(Edit):
    """Set one of :data:`EDITABLE_PROPERTIES` on the model."""

    def __init__(self, name: str, value: str | int) -> None:
        expected = EDITABLE_PROPERTIES.get(name)
        if expected is None:
            raise EditError(f"'{name}' is not an editable model property")
        if not isinstance(value, expected):
            raise EditError(f"{name} must be a {expected.__name__}")
        self.name = name
        self.value = value
        self._had = False
        self._old: str | int = ""
        self.label = f"Set {name}"

    def scopes(self) -> Scopes:
        return None  # a model property

    def apply(self, doc: Document) -> None:
        self._had = doc.model.HasField(self.name)
        self._old = getattr(doc.model, self.name)
        setattr(doc.model, self.name, self.value)
        doc.notify(_EVENT)

    def revert(self, doc: Document) -> None:
        if self._had:
            setattr(doc.model, self.name, self._old)
        else:
            doc.model.ClearField(self.name)
        doc.notify(_EVENT)


class SetMetadataProp(Edit):
    """Set (or with None, remove) one ``metadata_props`` entry of the model."""

    def __init__(self, key: str, value: str | None) -> None:
        if not key:
            raise EditError("a metadata property needs a key")
        self.key = key
        self.value = value
        self._old: tuple[int, onnx.StringStringEntryProto] | None = None
        self.label = f"Set metadata {key}"

    def scopes(self) -> Scopes:
        return None  # model metadata

    def apply(self, doc: Document) -> None:
        props = doc.model.metadata_props
        index = next((i for i, p in enumerate(props) if p.key == self.key), -1)
        if index < 0 and self.value is None:
            raise EditError(f"no metadata property '{self.key}'")
        self._old = None
        if index >= 0:  # a copy of the whole entry: an unset value differs from "" on disk
            self._old = (index, onnx.StringStringEntryProto())
            self._old[1].CopyFrom(props[index])
        if self.value is None:
            del props[index]
        elif index >= 0:
            props[index].value = self.value
        else:
            props.add(key=self.key, value=self.value)
        doc.notify(_EVENT)

    def revert(self, doc: Document) -> None:
        props = doc.model.metadata_props
        if self._old is None:
            props.pop()
        elif self.value is None:
            props.insert(self._old[0], self._old[1])
        else:
            props[self._old[0]].CopyFrom(self._old[1])
        doc.notify(_EVENT)


class ReplaceModel(Edit):
    """Swap in a whole new model: one undo step for a global modification (FP16, sanitize…).

    Costs two model copies in memory (before and after); tensors kept in external data are
    references and are not copied.
    """

    def __init__(self, label: str, model: onnx.ModelProto) -> None:
        self.label = label
        self.new = model
        self._old: onnx.ModelProto | None = None
        self._old_keys: dict[ScopeId, list[int]] = {}
        self._new_keys: dict[ScopeId, list[int]] | None = None
        self._old_positions: dict[ScopeId, dict[int, tuple[float, float]]] = {}
        self._new_positions: dict[ScopeId, dict[int, tuple[float, float]]] = {}

    def scopes(self) -> Scopes:
        return None  # every scope at once

    def apply(self, doc: Document) -> None:
        if not self.new.HasField("graph"):
            raise EditError("the replacement model has no graph")
        self._old_keys = doc.all_keys()
        self._old = doc.model
        self._old_positions = {sid: dict(p) for sid, p in doc.positions.items()}
        doc.replace_model(self.new, self._new_keys)
        doc.positions = {sid: dict(p) for sid, p in self._new_positions.items()}
        doc.notify(_EVENT)

    def revert(self, doc: Document) -> None:
        assert self._old is not None
        self._new_keys = doc.all_keys()
        self._new_positions = {sid: dict(p) for sid, p in doc.positions.items()}
        doc.replace_model(self._old, self._old_keys)
        doc.positions = self._old_positions
        doc.notify(_EVENT)
