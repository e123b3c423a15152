"""Batch Tensor Cast (M-3): initializers and tensor/list node attributes to one data type.

:func:`list_cast_candidates` lists what can be cast (the GUI's two panels);
:func:`preview_cast` counts clipped and rounded elements before anything changes;
:func:`cast_tensors` returns a new model where the selected tensors have the target type
and, wherever an operator's type constraints do not accept the new type, a Cast back to
the original type is inserted before that consumer (each one logged).

Given a ``sink`` (the output's data file, :class:`designer.core.io.stream.DataSink`), each
cast initializer goes there as soon as it is cast, so memory stays about the largest
tensor plus the graph, not every result until the save.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from designer.core.io.external import tensor_array
from designer.core.io.stream import MIN_BYTES, DataSink
from designer.core.memory import require
from designer.core.protocopy import copy_message
from designer.core.tensor_sizes import tensor_bytes_needed, tensor_nbytes
from designer.core.transforms.dtypes import (
    CASTABLE_TYPES,
    ConversionCounts,
    array_to_tensor,
    convert_array,
    describe_counts,
    type_name,
)
from designer.core.transforms.fold import constant_value
from designer.core.transforms.graphs import Names, all_names
from designer.core.transforms.log import (
    Cancel,
    Monitor,
    Progress,
    TransformError,
    TransformLog,
    never,
    silent,
)
from designer.core.transforms.schemas import opset_versions, signature, tensor_type_str
from designer.core.walk import Container, iter_graphs, subgraphs

#: Constant attributes holding a list; cast, they become a ``value`` tensor.
LIST_ATTRIBUTES = {
    "value_float": np.float32,
    "value_floats": np.float32,
    "value_int": np.int64,
    "value_ints": np.int64,
}
#: Operators whose single output takes the type of a tensor attribute.
TYPED_BY_VALUE = frozenset({"Constant", "ConstantOfShape"})


@dataclass(frozen=True)
class CastCandidate:
    """One castable tensor. ``key`` identifies it for selection; ``scope`` is ``main``,
    ``main/<node>.<attribute>`` for subgraphs or ``function <domain>:<name>``."""

    key: str
    kind: str  # "initializer" or "attribute"
    scope: str
    node: str  # node name (attributes), "" for initializers
    name: str  # initializer name, or attribute name
    tensor_name: str  # the value's name (initializer name, or the node's output)
    dtype: int
    shape: tuple[int, ...]

    @property
    def dtype_name(self) -> str:
        return type_name(self.dtype)


def _scopes(model: onnx.ModelProto) -> Iterator[tuple[str, Container]]:
    """Every scope with a stable path, parents first: ``main``, ``function <domain>:<name>``,
    below them ``<parent>/<node name or #index>.<attribute>`` (``[i]`` for a GRAPHS
    element)."""
    stack: list[tuple[str, Container]] = []  # the path to the graph being walked
    for walked in iter_graphs(model):
        step = walked.owner
        if step is None:
            fn = walked.function
            path = "main" if fn is None else f"function {fn.domain}:{fn.name}"
        else:  # pre-order: the parent is the last scope met one level up
            parent_path, parent = stack[walked.depth - 1]
            label = step.node.name or f"#{_node_index(parent, step.node)}"
            suffix = f"[{step.index}]" if step.index >= 0 else ""
            path = f"{parent_path}/{label}.{step.attribute}{suffix}"
        del stack[walked.depth :]
        stack.append((path, walked.graph))
        yield path, walked.graph


def _node_index(proto: Container, node: onnx.NodeProto) -> int:
    return next(i for i, n in enumerate(proto.node) if n is node)


def _attr_value_type(
    node: onnx.NodeProto, attr: onnx.AttributeProto
) -> tuple[int, tuple[int, ...]] | None:
    if attr.ref_attr_name:
        return None
    if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type in CASTABLE_TYPES:
        return attr.t.data_type, tuple(attr.t.dims)
    if node.op_type == "Constant" and attr.name in LIST_ATTRIBUTES:
        value = constant_value(node)
        if value is not None:
            return int(helper.np_dtype_to_tensor_dtype(value.dtype)), tuple(value.shape)
    return None


def list_cast_candidates(model: onnx.ModelProto) -> list[CastCandidate]:
    """Every initializer and tensor/list node attribute a cast can change (O(model graph))."""
    out: list[CastCandidate] = []
    for path, proto in _scopes(model):
        if isinstance(proto, onnx.GraphProto):
            for t in proto.initializer:
                if t.data_type in CASTABLE_TYPES:
                    out.append(
                        CastCandidate(
                            f"init:{path}:{t.name}",
                            "initializer",
                            path,
                            "",
                            t.name,
                            t.name,
                            t.data_type,
                            tuple(t.dims),
                        )
                    )
        for index, node in enumerate(proto.node):
            for attr in node.attribute:
                typed = _attr_value_type(node, attr)
                if typed is None:
                    continue
                tensor_name = (
                    node.output[0] if node.op_type in TYPED_BY_VALUE and node.output else ""
                )
                out.append(
                    CastCandidate(
                        f"attr:{path}:{index}:{attr.name}",
                        "attribute",
                        path,
                        node.name,
                        attr.name,
                        tensor_name,
                        typed[0],
                        typed[1],
                    )
                )
    return out


def select_candidates(
    candidates: Iterable[CastCandidate],
    initializers: Iterable[str] = (),
    attributes: Iterable[str] = (),
) -> list[str]:
    """Keys for initializer names and ``NODE.ATTR`` specs; TransformError names unknown ones."""
    candidates = list(candidates)
    keys: list[str] = []
    for name in initializers:
        found = [c.key for c in candidates if c.kind == "initializer" and c.name == name]
        if not found:
            raise TransformError(f"no castable initializer named '{name}'")
        keys.extend(found)
    for spec in attributes:
        node, _, attr = spec.rpartition(".")
        found = [
            c.key for c in candidates if c.kind == "attribute" and c.node == node and c.name == attr
        ]
        if not node or not found:
            raise TransformError(f"no castable attribute '{spec}' (expected NODE.ATTRIBUTE)")
        keys.extend(found)
    return list(dict.fromkeys(keys))


def _values(
    c_tensor: onnx.TensorProto | None, node: onnx.NodeProto | None, base_dir: Path | None
) -> np.ndarray:
    if c_tensor is not None:
        return np.asarray(tensor_array(c_tensor, base_dir))
    assert node is not None
    value = constant_value(node)
    assert value is not None
    return value


@dataclass
class CastPreview:
    candidate: CastCandidate
    counts: ConversionCounts


def preview_cast(
    model: onnx.ModelProto, keys: Iterable[str], to: int, base_dir: Path | None = None
) -> list[CastPreview]:
    """What casting ``keys`` to ``to`` would clip or round, per tensor, before doing it (one
    read and one conversion of each selected tensor; nothing is kept)."""
    out: list[CastPreview] = []
    for cand, tensor, node in _resolve(model, keys):
        _converted, counts = convert_array(_values(tensor, node, base_dir), to)
        out.append(CastPreview(cand, counts))
    return out


def _resolve(
    model: onnx.ModelProto, keys: Iterable[str]
) -> list[tuple[CastCandidate, onnx.TensorProto | None, onnx.NodeProto | None]]:
    wanted = set(keys)
    by_key = {c.key: c for c in list_cast_candidates(model)}
    unknown = wanted - set(by_key)
    if unknown:
        raise TransformError(f"nothing castable under key(s): {', '.join(sorted(unknown))}")
    scopes = dict(_scopes(model))
    found: list[tuple[CastCandidate, onnx.TensorProto | None, onnx.NodeProto | None]] = []
    for key in by_key:
        if key not in wanted:
            continue
        cand = by_key[key]
        proto = scopes[cand.scope]
        if cand.kind == "initializer":
            assert isinstance(proto, onnx.GraphProto)
            tensor = next(t for t in proto.initializer if t.name == cand.name)
            found.append((cand, tensor, None))
        else:
            index = int(key.split(":")[-2])
            node = proto.node[index]
            attr = next(a for a in node.attribute if a.name == cand.name)
            found.append((cand, attr.t if attr.type == onnx.AttributeProto.TENSOR else None, node))
    return found


@dataclass
class CastResult:
    model: onnx.ModelProto
    log: TransformLog
    previews: list[CastPreview] = field(default_factory=list)


def _needs_cast_back(node: onnx.NodeProto, index: int, to: int, versions: dict[str, int]) -> bool:
    """True when input ``index`` of ``node`` cannot take type ``to`` without breaking the
    operator's type constraints (unknown operators and function calls: always)."""
    domain = "" if node.domain == "ai.onnx" else node.domain
    sig = signature(node.op_type, domain, versions.get(domain, 1))
    param = sig.input_param(index) if sig is not None else None
    if sig is None or param is None:
        return True
    type_str, is_var = param
    new = tensor_type_str(to)
    if not is_var:
        return type_str != new
    if new not in sig.allowed.get(type_str, frozenset()):
        return True
    for i, name in enumerate(node.input):
        other = sig.input_param(i)
        if i != index and name and other is not None and other[0] == type_str:
            return True
    return any(
        name and (p := sig.output_param(j)) is not None and p[0] == type_str
        for j, name in enumerate(node.output)
    )


class _Fixer:
    def __init__(self, to: int, versions: dict[str, int], names: Names, log: TransformLog) -> None:
        self.to = to
        self.versions = versions
        self.names = names
        self.log = log

    def scope(self, proto: Container, changed: dict[str, int], main: bool) -> None:
        """Insert Casts back to the old type before consumers that need them (and nested)."""
        casts: dict[str, str] = {}
        new_nodes: list[onnx.NodeProto] = []

        def back(name: str) -> str:
            if name not in casts:
                out = self.names.new(f"{name}_{type_name(changed[name])}")
                new_nodes.append(
                    helper.make_node(
                        "Cast", [name], [out], to=changed[name], name=self.names.new(f"{out}_cast")
                    )
                )
                casts[name] = out
                self.log.count("casts_inserted")
            return casts[name]

        for node in proto.node:
            for i, name in enumerate(node.input):
                if name in changed and _needs_cast_back(node, i, self.to, self.versions):
                    node.input[i] = back(name)
                    self.log.info(
                        f"inserted Cast to {type_name(changed[name])} of '{name}' before "
                        f"{node.op_type} '{node.name or '?'}' (its type constraints do not allow "
                        f"{type_name(self.to)} at input {i})"
                    )
            for graph in subgraphs(node):
                self.scope(graph, changed, main=False)
            new_nodes.append(node)
        outputs = (
            list(proto.output)
            if isinstance(proto, onnx.FunctionProto)
            else [v.name for v in proto.output]
        )
        for k, name in enumerate(outputs):
            if name not in changed:
                continue
            if main and isinstance(proto, onnx.GraphProto):
                proto.output[k].type.tensor_type.elem_type = self.to
                self.log.warn(f"graph output '{name}' is now {type_name(self.to)}")
            elif isinstance(proto, onnx.GraphProto):
                proto.output[k].name = back(name)
            else:
                proto.output[k] = back(name)
        del proto.node[:]
        proto.node.extend(new_nodes)
        for vi in proto.value_info:
            if vi.name in changed and vi.type.WhichOneof("value") == "tensor_type":
                vi.type.tensor_type.elem_type = self.to


def _require_memory(
    resolved: list[tuple[CastCandidate, onnx.TensorProto | None, onnx.NodeProto | None]],
    to: int,
    streamed: bool = False,
) -> None:
    """Refuse (OutOfMemoryError) a cast whose results would not fit: tensors are cast one at
    a time (external ones memory-mapped, in chunks), the results held until saved, where a
    copy of each is kept to roll back a failed save. ``streamed``: each cast initializer
    goes to the output's data file at once, so only the largest one counts (attribute
    tensors stay in the model)."""
    pairs = [(cand, t) for cand, t, _node in resolved if t is not None]
    if not pairs:
        return
    results = [_cast_nbytes(t, to) for _c, t in pairs]
    sizes = [tensor_nbytes(t) for _c, t in pairs]
    if streamed:  # attribute tensors are held (twice: a rollback copy) as before
        inline = sum(
            r for (c, _t), r in zip(pairs, results, strict=True) if c.kind != "initializer"
        )
        needed = 2 * inline + max(results) + max(sizes) + (256 << 20)
    else:
        needed = 2 * sum(results) + max(sizes) + (256 << 20)
    require(needed, f"casting {len(pairs)} tensor(s) to {type_name(to)}")


def _cast_nbytes(tensor: onnx.TensorProto, to: int) -> int:
    """Bytes ``tensor`` takes once cast to ``to`` (packed 4/2-bit types rounded up to whole
    bytes; a type without a fixed width: one byte per element)."""
    needed = tensor_bytes_needed(onnx.TensorProto(data_type=to, dims=tensor.dims))
    return needed if needed is not None else math.prod(tensor.dims)


def cast_tensors(
    model: onnx.ModelProto,
    keys: Iterable[str],
    to: int,
    base_dir: Path | None = None,
    *,
    clip: bool = True,
    cancel: Cancel = never,
    progress: Progress = silent,
    sink: DataSink | None = None,
) -> CastResult:
    """A copy of ``model`` with the selected tensors cast to ``to`` (see the module doc).
    Cost: one copy of the model; each selected tensor is read once and converted.
    ``sink``: stream cast initializers into the output's data file (the result refers to
    it; save it with ``write_model(..., sink=sink)``)."""
    if to not in CASTABLE_TYPES:
        raise TransformError(f"cannot cast to {type_name(to)}")
    keys = list(keys)
    if not keys:
        raise TransformError("select at least one initializer or attribute to cast")
    monitor = Monitor(cancel, progress, "Tensor cast")
    log = TransformLog(f"Batch Tensor Cast to {type_name(to)}")
    new = copy_message(model)
    resolved = _resolve(new, keys)
    _require_memory(resolved, to, streamed=sink is not None)
    changed_by_scope: dict[str, dict[str, int]] = {}
    previews: list[CastPreview] = []
    total = ConversionCounts()
    for step, (cand, tensor, node) in enumerate(resolved):
        monitor.step(step / max(len(resolved), 1), f"casting {cand.tensor_name or cand.name}")
        if cand.dtype == to:
            log.info(f"{_label(cand)} already is {type_name(to)}")
            continue
        values, counts = convert_array(_values(tensor, node, base_dir), to, clip=clip)
        previews.append(CastPreview(cand, counts))
        total.add(counts)
        log.count("tensors_cast")
        log.info(
            f"{_label(cand)}: {cand.dtype_name} -> {type_name(to)}, {describe_counts(counts, to)}"
        )
        if counts.lossy:
            log.warn(f"{_label(cand)} lost precision: {describe_counts(counts, to)}")
        if tensor is not None and cand.kind == "initializer":
            if sink is not None and values.nbytes >= MIN_BYTES:
                fresh = onnx.TensorProto(name=tensor.name, data_type=to, dims=list(values.shape))
                sink.write(fresh, values)
            else:
                fresh = array_to_tensor(values, tensor.name, to)
            fresh.doc_string = tensor.doc_string
            fresh.metadata_props.extend(tensor.metadata_props)
            tensor.CopyFrom(fresh)
        else:
            assert node is not None
            attr = next(a for a in node.attribute if a.name == cand.name)
            fresh = array_to_tensor(values, attr.t.name if tensor is not None else "value", to)
            if tensor is not None:
                attr.t.CopyFrom(fresh)
            else:
                node.attribute.remove(attr)
                node.attribute.append(helper.make_attribute("value", fresh))
        del values  # before the next tensor is converted: one result at a time
        if cand.tensor_name and (
            cand.kind == "initializer" or (node is not None and node.op_type in TYPED_BY_VALUE)
        ):
            changed_by_scope.setdefault(cand.scope, {})[cand.tensor_name] = cand.dtype
        elif cand.kind == "attribute":
            log.info(f"{_label(cand)}: consumers of node '{cand.node}' were not checked")
    fixer = _Fixer(to, opset_versions(new), Names(all_names(new)), log)
    for path, changed in changed_by_scope.items():
        proto = dict(_scopes(new))[path]  # fresh: fixing a parent rebuilds its subgraphs
        if isinstance(proto, onnx.FunctionProto):
            fixer.versions = opset_versions(new, list(proto.opset_import))
        fixer.scope(proto, changed, main=path == "main")
        fixer.versions = opset_versions(new)
    log.counts.update(values_clipped=total.clipped, values_rounded=total.rounded)
    log.lines.insert(
        0,
        f"{log.counts.get('tensors_cast', 0):,} tensor(s) cast; {total.clipped:,} value(s) "
        f"clipped, {total.rounded:,} rounded; {log.counts.get('casts_inserted', 0):,} Cast "
        "node(s) inserted",
    )
    monitor.step(1.0, "done")
    return CastResult(new, log, previews)


def _label(cand: CastCandidate) -> str:
    if cand.kind == "initializer":
        return f"initializer '{cand.name}'"
    return f"attribute {cand.node or '?'}.{cand.name}"


__all__ = [
    "CastCandidate",
    "CastPreview",
    "CastResult",
    "cast_tensors",
    "list_cast_candidates",
    "preview_cast",
    "select_candidates",
]
