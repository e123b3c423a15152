"""Extra shape information for folding from a pluggable shape inferer (ONNX Runtime's
symbolic shape inference in the app: see :mod:`designer.activities.fold_eval`).

onnx's own inference loses named dims at Reshape with ``-1`` and at Slice with computed
ends, so ``Shape`` of such a value has no static dim to fold; the symbolic inferer keeps
them. Its static dims are merged into the types onnx found, never overriding a dim onnx
knows (a disagreement keeps onnx's value).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import onnx

from designer.core.io.external import is_external
from designer.core.protocopy import copy_without_initializers
from designer.core.tensor_sizes import tensor_nbytes
from designer.core.transforms.typeinfo import DATA_KEEP_BYTES, TypeMap


class ShapeInferer(Protocol):
    """Returns ``model`` (weightless: large initializers are typed graph inputs) with
    ``value_info`` for the values it can type. Raise any exception when it cannot."""

    def __call__(self, model: onnx.ModelProto) -> onnx.ModelProto: ...


def shape_probe(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose large or external initializers are typed graph inputs (no
    weight is copied; small ones keep their values, which shape computations read)."""
    probe = copy_without_initializers(model)
    del probe.graph.value_info[:]
    inputs = {v.name for v in probe.graph.input}
    for tensor in model.graph.initializer:
        if not is_external(tensor) and tensor_nbytes(tensor) <= DATA_KEEP_BYTES:
            probe.graph.initializer.append(tensor)
        elif tensor.name not in inputs:
            vi = onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims)
            probe.graph.input.append(vi)
    return probe


def _static_dims(tp: onnx.TypeProto) -> list[int | None] | None:
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in tp.tensor_type.shape.dim]


def _merged(current: onnx.TypeProto | None, extra: onnx.TypeProto) -> onnx.TypeProto | None:
    """``current`` with the static dims ``extra`` adds; None when it adds nothing."""
    new_dims = _static_dims(extra)
    if new_dims is None:
        return None
    if current is None:
        return extra
    if current.WhichOneof("value") != "tensor_type":
        return None
    old_dims = _static_dims(current)
    if old_dims is None:
        merged = onnx.TypeProto()
        merged.CopyFrom(current)
        merged.tensor_type.shape.CopyFrom(extra.tensor_type.shape)
        if merged.tensor_type.elem_type == 0:
            merged.tensor_type.elem_type = extra.tensor_type.elem_type
        return merged
    if len(old_dims) != len(new_dims):
        return None
    gain = [i for i, (o, n) in enumerate(zip(old_dims, new_dims, strict=True)) if o is None and n]
    if not gain:
        return None
    merged = onnx.TypeProto()
    merged.CopyFrom(current)
    for i in gain:
        dim = merged.tensor_type.shape.dim[i]
        dim.Clear()
        dim.dim_value = int(new_dims[i] or 0)
    return merged


def symbolic_types(
    model: onnx.ModelProto, types: TypeMap, inferer: ShapeInferer, warn: Callable[[str], None]
) -> int:
    """Merge the static dims ``inferer`` finds for the main graph of ``model`` into
    ``types`` (in place); the number of values that gained a dim. An inferer that fails is
    reported through ``warn`` once and changes nothing. Cost: one inference run on a
    weightless copy."""
    try:
        inferred = inferer(shape_probe(model))
    except Exception as exc:  # the inferer is a plug-in: any failure means no extra types
        text = str(exc).strip().splitlines()
        warn(f"symbolic shape inference failed ({text[0][:160] if text else type(exc).__name__})")
        return 0
    gained = 0
    graph = inferred.graph
    for vi in [*graph.value_info, *graph.output]:
        merged = _merged(types.get(vi.name), vi.type)
        if merged is not None:
            types[vi.name] = merged
            gained += 1
    return gained
