"""Numbers with ONNX Runtime: the FP16 numerical check (original vs converted on the same
inputs), auto-block by bisection, and the constant evaluator Sanitize Graph folds with.

onnxruntime is imported inside functions only. A model ORT cannot load or run never makes
these fail: the check comes back ``skipped`` with the reason.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.external_data_helper import load_external_data_for_model

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
    """Run ``model`` once in onnxruntime; every output by name. Raises what ORT raises."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
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
    for vi in model_inputs(model):
        tt = vi.type.tensor_type
        if vi.type.WhichOneof("value") != "tensor_type":
            raise NumericsError(f"input '{vi.name}' is not a tensor; give inputs with --inputs")
        shape = [
            d.dim_value if d.HasField("dim_value") else (dims or {}).get(d.dim_param, 1)
            for d in tt.shape.dim
        ]
        dtype = np_dtype(tt.elem_type)
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
@dataclass
class OutputError:
    """Differences on one output: max absolute and relative error (relative where the
    original's magnitude is over ``atol``), new NaN/Inf values in the converted output."""

    name: str
    max_abs: float
    max_rel: float
    nan: int
    inf: int
    passed: bool
    note: str = ""

    def line(self) -> str:
        state = "ok" if self.passed else "FAIL"
        extra = f", {self.nan} NaN" if self.nan else ""
        extra += f", {self.inf} Inf" if self.inf else ""
        extra += f" ({self.note})" if self.note else ""
        return (
            f"{self.name}: max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}{extra} [{state}]"
        )


@dataclass
class NumericReport:
    """The numerical check; ``skipped`` says why it could not run (then nothing failed)."""

    outputs: list[OutputError] = field(default_factory=list)
    skipped: str | None = None
    rtol: float = 1e-2
    atol: float = 1e-3
    inputs: str = "random"
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.skipped is None and all(o.passed for o in self.outputs)

    def lines(self) -> list[str]:
        if self.skipped is not None:
            return [f"numerical check skipped: {self.skipped}"]
        head = (
            f"numerical check vs the original ({self.inputs} inputs, rtol {self.rtol:g}, "
            f"atol {self.atol:g}): {'passed' if self.passed else 'FAILED'}"
        )
        return [head, *("  " + o.line() for o in self.outputs)]

    def to_json(self) -> dict[str, Any]:
        return {
            "skipped": self.skipped,
            "passed": self.passed,
            "rtol": self.rtol,
            "atol": self.atol,
            "inputs": self.inputs,
            "outputs": [vars(o) for o in self.outputs],
        }


def compare_outputs(
    expected: Mapping[str, np.ndarray], actual: Mapping[str, np.ndarray], rtol: float, atol: float
) -> list[OutputError]:
    """Per output of ``expected``: errors of ``actual`` and whether |a-e| <= atol + rtol*|e|."""
    errors: list[OutputError] = []
    for name, ref in expected.items():
        got = actual.get(name)
        if got is None:
            errors.append(OutputError(name, np.inf, np.inf, 0, 0, False, "missing"))
            continue
        if got.shape != ref.shape:
            note = f"shape {got.shape} != {ref.shape}"
            errors.append(OutputError(name, np.inf, np.inf, 0, 0, False, note))
            continue
        if ref.dtype.kind not in "fc" or ref.size == 0:
            same = bool(np.array_equal(ref, got))
            errors.append(OutputError(name, 0.0 if same else np.inf, 0.0, 0, 0, same))
            continue
        e = ref.astype(np.float64)
        a = got.astype(np.float64)
        nan = int(np.count_nonzero(np.isnan(a) & ~np.isnan(e)))
        inf = int(np.count_nonzero(np.isinf(a) & ~np.isinf(e)))
        both = np.isfinite(e) & np.isfinite(a)
        diff = np.where(both, np.abs(a - e), 0.0)
        max_abs = float(diff.max(initial=0.0))
        big = both & (np.abs(e) > atol)
        rel = np.where(big, diff / np.where(big, np.abs(e), 1.0), 0.0)
        max_rel = float(rel.max(initial=0.0))
        special_same = bool(np.all(both | (np.isnan(e) & np.isnan(a)) | (e == a)))
        ok = bool(np.all(diff <= atol + rtol * np.abs(np.where(both, e, 0.0)))) and special_same
        errors.append(OutputError(name, max_abs, max_rel, nan, inf, ok and not nan and not inf))
    return errors


@dataclass
class CheckOptions:
    """How to check a converted model: ``input_dir`` of TensorProto .pb files, else random
    inputs with ``seed``; symbolic ``dims``; tolerances; ``auto_block`` bisects to find the
    nodes to keep in float32 so the check passes."""

    enabled: bool = True
    seed: int = 0
    input_dir: Path | None = None
    dims: dict[str, int] = field(default_factory=dict)
    rtol: float = 1e-2
    atol: float = 1e-3
    auto_block: bool = False
    providers: tuple[str, ...] = ("CPUExecutionProvider",)


class _Checker:
    """Runs the original once, then any number of converted candidates against it."""

    def __init__(
        self, original: onnx.ModelProto, base_dir: Path | None, check: CheckOptions
    ) -> None:
        self.check = check
        self.base_dir = base_dir
        self.skipped: str | None = None
        self.expected: dict[str, np.ndarray] = {}
        self.feeds: dict[str, np.ndarray] = {}
        self.source = (
            f"folder {check.input_dir}" if check.input_dir else f"random (seed {check.seed})"
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
            self.skipped = f"onnxruntime cannot run the original model ({_first_line(exc)})"

    def report(self, converted: onnx.ModelProto) -> NumericReport:
        report = NumericReport(rtol=self.check.rtol, atol=self.check.atol, inputs=self.source)
        if self.skipped is not None:
            report.skipped = self.skipped
            return report
        start = time.perf_counter()
        try:
            actual = run_model(converted, self.feeds, self.base_dir, self.check.providers)
        except Exception as exc:
            report.skipped = f"onnxruntime cannot run the converted model ({_first_line(exc)})"
            return report
        report.outputs = compare_outputs(self.expected, actual, self.check.rtol, self.check.atol)
        report.seconds = time.perf_counter() - start
        return report


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


@dataclass
class FP16Outcome:
    """A conversion with its numerical check; ``blocked`` lists nodes auto-block kept."""

    result: FP16Result
    report: NumericReport
    blocked: list[str] = field(default_factory=list)
    trials: int = 0

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
    """Convert (M-1), then compare with the original in onnxruntime; with ``auto_block``,
    keep in float32 the nodes whose conversion breaks the tolerance, found by bisection over
    the node order (O(k log n) conversions and runs for k blocked nodes of n). The report
    and the blocked nodes are appended to the result's log."""
    options = options or FP16Options()
    check = check or CheckOptions()
    monitor = Monitor(cancel, progress, "FP16 conversion")
    result = convert_to_fp16(
        model, options, base_dir, cancel=cancel, progress=lambda f, m: progress(0.5 * f, m)
    )
    if not check.enabled:
        return FP16Outcome(result, NumericReport(skipped="not requested"))
    monitor.step(0.5, "running the original and the converted model")
    checker = _Checker(model, base_dir, check)
    report = checker.report(result.model)
    outcome = FP16Outcome(result, report, trials=1)
    if check.auto_block and report.skipped is None and not report.passed:
        outcome = _auto_block(model, options, base_dir, checker, result, monitor)
        outcome.result.log.info("before auto-block:")
        for line in report.lines():
            outcome.result.log.info("  " + line)
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


def _auto_block(
    model: onnx.ModelProto,
    options: FP16Options,
    base_dir: Path | None,
    checker: _Checker,
    first: FP16Result,
    monitor: Monitor,
) -> FP16Outcome:
    candidates = list(dict.fromkeys(first.converted_nodes))
    accepted: list[str] = []
    blocked: list[str] = []
    trials = 0

    def attempt(extra: list[str]) -> tuple[FP16Result, NumericReport]:
        nonlocal trials
        trials += 1
        monitor.step(
            0.5 + 0.5 * len(accepted + blocked) / max(len(candidates), 1),
            f"auto-block trial {trials}",
        )
        keep = set(candidates) - set(accepted) - set(extra)
        opts = replace(options, block_nodes=options.block_nodes | keep)
        result = convert_to_fp16(model, opts, base_dir, cancel=monitor.cancel)
        return result, checker.report(result.model)

    def search(segment: list[str]) -> None:
        _result, report = attempt(segment)
        if report.passed:
            accepted.extend(segment)
        elif len(segment) == 1:
            blocked.append(segment[0])
        else:
            half = len(segment) // 2
            search(segment[:half])
            search(segment[half:])

    search(candidates)
    final_opts = replace(options, block_nodes=options.block_nodes | frozenset(blocked))
    result = convert_to_fp16(model, final_opts, base_dir, cancel=monitor.cancel)
    report = checker.report(result.model)
    return FP16Outcome(result, report, blocked, trials + 1)


# --- constant folding ----------------------------------------------------------------------
def ort_evaluator(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Evaluate a constant subgraph (Sanitize Graph's folding) with onnxruntime, graph
    optimizations off so exactly the given nodes run. Satisfies
    :class:`designer.core.transforms.sanitize.ConstantEvaluator`."""
    return run_model(model, feeds, None, optimize=False)
