"""Convert to FP16 (M-1): weights and computation to float16 (or bfloat16).

Built as passes over the protobuf: every scope (main graph, If/Loop/Scan bodies, local
function bodies) is typed, planned node by node (:mod:`fp16_plan`) and rewritten in
topological order. Casts are inserted right before the first node that needs them, so the
result is sorted; inputs an operator's schema fixes to float32 (Resize scales, …) stay
float32; Cast/Constant/ConstantOfShape/EyeLike/Random* get a matching type attribute;
subgraph and function boundaries keep their types (casts inside), so mixed types never
cross a boundary. The input model is never changed.

Cost: one shape inference per scope; each converted weight is read once (external data is
memory-mapped) and held in memory at the target size; unconverted weights are copied
(external ones stay references to their files). Given a ``sink`` (the output's data file,
:class:`designer.core.io.stream.DataSink`), each converted weight goes there as soon as it
is converted and the result holds only references: memory stays about the largest weight
plus the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from designer.core.io.external import tensor_array
from designer.core.io.stream import MIN_BYTES, DataSink
from designer.core.memory import require
from designer.core.protocopy import copy_message, copy_without_initializers
from designer.core.tensor_sizes import tensor_nbytes
from designer.core.transforms.dtypes import (
    FLOAT_TYPES,
    ConversionCounts,
    array_to_tensor,
    convert_array,
    describe_counts,
    type_name,
)
from designer.core.transforms.fp16_plan import (
    ATTRIBUTE_TYPED,
    FLOAT,
    FunctionKey,
    PlanContext,
    ScopePlan,
    function_input_types,
    plan_scope,
)
from designer.core.transforms.graphs import Names, all_names
from designer.core.transforms.log import Cancel, Monitor, Progress, TransformLog, never, silent
from designer.core.transforms.schemas import opset_versions
from designer.core.transforms.typeinfo import elem_type
from designer.core.walk import Container, subgraphs

#: Operators kept in float32 by default: their float inputs are indices, thresholds or
#: accumulations that float16 breaks (Resize's scales are kept float32 by its schema).
DEFAULT_BLOCK_OPS = frozenset(
    {
        "Range",
        "TopK",
        "NonMaxSuppression",
        "RoiAlign",
        "CumSum",
        "RandomNormal",
        "RandomUniform",
        "RandomNormalLike",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
    }
)


@dataclass(frozen=True)
class FP16Options:
    """``keep_io_types``: model inputs/outputs stay float32 (casts at the edges);
    ``block_ops``/``block_nodes``: operators/node names kept in float32; ``clip_constants``:
    weights beyond the float16 range saturate to ±65504 (else become ±inf); ``bfloat16``:
    convert to bfloat16 instead."""

    keep_io_types: bool = False
    block_ops: frozenset[str] = DEFAULT_BLOCK_OPS
    block_nodes: frozenset[str] = frozenset()
    clip_constants: bool = True
    bfloat16: bool = False

    @property
    def target(self) -> int:
        return TensorProto.BFLOAT16 if self.bfloat16 else TensorProto.FLOAT16


@dataclass
class FP16Result:
    """The converted model, its log, and the main-graph nodes that now run in the target
    type (what auto-block bisects over)."""

    model: onnx.ModelProto
    log: TransformLog
    converted_nodes: list[str] = field(default_factory=list)


class _Rewriter:
    def __init__(
        self,
        ctx: PlanContext,
        options: FP16Options,
        names: Names,
        log: TransformLog,
        monitor: Monitor,
        sink: DataSink | None = None,
    ) -> None:
        self.ctx = ctx
        self.sink = sink
        self.options = options
        self.target = options.target
        self.names = names
        self.log = log
        self.monitor = monitor
        self.counts = ConversionCounts()
        self.converted_main: list[str] = []

    # --- values -------------------------------------------------------------------------
    def convert_values(self, values: np.ndarray, what: str) -> np.ndarray:
        out, counts = convert_array(values, self.target, clip=self.options.clip_constants)
        self.counts.add(counts)
        if counts.clipped:
            self.log.warn(f"{what}: {describe_counts(counts, self.target)}")
        return out

    def convert_tensor(
        self, tensor: TensorProto, base_dir: Path | None, what: str, stream: bool = False
    ) -> TensorProto:
        """``tensor`` converted; with ``stream`` and a sink, its data goes into the sink."""
        values = self.convert_values(np.asarray(tensor_array(tensor, base_dir)), what)
        if stream and self.sink is not None and values.nbytes >= MIN_BYTES:
            new = TensorProto(name=tensor.name, data_type=self.target, dims=list(values.shape))
            self.sink.write(new, values)
        else:
            new = array_to_tensor(values, tensor.name, self.target)
        del values
        new.doc_string = tensor.doc_string
        new.metadata_props.extend(tensor.metadata_props)
        return new

    def cast_node(self, source: str, out: str, to: int) -> onnx.NodeProto:
        self.log.count("casts_inserted")
        return helper.make_node("Cast", [source], [out], name=self.names.new(f"{out}_cast"), to=to)

    # --- attributes ---------------------------------------------------------------------
    def rewrite_attributes(self, node: onnx.NodeProto, out_new: list[int | None]) -> None:
        if not any(t is not None for t in out_new):
            return
        attr_name = ATTRIBUTE_TYPED.get(node.op_type)
        if attr_name is not None:
            for attr in node.attribute:
                if attr.name == attr_name:
                    attr.i = self.target
                    break
            else:
                node.attribute.append(helper.make_attribute(attr_name, self.target))
            return
        what = f"node '{node.name or node.op_type}'"
        if node.op_type == "ConstantOfShape":
            for attr in node.attribute:
                if attr.name == "value":
                    attr.t.CopyFrom(self.convert_tensor(attr.t, None, what))
                    return
            zero = array_to_tensor(np.zeros(1, np.float16), "value", TensorProto.FLOAT16)
            if self.target != TensorProto.FLOAT16:
                zero = array_to_tensor(
                    self.convert_values(np.zeros(1, np.float32), what), "value", self.target
                )
            node.attribute.append(helper.make_attribute("value", zero))
        elif node.op_type == "Constant":
            for attr in list(node.attribute):
                if attr.name == "value" and attr.t.data_type == FLOAT:
                    attr.t.CopyFrom(self.convert_tensor(attr.t, None, what))
                elif attr.name in ("value_float", "value_floats"):
                    raw = np.array(
                        attr.f if attr.name == "value_float" else list(attr.floats), np.float32
                    )
                    tensor = array_to_tensor(self.convert_values(raw, what), "value", self.target)
                    node.attribute.remove(attr)
                    node.attribute.append(helper.make_attribute("value", tensor))

    # --- scopes -------------------------------------------------------------------------
    def rewrite_scope(
        self,
        proto: Container,
        plan: ScopePlan,
        env: dict[str, int],
        renames: dict[str, str],
        *,
        main: bool = False,
        fixed_outputs: bool = True,
        source_inits: list[TensorProto] | None = None,
        base_dir: Path | None = None,
    ) -> None:
        """Rewrite ``proto`` in place following ``plan``; ``env`` holds the new element types
        of names from enclosing scopes, ``renames`` the names they now go by."""
        types = plan.types
        actual = dict(env)
        renames = dict(renames)
        is_graph = isinstance(proto, onnx.GraphProto)
        input_names = [v.name for v in proto.input] if is_graph else list(proto.input)
        for name in input_names:
            t = elem_type(types, name)
            change = main and not self.options.keep_io_types and t == FLOAT
            actual[name] = self.target if change else t
        if isinstance(proto, onnx.GraphProto):
            self._initializers(proto, plan, actual, set(input_names), source_inits, base_dir)
        new_nodes: list[onnx.NodeProto] = []
        casts: dict[tuple[str, int], str] = {}

        def read(name: str, want: int | None) -> str:
            name = renames.get(name, name)
            have = actual.get(name, elem_type(types, name))
            if want is None or have == want or have not in FLOAT_TYPES or want not in FLOAT_TYPES:
                return name
            key = (name, want)
            if key not in casts:
                out = self.names.new(f"{name}_{type_name(want)}")
                new_nodes.append(self.cast_node(name, out, want))
                actual[out] = want
                casts[key] = out
            return casts[key]

        outputs = [v.name for v in proto.output] if is_graph else list(proto.output)
        keep = {n for n in outputs if fixed_outputs}
        ordered = [proto.node[i] for i in plan.order]
        for index, (node, node_plan) in enumerate(zip(ordered, plan.nodes, strict=True)):
            if main and index % 64 == 0:
                self.monitor.step(0.2 + 0.7 * index / max(len(plan.order), 1), "converting nodes")
            for i, name in enumerate(node.input):
                if name:
                    node.input[i] = read(name, node_plan.wanted[i])
            if node_plan.converted:
                self.rewrite_attributes(node, node_plan.out_new)
                self.log.count(f"converted.{node.op_type}")
                if main and node.name:
                    self.converted_main.append(node.name)
            elif node_plan.reason:
                self.log.count(f"kept_float32.{node.op_type}")
            for g_index, graph in enumerate(subgraphs(node)):
                self.rewrite_scope(graph, plan.children[(index, g_index)], actual, renames)
            new_nodes.append(node)
            for j, out in enumerate(node.output):
                new_type = node_plan.out_new[j] if j < len(node_plan.out_new) else None
                if not out or new_type is None:
                    continue
                actual[out] = new_type
                if out in keep:
                    inner = self.names.new(f"{out}_{type_name(new_type)}")
                    node.output[j] = inner
                    actual[inner] = new_type
                    renames[out] = inner
                    new_nodes.append(self.cast_node(inner, out, elem_type(types, out)))
                    actual[out] = elem_type(types, out)
        for k, name in enumerate(outputs):
            if name not in keep or renames.get(name, name) != name:
                continue
            want = elem_type(types, name)
            fixed = read(name, want if want in FLOAT_TYPES else None)
            if fixed != name:  # a subgraph/function output that names a converted outer value
                if is_graph:
                    proto.output[k].name = fixed
                else:
                    proto.output[k] = fixed
        del proto.node[:]
        proto.node.extend(new_nodes)
        self._retype(proto, actual)

    def _initializers(
        self,
        graph: onnx.GraphProto,
        plan: ScopePlan,
        actual: dict[str, int],
        inputs: set[str],
        source: list[TensorProto] | None,
        base_dir: Path | None,
    ) -> None:
        tensors = list(graph.initializer) if source is None else source
        new: list[TensorProto] = []
        before = after = 0
        for tensor in tensors:
            self.monitor.check()
            wishes = plan.wishes.get(tensor.name, set())
            convert = (
                tensor.data_type == FLOAT
                and tensor.name not in inputs
                and self.target in wishes
                and FLOAT not in wishes
            )
            size = tensor_nbytes(tensor)
            before += size
            if convert:
                what = f"initializer '{tensor.name}'"
                converted = self.convert_tensor(tensor, base_dir, what, stream=True)
                new.append(converted)
                after += tensor_nbytes(converted)
                self.log.count("initializers_converted")
                actual[tensor.name] = self.target
            else:
                new.append(tensor if source is None else copy_message(tensor))
                after += size
                actual[tensor.name] = tensor.data_type
        if source is None:
            converted_list = [copy_message(t) for t in new]
            del graph.initializer[:]
            graph.initializer.extend(converted_list)
        else:
            graph.initializer.extend(new)
        self.log.count("weight_bytes_before", before)
        self.log.count("weight_bytes_after", after)

    def _retype(self, proto: Container, actual: dict[str, int]) -> None:
        groups = [proto.value_info]
        if isinstance(proto, onnx.GraphProto):
            groups = [proto.input, proto.output, proto.value_info]
        for group in groups:
            for vi in group:
                t = actual.get(vi.name)
                if t and vi.type.WhichOneof("value") == "tensor_type":
                    vi.type.tensor_type.elem_type = t


def convert_to_fp16(
    model: onnx.ModelProto,
    options: FP16Options | None = None,
    base_dir: Path | None = None,
    *,
    cancel: Cancel = never,
    progress: Progress = silent,
    sink: DataSink | None = None,
) -> FP16Result:
    """A new model with float32 weights and computation converted to float16 (bfloat16).

    ``base_dir`` is where external data of ``model`` lives. Raises TransformCancelled when
    ``cancel`` returns True (polled per node), TransformError for an unsortable graph.
    ``sink``: stream converted weights into the output's data file (the result refers to
    it; save it with ``write_model(..., sink=sink)``). See the module docstring for costs.
    """
    options = options or FP16Options()
    monitor = Monitor(cancel, progress, "FP16 conversion")
    target_name = type_name(options.target)
    log = TransformLog(f"Convert to {target_name.upper()}")
    monitor.step(0.0, "typing and planning")
    functions: dict[FunctionKey, onnx.FunctionProto] = {
        (f.domain, f.name, f.overload): f for f in model.functions
    }
    ctx = PlanContext(
        model=model,
        target=options.target,
        block_ops=options.block_ops,
        block_nodes=options.block_nodes,
        versions=opset_versions(model),
        functions=functions,
    )
    main_plan = plan_scope(model.graph, {}, ctx, fixed_outputs=options.keep_io_types)
    fn_plans: dict[FunctionKey, ScopePlan] = {}
    pending = True
    while pending:  # functions called from other functions are planned once their callers are
        pending = False
        for key, fn in functions.items():
            if key in fn_plans or key not in ctx.calls:
                continue
            input_types = function_input_types(fn, ctx.calls[key])
            if input_types is None:
                log.warn(f"function {key[0]}:{key[1]} is called with different types; kept")
                fn_plans[key] = ScopePlan({}, [], [])
                continue
            saved = ctx.versions
            ctx.versions = opset_versions(model, list(fn.opset_import))
            fn_plans[key] = plan_scope(fn, {}, ctx, fixed_outputs=True, input_types=input_types)
            ctx.versions = saved
            pending = True
    monitor.step(0.2, "converting")
    _require_memory(model, target_name, streamed=sink is not None)
    new_model = copy_without_initializers(model)
    rewriter = _Rewriter(ctx, options, Names(all_names(model)), log, monitor, sink)
    rewriter.rewrite_scope(
        new_model.graph,
        main_plan,
        {},
        {},
        main=True,
        fixed_outputs=options.keep_io_types,
        source_inits=list(model.graph.initializer),
        base_dir=base_dir,
    )
    for fn in new_model.functions:
        key = (fn.domain, fn.name, fn.overload)
        plan = fn_plans.get(key)
        if plan is None or not plan.nodes:
            continue
        saved = ctx.versions
        ctx.versions = opset_versions(model, list(fn.opset_import))
        rewriter.rewrite_scope(fn, plan, {}, {})
        ctx.versions = saved
        log.count("functions_converted")
    monitor.step(0.95, "writing the log")
    _summarize(log, rewriter, options)
    monitor.step(1.0, "done")
    return FP16Result(new_model, log, rewriter.converted_main)


def _require_memory(model: onnx.ModelProto, target: str, streamed: bool = False) -> None:
    """Refuse (OutOfMemoryError) a conversion whose converted weights would not fit: each
    float32 initializer is converted one at a time (memory-mapped when external, in chunks)
    but the converted values stay in memory until saved, where a copy of each is kept to
    roll back a failed save. ``streamed``: each converted weight goes to the output's data
    file at once, so only the largest one (mapped and converted) counts."""
    sizes = [tensor_nbytes(t) for t in model.graph.initializer if t.data_type == FLOAT]
    if not sizes:
        return
    held = max(sizes) + max(sizes) // 2 if streamed else sum(sizes) + max(sizes)
    needed = held + (256 << 20) + 2 * model.ByteSize()
    require(needed, f"converting {len(sizes)} float32 initializer(s) to {target}")


def _summarize(log: TransformLog, rw: _Rewriter, options: FP16Options) -> None:
    converted = log.counts_with("converted")
    kept = log.counts_with("kept_float32")
    total_converted = sum(converted.values())
    log.lines.insert(0, f"{total_converted} node(s) now run in {type_name(options.target)}")
    if kept:
        shown = ", ".join(f"{op} {n}" for op, n in kept.items())
        log.info(f"{sum(kept.values())} float node(s) kept in float32: {shown}")
    log.info(f"{log.counts.get('casts_inserted', 0)} Cast node(s) inserted")
    before, after = (
        log.counts.get("weight_bytes_before", 0),
        log.counts.get("weight_bytes_after", 0),
    )
    converted_inits = log.counts.get("initializers_converted", 0)
    log.info(f"{converted_inits} initializer(s) converted; weights {before:,} -> {after:,} bytes")
    if log.counts.get("functions_converted"):
        log.info(f"{log.counts['functions_converted']} local function(s) converted")
    log.counts["values_clipped"] = rw.counts.clipped
    log.counts["values_rounded"] = rw.counts.rounded
    log.counts["values_flushed_to_zero"] = rw.counts.flushed
    if rw.counts.clipped:
        verb = "clipped to the finite range" if options.clip_constants else "overflowed to inf"
        log.info(f"{rw.counts.clipped} constant value(s) {verb}")
    if rw.counts.flushed:
        log.info(f"{rw.counts.flushed} tiny constant value(s) became zero")
    if options.keep_io_types:
        log.info("model inputs and outputs kept in float32")
    log.details["options"] = {
        "keep_io_types": options.keep_io_types,
        "block_ops": sorted(options.block_ops),
        "block_nodes": sorted(options.block_nodes),
        "clip_constants": options.clip_constants,
        "target": type_name(options.target),
    }
