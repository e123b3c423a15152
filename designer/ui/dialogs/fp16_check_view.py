"""What the FP16 dialog shows of the numerical check, without Qt: the backends it offers, the
lines for the status message, the warning when the check failed (naming the node to keep
in float32), and the symbolic input dimensions random inputs are sized by."""

from __future__ import annotations

import re

import onnx

from designer.activities.numerics import FP16Outcome

#: the check's backends as offered (label, CheckOptions.backend)
BACKEND_CHOICES = (
    ("Auto (emulated float16)", "auto"),
    ("Emulated float16: ONNX Runtime, every result rounded", "emulate"),
    ("ONNX reference evaluator (exact types, slow)", "reference"),
    ("ONNX Runtime as is (may hide float16 overflow)", "ort"),
)
SUMMARY_LINES = 8


def check_summary(outcome: FP16Outcome) -> list[str]:
    """The check's lines for the status message (limits and long lists left to the log)."""
    numeric = outcome.report
    if numeric.skipped == "not requested":
        return []
    lines = [line for line in numeric.lines() if not line.startswith("  limits:")]
    if outcome.blocked:
        lines.append(f"auto-block kept in float32: {', '.join(outcome.blocked)}")
    if len(lines) > SUMMARY_LINES:
        more = len(lines) - SUMMARY_LINES
        lines = [*lines[:SUMMARY_LINES], f"  … {more} more line(s) in the detailed log"]
    return lines


def check_warning(outcome: FP16Outcome) -> str | None:
    """What to tell the user when the check failed (None when it passed or was skipped)."""
    numeric = outcome.report
    if numeric.skipped is not None or numeric.passed:
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
