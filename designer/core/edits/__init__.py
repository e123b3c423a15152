"""Edits: the only way to change a :class:`~designer.core.document.Document`."""

from designer.core.edits.base import CompoundEdit, Edit
from designer.core.edits.model import ReplaceModel, SetMetadataProp, SetModelProperty
from designer.core.edits.nodes import (
    AddNode,
    ClearAttribute,
    MoveNodes,
    RemoveNodes,
    RenameNode,
    SetAttribute,
    SetNodeInput,
    SetNodeOutput,
)
from designer.core.edits.stack import UndoStack
from designer.core.edits.tensors import (
    AddGraphIO,
    AddInitializer,
    RemoveGraphIO,
    RemoveInitializer,
    RenameTensor,
    ReplaceInitializer,
    SetValueType,
)

__all__ = [
    "AddGraphIO",
    "AddInitializer",
    "AddNode",
    "ClearAttribute",
    "CompoundEdit",
    "Edit",
    "MoveNodes",
    "RemoveGraphIO",
    "RemoveInitializer",
    "RemoveNodes",
    "RenameNode",
    "RenameTensor",
    "ReplaceInitializer",
    "ReplaceModel",
    "SetAttribute",
    "SetMetadataProp",
    "SetModelProperty",
    "SetNodeInput",
    "SetNodeOutput",
    "SetValueType",
    "UndoStack",
]
