"""Global modifications as passes over a model: FP16 (M-1), sanitize (M-2), cast (M-3).

Each transform takes an ``onnx.ModelProto`` (and the folder of its external data), never
changes it, and returns a new model with a :class:`TransformLog`; all accept ``cancel`` and
``progress`` callbacks for running off the GUI thread. :mod:`.apply` turns a result into one
undoable Document edit. Running models (the FP16 numerical check, constant evaluation with
onnxruntime) lives in :mod:`designer.activities.numerics`.
"""

from designer.core.transforms.apply import apply_cast, apply_fp16, apply_sanitize, replace_edit
from designer.core.transforms.cast import (
    CastCandidate,
    CastPreview,
    CastResult,
    cast_tensors,
    list_cast_candidates,
    preview_cast,
    select_candidates,
)
from designer.core.transforms.dtypes import ConversionCounts, parse_type, type_name
from designer.core.transforms.fold import ConstantEvaluator, reference_evaluator
from designer.core.transforms.fp16 import (
    DEFAULT_BLOCK_OPS,
    FP16Options,
    FP16Result,
    convert_to_fp16,
)
from designer.core.transforms.log import (
    Cancel,
    Progress,
    TransformCancelled,
    TransformError,
    TransformLog,
)
from designer.core.transforms.sanitize import (
    SanitizeOptions,
    SanitizeResult,
    count_nodes,
    model_size,
    sanitize,
)
from designer.core.transforms.toposort import is_sorted, sorted_nodes

__all__ = [
    "DEFAULT_BLOCK_OPS",
    "Cancel",
    "CastCandidate",
    "CastPreview",
    "CastResult",
    "ConstantEvaluator",
    "ConversionCounts",
    "FP16Options",
    "FP16Result",
    "Progress",
    "SanitizeOptions",
    "SanitizeResult",
    "TransformCancelled",
    "TransformError",
    "TransformLog",
    "apply_cast",
    "apply_fp16",
    "apply_sanitize",
    "cast_tensors",
    "convert_to_fp16",
    "count_nodes",
    "is_sorted",
    "list_cast_candidates",
    "model_size",
    "parse_type",
    "preview_cast",
    "reference_evaluator",
    "replace_edit",
    "sanitize",
    "select_candidates",
    "sorted_nodes",
    "type_name",
]
