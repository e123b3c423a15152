"""What ``onnx-designer fp16`` says when its numerical check could not run: why (with
ONNX Runtime's own message in one line, :func:`designer.activities.ort_errors.error_line`)
and what to do. Split from :mod:`designer.commands.transform_commands`."""

from __future__ import annotations

import argparse

import onnx

from designer.activities.ort_errors import failed_on_inputs


def _symbolic_dims(model: onnx.ModelProto, given: dict[str, int]) -> list[str]:
    """Symbolic dimensions of the model's inputs random inputs take as 1 (not --check-dim)."""
    inits = {t.name for t in model.graph.initializer}
    names: dict[str, None] = {}
    for vi in model.graph.input:
        if vi.name in inits or vi.type.WhichOneof("value") != "tensor_type":
            continue
        for dim in vi.type.tensor_type.shape.dim:
            if not dim.HasField("dim_value") and dim.dim_param and dim.dim_param not in given:
                names[dim.dim_param] = None
    return list(names)


_ORIGINAL = "onnxruntime cannot run the original model"
#: the reasons (fp16_check.run_half) of a converted side that could not run
_CONVERTED_SIDE = (
    "emulation failed",
    "the reference evaluator failed",
    "onnxruntime cannot run the converted model",
)


def check_not_run(args: argparse.Namespace, model: onnx.ModelProto, reason: str) -> str:
    """The error line of a numerical check that could not run: why (``reason``, the
    report's ``skipped``), and what to do."""
    todo: list[str] = []
    if "onnxruntime is not available" in reason:
        todo.append("install onnxruntime")
    elif reason.startswith(_CONVERTED_SIDE):  # the original ran on these inputs
        todo.append("choose another --check-backend")
    elif reason.startswith(_ORIGINAL) and not failed_on_inputs(reason):
        pass  # the model does not load in onnxruntime, whatever the inputs
    elif args.inputs is None:
        dims = _symbolic_dims(model, dict(args.check_dim))
        if dims:
            sizes = " ".join(f"--check-dim {d}=N" for d in dims)
            todo.append(
                f"random inputs took the symbolic dimension(s) {', '.join(dims)} as 1: give "
                f"sizes that fit ({sizes})"
            )
        todo.append("give real inputs (--inputs DIR)")
    todo.append("pass --no-check to skip the check on purpose")
    return (
        f"onnx-designer: error: the numerical check could not run, so the conversion is "
        f"unchecked: {reason}; {', or '.join(todo)}; the model was written to {args.output}"
    )
