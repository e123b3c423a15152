"""Edits of the TensorRT settings stored in a model (see :mod:`designer.core.trt.settings`).

Each validates everything before changing anything and reverts byte for byte: the exact
metadata entries that were there before are put back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import onnx

from designer.core.document import ChangeKind, Document, DocumentEvent
from designer.core.edits.base import Edit, Scopes
from designer.core.edits.lookup import require_node, resolve_scope
from designer.core.errors import EditError
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.trt.settings import (
    OUTPUT_TYPES_KEY,
    PRECISION_KEY,
    PRECISIONS,
    PROFILES_KEY,
    OptimizationProfile,
    TrtSettingsError,
    profiles_value,
    read_profiles,
    validate_profiles,
)


def _copy_props(
    props: Iterable[onnx.StringStringEntryProto],
) -> list[onnx.StringStringEntryProto]:
    out = []
    for prop in props:
        clone = onnx.StringStringEntryProto()
        clone.CopyFrom(prop)
        out.append(clone)
    return out


def _put_props(
    node_or_model: onnx.NodeProto | onnx.ModelProto, props: list[onnx.StringStringEntryProto]
) -> None:
    field = node_or_model.metadata_props
    del field[:]
    field.extend(props)


class SetOptimizationProfiles(Edit):
    """Replace the stored optimization profiles with ``profiles`` (an empty list removes the
    metadata entry). Adding, changing or removing one profile is this edit with the new list;
    see :func:`with_profile` and :func:`without_profile`."""

    def __init__(self, profiles: Sequence[OptimizationProfile], label: str | None = None) -> None:
        self.profiles = tuple(profiles)
        self._old: list[onnx.StringStringEntryProto] = []
        self.label = label or (
            f"Set {len(self.profiles)} TensorRT optimization profile"
            + ("s" if len(self.profiles) != 1 else "")
            if self.profiles
            else "Clear TensorRT optimization profiles"
        )

    def scopes(self) -> Scopes:
        return None  # model metadata

    def apply(self, doc: Document) -> None:
        problem = validate_profiles(doc.model, self.profiles)
        if problem is not None:
            raise EditError(problem)
        props = doc.model.metadata_props
        index = next((i for i, p in enumerate(props) if p.key == PROFILES_KEY), -1)
        if index < 0 and not self.profiles:
            raise EditError("the model has no TensorRT optimization profiles to clear")
        self._old = _copy_props(props)
        if not self.profiles:
            del props[index]
        elif index >= 0:
            props[index].value = profiles_value(self.profiles)
        else:
            props.add(key=PROFILES_KEY, value=profiles_value(self.profiles))
        doc.notify(DocumentEvent(ChangeKind.MODEL))

    def revert(self, doc: Document) -> None:
        _put_props(doc.model, self._old)
        doc.notify(DocumentEvent(ChangeKind.MODEL))


def current_profiles(doc: Document) -> tuple[OptimizationProfile, ...]:
    """The document's stored profiles; EditError when the stored value is unreadable."""
    try:
        return read_profiles(doc.model)
    except TrtSettingsError as exc:
        raise EditError(f"{exc}; fix or clear it first") from None


def with_profile(
    doc: Document, profile: OptimizationProfile, index: int | None = None
) -> SetOptimizationProfiles:
    """An edit that adds ``profile`` (index None) or replaces profile ``index``."""
    profiles = list(current_profiles(doc))
    if index is None:
        profiles.append(profile)
        label = f"Add TensorRT optimization profile {len(profiles) - 1}"
    elif 0 <= index < len(profiles):
        profiles[index] = profile
        label = f"Set TensorRT optimization profile {index}"
    else:
        raise EditError(f"there is no optimization profile {index} (the model has {len(profiles)})")
    return SetOptimizationProfiles(profiles, label)


def without_profile(doc: Document, index: int) -> SetOptimizationProfiles:
    """An edit that removes profile ``index``."""
    profiles = list(current_profiles(doc))
    if not 0 <= index < len(profiles):
        raise EditError(f"there is no optimization profile {index} (the model has {len(profiles)})")
    del profiles[index]
    return SetOptimizationProfiles(profiles, f"Remove TensorRT optimization profile {index}")


class _NodeSettingEdit(Edit):
    """Set or clear one metadata key on several main-graph nodes: one undo step."""

    key = PRECISION_KEY

    def __init__(self, scope_id: ScopeId, keys: Iterable[int]) -> None:
        self.scope_id = scope_id
        self.keys = list(dict.fromkeys(keys))
        self._old: dict[int, list[onnx.StringStringEntryProto]] = {}

    def _value(self, node: onnx.NodeProto) -> str | None:
        raise NotImplementedError

    def _check(self, doc: Document) -> list[onnx.NodeProto]:
        if not self.keys:
            raise EditError("select at least one node")
        if self.scope_id != MAIN_SCOPE:
            raise EditError(
                "TensorRT layer settings apply to nodes of the main graph (TensorRT names its "
                "layers after them); open the node in the main graph"
            )
        scope = resolve_scope(doc, self.scope_id)
        nodes = [require_node(scope, key) for key in self.keys]
        for node in nodes:
            if not node.name:
                raise EditError(
                    f"a {node.op_type} node has no name; TensorRT finds layers by name, "
                    "so rename it first"
                )
        return nodes

    def scopes(self) -> Scopes:
        return (self.scope_id,)

    def apply(self, doc: Document) -> None:
        nodes = self._check(doc)
        values = [self._value(node) for node in nodes]  # validates every node first
        self._old = {}
        for key, node, value in zip(self.keys, nodes, values, strict=True):
            self._old[key] = _copy_props(node.metadata_props)
            props = node.metadata_props
            index = next((i for i, p in enumerate(props) if p.key == self.key), -1)
            if value is None:
                if index >= 0:
                    del props[index]
            elif index >= 0:
                props[index].value = value
            else:
                props.add(key=self.key, value=value)
        doc.notify(DocumentEvent(ChangeKind.NODE, self.scope_id, frozenset(self.keys)))

    def revert(self, doc: Document) -> None:
        scope = doc.scope(self.scope_id)
        for key, old in self._old.items():
            _put_props(scope.node(key), old)
        doc.notify(DocumentEvent(ChangeKind.NODE, self.scope_id, frozenset(self.keys)))


class SetLayerPrecision(_NodeSettingEdit):
    """Constrain the TensorRT precision of the given nodes (None: No Constraint)."""

    key = PRECISION_KEY

    def __init__(self, scope_id: ScopeId, keys: Iterable[int], precision: str | None) -> None:
        super().__init__(scope_id, keys)
        if precision is not None:
            precision = precision.strip().lower()
            if precision not in PRECISIONS:
                raise EditError(
                    f"unknown precision '{precision}'; use one of {', '.join(PRECISIONS)} or none"
                )
        self.precision = precision
        count = f"{len(self.keys)} node" + ("s" if len(self.keys) != 1 else "")
        self.label = (
            f"Set layer precision {precision} on {count}"
            if precision
            else f"Clear layer precision on {count}"
        )

    def _value(self, node: onnx.NodeProto) -> str | None:
        return self.precision


class SetLayerOutputTypes(_NodeSettingEdit):
    """Constrain the TensorRT output types of the given nodes, one type per output
    (None clears). Every node must have exactly ``len(types)`` outputs."""

    key = OUTPUT_TYPES_KEY

    def __init__(self, scope_id: ScopeId, keys: Iterable[int], types: Sequence[str] | None) -> None:
        super().__init__(scope_id, keys)
        cleaned: tuple[str, ...] | None = None
        if types is not None:
            cleaned = tuple(t.strip().lower() for t in types)
            if not cleaned:
                raise EditError("give one output type per output, or none to clear")
            for t in cleaned:
                if t not in PRECISIONS:
                    raise EditError(
                        f"unknown output type '{t}'; use one of {', '.join(PRECISIONS)}"
                    )
        self.types = cleaned
        count = f"{len(self.keys)} node" + ("s" if len(self.keys) != 1 else "")
        self.label = (
            f"Set layer output types {','.join(cleaned)} on {count}"
            if cleaned
            else f"Clear layer output types on {count}"
        )

    def _value(self, node: onnx.NodeProto) -> str | None:
        if self.types is None:
            return None
        outputs = len(node.output)
        if len(self.types) != outputs:
            raise EditError(
                f"node '{node.name}' has {outputs} output"
                + ("s" if outputs != 1 else "")
                + f"; give {outputs} type"
                + ("s" if outputs != 1 else "")
                + f", not {len(self.types)}"
            )
        return ",".join(self.types)
