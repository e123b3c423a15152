"""The window's type checker runs onnx in the helper process from HELPER_NODES nodes on
(onnx's C++ code held the interpreter lock and froze the window while it checked a big
model), with the same result as in this process."""

from __future__ import annotations

import onnx
import pytest
from helpers.models import subgraph_model
from pytestqt.qtbot import QtBot

import designer.ui.session as session_module
from designer.core.analysis import check_document
from designer.core.analysis.onnx_process import OnnxProcess
from designer.core.document import Document
from designer.ui.session import DocumentSession


class CountingProcess(OnnxProcess):
    """The real helper process, counting the requests it answered."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[str] = []

    def _call(self, op: str, model: onnx.ModelProto) -> tuple[dict[str, object], bytes]:
        self.requests.append(op)
        return super()._call(op, model)


@pytest.mark.parametrize("threshold", [1, 10**9])
def test_big_models_are_checked_in_the_helper_process(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    process = CountingProcess()
    monkeypatch.setattr(session_module, "shared_process", lambda: process)
    monkeypatch.setattr(session_module, "HELPER_NODES", threshold)
    model = subgraph_model()
    session = DocumentSession(Document(model))
    try:
        with qtbot.waitSignal(session.checked, timeout=30_000) as checked:
            session.check_now()
    finally:
        session.close()
        process.close()
    helped = threshold == 1  # every model is "big"; else none is
    assert process.requests == (["check", "infer"] if helped else [])
    result, expected = checked.args[0], check_document(Document(model))
    assert [str(d) for d in result.diagnostics] == [str(d) for d in expected.diagnostics]
    for scope in expected.keys:
        assert {n: str(t) for n, t in result.types(scope).items()} == {
            n: str(t) for n, t in expected.types(scope).items()
        }
