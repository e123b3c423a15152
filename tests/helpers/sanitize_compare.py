"""Sanitize Graph next to Polygraphy: ours as the app runs it (ORT evaluator and symbolic
shapes), Polygraphy's ``fold_constants`` in-process as ``polygraphy surgeon sanitize
--fold-constants`` runs it, node counts over every scope, and ORT outputs before/after on
the same random inputs with symbolic dims set to 2, 3, 5, … (not 1)."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import onnx

from designer.activities.fold_eval import ort_evaluator, ort_symbolic_shapes
from designer.activities.numerics import model_inputs, random_inputs, run_model
from designer.core.analysis.gate import first_error
from designer.core.transforms import SanitizeOptions, SanitizeResult, count_nodes, sanitize

__all__ = ["SanitizeResult", "count_nodes", "ort_evaluator", "sanitize"]

#: Outputs compared before/after: |a - b| <= TOLERANCE * (1 + |a|). Folding may reorder float
#: arithmetic (ORT's optimized graph vs the folded constants), so not bit-exact.
TOLERANCE = 1e-4
AFFINE_GRID_MODELS = (
    "test_affine_grid_2d_align_corners_expanded",
    "test_affine_grid_2d_expanded",
    "test_affine_grid_3d_align_corners_expanded",
    "test_affine_grid_3d_expanded",
)
_PRIMES = (2, 3, 5, 7, 11, 13)


def ours(model: onnx.ModelProto, options: SanitizeOptions | None = None) -> SanitizeResult:
    return sanitize(model, options, evaluator=ort_evaluator, shapes=ort_symbolic_shapes)


def polygraphy(model: onnx.ModelProto) -> onnx.ModelProto:
    from polygraphy.backend.onnx import fold_constants
    from polygraphy.logger import G_LOGGER

    G_LOGGER.module_severity = G_LOGGER.CRITICAL
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result: onnx.ModelProto = fold_constants(copy, num_passes=None, error_ok=True)
    return result


def check(model: onnx.ModelProto) -> str | None:
    """onnx's full check with shape inference, then ours: the first problem or None."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        return str(exc).strip().splitlines()[0]
    return first_error(model)


def feeds_for(model: onnx.ModelProto, seed: int = 1) -> dict[str, np.ndarray]:
    params: list[str] = []
    for vi in model_inputs(model):
        for d in vi.type.tensor_type.shape.dim:
            if not d.HasField("dim_value") and d.dim_param and d.dim_param not in params:
                params.append(d.dim_param)
    dims = {p: _PRIMES[i % len(_PRIMES)] for i, p in enumerate(params)}
    return random_inputs(model, seed=seed, dims=dims)


def max_output_difference(
    before: onnx.ModelProto, after: onnx.ModelProto, feeds: dict[str, np.ndarray] | None = None
) -> float:
    """The largest |a - b| / (1 + |a|) over every output (inf when the outputs differ in
    names, shapes or dtypes); random inputs unless ``feeds``."""
    feeds = feeds if feeds is not None else feeds_for(before)
    expected, actual = run_model(before, feeds), run_model(after, feeds)
    if expected.keys() != actual.keys():
        return float("inf")
    worst = 0.0
    for name, a in expected.items():
        b = actual[name]
        if a.shape != b.shape or a.dtype != b.dtype:
            return float("inf")
        if a.size == 0:
            continue
        if a.dtype.kind in "fc":
            nan = np.isnan(a)
            if not np.array_equal(nan, np.isnan(b)):
                return float("inf")
            a64, b64 = a[~nan].astype(np.float64), b[~nan].astype(np.float64)
            if a64.size:
                worst = max(worst, float(np.max(np.abs(a64 - b64) / (1 + np.abs(a64)))))
        elif not np.array_equal(a, b):
            return float("inf")
    return worst


@functools.cache
def _backend_case(name: str) -> tuple[bytes, tuple[np.ndarray, ...]]:
    from onnx.backend.test.case import node

    with warnings.catch_warnings():  # importing the module builds its cases (onnx's metaclass)
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import affinegrid  # noqa: F401
    for case in node._NodeTestCases:
        if case.name == name and case.model is not None:
            inputs = tuple(np.asarray(v) for v in case.data_sets[0][0])
            return bytes(case.model.SerializeToString()), inputs
    raise KeyError(name)


def backend_model(name: str) -> onnx.ModelProto:
    """One of onnx's backend node test models (only the AffineGrid cases are built)."""
    return onnx.ModelProto.FromString(_backend_case(name)[0])


def backend_inputs(name: str) -> dict[str, np.ndarray]:
    """The inputs of that backend test case (its own data set), by input name."""
    model = backend_model(name)
    values = _backend_case(name)[1]
    return {vi.name: v for vi, v in zip(model_inputs(model), values, strict=True)}
