"""Sanitize Graph (M-2): constant folding, then removal of unused nodes, initializers and
value_info, in every scope (main graph, subgraphs, local functions), repeated for a number
of passes or until nothing changes.

Folded values become initializers of their scope (Constant nodes in function bodies) under
the same names, so graph outputs and every reader stay as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import onnx
from onnx import helper, numpy_helper

from designer.core.io.external import is_external
from designer.core.protocopy import copy_message
from designer.core.tensor_sizes import tensor_nbytes
from designer.core.transforms.fold import (
    Const,
    ConstantEvaluator,
    FoldResult,
    fold_constants,
    fold_shapes,
)
from designer.core.transforms.fold_alias import identity_aliases, renamed_inputs
from designer.core.transforms.fold_if import flatten_constant_ifs
from designer.core.transforms.graphs import graph_output_names, node_uses
from designer.core.transforms.log import (
    Cancel,
    Monitor,
    Progress,
    TransformError,
    TransformLog,
    never,
    silent,
)
from designer.core.transforms.sanitize_report import FoldTrace, node_label, report
from designer.core.transforms.symshape import ShapeInferer, symbolic_types
from designer.core.transforms.toposort import toposort_graph
from designer.core.transforms.typeinfo import TypeMap, infer_scope_types
from designer.core.walk import Container, iter_nodes, subgraphs


@dataclass(frozen=True)
class SanitizeOptions:
    """``fold_size_threshold``: folded results larger than this many bytes are not folded
    (None: no limit), unless folding adds no bytes (a Constant node becoming an initializer,
    an Identity of an initializer whose readers read the initializer itself); ``passes``:
    folding passes (None: until nothing changes, at most ``max_auto_passes``; 0: only
    remove unused parts)."""

    fold_constants: bool = True
    fold_size_threshold: int | None = None
    passes: int | None = None
    fold_shapes: bool = True
    remove_unused: bool = True
    max_auto_passes: int = 32
    verify: bool = True


@dataclass
class SanitizeResult:
    model: onnx.ModelProto
    log: TransformLog


def model_size(model: onnx.ModelProto) -> int:
    """Bytes of the serialized model plus its external data (no weight is read)."""
    from designer.core.io.external import iter_model_tensors

    external = sum(tensor_nbytes(t) for t in iter_model_tensors(model) if is_external(t))
    return int(model.ByteSize()) + external


def count_nodes(model: onnx.ModelProto) -> int:
    """Nodes of every scope (subgraphs and functions included)."""
    return sum(1 for _ in iter_nodes(model))


class _Pass:
    def __init__(
        self,
        model: onnx.ModelProto,
        base_dir: Path | None,
        options: SanitizeOptions,
        evaluator: ConstantEvaluator | None,
        log: TransformLog,
        monitor: Monitor,
        fold: bool,
        shapes: ShapeInferer | None,
        trace: FoldTrace,
    ) -> None:
        self.model = model
        self.trace = trace
        self.shapes = shapes
        self.base_dir = base_dir
        self.options = options
        self.evaluator = evaluator
        self.log = log
        self.monitor = monitor
        self.fold = fold
        self.changed = False
        self.too_large = 0  # foldable nodes kept in this pass (the last pass's count is told)
        self.over_memory = 0

    def shape_warn(self, line: str) -> None:
        if line not in self.log.warnings:
            self.log.warn(line)

    def scope(
        self, proto: Container, outer_types: TypeMap, outer_consts: Mapping[str, Const]
    ) -> None:
        self.monitor.check()
        if toposort_graph(proto):
            self.log.count("scopes_sorted")
            self.changed = True
        types = infer_scope_types(proto, outer_types, self.model) if self.fold else {}
        if self.fold and self.shapes is not None and proto is self.model.graph:
            gained = symbolic_types(self.model, types, self.shapes, self.shape_warn)
            self.log.count("symbolic_shape_values", gained)
        consts = dict(outer_consts)
        if isinstance(proto, onnx.GraphProto):
            inputs = {v.name for v in proto.input}
            for t in proto.initializer:
                if t.name not in inputs:
                    consts[t.name] = Const(tensor=t, base_dir=self.base_dir)
        if self.fold:
            self._fold(proto, types, consts)
            for done in flatten_constant_ifs(proto, consts, self.model):
                self.changed = True
                self.log.count("flattened_if")
                self.log.info(
                    f"flattened If '{done.name}': constant condition, {done.branch} "
                    f"inlined ({done.nodes} node(s))"
                )
        full = {**outer_types, **types}
        for node in proto.node:
            for graph in subgraphs(node):
                self.scope(graph, full, consts)
        if self.options.remove_unused:
            self._remove_unused(proto)

    def _fold(self, proto: Container, types: TypeMap, consts: dict[str, Const]) -> None:
        nodes = list(proto.node)
        result = FoldResult()
        if self.options.fold_shapes:
            fold_shapes(nodes, types, consts, result)
        if self.options.fold_constants and self.evaluator is not None:
            fold_constants(
                proto,
                nodes,
                types,
                consts,
                self.model,
                self.evaluator,
                self.options.fold_size_threshold,
                result,
                self.monitor.check,
            )
        for line in result.failures:
            self.log.warn(line)
        self.too_large += result.too_large
        self.over_memory += result.over_memory
        if not result.removed:
            return
        self.changed = True
        for op, n in result.folded.items():
            self.log.count(f"folded.{op}", n)
        originals: dict[str, int] = {}
        if isinstance(proto, onnx.GraphProto):
            originals = {t.name: tensor_nbytes(t) for t in proto.initializer}
        for index in sorted(result.removed):
            self.trace.folded(nodes[index], originals)
        kept = [n for i, n in enumerate(nodes) if i not in result.removed]
        aliases = identity_aliases(proto, nodes, result)
        if aliases:
            self.log.count("identity_aliased", len(aliases))
            kept = [renamed_inputs(n, aliases) for n in kept]
        used: set[str] = set(graph_output_names(proto))
        for node in kept:
            used |= node_uses(node)
        new_values = [(k, v) for k, v in result.values.items() if k in used]
        # onnx's If/Loop inference rejects a subgraph output that is an initializer of the
        # subgraph, so those (and every value in a function body) become Constant nodes
        outputs = set(graph_output_names(proto)) if proto is not self.model.graph else set()
        as_nodes = isinstance(proto, onnx.FunctionProto)
        del proto.node[:]
        for name, value in new_values:
            tensor = numpy_helper.from_array(value, name)
            if as_nodes or name in outputs:
                proto.node.append(
                    helper.make_node("Constant", [], [name], name=f"{name}_folded", value=tensor)
                )
            else:
                assert isinstance(proto, onnx.GraphProto)
                proto.initializer.append(tensor)
        proto.node.extend(kept)

    def _remove_unused(self, proto: Container) -> None:
        outputs = set(graph_output_names(proto))
        used = set(outputs)
        keep: list[onnx.NodeProto] = []
        removed = 0
        for node in reversed(list(proto.node)):
            if any(o in used for o in node.output if o):
                keep.append(node)
                used |= node_uses(node)
            else:
                removed += 1
                if node.output and node.output[0] not in self.trace.origins:
                    self.trace.unused.append(node_label(node))
        if removed:
            self.changed = True
            self.log.count("removed_nodes", removed)
            del proto.node[:]
            proto.node.extend(reversed(keep))
        if isinstance(proto, onnx.GraphProto):
            inputs = {v.name for v in proto.input}
            inits = [t for t in proto.initializer if t.name in used or t.name in inputs]
            if len(inits) != len(proto.initializer):
                self.changed = True
                self.log.count("removed_initializers", len(proto.initializer) - len(inits))
                inits = [copy_message(t) for t in inits]
                del proto.initializer[:]
                proto.initializer.extend(inits)
        defined = {o for n in proto.node for o in n.output if o}
        if isinstance(proto, onnx.GraphProto):
            defined |= {t.name for t in proto.initializer} | {v.name for v in proto.input}
        else:
            defined |= set(proto.input)
        infos = [vi for vi in proto.value_info if vi.name in defined and vi.name not in outputs]
        if len(infos) != len(proto.value_info):
            self.log.count("removed_value_info", len(proto.value_info) - len(infos))
            infos = [copy_message(v) for v in infos]
            del proto.value_info[:]
            proto.value_info.extend(infos)


def sanitize(
    model: onnx.ModelProto,
    options: SanitizeOptions | None = None,
    base_dir: Path | None = None,
    evaluator: ConstantEvaluator | None = None,
    *,
    shapes: ShapeInferer | None = None,
    cancel: Cancel = never,
    progress: Progress = silent,
) -> SanitizeResult:
    """A sanitized copy of ``model``; ``evaluator`` evaluates constant subgraphs (without one
    only shape computations fold). Cost per pass: one shape inference and one evaluator call
    per scope, plus the folded values in memory; the input is copied once."""
    options = options or SanitizeOptions()
    if options.passes is not None and options.passes < 0:
        raise TransformError("the number of folding passes cannot be negative")
    if options.fold_size_threshold is not None and options.fold_size_threshold < 0:
        raise TransformError("the fold size threshold cannot be negative")
    monitor = Monitor(cancel, progress, "Sanitize")
    log = TransformLog("Sanitize Graph")
    trace = FoldTrace()
    new = copy_message(model)
    nodes_before, size_before = count_nodes(model), model_size(model)
    limit = options.passes if options.passes is not None else options.max_auto_passes
    passes = 0
    while True:
        fold = options.fold_constants or options.fold_shapes
        fold = fold and passes < limit
        step = _Pass(new, base_dir, options, evaluator, log, monitor, fold, shapes, trace)
        monitor.step(min(passes / max(limit, 1), 0.95), f"pass {passes + 1}")
        step.scope(new.graph, {}, {})
        for fn in new.functions:
            step.scope(fn, {}, {})
        if fold:
            passes += 1
            log.counts["not_folded_too_large"] = step.too_large
            log.counts["not_folded_memory"] = step.over_memory
        if not step.changed or not fold:
            break
    _summarize(log, new, passes, nodes_before, size_before, options, evaluator is not None)
    if shapes is not None:
        failed = any(w.startswith("symbolic shape inference failed") for w in log.warnings)
        log.info(
            "shapes: onnx's inference only (the symbolic shape inferer failed)"
            if failed
            else "shapes: onnx's inference plus the symbolic shape inferer"
        )
    if options.verify:
        monitor.step(0.97, "checking the result")
        _verify(model, new, log)
    for line in report(log, trace, model, new, size_before, log.counts["size_after"]):
        log.info(line)
    monitor.step(1.0, "done")
    return SanitizeResult(new, log)


def _summarize(
    log: TransformLog,
    model: onnx.ModelProto,
    passes: int,
    nodes_before: int,
    size_before: int,
    options: SanitizeOptions,
    evaluated: bool,
) -> None:
    folded = log.counts_with("folded")
    nodes_after, size_after = count_nodes(model), model_size(model)
    log.counts.update(
        passes=passes,
        nodes_before=nodes_before,
        nodes_after=nodes_after,
        size_before=size_before,
        size_after=size_after,
    )
    mode = "until no change" if options.passes is None else f"at most {options.passes}"
    log.info(f"{passes} folding pass(es) ({mode})")
    if folded:
        shown = ", ".join(f"{op} {n}" for op, n in folded.items())
        log.info(f"folded {sum(folded.values())} node(s): {shown}")
    else:
        log.info("nothing to fold")
    if not evaluated:
        log.info("no constant evaluator: only shape computations were folded")
    if log.counts.get("not_folded_too_large"):
        log.info(
            f"{log.counts['not_folded_too_large']} foldable node(s) kept: result over "
            f"{options.fold_size_threshold:,} bytes"
        )
    if log.counts.get("not_folded_memory"):
        log.warn(
            f"{log.counts['not_folded_memory']} foldable node(s) kept: their values would "
            "not fit in the memory available"
        )
    if log.counts.get("identity_aliased"):
        log.info(
            f"{log.counts['identity_aliased']} Identity node(s) of an initializer removed: "
            "their readers read the initializer itself (no copy)"
        )
    if log.counts.get("removed_value_info"):
        log.info(f"removed {log.counts['removed_value_info']} stale value_info entr(ies)")
    log.info(f"nodes {nodes_before} -> {nodes_after}; size {size_before:,} -> {size_after:,} bytes")


def _verify(before: onnx.ModelProto, after: onnx.ModelProto, log: TransformLog) -> None:
    """Refuse a result the type checker (onnx's full check with shape inference, then ours)
    rejects when the input passed it; an input that failed already only gets a warning."""
    from designer.core.analysis.gate import first_error

    problem = first_error(after)
    if problem is None:
        log.info("the result passes the model check")
        return
    earlier = first_error(before)
    if earlier is None:
        raise TransformError(
            f"sanitize would produce a model that fails the check ({problem}); nothing was "
            "changed or written"
        )
    log.warn(f"the result does not pass the model check ({problem}); nor did the input")
