"""Float16 semantics for the FP16 check: the converted model as onnxruntime would run it if
every float16 (bfloat16) tensor were really stored in that type.

ONNX Runtime's CPU provider has float16 kernels for a few operators only; for the rest it
inserts Casts to float32 and then drops the Cast pairs between two such operators, so a
chain of float16 nodes silently computes in float32 and an overflow never happens. The
*emulation* model built here is the converted model with every half tensor typed float32
and every node output that was half rounded on the spot (``Cast(to=half)`` then
``Cast(to=float)``), run with graph optimizations off: each operator computes in float32
(as float16 GPU kernels do, accumulating in float32) and its result is rounded to the half
type, so values beyond ±65504 become ±inf exactly where a float16 device would overflow.

:func:`rounding_survives` runs a tiny probe once per process to make sure this onnxruntime
keeps explicit Cast pairs; the caller falls back to onnx's reference evaluator otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from designer.core.errors import DesignerError
from designer.core.io.external import tensor_array
from designer.core.memory import OutOfMemoryError, require
from designer.core.tensor_sizes import tensor_nbytes
from designer.core.transforms.fp16_plan import ATTRIBUTE_TYPED
from designer.core.transforms.graphs import all_names
from designer.core.transforms.typeinfo import TypeMap, elem_type, infer_scope_types
from designer.core.walk import subgraphs

HALF = frozenset({TensorProto.FLOAT16, TensorProto.BFLOAT16})
FLOATISH = HALF | {TensorProto.FLOAT, TensorProto.DOUBLE}
_SUFFIX = "__f16emu"
#: attributes (besides :data:`ATTRIBUTE_TYPED`) that name an output element type
_TYPE_ATTRS = {"DequantizeLinear": "output_dtype", "SequenceEmpty": "dtype"}


class EmulationError(DesignerError):
    """The converted model cannot be rewritten for float16 emulation (the reason)."""


@dataclass
class Probe:
    """A main-graph node output watched for the first non-finite value (topological order)."""

    index: int
    node: str
    op_type: str
    tensor: str  # name in the converted model (and in the emulation's outputs)
    inputs: list[str]
    inserted: bool = False  # a Cast the converter added (not a node of the original)


@dataclass
class Emulation:
    """The emulation model; ``probes`` every float output of a main-graph node, in order;
    ``half_type`` the type values are rounded to; ``rounded`` how many outputs round."""

    model: onnx.ModelProto
    probes: list[Probe] = field(default_factory=list)
    half_type: int = TensorProto.FLOAT16
    rounded: int = 0

    def with_probes(self) -> onnx.ModelProto:
        """The emulation model with every probe tensor as an extra graph output."""
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        have = {o.name for o in model.graph.output}
        for probe in self.probes:
            if probe.tensor not in have:
                model.graph.output.append(onnx.ValueInfoProto(name=probe.tensor))
                have.add(probe.tensor)
        return model


def round_feeds(
    feeds: Mapping[str, np.ndarray], model16: onnx.ModelProto, half: int
) -> dict[str, np.ndarray]:
    """Feeds for the emulation: float inputs the converted model takes in a half type are
    rounded to it (and given as float32); others as they are."""
    wanted = {vi.name: vi.type.tensor_type.elem_type for vi in model16.graph.input}
    out: dict[str, np.ndarray] = {}
    for name, value in feeds.items():
        if wanted.get(name) in HALF and value.dtype.kind == "f":
            out[name] = round_half(value, half)
        else:
            out[name] = value
    return out


def round_half(value: np.ndarray, half: int) -> np.ndarray:
    """``value`` rounded to float16 / bfloat16, as float32."""
    if half == TensorProto.BFLOAT16:
        import ml_dtypes

        return np.asarray(value, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    with np.errstate(over="ignore"):  # beyond ±65504 becomes ±inf, as in float16
        return np.asarray(value).astype(np.float16).astype(np.float32)


def build_emulation(
    model16: onnx.ModelProto, original_nodes: set[str], base_dir: Path | None
) -> Emulation:
    """The emulation of ``model16`` (see the module docstring). ``original_nodes`` are the
    node names of the model before conversion (to tell inserted Casts apart). Cost: one
    copy of the graph, one shape inference per scope, half initializers upcast in memory
    (refused with EmulationError when that would not fit)."""
    half_bytes = sum(tensor_nbytes(t) for t in model16.graph.initializer if t.data_type in HALF)
    try:  # half weights upcast (twice their size) and ORT's own copy of them
        require(4 * half_bytes + (64 << 20), "emulating float16")
    except OutOfMemoryError as exc:
        raise EmulationError(str(exc)) from None
    model = onnx.ModelProto()
    model.CopyFrom(model16)
    if model.functions:
        from onnx import inliner

        _spell_out_default_attributes(model)
        try:
            model = inliner.inline_local_functions(model)
        except Exception as exc:
            raise EmulationError(f"local functions cannot be inlined ({exc})") from None
    used = all_names(model)
    emu = Emulation(model)
    halves = {
        t.data_type for t in model.graph.initializer if t.data_type in HALF
    } | _declared_halves(model.graph)
    emu.half_type = TensorProto.BFLOAT16 if TensorProto.BFLOAT16 in halves else TensorProto.FLOAT16
    _Rewrite(model, used, base_dir, emu, original_nodes).scope(model.graph, {}, main=True)
    return emu


def _spell_out_default_attributes(model: onnx.ModelProto) -> None:
    """Give each call of a local function the function's default attribute values it omits
    (onnx's inliner leaves a Constant that references an omitted attribute empty)."""
    from designer.core.walk import iter_graphs

    defaults = {(f.domain, f.name, f.overload): list(f.attribute_proto) for f in model.functions}
    containers: list[onnx.GraphProto | onnx.FunctionProto] = [
        walked.graph for walked in iter_graphs(model)
    ]
    for container in containers:
        for node in container.node:
            given = {a.name for a in node.attribute}
            for attr in defaults.get((node.domain, node.op_type, node.overload), []):
                if attr.name not in given:
                    node.attribute.append(attr)


def _copy_type(tp: onnx.TypeProto) -> onnx.TypeProto:
    new = onnx.TypeProto()
    new.CopyFrom(tp)
    return new


def _declared_halves(graph: onnx.GraphProto) -> set[int]:
    return {
        vi.type.tensor_type.elem_type
        for vi in [*graph.input, *graph.output, *graph.value_info]
        if vi.type.tensor_type.elem_type in HALF
    }


class _Rewrite:
    def __init__(
        self,
        model: onnx.ModelProto,
        used: set[str],
        base_dir: Path | None,
        emu: Emulation,
        original_nodes: set[str],
    ) -> None:
        self.model = model
        self.used = used
        self.base_dir = base_dir
        self.emu = emu
        self.original_nodes = original_nodes

    def fresh(self, base: str) -> str:
        name = base
        n = 0
        while name in self.used:
            n += 1
            name = f"{base}{n}"
        self.used.add(name)
        return name

    def scope(self, graph: onnx.GraphProto, outer: TypeMap, *, main: bool = False) -> None:
        types = infer_scope_types(graph, outer, self.model)
        # the map holds the graph's own TypeProtos, retyped below: read the kinds first
        kinds = {name: elem_type(types, name) for name in types}
        types = {name: _copy_type(tp) for name, tp in types.items()}
        for group in (graph.input, graph.output, graph.value_info):
            for vi in group:
                if vi.type.tensor_type.elem_type in HALF:
                    vi.type.tensor_type.elem_type = TensorProto.FLOAT
        for i, tensor in enumerate(graph.initializer):
            if tensor.data_type in HALF:
                graph.initializer[i].CopyFrom(self.upcast(tensor))
        if any(s.values.data_type in HALF for s in graph.sparse_initializer):
            raise EmulationError("a sparse float16 initializer cannot be emulated")
        inner = {**outer, **types}
        new_nodes: list[onnx.NodeProto] = []
        for index, node in enumerate(graph.node):
            self.retype_attributes(node)
            for sub in subgraphs(node):
                self.scope(sub, inner)
            new_nodes.append(node)
            for j, out in enumerate(node.output):
                kind = kinds.get(out, 0)
                if not out or kind not in FLOATISH:
                    continue
                if main:
                    inserted = node.op_type == "Cast" and node.name not in self.original_nodes
                    self.emu.probes.append(
                        Probe(
                            index,
                            node.name,
                            node.op_type,
                            out,
                            [i for i in node.input if i],
                            inserted=inserted,
                        )
                    )
                if kind not in HALF:
                    continue
                raw = self.fresh(out + _SUFFIX)
                half = self.fresh(out + _SUFFIX + "_h")
                node.output[j] = raw
                new_nodes.append(helper.make_node("Cast", [raw], [half], to=kind))
                new_nodes.append(helper.make_node("Cast", [half], [out], to=TensorProto.FLOAT))
                self.emu.rounded += 1
        del graph.node[:]
        graph.node.extend(new_nodes)

    def upcast(self, tensor: TensorProto) -> TensorProto:
        values = np.asarray(tensor_array(tensor, self.base_dir)).astype(np.float32)
        new = numpy_helper.from_array(values, tensor.name)
        return new

    def retype_attributes(self, node: onnx.NodeProto) -> None:
        typed = ATTRIBUTE_TYPED.get(node.op_type) or _TYPE_ATTRS.get(node.op_type)
        for attr in node.attribute:
            if attr.name == typed and attr.type == onnx.AttributeProto.INT and attr.i in HALF:
                attr.i = TensorProto.FLOAT
            elif attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type in HALF:
                attr.t.CopyFrom(self.upcast(attr.t))
            elif attr.type == onnx.AttributeProto.SPARSE_TENSOR and (
                attr.sparse_tensor.values.data_type in HALF
            ):
                raise EmulationError(f"node '{node.name}' has a sparse float16 attribute")


@functools.lru_cache(maxsize=1)
def rounding_survives() -> bool:
    """True when this onnxruntime keeps an explicit float→float16→float Cast pair (the
    emulation depends on it): 5·1000·1000 must overflow to inf."""
    import onnxruntime as ort

    f, h = TensorProto.FLOAT, TensorProto.FLOAT16
    nodes = [
        helper.make_node("Mul", ["x", "k"], ["a"]),
        helper.make_node("Cast", ["a"], ["ah"], to=h),
        helper.make_node("Cast", ["ah"], ["af"], to=f),
        helper.make_node("Mul", ["af", "k"], ["b"]),
        helper.make_node("Cast", ["b"], ["bh"], to=h),
        helper.make_node("Cast", ["bh"], ["y"], to=f),
    ]
    graph = helper.make_graph(
        nodes,
        "probe",
        [helper.make_tensor_value_info("x", f, [1])],
        [helper.make_tensor_value_info("y", f, [1])],
        [numpy_helper.from_array(np.array(1000, np.float32), "k")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.log_severity_level = 4  # fatal only: nothing of ORT on stderr
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, ["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": np.array([5.0], np.float32)})
    return bool(np.isinf(y).all())
