"""Running the converted side of the FP16 check with float16 semantics, and finding the first
node whose output went Inf/NaN.

Backends (``CheckOptions.backend``):

- ``emulate`` — onnxruntime CPU on the emulation model of :mod:`fp16_emulate` (every
  float16 tensor rounded at each node). Fast (about the float32 run time) and truthful
  about per-operator rounding and overflow; the default.
- ``reference`` — onnx's ReferenceEvaluator on the converted model as it is: numpy computes
  in the tensors' own types. Slow (minutes for a 224×224 CNN); ``auto`` uses it only when
  emulation is impossible and the model is small.
- ``ort`` — onnxruntime on the converted model as it is. Where the provider lacks float16
  kernels it computes in float32, so an overflow can go unseen; the log says so.

Nodes are told apart by name (the conversion's ``block_nodes``, ``converted_nodes`` and
auto-block all go by name), and ONNX lets a node have none. :func:`label_unnamed_nodes`
gives every unnamed main-graph node a stable label, ``<Op> #<index> (unnamed)`` (its place in
the node list, the number of the canvas's generated name ``<Op>_<index>``), for the time the
conversion and check run, and :func:`clear_labels` takes the labels off the result again.
Without labels the blame still tells the truth: an unnamed node that runs in float16 is
said to need a name, never to "already run in float32".
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from designer.activities.fp16_emulate import (
    HALF,
    Emulation,
    EmulationError,
    Probe,
    build_emulation,
    round_feeds,
    rounding_survives,
)
from designer.activities.fp16_metrics import NonFinite
from designer.activities.ort_errors import error_line
from designer.core.tensor_sizes import tensor_nbytes
from designer.core.transforms.typeinfo import elem_type, infer_scope_types

BACKENDS = ("auto", "emulate", "reference", "ort")
#: the reference evaluator is used as a fallback only up to these sizes
REFERENCE_MAX_NODES = 2000
REFERENCE_MAX_WEIGHT_BYTES = 8 << 20
REFERENCE_MAX_INPUT_ELEMENTS = 1 << 16

EMULATE_LABEL = "emulated {half} (onnxruntime CPU, every {half} result rounded)"
REFERENCE_LABEL = "onnx reference evaluator (the converted model's own types)"
ORT_LABEL = "onnxruntime as is, NOT float16-faithful"
#: the note of a node that did not run in float16 (its inputs arrived out of range)
ALREADY_FLOAT32 = "that node already runs in float32; its float16 inputs lost the range"


def unnamed_label(node: onnx.NodeProto, index: int) -> str:
    """What an unnamed main-graph node at ``index`` is called in the check's messages."""
    return f"{node.op_type} #{index} (unnamed)"


def label_unnamed_nodes(model: onnx.ModelProto) -> dict[str, int]:
    """Name every unnamed main-graph node of ``model`` in place with its
    :func:`unnamed_label` (suffixed ``.1``, ``.2``… in the odd case a node already has that
    name), so the check can blame it and auto-block / ``--block-node`` can keep it in
    float32. Returns each label given with the node's index. O(nodes)."""
    taken = {node.name for node in model.graph.node if node.name}
    labels: dict[str, int] = {}
    for index, node in enumerate(model.graph.node):
        if node.name:
            continue
        base = name = unnamed_label(node, index)
        suffix = 0
        while name in taken:
            suffix += 1
            name = f"{base}.{suffix}"
        taken.add(name)
        node.name = name
        labels[name] = index
    return labels


def clear_labels(model: onnx.ModelProto, labels: Mapping[str, int]) -> int:
    """Take the labels of :func:`label_unnamed_nodes` off ``model``'s main-graph nodes (the
    model given to it or the conversion of it: node names survive the conversion, and no
    inserted Cast is named like a label). Returns how many were cleared."""
    cleared = 0
    for node in model.graph.node:
        if node.name in labels:
            node.name = ""
            cleared += 1
    return cleared


class HalfRunError(Exception):
    """The converted model could not be run by any usable backend (the reason)."""


@dataclass
class HalfRun:
    """Outputs of the converted model, by name, and how they were computed."""

    outputs: dict[str, np.ndarray]
    backend: str
    label: str
    reason: str
    emulation: Emulation | None = None
    feeds: dict[str, np.ndarray] | None = None


def _weight_bytes(model: onnx.ModelProto) -> int:
    return sum(tensor_nbytes(t) for t in model.graph.initializer)


def small_for_reference(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> bool:
    return (
        len(model.graph.node) <= REFERENCE_MAX_NODES
        and _weight_bytes(model) <= REFERENCE_MAX_WEIGHT_BYTES
        and sum(int(v.size) for v in feeds.values()) <= REFERENCE_MAX_INPUT_ELEMENTS
    )


def run_half(
    model16: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    base_dir: Path | None,
    backend: str,
    original_nodes: set[str],
) -> HalfRun:
    """Run ``model16`` on ``feeds`` with ``backend`` (``auto``: emulate, else the reference
    for a small model, else plain onnxruntime, each fallback with its reason)."""
    from designer.activities.numerics import run_model

    if backend not in BACKENDS:
        raise HalfRunError(f"unknown check backend '{backend}' (choose {', '.join(BACKENDS)})")
    why_not = ""
    if backend in ("auto", "emulate"):
        try:
            if not rounding_survives():
                raise EmulationError("this onnxruntime removes explicit float16 Cast pairs")
            emu = build_emulation(model16, original_nodes, base_dir)
            fed = round_feeds(feeds, model16, emu.half_type)
            outputs = run_model(emu.model, fed, base_dir, optimize=False)
            half = "bfloat16" if emu.half_type == onnx.TensorProto.BFLOAT16 else "float16"
            reason = f"{emu.rounded} tensor(s) rounded"
            if backend == "auto":
                reason = f"auto: fast, overflows where {half} does; {reason}"
            label = EMULATE_LABEL.format(half=half)
            return HalfRun(outputs, "emulate", label, reason, emu, fed)
        except Exception as exc:  # EmulationError, or what ORT raises on the emulation
            why_not = f"emulation failed ({error_line(exc)})"
            if backend == "emulate":
                raise HalfRunError(why_not) from None
    if backend == "reference" or (backend == "auto" and small_for_reference(model16, feeds)):
        try:
            outputs = run_reference(model16, feeds, base_dir)
        except Exception as exc:
            if backend == "reference":
                raise HalfRunError(f"the reference evaluator failed ({error_line(exc)})") from None
            why_not += f"; reference evaluator failed ({error_line(exc)})"
        else:
            reason = "requested" if backend == "reference" else why_not + "; the model is small"
            return HalfRun(outputs, "reference", REFERENCE_LABEL, reason, None, dict(feeds))
    elif backend == "auto":
        why_not += "; too large for the reference evaluator"
    try:
        outputs = run_model(model16, feeds, base_dir)
    except Exception as exc:
        raise HalfRunError(
            f"onnxruntime cannot run the converted model ({error_line(exc)})"
        ) from None
    reason = "requested" if backend == "ort" else why_not
    reason += "; float32 where it lacks float16 kernels, so overflow may go unseen"
    return HalfRun(outputs, "ort", ORT_LABEL, reason.lstrip("; "))


def run_reference(
    model16: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    base_dir: Path | None,
    extra_outputs: list[str] | None = None,
) -> dict[str, np.ndarray]:
    """The converted model in onnx's ReferenceEvaluator; half inputs fed in their type."""
    from onnx.external_data_helper import load_external_data_for_model
    from onnx.reference import ReferenceEvaluator

    model = onnx.ModelProto()
    model.CopyFrom(model16)
    if base_dir is not None:
        load_external_data_for_model(model, str(base_dir))
    have = {o.name for o in model.graph.output}
    for name in extra_outputs or []:
        if name not in have:
            model.graph.output.append(onnx.ValueInfoProto(name=name))
            have.add(name)
    wanted = {vi.name: vi.type.tensor_type.elem_type for vi in model.graph.input}
    fed: dict[str, np.ndarray] = {}
    for name, value in feeds.items():
        kind = wanted.get(name)
        if kind == onnx.TensorProto.BFLOAT16 and value.dtype.kind == "f":
            import ml_dtypes

            fed[name] = value.astype(ml_dtypes.bfloat16)
        elif kind in HALF and value.dtype.kind == "f":
            fed[name] = value.astype(np.float16)
        elif kind is not None:
            fed[name] = value
    names = [o.name for o in model.graph.output]
    with np.errstate(all="ignore"):  # overflow to inf is what the check looks for
        values = ReferenceEvaluator(model).run(None, fed)
    return {n: np.asarray(v) for n, v in zip(names, values, strict=True)}


def original_intermediates(
    original: onnx.ModelProto, feeds: Mapping[str, np.ndarray], base_dir: Path | None
) -> dict[str, np.ndarray]:
    """Every node output of the original's main graph, run in onnxruntime (float32)."""
    from designer.activities.numerics import run_model

    model = onnx.ModelProto()
    model.CopyFrom(original)
    have = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for out in node.output:
            if out and out not in have:
                model.graph.output.append(onnx.ValueInfoProto(name=out))
                have.add(out)
    return run_model(model, feeds, base_dir)


def first_nonfinite(
    run: HalfRun,
    model16: onnx.ModelProto,
    base_dir: Path | None,
    original_values: Mapping[str, np.ndarray],
    candidates: set[str],
    original_nodes: Set[str] = frozenset(),
) -> NonFinite | None:
    """Rerun the converted side with every main-graph float output exposed and return the
    first node whose output went Inf/NaN where the original's did not (None if none)."""
    from designer.activities.numerics import run_model

    emu = run.emulation
    feeds = run.feeds or {}
    if run.backend == "emulate" and emu is not None:
        values = run_model(emu.with_probes(), feeds, base_dir, optimize=False)
    elif run.backend == "reference":
        emu = build_emulation(model16, set(), base_dir)  # for its probes (node outputs)
        names = [p.tensor for p in emu.probes]
        values = run_reference(model16, feeds, base_dir, extra_outputs=names)
        for probe in emu.probes:
            probe.inserted = probe.op_type == "Cast" and probe.node not in original_nodes
    else:
        return None
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in model16.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    half = _HalfValues(model16)
    for probe in emu.probes:
        value = values.get(probe.tensor)
        if value is None or value.dtype.kind != "f":
            continue
        bad = ~np.isfinite(value)
        if not bad.any():
            continue
        ref = original_values.get(probe.tensor)
        if ref is not None and ref.shape == value.shape:
            new = bad & np.isfinite(ref)
        else:
            inputs_bad = any(
                not np.isfinite(np.asarray(v)).all()
                for v in (values.get(i, feeds.get(i)) for i in probe.inputs)
                if v is not None and np.asarray(v).dtype.kind == "f"
            )
            new = bad if not inputs_bad else np.zeros_like(bad)
        if not new.any():
            continue
        nan = int(np.count_nonzero(np.isnan(value) & new))
        inf = int(np.count_nonzero(np.isinf(value) & new))
        block, note = _blame(probe, consumers, candidates, half)
        return NonFinite(
            probe.node, probe.op_type, probe.tensor, nan, inf, int(value.size), block, note
        )
    return None


class _HalfValues:
    """Whether a main-graph value of the converted model is float16/bfloat16 (its types
    inferred once, on the first question: one shape inference)."""

    def __init__(self, model16: onnx.ModelProto) -> None:
        self.model16 = model16
        self.types: dict[str, int] | None = None

    def __call__(self, tensor: str) -> bool:
        if self.types is None:
            graph = self.model16.graph
            found = infer_scope_types(graph, {}, self.model16)
            self.types = {name: elem_type(found, name) for name in found}
        return self.types.get(tensor) in HALF


def _blame(
    probe: Probe,
    consumers: Mapping[str, list[onnx.NodeProto]],
    candidates: Set[str],
    is_half: _HalfValues,
) -> tuple[str | None, str]:
    """The node of ``candidates`` to keep in float32 for ``probe``'s Inf/NaN (None: none),
    and a note saying why. A node is one of ``candidates`` by name, so an unnamed node never
    is: whether it runs in float16 is read from the converted model's types instead."""
    # the conversion names every Cast it inserts: an unnamed Cast is one of the original's
    inserted = probe.inserted and bool(probe.node)
    if not inserted:
        if probe.node and probe.node in candidates:
            return probe.node, ""
        if not is_half(probe.tensor):
            return None, ALREADY_FLOAT32
        if not probe.node:
            return None, (
                "that node runs in float16 but has no name, so it cannot be kept in float32 "
                "by name; give it a name and add it to the nodes kept in float32"
            )
        return None, "that node runs in float16 but is not one this check may keep in float32"
    users = consumers.get(probe.tensor, [])
    for user in users:
        if user.name and user.name in candidates:
            return user.name, f"a Cast to float16 the conversion inserted before '{user.name}'"
    if not users:
        return None, (
            "a Cast to float16 at the model's output: the output itself cannot hold these "
            "values in float16; keep inputs and outputs in float32"
        )
    user = users[0]
    if not user.name:
        return None, (
            f"a Cast to float16 the conversion inserted before an unnamed {user.op_type} node, "
            "which cannot be kept in float32 by name; give it a name and add it to the nodes "
            "kept in float32"
        )
    return None, (
        f"a Cast to float16 the conversion inserted before '{user.name}', which is not one "
        "this check may keep in float32"
    )
