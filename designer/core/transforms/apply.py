"""Global modifications on an open Document, each as ONE undoable step.

``*_edit`` functions return the Edit for a caller that pushes it itself (the GUI pushes it
through its session after running the transform off the GUI thread); ``apply_*`` functions run
the transform on ``doc.model`` and push the edit on ``doc.undo_stack``. The Document keeps
the model before and after (two copies; external tensors are references, not copies).
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx

from designer.core.document import Document
from designer.core.edits.model import ReplaceModel
from designer.core.transforms.cast import CastResult, cast_tensors
from designer.core.transforms.fold import ConstantEvaluator
from designer.core.transforms.fp16 import FP16Options, FP16Result, convert_to_fp16
from designer.core.transforms.log import Cancel, Progress, never, silent
from designer.core.transforms.sanitize import SanitizeOptions, SanitizeResult, sanitize


def replace_edit(label: str, model: onnx.ModelProto) -> ReplaceModel:
    """The one-step edit that swaps in a transformed model (undo restores the old one
    exactly: it is kept, not recomputed)."""
    return ReplaceModel(label, model)


def apply_fp16(
    doc: Document,
    options: FP16Options | None = None,
    *,
    cancel: Cancel = never,
    progress: Progress = silent,
) -> FP16Result:
    """Convert the document to FP16 as one undo step (see :func:`convert_to_fp16`)."""
    result = convert_to_fp16(doc.model, options, doc.base_dir, cancel=cancel, progress=progress)
    doc.undo_stack.push(replace_edit(result.log.title, result.model))
    return result


def apply_sanitize(
    doc: Document,
    options: SanitizeOptions | None = None,
    evaluator: ConstantEvaluator | None = None,
    *,
    cancel: Cancel = never,
    progress: Progress = silent,
) -> SanitizeResult:
    """Sanitize the document as one undo step (see :func:`sanitize`)."""
    result = sanitize(doc.model, options, doc.base_dir, evaluator, cancel=cancel, progress=progress)
    doc.undo_stack.push(replace_edit(result.log.title, result.model))
    return result


def apply_cast(
    doc: Document,
    keys: Iterable[str],
    to: int,
    *,
    clip: bool = True,
    cancel: Cancel = never,
    progress: Progress = silent,
) -> CastResult:
    """Cast the selected tensors of the document as one undo step; undo restores the
    original types and values bit for bit (see :func:`cast_tensors`)."""
    result = cast_tensors(
        doc.model, keys, to, doc.base_dir, clip=clip, cancel=cancel, progress=progress
    )
    doc.undo_stack.push(replace_edit(result.log.title, result.model))
    return result
