"""What Sanitize Graph folds with, from ONNX Runtime: the constant evaluator (a batch of
constant nodes run with graph optimizations off) and ONNX Runtime's symbolic shape
inference (``onnxruntime.tools.symbolic_shape_infer``, what Polygraphy's constant folding
uses between passes: it carries named dims such as ``batch`` and ``seq`` through Reshape,
Slice and Concat, where onnx's own inference gives up, so more Shape→Gather→Concat chains
fold). onnxruntime is imported inside the functions only."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx


def ort_evaluator(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Evaluate a constant subgraph with onnxruntime, graph optimizations off so exactly the
    given nodes run. Satisfies :class:`designer.core.transforms.fold.ConstantEvaluator`."""
    from designer.activities.numerics import run_model

    return run_model(model, feeds, None, optimize=False)


def ort_symbolic_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with value_info from ONNX Runtime's symbolic shape inference (auto-merged
    dims, as Polygraphy runs it). Raises what it raises (the caller falls back to onnx's
    inference). Satisfies :class:`designer.core.transforms.fold.ShapeInferer`."""
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    inferred = SymbolicShapeInference.infer_shapes(model, auto_merge=True)
    if inferred is None:
        raise RuntimeError("symbolic shape inference returned nothing")
    if not isinstance(inferred, onnx.ModelProto):
        raise RuntimeError("symbolic shape inference returned no model")
    return inferred


def has_symbolic_shapes() -> bool:
    """Whether ONNX Runtime's symbolic shape inference can be imported (needs sympy)."""
    try:
        from onnxruntime.tools import symbolic_shape_infer  # noqa: F401
    except ImportError:
        return False
    return True
