"""Keep stored optimization profiles in step when a top-level graph input is renamed or removed.

Called by :class:`~designer.core.edits.tensors.RenameTensor` and
:class:`~designer.core.edits.tensors.RemoveGraphIO` (main graph only). Layer precisions need
no such help: they live on the nodes themselves (see :mod:`designer.core.trt.settings`).
Each function returns an undo token that :func:`restore_profiles` puts back byte for byte,
or None when nothing changed (no profiles, the input not in any, or unreadable JSON, which
is left as it is for the Type Checking window to report).
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx

from designer.core.trt.settings import (
    PROFILES_KEY,
    OptimizationProfile,
    TrtSettingsError,
    parse_profiles,
    profiles_value,
)


@dataclass(frozen=True)
class ProfilesUndo:
    """Where the profiles entry was and what it held before the change."""

    index: int
    old: onnx.StringStringEntryProto
    removed: bool  # True: the entry was deleted (no profile left)


def _entry(model: onnx.ModelProto) -> tuple[int, tuple[OptimizationProfile, ...]] | None:
    for i, prop in enumerate(model.metadata_props):
        if prop.key == PROFILES_KEY:
            try:
                return i, parse_profiles(prop.value)
            except TrtSettingsError:
                return None
    return None


def _replace(
    model: onnx.ModelProto, index: int, profiles: list[OptimizationProfile]
) -> ProfilesUndo:
    old = onnx.StringStringEntryProto()
    old.CopyFrom(model.metadata_props[index])
    if profiles:
        model.metadata_props[index].value = profiles_value(profiles)
        return ProfilesUndo(index, old, removed=False)
    del model.metadata_props[index]
    return ProfilesUndo(index, old, removed=True)


def rename_profile_input(model: onnx.ModelProto, old: str, new: str) -> ProfilesUndo | None:
    """Rename input ``old`` to ``new`` in every stored profile (order of inputs kept)."""
    found = _entry(model)
    if found is None or not any(old in p.shapes for p in found[1]):
        return None
    index, profiles = found
    renamed = [
        OptimizationProfile({(new if k == old else k): v for k, v in p.shapes.items()})
        for p in profiles
    ]
    return _replace(model, index, renamed)


def drop_profile_input(model: onnx.ModelProto, name: str) -> ProfilesUndo | None:
    """Remove input ``name`` from every profile; a profile left empty is removed, and the
    metadata entry too when no profile is left."""
    found = _entry(model)
    if found is None or not any(name in p.shapes for p in found[1]):
        return None
    index, profiles = found
    kept = []
    for p in profiles:
        shapes = {k: v for k, v in p.shapes.items() if k != name}
        if shapes:
            kept.append(OptimizationProfile(shapes))
    return _replace(model, index, kept)


def restore_profiles(model: onnx.ModelProto, undo: ProfilesUndo | None) -> None:
    """Put back what :func:`rename_profile_input` / :func:`drop_profile_input` changed."""
    if undo is None:
        return
    if undo.removed:
        model.metadata_props.insert(undo.index, undo.old)
    else:
        model.metadata_props[undo.index].CopyFrom(undo.old)
