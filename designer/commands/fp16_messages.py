"""What ``onnx-designer fp16`` says when its numerical check could not run: why (with
ONNX Runtime's own message in one line, :func:`designer.activities.ort_errors.error_line`)
and what to do. Split from :mod:`designer.commands.transform_commands`."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterable

import onnx

from designer.activities.ort_errors import failed_on_inputs
from designer.core.walk import iter_graphs


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


def unknown_block_names(
    model: onnx.ModelProto, nodes: Iterable[str], ops: Iterable[str]
) -> tuple[str | None, list[str]]:
    """(the usage error, warnings) for ``--block-node`` / ``--block-op`` values: a node
    name no node of the model has (labels of unnamed nodes included) is an error, since a
    typo would leave the node in float16 without a word; an operator this model does not use
    is a warning (lists of ops are shared between models), unless no ONNX operator has that
    name, which is an error with the likely one."""
    names: set[str] = set()
    types: set[str] = set()
    for walked in iter_graphs(model):
        graph = walked.graph
        for node in graph.node:
            names.add(node.name)
            types.add(node.op_type)
    missing = [n for n in dict.fromkeys(nodes) if n not in names]
    if missing:
        hints = [
            f"'{n}'" + (f" (did you mean '{close[0]}'?)" if close else "")
            for n in missing
            for close in [difflib.get_close_matches(n, names, n=1)]
        ]
        return f"--block-node: no node of the model is named {', '.join(hints)}", []
    warnings: list[str] = []
    for op in dict.fromkeys(ops):
        if op in types:
            continue
        if not onnx.defs.has(op):
            known = {s.name for s in onnx.defs.get_all_schemas()} | types
            close = [k for k in known if k.lower() == op.lower()] or difflib.get_close_matches(
                op, known, n=1
            )
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            return f"--block-op: '{op}' is no ONNX operator{hint}", []
        warnings.append(f"--block-op {op}: the model has no {op} node; it blocks nothing")
    return None, warnings


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
        given = " ".join(f"--check-dim {name}={size}" for name, size in args.check_dim)
        if given:  # the sizes asked for may be what does not fit
            todo.append(f"check the sizes given ({given})")
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
