"""Whole-output metrics of the FP16 check: how far a converted model's output is from the
original's, in numbers that mean something for a whole tensor.

- relative L2 error ``‖a − e‖₂ / ‖e‖₂``,
- cosine similarity ``a·e / (‖a‖ ‖e‖)``,
- max absolute error relative to the output's range ``max|a − e| / (max e − min e)``,
- top-k agreement for classifier-like outputs (2-D ``[N, C]`` with C ≥ 10, or 3-D
  ``[N, T, V]`` logits with V ≥ 100): the mean share of the original's top-k classes that
  are in the converted top-k, and the share of rows whose top-1 class is unchanged,
- NaN/Inf counts: values that are not finite in the converted output where the original's
  are finite (any fails).

Element-wise ``|a − e| ≤ atol + rtol·|e|`` is applied only when rtol or atol is given: on
near-zero values it fails good conversions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

#: default limits per target type: (max relative L2, min cosine, max abs error / range)
DEFAULT_LIMITS = {
    "float16": (1e-2, 0.9999, 2e-2),
    "bfloat16": (5e-2, 0.998, 1e-1),
}
DEFAULT_TOP_K = 5
DEFAULT_MIN_TOPK = 0.8


@dataclass(frozen=True)
class Thresholds:
    """Limits an output must meet. None takes the default for the target type
    (:data:`DEFAULT_LIMITS`); ``rtol``/``atol`` (element-wise) apply only when set."""

    max_rel_l2: float | None = None
    min_cosine: float | None = None
    max_range_error: float | None = None
    top_k: int = DEFAULT_TOP_K
    min_topk: float = DEFAULT_MIN_TOPK
    rtol: float | None = None
    atol: float | None = None

    def resolved(self, target: str = "float16") -> Thresholds:
        rel, cos, rng = DEFAULT_LIMITS.get(target, DEFAULT_LIMITS["float16"])
        return replace(
            self,
            max_rel_l2=rel if self.max_rel_l2 is None else self.max_rel_l2,
            min_cosine=cos if self.min_cosine is None else self.min_cosine,
            max_range_error=rng if self.max_range_error is None else self.max_range_error,
        )

    def describe(self) -> str:
        parts = []
        if self.max_rel_l2 is not None:
            parts.append(f"rel L2 <= {self.max_rel_l2:g}")
        if self.min_cosine is not None:
            parts.append(f"cosine >= {self.min_cosine:g}")
        if self.max_range_error is not None:
            parts.append(f"max abs <= {self.max_range_error:g} of range")
        parts += [f"top-{self.top_k} >= {self.min_topk:.0%}", "no new NaN/Inf"]
        if self.rtol is not None or self.atol is not None:
            parts.append(f"|a-e| <= {self.atol or 0:g} + {self.rtol or 0:g}*|e|")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class OutputError:
    """Differences on one output. ``max_rel`` is element-wise (where the original's
    magnitude is over ``atol``, or 1e-3 of its largest value); ``failed`` says which limits
    were broken; ``topk``/``top1`` are None for outputs that are not classifier-like;
    ``compared`` counts the values finite on both sides the metrics are over (None: not
    measured so, e.g. an integer output)."""

    name: str
    max_abs: float
    max_rel: float
    nan: int
    inf: int
    passed: bool
    note: str = ""
    rel_l2: float = 0.0
    cosine: float = 1.0
    range_error: float = 0.0
    value_range: float = 0.0
    top1: float | None = None
    topk: float | None = None
    k: int = 0
    failed: list[str] = field(default_factory=list)
    compared: int | None = None

    def line(self) -> str:
        if self.note and not np.isfinite(self.max_abs):
            return f"{self.name}: {self.note} [FAIL]"
        if self.compared == 0:  # metrics over no values would read as perfect
            parts = ["rel L2, cosine, max abs n/a (no value is finite on both sides)"]
        else:
            relative = (
                f"{self.range_error:.2e} of range {self.value_range:.3g}"
                if self.value_range > 0
                else f"{self.range_error:.2e} of its magnitude: the output is constant"
            )
            parts = [
                f"rel L2 {self.rel_l2:.2e}",
                f"cosine {self.cosine:.7f}",
                f"max abs {self.max_abs:.3g} ({relative})",
            ]
        if self.topk is not None and self.top1 is not None and self.compared != 0:
            parts.append(f"top-1 {self.top1:.0%}, top-{self.k} {self.topk:.0%}")
        if self.compared == 0 and (self.nan or self.inf):
            parts.append(f"{self.nan} NaN, {self.inf} Inf")
        elif self.nan or self.inf:
            parts.append(f"{self.nan} NaN, {self.inf} Inf (metrics over the finite values)")
        if self.note:
            parts.append(self.note)
        state = "ok" if self.passed else "FAIL: " + "; ".join(self.failed)
        return f"{self.name}: {', '.join(parts)} [{state}]"


def _norm(x: np.ndarray) -> float:
    return float(np.sqrt(np.sum(x * x)))


def rel_l2(expected: np.ndarray, actual: np.ndarray) -> float:
    """‖a − e‖₂ / ‖e‖₂ (0 when both are zero, inf when only ``e`` is)."""
    e, a = expected.astype(np.float64), actual.astype(np.float64)
    err, ref = _norm(a - e), _norm(e)
    if ref == 0.0:
        return 0.0 if err == 0.0 else float("inf")
    return err / ref


def cosine(expected: np.ndarray, actual: np.ndarray) -> float:
    """a·e / (‖a‖ ‖e‖); 1 when both are zero, 0 when only one is."""
    e, a = expected.astype(np.float64).ravel(), actual.astype(np.float64).ravel()
    ne, na = _norm(e), _norm(a)
    if ne == 0.0 or na == 0.0:
        return 1.0 if ne == na else 0.0
    return float(np.dot(e, a) / (ne * na))


def range_error(expected: np.ndarray, actual: np.ndarray) -> tuple[float, float, float]:
    """(max|a − e|, the original's range max − min, their ratio). A constant output is
    measured against its magnitude (or 1 when it is all zero)."""
    e, a = expected.astype(np.float64), actual.astype(np.float64)
    if e.size == 0:
        return 0.0, 0.0, 0.0
    max_abs = float(np.max(np.abs(a - e)))
    span = float(np.max(e) - np.min(e))
    scale = span if span > 0 else (float(np.max(np.abs(e))) or 1.0)
    return max_abs, span, max_abs / scale


def classifier_like(shape: tuple[int, ...], name: str = "") -> bool:
    """2-D [N, C] with C ≥ 10, or 3-D [N, T, V] with V ≥ 100 named like logits."""
    if len(shape) == 2:
        return shape[1] >= 10
    return len(shape) == 3 and shape[2] >= 100 and "logit" in name.lower()


def topk_agreement(expected: np.ndarray, actual: np.ndarray, k: int) -> tuple[float, float]:
    """(top-1 agreement, top-k agreement) over the rows of [..., C] scores: the share of
    rows with the same best class, and the mean share of the original's k best classes
    found among the converted k best."""
    e = expected.reshape(-1, expected.shape[-1]).astype(np.float64)
    a = actual.reshape(-1, actual.shape[-1]).astype(np.float64)
    k = max(1, min(k, e.shape[1]))
    top1 = float(np.mean(np.argmax(e, axis=1) == np.argmax(a, axis=1)))
    te = np.argsort(-e, axis=1, kind="stable")[:, :k]
    ta = np.argsort(-a, axis=1, kind="stable")[:, :k]
    shared = [len(set(r1.tolist()) & set(r2.tolist())) / k for r1, r2 in zip(te, ta, strict=True)]
    return top1, float(np.mean(shared))


def measure(name: str, ref: np.ndarray, got: np.ndarray, limits: Thresholds) -> OutputError:
    """Every metric of one output and whether it meets ``limits`` (already resolved)."""
    if got.shape != ref.shape:
        note = f"shape {got.shape} != {ref.shape}"
        return OutputError(name, np.inf, np.inf, 0, 0, False, note, failed=["shape"])
    if ref.dtype.kind not in "fc" or ref.size == 0:
        same = bool(np.array_equal(ref, got))
        return OutputError(
            name, 0.0 if same else np.inf, 0.0, 0, 0, same, failed=[] if same else ["values"]
        )
    e = ref.astype(np.float64)
    a = got.astype(np.float64)
    nan = int(np.count_nonzero(np.isnan(a) & ~np.isnan(e)))
    inf = int(np.count_nonzero(np.isinf(a) & ~np.isinf(e)))
    both = np.isfinite(e) & np.isfinite(a)
    ef, af = np.where(both, e, 0.0), np.where(both, a, 0.0)
    max_abs, span, ratio = range_error(ef, af)
    floor = limits.atol if limits.atol is not None else 1e-3 * float(np.max(np.abs(ef), initial=0))
    big = both & (np.abs(e) > floor)
    diff = np.abs(af - ef)
    max_rel = float(np.max(np.where(big, diff / np.where(big, np.abs(e), 1.0), 0.0), initial=0))
    out = OutputError(
        name,
        max_abs,
        max_rel,
        nan,
        inf,
        True,
        rel_l2=rel_l2(ef, af),
        cosine=cosine(ef, af),
        range_error=ratio,
        value_range=span,
        compared=int(np.count_nonzero(both)),
    )
    if classifier_like(ref.shape, name):
        out.k = max(1, min(limits.top_k, ref.shape[-1]))
        out.top1, out.topk = topk_agreement(ef, af, out.k)
    failed = out.failed
    if nan or inf:
        failed.append(f"{nan + inf} new NaN/Inf")
    if not bool(np.all(both | (np.isnan(e) & np.isnan(a)) | (e == a))) and not (nan or inf):
        failed.append("non-finite values differ")
    if limits.max_rel_l2 is not None and not out.rel_l2 <= limits.max_rel_l2:
        failed.append(f"rel L2 > {limits.max_rel_l2:g}")
    if limits.min_cosine is not None and not out.cosine >= limits.min_cosine:
        failed.append(f"cosine < {limits.min_cosine:g}")
    if limits.max_range_error is not None and not ratio <= limits.max_range_error:
        failed.append(f"max abs > {limits.max_range_error:g} of range")
    if out.topk is not None and not out.topk >= limits.min_topk:
        failed.append(f"top-{out.k} < {limits.min_topk:.0%}")
    if limits.rtol is not None or limits.atol is not None:
        bound = (limits.atol or 0.0) + (limits.rtol or 0.0) * np.abs(ef)
        if not bool(np.all(diff <= bound)):
            failed.append(f"|a-e| > {limits.atol or 0:g} + {limits.rtol or 0:g}*|e|")
    out.passed = not failed
    return out


def measure_all(
    expected: Mapping[str, np.ndarray], actual: Mapping[str, np.ndarray], limits: Thresholds
) -> list[OutputError]:
    """:func:`measure` for every output of ``expected`` (a missing one fails)."""
    errors: list[OutputError] = []
    for name, ref in expected.items():
        got = actual.get(name)
        if got is None:
            errors.append(
                OutputError(name, np.inf, np.inf, 0, 0, False, "missing", failed=["missing"])
            )
            continue
        errors.append(measure(name, ref, np.asarray(got), limits))
    return errors


@dataclass
class NonFinite:
    """The first node (topological order) whose output holds Inf/NaN the original does not
    have. ``block`` is the original node to keep in float32 (None: none can help)."""

    node: str
    op_type: str
    tensor: str
    nan: int
    inf: int
    size: int
    block: str | None
    note: str = ""

    def line(self) -> str:
        what = f"node '{self.node or '(unnamed)'}' ({self.op_type}), output '{self.tensor}'"
        text = f"first Inf/NaN: {what}: {self.inf} Inf, {self.nan} NaN of {self.size}"
        return text + (f"; {self.note}" if self.note else "")

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class NumericReport:
    """The numerical check; ``skipped`` says why it could not run (then nothing failed).
    ``backend``/``backend_label``/``backend_reason``: how the converted side was computed
    (:mod:`fp16_check`); ``first_nonfinite``: where an Inf/NaN first appeared."""

    outputs: list[OutputError] = field(default_factory=list)
    skipped: str | None = None
    rtol: float | None = None
    atol: float | None = None
    inputs: str = "random"
    seconds: float = 0.0
    backend: str = ""
    backend_label: str = ""
    backend_reason: str = ""
    thresholds: Thresholds | None = None
    first_nonfinite: NonFinite | None = None

    @property
    def passed(self) -> bool:
        return self.skipped is None and all(o.passed for o in self.outputs)

    def lines(self) -> list[str]:
        if self.skipped is not None:
            return [f"numerical check skipped: {self.skipped}"]
        state = "passed" if self.passed else "FAILED"
        if self.backend == "ort":
            state += " (in float32 where onnxruntime lacks float16 kernels)"
        lines = [f"numerical check vs the original ({self.inputs} inputs): {state}"]
        if self.backend:
            lines.append(f"  converted side: {self.backend_label}; {self.backend_reason}")
        if self.thresholds is not None:
            lines.append("  limits: " + self.thresholds.describe())
        lines.extend("  " + o.line() for o in self.outputs)
        if self.first_nonfinite is not None:
            lines.append("  " + self.first_nonfinite.line())
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "skipped": self.skipped,
            "passed": self.passed,
            "rtol": self.rtol,
            "atol": self.atol,
            "inputs": self.inputs,
            "backend": self.backend,
            "backend_reason": self.backend_reason,
            "thresholds": None if self.thresholds is None else self.thresholds.to_json(),
            "outputs": [vars(o) for o in self.outputs],
            "first_nonfinite": (
                None if self.first_nonfinite is None else self.first_nonfinite.to_json()
            ),
        }
