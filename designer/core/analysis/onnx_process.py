"""onnx's checker and shape inference in a helper process, for big models in the window.

Why: onnx's C++ checker and shape inference hold Python's interpreter lock for most of
their run when called from a thread (measured on a 100,000-node model: 0.25 s for the
checker, 0.7 s for each of the two inference passes). The type checker runs on a pool
thread, but while onnx holds the lock the GUI thread cannot run either: the window froze
for about a second, three times, after a big model opened and after every edit. In a
helper process onnx runs beside the GUI, and a crash of onnx's inference on a malformed
node (it happens: see :func:`designer.core.analysis.inference.run_inference`) ends the
helper, not the designer.

The helper is ``python -m designer.core.analysis.onnx_process`` (the frozen app answers
``-m`` as python does, see ``packaging/entry.py``); it is started on first use, serves one
request at a time and is started again after it died. A request and its answer are a
length-prefixed JSON header and a length-prefixed payload (the serialized model). Qt-free.
"""

from __future__ import annotations

import atexit
import json
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import onnx

from designer.core.analysis.inference import (
    InferenceProblem,
    lenient_inference,
    run_checker,
    run_inference,
)


class OnnxProcessCrashed(RuntimeError):
    """The helper process ended while it ran onnx (a crash of onnx's C++ code)."""


def _write(stream: IO[bytes], header: dict[str, object], payload: bytes) -> None:
    head = json.dumps(header).encode()
    stream.write(struct.pack(">IQ", len(head), len(payload)))
    stream.write(head)
    stream.write(payload)
    stream.flush()


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read(stream: IO[bytes]) -> tuple[dict[str, object], bytes]:
    head_size, payload_size = struct.unpack(">IQ", _read_exact(stream, 12))
    header = json.loads(_read_exact(stream, head_size))
    if not isinstance(header, dict):
        raise EOFError
    return header, _read_exact(stream, payload_size)


def types_only(model: onnx.ModelProto) -> onnx.ModelProto:
    """What :class:`designer.core.analysis.checker.CheckResult` reads of an inferred model,
    and nothing else: every graph keeps its values' types (inputs, value_info, outputs,
    initializers without their data) and its nodes, each reduced to its subgraph
    attributes, so a scope's graph is still found by node index. A fraction of the size:
    parsing the whole inferred copy of a 100,000-node model held the interpreter lock for a
    quarter of a second. In place; returns ``model``."""
    from designer.core.walk import graph_attributes

    def strip(graph: onnx.GraphProto) -> None:
        for tensor in graph.initializer:
            name, data_type, dims = tensor.name, tensor.data_type, list(tensor.dims)
            tensor.Clear()
            tensor.name, tensor.data_type = name, data_type
            tensor.dims.extend(dims)
        del graph.sparse_initializer[:]
        graph.ClearField("doc_string")
        for node in graph.node:
            held = {name for name, _, _ in graph_attributes(node)}
            kept = [a for a in node.attribute if a.name in held]
            copies = [onnx.AttributeProto() for _ in kept]
            for copy, attribute in zip(copies, kept, strict=True):
                copy.CopyFrom(attribute)
            node.Clear()
            node.attribute.extend(copies)
            for _, _, sub in graph_attributes(node):
                strip(sub)

    strip(model.graph)
    del model.functions[:]
    return model


def _problems(problems: list[InferenceProblem]) -> list[list[str]]:
    return [[p.node_name, p.op_type, p.message, p.source] for p in problems]


def _serve_one(header: dict[str, object], payload: bytes) -> tuple[dict[str, object], bytes]:
    """Run one request of the helper."""
    model = onnx.ModelProto.FromString(payload)
    if header.get("op") == "check":
        return {"ok": True, "problems": _problems(run_checker(model))}, b""
    if header.get("op") == "infer":
        inferred, problems = run_inference(model)
        return {"ok": True, "problems": _problems(problems)}, _types_bytes(inferred)
    if header.get("op") == "lenient":
        return {"ok": True, "problems": []}, _types_bytes(lenient_inference(model))
    return {"ok": False, "message": f"unknown request {header.get('op')!r}"}, b""


def _types_bytes(model: onnx.ModelProto) -> bytes:
    data: bytes = types_only(model).SerializeToString()
    return data


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """The helper's loop: answer requests until the designer closes the pipe."""
    while True:
        try:
            header, payload = _read(requests)
        except EOFError:
            return
        try:
            answer, data = _serve_one(header, payload)
        except Exception as exc:  # a bug here: said to the designer, which says it
            answer, data = {"ok": False, "message": f"{type(exc).__name__}: {exc}"}, b""
        _write(answers, answer, data)


HELPER_COMMAND = (sys.executable, "-m", "designer.core.analysis.onnx_process")


def _read_problems(answer: dict[str, object]) -> list[InferenceProblem]:
    rows = answer.get("problems")
    assert isinstance(rows, list)
    return [InferenceProblem(*map(str, row)) for row in rows]


class OnnxProcess:
    """onnx's checker and shape inference run by a helper process, one request at a time
    (callers on several threads wait their turn). Same contract as
    :class:`designer.core.analysis.inference.InProcess`; a crash of the helper is a problem
    saying so (the next request starts a new helper)."""

    def __init__(self, command: Sequence[str] | None = None) -> None:
        #: how the helper is started (the default: this module run by this interpreter)
        self.command = list(command or HELPER_COMMAND)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def check(self, model: onnx.ModelProto) -> list[InferenceProblem]:
        try:
            answer, _ = self._call("check", model)
        except OnnxProcessCrashed as exc:
            return [InferenceProblem("", "", str(exc), "checker")]
        return _read_problems(answer)

    def infer(self, model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[InferenceProblem]]:
        try:
            answer, data = self._call("infer", model)
        except OnnxProcessCrashed as exc:
            return model, [InferenceProblem("", "", str(exc), "inference")]
        return onnx.ModelProto.FromString(data), _read_problems(answer)

    def infer_lenient(self, model: onnx.ModelProto) -> onnx.ModelProto:
        try:
            _, data = self._call("lenient", model)
        except OnnxProcessCrashed:
            return model  # as lenient_inference answers when onnx fails
        inferred: onnx.ModelProto = onnx.ModelProto.FromString(data)
        return inferred

    def _call(self, op: str, model: onnx.ModelProto) -> tuple[dict[str, object], bytes]:
        payload = model.SerializeToString()
        with self._lock:
            proc = self._started()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                _write(proc.stdin, {"op": op}, payload)
                answer, data = _read(proc.stdout)
            except (OSError, EOFError, ValueError):
                raise self._crashed(proc, op) from None
        if not answer.get("ok"):
            raise RuntimeError(f"onnx's helper process failed: {answer.get('message', '')}")
        return answer, data

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_helper_environment(),
            )
        return self._proc

    def _crashed(self, proc: subprocess.Popen[bytes], op: str) -> OnnxProcessCrashed:
        """The helper died on this request: forget it (the next request starts a new one)
        and say what onnx was doing."""
        self._proc = None
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        what = "checker" if op == "check" else "shape inference"
        return OnnxProcessCrashed(f"onnx's {what} crashed on this model ({how})")

    def close(self) -> None:
        """End the helper (it ends by itself when the designer's end of the pipe closes)."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def _helper_environment() -> dict[str, str]:
    """This environment, with the folder holding this designer first on the helper's path
    (a designer run from a source tree, not installed, is found from any folder)."""
    env = dict(os.environ)
    if not getattr(sys, "frozen", False):
        import designer

        root = str(Path(designer.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


#: From this many nodes (all graphs together) the window checks in the helper process:
#: below it onnx is done within a frame or two, and starting the helper (half a second,
#: once) would not pay.
HELPER_NODES = 5_000

_SHARED: OnnxProcess | None = None
_SHARED_LOCK = threading.Lock()


def shared_process() -> OnnxProcess:
    """The designer's one helper process (ended at exit)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = OnnxProcess()
            atexit.register(_SHARED.close)
        return _SHARED


def _main() -> None:
    """Answers go to a copy of stdout; stdout itself is pointed at stderr (discarded), so
    nothing onnx's C++ code might print can break an answer."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    _main()
