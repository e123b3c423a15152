"""Numbers with ONNX Runtime: the FP16 numerical check (original vs converted on the same
inputs, the converted side with float16 semantics: :mod:`fp16_check`, metrics:
:mod:`fp16_metrics`), auto-block (:mod:`fp16_autoblock`), and the constant evaluator
Sanitize Graph folds with.

onnxruntime is imported inside functions only. A model ORT cannot load or run never makes
these fail: the check comes back ``skipped`` with the reason.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.external_data_helper import load_external_data_for_model

from designer.activities.fp16_check import (
    BACKENDS,
    HalfRunError,
    first_nonfinite,
    original_intermediates,
    run_half,
)
from designer.activities.fp16_metrics import (
    DEFAULT_MIN_TOPK,
    DEFAULT_TOP_K,
    NumericReport,
    OutputError,
    Thresholds,
    measure_all,
)
from designer.activities.fp16_metrics import (
    NonFinite as NonFinite,  # re-exported
)
from designer.activities.ort_errors import error_line
from designer.core.errors import DesignerError
from designer.core.io.external import (
    ExternalRef,
    is_external,
    iter_model_tensors,
    resolve_location,
)
from designer.core.transforms.dtypes import np_dtype
from designer.core.transforms.fp16 import FP16Options, FP16Result, convert_to_fp16
from designer.core.transforms.log import Cancel, Monitor, Progress, never, silent

logger = logging.getLogger(__name__)


class NumericsError(DesignerError):
    """Inputs for a check cannot be made (bad input folder, unreadable .pb file, …)."""


# --- sessions ------------------------------------------------------------------------------
@contextlib.contextmanager
def _model_path(model: onnx.ModelProto, base_dir: Path | None) -> Iterator[str | bytes]:
    """Bytes for ORT, or a temporary model file whose external data files are hard links to
    the originals under ``base_dir`` (no weight is copied; ORT refuses symlinks leading out
    of the model folder). Across file systems the weights are read into memory instead."""
    locations: dict[str, str] = {}  # location: the first tensor stored there
    for tensor in iter_model_tensors(model):
        if is_external(tensor):
            locations.setdefault(ExternalRef.of(tensor).location, tensor.name)
    if not locations:
        yield model.SerializeToString()
        return
    if base_dir is None:
        raise NumericsError("the model has external data but no folder to read it from")
    # every file checked first: inside base_dir after resolving links, a regular file
    sources = {loc: resolve_location(loc, base_dir, name) for loc, name in locations.items()}
    with tempfile.TemporaryDirectory(prefix="designer-ort-") as tmp:
        try:
            for location, source in sources.items():
                link = Path(tmp) / location
                link.parent.mkdir(parents=True, exist_ok=True)
                os.link(source, link)
        except OSError:
            inline = onnx.ModelProto()
            inline.CopyFrom(model)
            load_external_data_for_model(inline, str(base_dir))
            yield inline.SerializeToString()
            return
        path = Path(tmp) / "model.onnx"
        path.write_bytes(model.SerializeToString())
        yield str(path)


def run_model(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    base_dir: Path | None = None,
    providers: Sequence[str] = ("CPUExecutionProvider",),
    optimize: bool = True,
) -> dict[str, np.ndarray]:
    """Run ``model`` once in onnxruntime; every output by name. Raises what ORT raises;
    ORT writes nothing to stderr."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    # fatal only: ORT's C++ log would print a failure on stderr (the GUI's too) past
    # Python; the exception says it all (:func:`designer.activities.ort_errors.error_line`).
    # A run logs at the session's level.
    options.log_severity_level = 4
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    with _model_path(model, base_dir) as source:
        session = ort.InferenceSession(source, options, providers=list(providers))
        names = [o.name for o in session.get_outputs()]
        wanted = {i.name: i.type for i in session.get_inputs()}
        inputs = {k: _as_ort_type(v, wanted[k]) for k, v in feeds.items() if k in wanted}
        values = session.run(names, inputs)
    return {n: np.asarray(v) for n, v in zip(names, values, strict=True)}


_ORT_TYPES = {
    "tensor(float16)": np.float16,
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
}


def _as_ort_type(value: np.ndarray, ort_type: str) -> np.ndarray:
    if ort_type == "tensor(bfloat16)":
        import ml_dtypes

        return value.astype(ml_dtypes.bfloat16)
    dtype = _ORT_TYPES.get(ort_type)
    return value.astype(dtype) if dtype is not None and value.dtype != dtype else value


# --- inputs --------------------------------------------------------------------------------
def free_dims(model: onnx.ModelProto) -> list[str]:
    """The named free dimensions (``dim_param``) of ``model``'s graph inputs (initializers
    left out), in order of appearance: what ``--dim`` / ``--check-dim`` and the profile
    dialog can set."""
    inits = {i.name for i in model.graph.initializer}
    names: dict[str, None] = {}
    for value in model.graph.input:
        if value.name in inits or not value.type.HasField("tensor_type"):
            continue
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param") and dim.dim_param:
                names[dim.dim_param] = None
    return list(names)


def model_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Graph inputs that are not initializers (what a user feeds)."""
    inits = {t.name for t in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in inits]


def random_inputs(
    model: onnx.ModelProto, seed: int = 0, dims: Mapping[str, int] | None = None
) -> dict[str, np.ndarray]:
    """One random tensor per model input (fixed ``seed``): floats ~ N(0, 1), integers in
    [0, 4), bools half true; symbolic dims from ``dims`` or 1."""
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    total = 0
    for vi in model_inputs(model):
        tt = vi.type.tensor_type
        if vi.type.WhichOneof("value") != "tensor_type":
            raise NumericsError(f"input '{vi.name}' is not a tensor; give inputs with --inputs")
        shape = [
            d.dim_value if d.HasField("dim_value") else (dims or {}).get(d.dim_param, 1)
            for d in tt.shape.dim
        ]
        dtype = np_dtype(tt.elem_type)
        total += _input_bytes(vi.name, shape, dtype)
        if total > RANDOM_INPUTS_MAX_BYTES:
            gib = total / (1 << 30)
            size = f"{gib:,.1f} GiB" if gib < 1e6 else "more than any memory holds"
            raise NumericsError(
                f"the random inputs would take {size}, up to input '{vi.name}' of shape "
                f"{shape} (the limit is {RANDOM_INPUTS_MAX_BYTES >> 30} GiB); set smaller "
                "dimensions with --check-dim"
            )
        if dtype.kind == "f" or tt.elem_type == onnx.TensorProto.BFLOAT16:
            value: np.ndarray = rng.standard_normal(shape).astype(np.float32)
        elif dtype.kind in "iu":
            value = rng.integers(0, 4, size=shape).astype(dtype)
        elif dtype.kind == "b":
            value = rng.random(shape) < 0.5
        else:
            raise NumericsError(f"input '{vi.name}' has type {dtype}; give inputs with --inputs")
        feeds[vi.name] = np.asarray(value)
    return feeds


#: Random inputs larger than this (all together) are not made: a declared dimension of
#: 2**62, or merely [1, 3, 30000, 30000] floats, would allocate until memory ran out.
RANDOM_INPUTS_MAX_BYTES = 1 << 30


def _input_bytes(name: str, shape: list[int], dtype: np.dtype) -> int:
    """Bytes of a random input of ``shape`` as it is made (floats as float32);
    NumericsError for a negative dimension. Python integers: no overflow."""
    if any(d < 0 for d in shape):
        raise NumericsError(f"input '{name}' has a negative dimension {shape}; fix its shape")
    elements = 1
    for d in shape:
        elements *= d
    return elements * (4 if dtype.kind == "f" else max(dtype.itemsize, 1))


def load_input_dir(model: onnx.ModelProto, folder: Path) -> dict[str, np.ndarray]:
    """Inputs from TensorProto ``.pb`` files (as in onnx test data sets): matched by the
    tensor's name, else by sorted file order to the model's inputs."""
    folder = Path(folder)
    if not folder.is_dir():
        raise NumericsError(f"{folder}: input folder not found")
    files = sorted(folder.glob("*.pb"))
    if not files:
        raise NumericsError(f"{folder}: no .pb files (TensorProto) in the input folder")
    names = [vi.name for vi in model_inputs(model)]
    feeds: dict[str, np.ndarray] = {}
    for index, path in enumerate(files):
        tensor = onnx.TensorProto()
        try:
            tensor.ParseFromString(path.read_bytes())
            value = numpy_helper.to_array(tensor)
        except Exception as exc:
            raise NumericsError(f"{path}: not a TensorProto file ({exc})") from None
        name = tensor.name if tensor.name in names else (names[index] if index < len(names) else "")
        if not name:
            raise NumericsError(f"{path}: more input files than model inputs ({len(names)})")
        feeds[name] = value
    missing = [n for n in names if n not in feeds]
    if missing:
        raise NumericsError(f"{folder}: no input file for {', '.join(missing)}")
    return feeds


# --- comparison ----------------------------------------------------------------------------
def compare_outputs(
    expected: Mapping[str, np.ndarray], actual: Mapping[str, np.ndarray], rtol: float, atol: float
) -> list[OutputError]:
    """Per output of ``expected``: every metric of ``actual`` (:mod:`fp16_metrics`), judged
    element-wise only: |a-e| <= atol + rtol*|e| and no new NaN/Inf."""
    return measure_all(expected, actual, Thresholds(rtol=rtol, atol=atol))


@dataclass
class CheckOptions:
    """How to check a converted model: ``input_dir`` of TensorProto .pb files, else random
    inputs with ``seed``; symbolic ``dims``; limits per output (None: the target type's
    default, :data:`fp16_metrics.DEFAULT_LIMITS`); ``rtol``/``atol`` add an element-wise
    test when set; ``backend`` computes the converted side (:mod:`fp16_check`);
    ``auto_block`` keeps in float32 the node that first produced Inf/NaN, then bisects."""

    enabled: bool = True
    seed: int = 0
    input_dir: Path | None = None
    dims: dict[str, int] = field(default_factory=dict)
    rtol: float | None = None
    atol: float | None = None
    auto_block: bool = False
    providers: tuple[str, ...] = ("CPUExecutionProvider",)
    max_rel_l2: float | None = None
    min_cosine: float | None = None
    max_range_error: float | None = None
    top_k: int = DEFAULT_TOP_K
    min_topk: float = DEFAULT_MIN_TOPK
    backend: str = "auto"

    def thresholds(self, target: str = "float16") -> Thresholds:
        limits = Thresholds(
            self.max_rel_l2,
            self.min_cosine,
            self.max_range_error,
            self.top_k,
            self.min_topk,
            self.rtol,
            self.atol,
        )
        return limits.resolved(target)


class _Checker:
    """Runs the original once, then any number of converted candidates against it."""

    def __init__(
        self,
        original: onnx.ModelProto,
        base_dir: Path | None,
        check: CheckOptions,
        target: str = "float16",
    ) -> None:
        self.check = check
        self.base_dir = base_dir
        self.original = original
        self.original_nodes = {n.name for n in original.graph.node if n.name}
        self.limits = check.thresholds(target)
        self.skipped: str | None = None
        self.expected: dict[str, np.ndarray] = {}
        self.feeds: dict[str, np.ndarray] = {}
        self._intermediates: dict[str, np.ndarray] | None = None
        self.source = (
            f"folder {check.input_dir}" if check.input_dir else f"random (seed {check.seed})"
        )
        if check.backend not in BACKENDS:
            raise NumericsError(
                f"unknown check backend '{check.backend}'; choose one of {', '.join(BACKENDS)}"
            )
        if check.input_dir is not None:
            self.feeds = load_input_dir(original, check.input_dir)
        else:
            try:
                self.feeds = random_inputs(original, check.seed, check.dims)
            except NumericsError as exc:
                self.skipped = str(exc)
                return
        try:
            self.expected = run_model(original, self.feeds, base_dir, check.providers)
        except ImportError as exc:
            self.skipped = f"onnxruntime is not available ({exc})"
        except Exception as exc:
            self.skipped = f"onnxruntime cannot run the original model ({error_line(exc)})"

    def intermediates(self) -> dict[str, np.ndarray]:
        """Every main-graph node output of the original (once; empty if ORT cannot)."""
        if self._intermediates is None:
            try:
                self._intermediates = original_intermediates(
                    self.original, self.feeds, self.base_dir
                )
            except Exception as error:  # the first-Inf/NaN search then names no node
                logger.warning("cannot run the original for its intermediate outputs: %s", error)
                self._intermediates = {}
        return self._intermediates

    def report(
        self,
        converted: onnx.ModelProto,
        candidates: set[str] | None = None,
        locate: bool = True,
    ) -> NumericReport:
        """Compare ``converted`` with the original; on a failure (with ``locate``) find the
        first node whose output went Inf/NaN and which of ``candidates`` to block for it."""
        report = NumericReport(
            rtol=self.check.rtol,
            atol=self.check.atol,
            inputs=self.source,
            thresholds=self.limits,
        )
        if self.skipped is not None:
            report.skipped = self.skipped
            return report
        start = time.perf_counter()
        try:
            run = run_half(
                converted, self.feeds, self.base_dir, self.check.backend, self.original_nodes
            )
        except HalfRunError as exc:
            report.skipped = str(exc)
            return report
        report.backend, report.backend_label = run.backend, run.label
        report.backend_reason = run.reason
        report.outputs = measure_all(self.expected, run.outputs, self.limits)
        if locate and not report.passed and run.backend != "ort":
            try:
                report.first_nonfinite = first_nonfinite(
                    run,
                    converted,
                    self.base_dir,
                    self.intermediates(),
                    candidates or set(),
                    self.original_nodes,
                )
            except Exception as exc:  # the check itself stands; say why the search did not
                report.backend_reason += f"; Inf/NaN search failed ({error_line(exc)})"
        report.seconds = time.perf_counter() - start
        return report


@dataclass
class FP16Outcome:
    """A conversion with its numerical check; ``blocked`` lists nodes auto-block kept,
    ``notes`` what auto-block did, step by step."""

    result: FP16Result
    report: NumericReport
    blocked: list[str] = field(default_factory=list)
    trials: int = 0
    notes: list[str] = field(default_factory=list)

    def log_text(self) -> str:
        return self.result.log.text()


def convert_and_check(
    model: onnx.ModelProto,
    options: FP16Options | None = None,
    base_dir: Path | None = None,
    check: CheckOptions | None = None,
    *,
    cancel: Cancel = never,
    progress: Progress = silent,
) -> FP16Outcome:
    """Convert (M-1), then compare with the original, the converted side computed with
    float16 semantics (:mod:`fp16_check`); with ``auto_block``, keep in float32 the node
    that first produced Inf/NaN until none does, then bisect over the node order for the
    rest (O(k log n) conversions and runs for k blocked nodes of n). The report and the
    blocked nodes are appended to the result's log."""
    from designer.activities.fp16_autoblock import auto_block

    options = options or FP16Options()
    check = check or CheckOptions()
    monitor = Monitor(cancel, progress, "FP16 conversion")
    result = convert_to_fp16(
        model, options, base_dir, cancel=cancel, progress=lambda f, m: progress(0.5 * f, m)
    )
    if not check.enabled:
        return FP16Outcome(result, NumericReport(skipped="not requested"))
    monitor.step(0.5, "running the original and the converted model")
    checker = _Checker(model, base_dir, check, "bfloat16" if options.bfloat16 else "float16")
    report = checker.report(result.model, set(result.converted_nodes))
    outcome = FP16Outcome(result, report, trials=1)
    if check.auto_block and report.skipped is None and not report.passed:
        outcome = auto_block(model, options, base_dir, checker, result, report, monitor)
        outcome.result.log.info("before auto-block:")
        for line in report.lines():
            outcome.result.log.info("  " + line)
        for note in outcome.notes:
            outcome.result.log.info(note)
    for line in outcome.report.lines():
        outcome.result.log.info(line)
    if outcome.blocked:
        outcome.result.log.info(
            f"auto-block kept {len(outcome.blocked)} node(s) in float32 after "
            f"{outcome.trials} trial(s): {', '.join(outcome.blocked)}"
        )
    outcome.result.log.details["check"] = outcome.report.to_json()
    outcome.result.log.details["auto_blocked"] = list(outcome.blocked)
    return outcome


# --- constant folding ----------------------------------------------------------------------
def ort_evaluator(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Evaluate a constant subgraph (Sanitize Graph's folding) with onnxruntime, graph
    optimizations off so exactly the given nodes run. Satisfies
    :class:`designer.core.transforms.sanitize.ConstantEvaluator`."""
    return run_model(model, feeds, None, optimize=False)
