"""One profile model that ONNX Runtime and TensorRT profiles both map into (SPEC E-1..E-3).

A :class:`Profile` is what ran (``nodes``: ORT nodes or TensorRT layers with their op or layer
type, provider or precision, kernels, the ONNX nodes they came from) and how long it took:

- ``executions``: every timed execution of a node, with the iteration it belongs to
  (ONNX Runtime records each one);
- ``aggregates``: per-node totals when the profile only records those (TensorRT's
  ``--exportProfile`` / ``--dumpProfile`` give total, mean and median per layer over all
  profiled iterations, not each execution);
- ``iterations``: per-iteration times (ORT ``model_run`` events or intervals found from a
  key node; TensorRT ``--exportTimes`` records);
- ``kernel_calls``: GPU kernels where recorded (ORT's CUDA profiler ``Kernel`` events).

Everything is plain data (Qt-free); :func:`load_profile` reads any supported file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import onnx

from designer.activities.reports.table import Cell
from designer.core.errors import DesignerError

__all__ = [
    "Aggregate",
    "Execution",
    "Iteration",
    "KernelCall",
    "NotAProfileError",
    "Profile",
    "ProfileKind",
    "ProfiledNode",
    "load_profile",
    "precision_from_type",
    "profile_kind",
    "profile_name",
]

ProfileKind = Literal["onnxruntime", "tensorrt"]
IterationSource = Literal["runs", "key_node", "first_node", "timing", "single", "none"]

EXPECTED = (
    "an ONNX Runtime profile JSON (enable_profiling), a trtexec --exportProfile JSON, "
    "a TREx <engine>.profile.json or a trtexec log with --dumpProfile"
)


class NotAProfileError(DesignerError):
    """The file is no profile this designer reads (one line: what was expected)."""


class ModelMismatchError(NotAProfileError):
    """The model given to map a profile onto is not the one profiled: none of the
    profile's nodes or layers names one of its nodes. The command line reports it; the
    window, which offers the open document as a guess, maps without a model instead."""


@dataclass(frozen=True)
class ProfiledNode:
    """One node (ORT) or layer (TensorRT) as it ran."""

    index: int
    name: str
    op_type: str  # ORT op_name, TensorRT layer type (TREx "type")
    device: str  # ORT execution provider, "TensorRT" for an engine layer
    precision: str | None  # FP32, FP16, BF16, INT8, … (None when not recorded)
    onnx_nodes: tuple[str, ...]  # ONNX node names it came from (fused: several)
    mapping: str  # exact, derived, fused, inserted, unmapped, metadata, name, none
    input_shapes: tuple[tuple[int, ...], ...] = ()
    output_shapes: tuple[tuple[int, ...], ...] = ()
    kernels: tuple[str, ...] = ()  # TensorRT tactic name, ORT GPU kernel names
    shapes_text: str = ""
    # A stand-alone TensorRT quantize/dequantize layer (the layer JSON's Origin "QDQ", a
    # Quantize/Dequantize layer): typed Reformat by TensorRT 8.x, but no layout conversion.
    qdq: bool = False


@dataclass(frozen=True)
class Execution:
    node: int  # index into Profile.nodes
    iteration: int  # index into Profile.iterations, -1 when outside every iteration
    start_us: float
    dur_us: float


@dataclass(frozen=True)
class KernelCall:
    name: str
    node: int  # index into Profile.nodes, -1 when no node launched it
    iteration: int
    start_us: float
    dur_us: float


@dataclass(frozen=True)
class Aggregate:
    """A node's times when only aggregates are recorded: over ``calls`` executions."""

    calls: int
    total_us: float
    mean_us: float
    median_us: float | None


@dataclass(frozen=True)
class Iteration:
    index: int
    start_us: float
    dur_us: float


@dataclass
class Profile:
    name: str  # the profile name used in report file names
    source: str
    kind: ProfileKind
    nodes: list[ProfiledNode]
    iterations: list[Iteration]
    iteration_source: IterationSource
    executions: list[Execution] = field(default_factory=list, repr=False)
    aggregates: dict[int, Aggregate] = field(default_factory=dict)
    kernel_calls: list[KernelCall] = field(default_factory=list, repr=False)
    key_node: str | None = None
    facts: list[tuple[str, Cell, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: what makes the numbers doubtful (a file cut off), one line each: the summary's
    #: ``warning`` rows, and a warning on stderr / in the window
    warnings: list[str] = field(default_factory=list)
    model: onnx.ModelProto | None = field(default=None, repr=False)

    @property
    def per_execution(self) -> bool:
        """Whether every execution is recorded (else only per-node aggregates)."""
        return bool(self.executions) or not self.aggregates

    def node(self, name: str) -> ProfiledNode | None:
        return next((n for n in self.nodes if n.name == name), None)

    @property
    def devices(self) -> set[str]:
        return {n.device for n in self.nodes if n.device}


_TYPE_PRECISION = {
    "float": "FP32",
    "float32": "FP32",
    "float16": "FP16",
    "bfloat16": "BF16",
    "double": "FP64",
    "int8": "INT8",
    "uint8": "INT8",
    "int32": "INT32",
    "int64": "INT64",
    "bool": "BOOL",
    "float8e4m3fn": "FP8",
    "float8e5m2": "FP8",
}


def precision_from_type(type_name: str) -> str | None:
    """FP32 for ORT's ``float``, FP16 for ``float16`` … (None when unknown)."""
    return _TYPE_PRECISION.get(type_name.strip().lower())


def profile_name(path: Path) -> str:
    """The ``<profile_name>`` of report files: the file name without ``.json``/``.log`` and
    TREx's ``.profile``; spaces become underscores (as DLProf does)."""
    name = re.sub(r"\.(json|log|txt)$", "", path.name)
    name = re.sub(r"\.profile$", "", name)
    return name.replace(" ", "_") or "profile"


def _not_a_profile(head: str) -> str:
    """What a JSON file that is no profile is, as far as its start tells, and what to do."""
    if '"Layers"' in head or '"Bindings"' in head:
        return (
            "a TensorRT layer JSON (--exportLayerInfo), not a profile: give it with --with "
            "beside a profile, or explore it with `onnx-designer engine info|report`"
        )
    return "JSON, but not a profile"


def _sniff(path: Path) -> str:
    """ "ort", "trt" or raises NotAProfileError (one line)."""
    if path.suffix.lower() == ".onnx":
        raise NotAProfileError(f"{path}: an ONNX model, not a profile; expected {EXPECTED}")
    try:
        head = path.read_bytes()[:65536]
    except OSError as exc:
        raise NotAProfileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if b"\0" in head[:4096]:
        raise NotAProfileError(f"{path}: a binary file; expected {EXPECTED}")
    text = head.decode("utf-8", errors="replace").lstrip()
    if text.startswith("[") or text.startswith("{"):
        if '"cat"' in text[:4096] or '"traceEvents"' in text[:4096]:
            return "ort"
        if any(k in text[:4096] for k in ('"averageMs"', '"timeMs"', '"count"')):
            return "trt"
        raise NotAProfileError(f"{path}: {_not_a_profile(text[:4096])}; expected {EXPECTED}")
    from designer.activities.reports.trtexec_log import is_trtexec_log

    if is_trtexec_log(text):
        return "trt"
    raise NotAProfileError(f"{path}: not a profile; expected {EXPECTED}")


def profile_kind(path: Path) -> ProfileKind:
    """What :func:`load_profile` reads ``path`` as, from the file's start (cheap: 64 KiB);
    NotAProfileError (one line) when it is neither kind."""
    return "onnxruntime" if _sniff(path) == "ort" else "tensorrt"


def load_profile(
    path: Path,
    *,
    model: onnx.ModelProto | None = None,
    key_node: str | None = None,
    extra: Sequence[Path] = (),
) -> Profile:
    """Read an ORT or TensorRT profile. ``model`` maps profiled names to ONNX nodes;
    ``key_node`` sets iteration boundaries (ORT); ``extra`` adds TensorRT companion files
    (layer JSON, ``--exportTimes`` JSON, logs). Raises NotAProfileError (one line)."""
    kind = _sniff(path)
    if kind == "ort":
        from designer.activities.analysis.ort_source import ort_profile

        return ort_profile(path, model=model, key_node=key_node)
    from designer.activities.analysis.trt_source import trt_profile

    if key_node is not None:
        raise NotAProfileError(
            f"{path}: --key-node needs per-execution times; a TensorRT profile records "
            "per-layer aggregates (its iterations come from --exportTimes)"
        )
    profile = trt_profile(path, model=model, extra=extra)
    if not profile.nodes:
        raise NotAProfileError(
            f"{path}: no layer records in the TensorRT profile, so nothing to report; "
            f"expected {EXPECTED}"
        )
    return profile
