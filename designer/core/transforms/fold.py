"""Constant folding of one scope: shape computations from static shapes, then every node
whose inputs are all constants, evaluated in one batch by a :class:`ConstantEvaluator`.

The core does not run models: the evaluator is passed in (onnxruntime's, from
:func:`designer.activities.fold_eval.ort_evaluator`, or onnx's reference implementation,
:func:`reference_evaluator`, which is slow but needs nothing else).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import onnx
from onnx import helper, numpy_helper

from designer.core.io.external import is_external, tensor_array
from designer.core.memory import available_bytes
from designer.core.tensor_sizes import tensor_nbytes
from designer.core.transforms.graphs import graph_output_names
from designer.core.transforms.typeinfo import NON_TENSOR, TypeMap, elem_type, static_shape
from designer.core.walk import Container, subgraphs


class ConstantEvaluator(Protocol):
    """Runs ``model`` (no initializers; every graph input fed by ``feeds``) once and returns
    every graph output by name. Raise any exception when it cannot."""

    def __call__(
        self, model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]: ...


def reference_evaluator(
    model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """A :class:`ConstantEvaluator` on onnx's reference runtime (pure Python: fine for shape
    arithmetic, slow for large tensors)."""
    from onnx.reference import ReferenceEvaluator

    names = [o.name for o in model.graph.output]
    values = ReferenceEvaluator(model).run(None, dict(feeds))
    return {n: np.asarray(v) for n, v in zip(names, values, strict=True)}


#: Operators never folded: their value changes between runs.
NONDETERMINISTIC = frozenset(
    {
        "RandomNormal",
        "RandomUniform",
        "RandomNormalLike",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
    }
)
FOLDABLE_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "com.microsoft"})


@dataclass
class Const:
    """A constant value: a tensor (possibly external, read on demand) or an array."""

    tensor: onnx.TensorProto | None = None
    base_dir: Path | None = None
    array: np.ndarray | None = None

    def value(self) -> np.ndarray:
        if self.array is not None:
            return self.array
        assert self.tensor is not None
        if is_external(self.tensor):  # memory-mapped anew each time: no mapping stays open
            return np.asarray(tensor_array(self.tensor, self.base_dir))
        self.array = np.asarray(tensor_array(self.tensor, self.base_dir))
        return self.array

    def nbytes(self) -> int:
        """Bytes of the value, without reading it (0 for a placeholder)."""
        if self.array is not None:
            return int(self.array.nbytes)
        return tensor_nbytes(self.tensor) if self.tensor is not None else 0


def constant_value(node: onnx.NodeProto) -> np.ndarray | None:
    """The value of a Constant node, None for sparse or attribute-reference values."""
    for attr in node.attribute:
        if attr.ref_attr_name:
            return None
        if attr.name == "value":
            return numpy_helper.to_array(attr.t)
        if attr.name in ("value_float", "value_int", "value_string"):
            value = helper.get_attribute_value(attr)
            if isinstance(value, bytes):
                return np.array(value.decode(), dtype=object)
            return np.array(value, dtype=np.float32 if attr.name == "value_float" else np.int64)
        if attr.name in ("value_floats", "value_ints", "value_strings"):
            values = helper.get_attribute_value(attr)
            if attr.name == "value_strings":
                return np.array([v.decode() for v in values], dtype=object)
            return np.array(values, dtype=np.float32 if attr.name == "value_floats" else np.int64)
    return None


@dataclass
class FoldResult:
    """Values to materialize, nodes to drop, and what was folded (by op type)."""

    values: dict[str, np.ndarray] = field(default_factory=dict)
    removed: set[int] = field(default_factory=set)  # indices into the scope's node list
    folded: dict[str, int] = field(default_factory=dict)
    too_large: int = 0
    over_memory: int = 0  # foldable nodes kept: their values would not fit in memory
    failures: list[str] = field(default_factory=list)


def fold_budget() -> int | None:
    """Bytes the constants of one folding batch (inputs and results) may take: a quarter
    of the memory still available, None when that is unknown."""
    available = available_bytes()
    return None if available is None else available // 4


def _shape_value(node: onnx.NodeProto, types: TypeMap) -> list[int | None] | None:
    shape = static_shape(types, node.input[0])
    if shape is None:
        return None
    attrs = {a.name: a.i for a in node.attribute}
    rank = len(shape)
    start = attrs.get("start", 0)
    end = attrs.get("end", rank)
    start = max(0, min(rank, start + rank if start < 0 else start))
    end = max(0, min(rank, end + rank if end < 0 else end))
    return shape[start:end]


def _partial(
    node: onnx.NodeProto, partial: dict[str, list[int | None]], consts: Mapping[str, Const]
) -> list[int | None] | None:
    """Dims picked by Gather/Slice from a partly known shape vector (Polygraphy's
    Shape→Gather and Shape→Slice folds)."""
    source = partial.get(node.input[0])
    if source is None:
        return None
    others = node.input[1:]
    if not all(n in consts for n in others if n):
        return None
    try:
        if node.op_type == "Gather":
            index = consts[node.input[1]].value().astype(np.int64)
            picked: Any = np.array(source, dtype=object)[index]
            return list(picked.reshape(-1)) if index.ndim else [picked]
        args: list[Any] = [
            consts[n].value().astype(np.int64).tolist() if n else None for n in others
        ]
        starts, ends = args[0], args[1]
        axes = args[2] if len(args) > 2 and args[2] is not None else [0]
        steps = args[3] if len(args) > 3 and args[3] is not None else [1]
        if axes not in ([0], [-1]):
            return None
        return list(np.array(source, dtype=object)[slice(starts[0], ends[0], steps[0])])
    except (IndexError, ValueError, TypeError, KeyError):
        return None


def fold_shapes(
    nodes: list[onnx.NodeProto], types: TypeMap, consts: dict[str, Const], result: FoldResult
) -> None:
    """Fold Shape/Size of statically shaped tensors, and Gather/Slice picking static dims of
    a partly dynamic shape. Cost: O(nodes)."""
    partial: dict[str, list[int | None]] = {}
    for index, node in enumerate(nodes):
        if node.domain not in ("", "ai.onnx") or not node.output or not node.output[0]:
            continue
        out = node.output[0]
        dims: list[int | None] | None = None
        if node.op_type == "Shape" and node.input:
            dims = _shape_value(node, types)
            if dims is not None and None in dims:
                partial[out] = dims
                continue
        elif node.op_type == "Size" and node.input:
            shape = static_shape(types, node.input[0])
            if shape is not None and None not in shape:
                _record(
                    result,
                    consts,
                    index,
                    node,
                    np.array(int(np.prod([d or 0 for d in shape])), np.int64),
                )
            continue
        elif node.op_type in ("Gather", "Slice") and len(node.input) >= 2:
            dims = _partial(node, partial, consts)
            if dims is not None and None in dims:
                partial[out] = dims
                continue
            if dims is not None and node.op_type == "Gather":
                index_shape = consts[node.input[1]].value().shape
                value = np.array(dims, np.int64).reshape(index_shape)
                _record(result, consts, index, node, value)
                continue
        if dims is not None:
            _record(result, consts, index, node, np.array(dims, np.int64))


def _record(
    result: FoldResult,
    consts: dict[str, Const],
    index: int,
    node: onnx.NodeProto,
    value: np.ndarray,
) -> None:
    name = node.output[0]
    result.values[name] = value
    result.removed.add(index)
    result.folded[node.op_type] = result.folded.get(node.op_type, 0) + 1
    consts[name] = Const(array=value)


def _foldable(
    node: onnx.NodeProto,
    consts: Mapping[str, Const],
    types: TypeMap,
    functions: set[tuple[str, str]],
) -> bool:
    if node.op_type in NONDETERMINISTIC or any(True for _ in subgraphs(node)):
        return False
    if node.domain not in FOLDABLE_DOMAINS and (node.domain, node.op_type) not in functions:
        return False
    if node.op_type.startswith(("Sequence", "Optional")) or node.op_type == "SplitToSequence":
        return False
    if any(a.ref_attr_name for a in node.attribute):
        return False
    if any(elem_type(types, o) == NON_TENSOR for o in node.output if o):
        return False
    return all(n in consts for n in node.input if n)


def fold_constants(
    proto: Container,
    nodes: list[onnx.NodeProto],
    types: TypeMap,
    consts: dict[str, Const],
    model: onnx.ModelProto,
    evaluator: ConstantEvaluator,
    threshold: int | None,
    result: FoldResult,
    check: Callable[[], None],
) -> None:
    """Evaluate every node whose inputs are all constant in one batch; keep nodes whose
    results are over ``threshold`` bytes, unless folding them adds no bytes (see
    :func:`_free_folds`). Cost: one evaluator call holding every folded value in memory
    at once (a failing batch is retried node by node)."""
    functions = {(f.domain, f.name) for f in model.functions}
    in_function = isinstance(proto, onnx.FunctionProto)
    # Constant nodes stay as they are in a function body and for a subgraph's outputs (an
    # initializer there would fail onnx's If/Loop inference)
    as_is = set(graph_output_names(proto)) if proto is not model.graph else set()
    budget = fold_budget()
    spent = 0
    batch: list[tuple[int, onnx.NodeProto]] = []
    for index, node in enumerate(nodes):
        if index in result.removed:
            continue
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            value = constant_value(node)
            if value is not None and node.output and node.output[0]:
                consts[node.output[0]] = Const(array=value)
                if not in_function and node.output[0] not in as_is:
                    batch.append((index, node))
            continue
        if _foldable(node, consts, types, functions):
            if budget is not None:
                need = _fold_bytes(node, consts, types)
                if spent + need > budget:
                    result.over_memory += 1
                    continue
                spent += need
            batch.append((index, node))
            for out in node.output:
                if out:
                    consts[out] = Const()  # placeholder: known constant, value below
    if not batch:
        return
    evaluated = _evaluate(batch, consts, model, proto, evaluator, result, check)
    free = _free_folds(proto, [node for _index, node in batch]) if threshold is not None else set()
    for index, node in batch:
        outs = [o for o in node.output if o]
        values = [evaluated.get(o) for o in outs]
        if any(v is None for v in values):
            for o in outs:
                consts.pop(o, None)
            continue
        arrays = [v for v in values if v is not None]
        too_large = threshold is not None and any(a.nbytes > threshold for a in arrays)
        if too_large and id(node) not in free:
            result.too_large += 1
            continue
        for o, a in zip(outs, arrays, strict=True):
            result.values[o] = a
            consts[o] = Const(array=a)
        result.removed.add(index)
        result.folded[node.op_type] = result.folded.get(node.op_type, 0) + 1


def _free_folds(proto: Container, batch: list[onnx.NodeProto]) -> set[int]:
    """``id()`` of the nodes of ``batch`` whose folding adds no bytes to the model, so that
    the size threshold does not keep them: a Constant node (its value becomes an initializer
    of the same size) and an Identity of an initializer of ``proto``, or of such an Identity
    (:func:`designer.core.transforms.fold_alias.identity_aliases` makes its readers read
    the initializer itself), when its output is no graph output (that one is a copy)."""
    outputs = set(graph_output_names(proto))
    sources: set[str] = set()
    if isinstance(proto, onnx.GraphProto):
        sources = {t.name for t in proto.initializer} - {v.name for v in proto.input}
    free: set[int] = set()
    for node in batch:
        if node.domain not in ("", "ai.onnx"):
            continue
        if node.op_type == "Constant":
            free.add(id(node))
        elif node.op_type == "Identity" and node.input and node.input[0] in sources:
            out = node.output[0] if node.output else ""
            if out and out not in outputs:
                sources.add(out)
                free.add(id(node))
    return free


def _fold_bytes(node: onnx.NodeProto, consts: Mapping[str, Const], types: TypeMap) -> int:
    """Bytes folding ``node`` holds: its constant inputs and its results (a result of
    unknown size is counted as large as the largest input)."""
    inputs = [consts[n].nbytes() for n in node.input if n and n in consts]
    largest = max(inputs, default=0)
    total = sum(inputs)
    for out in node.output:
        if not out:
            continue
        shape = static_shape(types, out)
        if shape is None or None in shape:
            total += largest
            continue
        count = 1
        for dim in shape:
            count *= dim or 0
        try:
            itemsize = onnx.helper.tensor_dtype_to_np_dtype(elem_type(types, out)).itemsize
        except (KeyError, TypeError, ValueError):
            itemsize = 8
        total += count * itemsize
    return total


def _evaluate(
    batch: list[tuple[int, onnx.NodeProto]],
    consts: dict[str, Const],
    model: onnx.ModelProto,
    proto: Container,
    evaluator: ConstantEvaluator,
    result: FoldResult,
    check: Callable[[], None],
) -> dict[str, np.ndarray]:
    values: dict[str, np.ndarray] = {}
    for _index, node in batch:
        if node.op_type == "Constant":
            values[node.output[0]] = consts[node.output[0]].value()
    todo = [node for _i, node in batch if node.op_type != "Constant"]
    if not todo:
        return values
    try:
        values.update(_run(todo, consts, values, model, proto, evaluator))
        return values
    except Exception as exc:  # retry one by one to keep what can be folded
        result.failures.append(f"batch evaluation failed ({str(exc).splitlines()[0][:200]})")
    for node in todo:
        check()
        if not all(
            n in values
            or consts.get(n, Const()).array is not None
            or consts.get(n, Const()).tensor is not None
            for n in node.input
            if n
        ):
            continue
        try:
            values.update(_run([node], consts, values, model, proto, evaluator))
        except Exception as exc:
            result.failures.append(
                f"{node.op_type} '{node.name}' not folded ({str(exc).splitlines()[0][:200]})"
            )
    return values


def _run(
    nodes: list[onnx.NodeProto],
    consts: Mapping[str, Const],
    known: Mapping[str, np.ndarray],
    model: onnx.ModelProto,
    proto: Container,
    evaluator: ConstantEvaluator,
) -> dict[str, np.ndarray]:
    produced = {o for n in nodes for o in n.output if o}
    feeds: dict[str, np.ndarray] = {}
    for node in nodes:
        for name in node.input:
            if name and name not in produced and name not in feeds:
                feeds[name] = known[name] if name in known else consts[name].value()
    graph = helper.make_graph(
        nodes,
        "fold",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for n, v in feeds.items()
        ],
        [onnx.ValueInfoProto(name=o) for o in sorted(produced)],
    )
    temp = helper.make_model(graph, opset_imports=list(model.opset_import))
    if isinstance(proto, onnx.FunctionProto):
        have = {o.domain for o in temp.opset_import}
        temp.opset_import.extend(o for o in proto.opset_import if o.domain not in have)
    temp.ir_version = model.ir_version
    temp.functions.extend(model.functions)
    return evaluator(temp, feeds)


def _elem_of(value: np.ndarray) -> int:
    if value.dtype == object or value.dtype.kind in "US":
        return onnx.TensorProto.STRING
    return int(helper.np_dtype_to_tensor_dtype(value.dtype))
