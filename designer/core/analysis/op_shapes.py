"""Operator-specific shape rules that onnx's shape inference does not check but ONNX Runtime
enforces: a Conv / ConvTranspose bias, channel count, group or ``kernel_shape`` that does not
fit its weight, and a Gemm ``C`` that does not broadcast to the (M, N) result.

The rules read the shapes known after onnx's inference (inputs, initializers, inferred
values) and are errors on the node. A dimension that is unknown or symbolic is never an
error. MatMul is not here: onnx's inference already reports its inner-dimension mismatches
(“Incompatible dimensions for matrix multiplication”), as it does Gemm's K.

Cost: one pass over the nodes of every graph scope; a scope's types are read only when it
holds one of the operators checked, so a model without them pays only the pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import onnx

from designer.core.analysis.diagnostics import Diagnostic, Severity
from designer.core.scope import Scope, ScopeId

#: The codes of the diagnostics this module makes.
BIAS_SHAPE = "bias-shape"
CHANNEL_MISMATCH = "channel-mismatch"
GROUP_MISMATCH = "group-mismatch"
KERNEL_SHAPE_MISMATCH = "kernel-shape-mismatch"
CODES = frozenset({BIAS_SHAPE, CHANNEL_MISMATCH, GROUP_MISMATCH, KERNEL_SHAPE_MISMATCH})

#: A shape as far as it is known: None for an unknown or symbolic dimension.
Dims = tuple[int | None, ...]
#: Name → shape (None: no shape known) in the node's scope and the scopes around it.
ShapeOf = Callable[[str], Dims | None]
#: (code, message) found on one node.
Problem = tuple[str, str]

_DEFAULT_DOMAINS = ("", "ai.onnx")


def op_shape_diagnostics(
    scopes: Iterable[tuple[Scope, str]],
    types: Callable[[ScopeId], Mapping[str, onnx.TypeProto]],
    opset: int,
    skip: Callable[[ScopeId, int], bool],
) -> Iterator[Diagnostic]:
    """Errors for the nodes of ``scopes`` (graph scopes with their titles) whose shapes
    break a rule of :data:`_RULES`. ``types`` gives a scope's inferred types (read lazily,
    once per scope that needs them); ``opset`` is the model's default-domain version;
    nodes for which ``skip`` is true (already in error) are not checked again."""
    for scope, title in scopes:
        if scope.id.function is not None:
            continue  # onnx infers no types inside function bodies (nor their subgraphs)
        shape_of: ShapeOf | None = None
        for key, node in scope.nodes():
            rule = _RULES.get(node.op_type)
            if rule is None or node.domain not in _DEFAULT_DOMAINS or skip(scope.id, key):
                continue
            if shape_of is None:
                shape_of = _shape_reader(scope, types)
            inputs = [*node.input, "", "", ""]  # read once; absent optional inputs are ""
            for code, message in rule(node, inputs, shape_of, opset):
                yield Diagnostic(Severity.ERROR, code, message, scope.id, title, key, node.name)


def _shape_reader(
    scope: Scope, types: Callable[[ScopeId], Mapping[str, onnx.TypeProto]]
) -> ShapeOf:
    """Shapes of ``scope``'s values, falling back on the enclosing scopes for outer-scope
    values a subgraph uses (each scope's table is built once, on first need)."""
    chain: list[Scope] = []
    current: Scope | None = scope
    while current is not None:
        chain.append(current)
        current = current.parent
    tables: list[Mapping[str, onnx.TypeProto] | None] = [None] * len(chain)
    seen: dict[str, Dims | None] = {}  # shared weights are read once

    def shape_of(name: str) -> Dims | None:
        if not name:
            return None
        if name in seen:
            return seen[name]
        dims: Dims | None = None
        for index, owner in enumerate(chain):
            table = tables[index]
            if table is None:
                table = tables[index] = types(owner.id)
            found = table.get(name)
            if found is not None:
                dims = _dims(found)
                break
        seen[name] = dims
        return dims

    return shape_of


def _dims(type_proto: onnx.TypeProto) -> Dims | None:
    if type_proto.WhichOneof("value") != "tensor_type":
        return None
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return None
    # A zero dimension counts as unknown too: a rule never fires on an empty tensor.
    return tuple(v if (v := d.dim_value) > 0 else None for d in tensor.shape.dim)


def _int_attr(node: onnx.NodeProto, name: str, default: int) -> int:
    for attribute in node.attribute:
        if attribute.name == name:
            return int(attribute.i)
    return default


def _ints_attr(node: onnx.NodeProto, name: str) -> list[int] | None:
    for attribute in node.attribute:
        if attribute.name == name:
            return list(attribute.ints)
    return None


def _text(dims: Sequence[int | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


# --- Conv and ConvTranspose ---------------------------------------------------------------
def _conv(
    node: onnx.NodeProto, inputs: Sequence[str], shape_of: ShapeOf, opset: int
) -> Iterator[Problem]:
    """Conv: X [N, C, …], W [M, C / group, k…], B [M] (ONNX Runtime's conv_attributes.h)."""
    x_name, w_name, b_name = inputs[0], inputs[1], inputs[2]
    w = shape_of(w_name)
    if w is None or len(w) < 3:
        return
    x = shape_of(x_name)  # rank problems are onnx's to report
    group = _int_attr(node, "group", 1)
    if group < 1:
        return
    out_channels, per_group = w[0], w[1]
    channels = x[1] if x is not None and len(x) == len(w) else None
    if channels is not None and per_group is not None and channels != per_group * group:
        yield (
            CHANNEL_MISMATCH,
            _conv_channels_message(x_name, channels, w_name, w, group, out_channels),
        )
    if out_channels is not None and out_channels % group:
        yield (
            GROUP_MISMATCH,
            (
                f"group {group} does not divide the {out_channels} output channels of W "
                f"'{w_name}' {_text(w)}: give W a first dimension that is a multiple of {group}, "
                "or change group"
            ),
        )
    yield from _bias(b_name, shape_of(b_name), out_channels, f"W '{w_name}' has")
    yield from _kernel(node, w_name, w)


def _conv_channels_message(
    x_name: str, channels: int, w_name: str, w: Dims, group: int, out_channels: int | None
) -> str:
    per_group = w[1]
    assert per_group is not None
    fixes = []
    if (
        per_group
        and channels % per_group == 0
        and (out_channels is None or out_channels % (channels // per_group) == 0)
    ):
        fixes.append(f"set group to {channels // per_group}")
    if channels % group == 0 and (out_channels is None or out_channels % group == 0):
        wanted = (w[0], channels // group, *w[2:])
        fixes.append(f"give W the shape {_text(wanted)}")
    fixes.append(f"feed {per_group * group} channels")
    return (
        f"input '{x_name}' has {channels} channels but W '{w_name}' {_text(w)} with group "
        f"{group} takes {per_group * group} (W's dimension 1 × group): " + " or ".join(fixes)
    )


def _conv_transpose(
    node: onnx.NodeProto, inputs: Sequence[str], shape_of: ShapeOf, opset: int
) -> Iterator[Problem]:
    """ConvTranspose: X [N, C, …], W [C, M / group, k…], B [M] with M = W's dimension 1 ×
    group (the ONNX spec; ONNX Runtime's conv_transpose_attributes.h). onnx's inference
    already checks that group divides C."""
    x_name, w_name, b_name = inputs[0], inputs[1], inputs[2]
    w = shape_of(w_name)
    if w is None or len(w) < 3:
        return
    x = shape_of(x_name)
    group = _int_attr(node, "group", 1)
    if group < 1:
        return
    channels = x[1] if x is not None and len(x) == len(w) else None
    if channels is not None and w[0] is not None and channels != w[0]:
        yield (
            CHANNEL_MISMATCH,
            (
                f"input '{x_name}' has {channels} channels but W '{w_name}' {_text(w)} takes "
                f"{w[0]} (ConvTranspose's W is [C, M / group, k…]): give W the shape "
                f"{_text((channels, *w[1:]))} or feed {w[0]} channels"
            ),
        )
    out_channels = w[1] * group if w[1] is not None else None
    owner = f"W '{w_name}' {_text(w)} with group {group} gives"
    yield from _bias(b_name, shape_of(b_name), out_channels, owner)
    yield from _kernel(node, w_name, w)


def _bias(name: str, bias: Dims | None, out_channels: int | None, owner: str) -> Iterator[Problem]:
    """B must be 1-D with one value per output channel."""
    if not name or bias is None:
        return
    if len(bias) != 1:
        wanted = f"[{out_channels}]" if out_channels is not None else "one dimension"
        yield (
            BIAS_SHAPE,
            (
                f"bias '{name}' has shape {_text(bias)} but must be 1-D, one value per output "
                f"channel: give the bias shape {wanted}"
            ),
        )
    elif bias[0] is not None and out_channels is not None and bias[0] != out_channels:
        yield (
            BIAS_SHAPE,
            (
                f"bias '{name}' has {bias[0]} values but {owner} {out_channels} output "
                f"channels: give the bias shape [{out_channels}]"
            ),
        )


def _kernel(node: onnx.NodeProto, w_name: str, w: Dims) -> Iterator[Problem]:
    """``kernel_shape``, when set, must equal W's spatial dimensions (onnx checks only its
    length, and infers the output from the attribute, so a mismatch surfaces nodes later)."""
    kernel = _ints_attr(node, "kernel_shape")
    spatial = w[2:]
    if kernel is None or len(kernel) != len(spatial):
        return
    if any(s is not None and k != s for k, s in zip(kernel, spatial, strict=True)):
        yield (
            KERNEL_SHAPE_MISMATCH,
            (
                f"kernel_shape {_text(kernel)} does not match the spatial dimensions "
                f"{_text(spatial)} of W '{w_name}' {_text(w)}: set kernel_shape to "
                f"{_text(spatial)} or remove it (it is read from W)"
            ),
        )


# --- Gemm ---------------------------------------------------------------------------------
def _gemm(
    node: onnx.NodeProto, inputs: Sequence[str], shape_of: ShapeOf, opset: int
) -> Iterator[Problem]:
    """Gemm from opset 7: C must broadcast one way to the (M, N) result, M from A (dim 1
    with transA) and N from B (dim 0 with transB). onnx's inference checks K."""
    c_name = inputs[2]
    if opset < 7 or not c_name:
        return  # before opset 7 the broadcast attribute decides (and ORT has no kernel)
    c = shape_of(c_name)
    if c is None:
        return
    a, b = shape_of(inputs[0]), shape_of(inputs[1])
    rows = a[1 if _int_attr(node, "transA", 0) else 0] if a is not None and len(a) == 2 else None
    cols = b[0 if _int_attr(node, "transB", 0) else 1] if b is not None and len(b) == 2 else None
    result = (rows, cols)
    fits = len(c) <= 2 and all(
        d is None or d == 1 or r is None or d == r
        for d, r in zip(reversed(c), reversed(result), strict=False)
    )
    if fits:
        return
    choices = []
    if cols is not None:
        choices.append(f"[{cols}]")
    if rows is not None and cols is not None:
        choices.append(f"[{rows}, {cols}]")
    fix = ("give C the shape " + " or ".join(choices)) if choices else "give C at most 2 dims"
    yield (
        BIAS_SHAPE,
        (
            f"C '{c_name}' of shape {_text(c)} does not broadcast to the Gemm result (M, N) = "
            f"{_text(result)}: {fix}"
        ),
    )


#: A rule: (node, its input names padded with "", shapes, default-domain opset) → problems.
Rule = Callable[[onnx.NodeProto, Sequence[str], ShapeOf, int], Iterator[Problem]]

_RULES: dict[str, Rule] = {
    "Conv": _conv,
    "ConvTranspose": _conv_transpose,
    "Gemm": _gemm,
}
