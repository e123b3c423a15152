"""What the FP16 dialog shows of the numerical check, without Qt: the backends it offers, the
lines for the status message, the warning when the check failed (naming the node to keep
in float32) or could not run (the conversion is unchecked: why, and what to do), and the
symbolic input dimensions random inputs are sized by."""

from __future__ import annotations

import re

import onnx

from designer.activities.numerics import CheckOptions, FP16Outcome
from designer.activities.ort_errors import failed_on_inputs

#: the check's backends as offered (label, CheckOptions.backend)
BACKEND_CHOICES = (
    ("Auto (emulated float16)", "auto"),
    ("Emulated float16: ONNX Runtime, every result rounded", "emulate"),
    ("ONNX reference evaluator (exact types, slow)", "reference"),
    ("ONNX Runtime as is (may hide float16 overflow)", "ort"),
)
SUMMARY_LINES = 8
#: the reason (numerics._Checker) of an original ONNX Runtime could not run
_ORIGINAL = "onnxruntime cannot run the original model"
#: the reasons (fp16_check.run_half) of a converted side that could not run
_CONVERTED_SIDE = (
    "emulation failed",
    "the reference evaluator failed",
    "onnxruntime cannot run the converted model",
)


def check_summary(outcome: FP16Outcome) -> list[str]:
    """The check's lines for the status message (limits and long lists left to the log);
    none for a check that did not run (:func:`check_warning` says why)."""
    numeric = outcome.report
    if numeric.skipped is not None:
        return []
    lines = [line for line in numeric.lines() if not line.startswith("  limits:")]
    if outcome.blocked:
        lines.append(f"auto-block kept in float32: {', '.join(outcome.blocked)}")
    if len(lines) > SUMMARY_LINES:
        more = len(lines) - SUMMARY_LINES
        lines = [*lines[:SUMMARY_LINES], f"  … {more} more line(s) in the detailed log"]
    return lines


def check_warning(outcome: FP16Outcome, check: CheckOptions, model: onnx.ModelProto) -> str | None:
    """What to tell the user when the check (``check``, on ``model``) failed or could not
    run; None when it passed or was not asked for."""
    numeric = outcome.report
    if numeric.skipped == "not requested" or not check.enabled:
        return None
    if numeric.skipped is not None:
        return unchecked_warning(numeric.skipped, check, model)
    if numeric.passed:
        return None
    failed = "; ".join(f"{o.name} ({', '.join(o.failed)})" for o in numeric.outputs if not o.passed)
    text = f"The numerical check failed for {failed}."
    culprit = numeric.first_nonfinite
    if culprit is not None and culprit.block:
        text += (
            f" Node '{culprit.block}' is the first whose result went Inf/NaN: add it to "
            "the nodes kept in float32, or try auto-block."
        )
    elif culprit is not None:
        text += f" {culprit.line()[0].upper()}{culprit.line()[1:]}."
    else:
        text += " Review the log, add the offending nodes to the block list or try auto-block."
    return text


def unchecked_warning(reason: str, check: CheckOptions, model: onnx.ModelProto) -> str:
    """The warning of a check that could not run (``reason``, the report's ``skipped``):
    the conversion is unchecked, why, and what to do (the CLI's error, in the dialog's
    words: :func:`designer.commands.fp16_messages.check_not_run`)."""
    todo: list[str] = []
    if "onnxruntime is not available" in reason:
        todo.append("install onnxruntime")
    elif reason.startswith(_CONVERTED_SIDE):  # the original ran on these inputs
        todo.append("choose another converted side")
    elif reason.startswith(_ORIGINAL) and (
        not failed_on_inputs(reason) or "Invalid model" in reason
    ):
        pass  # the model does not load in onnxruntime, whatever the inputs
    elif check.input_dir is not None:
        todo.append(f"check the inputs in {check.input_dir}")
    else:
        if check.dims:  # the sizes asked for may be what does not fit
            given = ", ".join(f"{name}={size}" for name, size in check.dims.items())
            todo.append(f"check the symbolic dims given ({given})")
        dims = [d for d in symbolic_dims(model) if d not in check.dims]
        if dims:
            todo.append(
                f"give sizes that fit to the symbolic dims ({', '.join(dims)} were taken as 1)"
            )
        todo.append("give real inputs (input folder)")
    todo.append("untick 'Check numerically' to convert without a check on purpose")
    what = ", or ".join(todo)
    return (
        f"The numerical check could not run, so the conversion is unchecked: {reason}. "
        f"{what[0].upper()}{what[1:]}."
    )


def symbolic_dims(model: onnx.ModelProto) -> list[str]:
    """Names of the symbolic dimensions of the model's inputs, in order of appearance."""
    names: dict[str, None] = {}
    for vi in model.graph.input:
        for dim in vi.type.tensor_type.shape.dim:
            if dim.dim_param:
                names.setdefault(dim.dim_param)
    return list(names)


def parse_dims(text: str) -> dict[str, int] | str:
    """``"batch=2, seq=16"`` as a mapping, or what is wrong with it."""
    dims: dict[str, int] = {}
    for part in re.split(r"[,\s]+", text.strip()):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or not name or not value.isdigit() or int(value) < 1:
            return f"Symbolic dims are NAME=N with N of 1 or more, not '{part}'."
        dims[name] = int(value)
    return dims
