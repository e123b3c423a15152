"""Copies of protobuf messages: a whole message, or a model without its main graph's
initializers (to add them back one by one without copying the weights twice)."""

from __future__ import annotations

from typing import Any

import onnx


def copy_message(message: Any) -> Any:
    clone = type(message)()
    clone.CopyFrom(message)
    return clone


def _copy_fields(src: Any, dst: Any, skip: str) -> None:
    for field_desc, value in src.ListFields():
        if field_desc.name == skip:
            continue
        target = getattr(dst, field_desc.name)
        if isinstance(value, (str, bytes, int, float)):
            setattr(dst, field_desc.name, value)
        elif hasattr(target, "extend"):
            target.extend(value)
        else:
            target.CopyFrom(value)


def copy_without_initializers(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose main graph has no initializers (the caller adds them back,
    converted or copied one by one). Cost: the graph structure is copied once; no weights of
    the main graph are copied."""
    copy = onnx.ModelProto()
    _copy_fields(model, copy, skip="graph")
    _copy_fields(model.graph, copy.graph, skip="initializer")
    return copy
