"""Operator schemas as the transforms need them: which formal parameter (and so which type
variable) each input and output of a node is bound to, and what types a variable allows."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import onnx
from onnx import defs


@dataclass(frozen=True)
class Signature:
    """Per position: the type variable name (or the fixed type string) and whether it is a
    type variable; ``allowed`` maps each type variable to its allowed type strings."""

    inputs: tuple[tuple[str, bool], ...]
    input_variadic: bool
    outputs: tuple[tuple[str, bool], ...]
    output_variadic: bool
    allowed: dict[str, frozenset[str]]

    def input_param(self, index: int) -> tuple[str, bool] | None:
        return _param(self.inputs, self.input_variadic, index)

    def output_param(self, index: int) -> tuple[str, bool] | None:
        return _param(self.outputs, self.output_variadic, index)


def _param(
    params: tuple[tuple[str, bool], ...], variadic: bool, index: int
) -> tuple[str, bool] | None:
    if index < len(params):
        return params[index]
    if variadic and params:
        return params[-1]
    return None


@functools.lru_cache(maxsize=4096)
def signature(op_type: str, domain: str, version: int) -> Signature | None:
    """The signature of ``domain::op_type`` at opset ``version``; None when onnx has no schema
    for it (custom and contrib operators, local functions). Cached; a miss costs ~10 µs."""
    domain = "" if domain == "ai.onnx" else domain
    try:
        schema = defs.get_schema(op_type, version, domain)
    except defs.SchemaError:
        return None
    allowed = {c.type_param_str: frozenset(c.allowed_type_strs) for c in schema.type_constraints}

    def params(formal: list[defs.OpSchema.FormalParameter]) -> tuple[tuple[str, bool], ...]:
        return tuple((p.type_str, p.type_str in allowed) for p in formal)

    variadic = defs.OpSchema.FormalParameterOption.Variadic
    return Signature(
        inputs=params(list(schema.inputs)),
        input_variadic=bool(schema.inputs) and schema.inputs[-1].option == variadic,
        outputs=params(list(schema.outputs)),
        output_variadic=bool(schema.outputs) and schema.outputs[-1].option == variadic,
        allowed=allowed,
    )


def tensor_type_str(elem_type: int) -> str:
    """``tensor(float16)`` for FLOAT16, as schemas spell allowed types."""
    name = onnx.helper.tensor_dtype_to_np_dtype(elem_type).name
    spelled = {"float32": "float", "float64": "double", "bool": "bool"}.get(name, name)
    return f"tensor({spelled})"


def opset_versions(
    model: onnx.ModelProto, extra: list[onnx.OperatorSetIdProto] | None = None
) -> dict[str, int]:
    """Domain → opset version of the model (a function's own imports override)."""
    versions = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    for o in extra or []:
        versions["" if o.domain == "ai.onnx" else o.domain] = o.version
    return versions
