"""What ``onnx-designer fp16`` says when its numerical check could not run: why (with
ONNX Runtime's own message, held off stderr while the check runs and shortened to one
line) and what to do. Split from :mod:`designer.commands.transform_commands`."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator

import onnx

#: the start of one record of ONNX Runtime's own log (colour code, time, [E:onnxruntime:…])
_ORT_RECORD = re.compile(
    r"^(?P<colour>\x1b\[[0-9;]*m)?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
    r"\[[VIWEF]:onnxruntime:[^\]]*\] ?(?P<text>.*)$"
)
_RESET = "\x1b[m"
#: a kernel's failure: op type, node name, message
_ORT_NODE = re.compile(r"running (\S+) node\. Name:'([^']*)' Status Message: (.*)$")
#: the exception text the check's reason ends with, which ORT's log record says in full
_ORT_EXCEPTION = re.compile(r" \(\[ONNXRuntimeError\].*$")
#: the C++ place an ORT status message starts with: ``/src/x.h:91 ns::F(args) ``
_ORT_PLACE = re.compile(r"\S+\.(?:h|cc|cpp):\d+ [\w:~<>]+\(.*?\) ")


def split_ort_log(text: str) -> tuple[str, list[str]]:
    """``text`` written to stderr, less ONNX Runtime's log records (a coloured record runs
    to its colour reset), and those records' messages, one line each."""
    kept: list[str] = []
    records: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        match = _ORT_RECORD.match(line)
        if match:
            records.append(match.group("text").replace(_RESET, "").strip())
            inside = bool(match.group("colour")) and _RESET not in line
        elif inside:
            records[-1] = f"{records[-1]} {line.replace(_RESET, '').strip()}".strip()
            inside = _RESET not in line
        else:
            kept.append(line)
    return "".join(kept), records


@contextlib.contextmanager
def ort_log_held(hold: bool) -> Iterator[list[str]]:
    """While the check runs, hold what is written to file descriptor 2, where ONNX
    Runtime's C++ log goes past Python (a model it cannot run gives a multi-line error
    record besides the exception the check reports). Afterwards everything else written
    there is passed on to stderr and the records' messages are left in the list yielded,
    for the message of a check that could not run. ``hold=False`` (--verbose) lets the log
    through as it comes."""
    records: list[str] = []
    if not hold:
        yield records
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (AttributeError, OSError, ValueError):  # no usable stderr: nothing to hold
        yield records
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield records
        finally:
            with contextlib.suppress(AttributeError, OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            rest, found = split_ort_log(held.read().decode(errors="replace"))
            records.extend(found)
            if rest:
                sys.stderr.write(rest)
                sys.stderr.flush()


def ort_detail(records: list[str]) -> str:
    """The last record of ORT's log in one short line: ``Reshape node 'rs': <message>``
    without the C++ place ('' when there is none)."""
    errors = [r for r in records if r]
    if not errors:
        return ""
    text = errors[-1]
    node = _ORT_NODE.search(text)
    if node:
        text = f"{node.group(1)} node '{node.group(2)}': {node.group(3)}"
    text = _ORT_PLACE.sub("", text, count=1)
    return text if len(text) <= 400 else text[:399] + "…"


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
#: ORT's words for a model that loaded but failed on these inputs
_RUN_FAILED = ("while running", "INVALID_ARGUMENT", "invalid dimensions")
#: the reasons (fp16_check.run_half) of a converted side that could not run
_CONVERTED_SIDE = (
    "emulation failed",
    "the reference evaluator failed",
    "onnxruntime cannot run the converted model",
)


def check_not_run(
    args: argparse.Namespace, model: onnx.ModelProto, reason: str, records: list[str]
) -> str:
    """The error line of a numerical check that could not run: why, and what to do."""
    detail = ort_detail(records)
    why = f"{_ORT_EXCEPTION.sub('', reason)} ({detail})" if detail else reason
    todo: list[str] = []
    if "onnxruntime is not available" in reason:
        todo.append("install onnxruntime")
    elif reason.startswith(_CONVERTED_SIDE):  # the original ran on these inputs
        todo.append("choose another --check-backend")
    elif reason.startswith(_ORIGINAL) and not any(s in reason for s in _RUN_FAILED):
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
        f"unchecked: {why}; {', or '.join(todo)}; the model was written to {args.output}"
    )
