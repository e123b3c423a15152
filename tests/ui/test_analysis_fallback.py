"""The window maps a profile onto the open document as a guess: when that is not the
profiled model (none of its nodes is profiled) the findings are made without a model,
not refused and not judged against another model's nodes; the command line refuses."""

from __future__ import annotations

from pathlib import Path

import onnx
from helpers.shared import ORT_FIXTURES, model

from designer.ui.reports.analysis_view import ProfileSource, run_analysis


def test_a_document_that_is_not_the_profiled_model_is_not_used() -> None:
    profile = next(ORT_FIXTURES.glob("tiny_cnn_opt-disabled_ort_profile_*.json"))
    other = onnx.load(str(model("squeezenet1_0.torchscript.onnx")))
    source = ProfileSource(profile, Path("/nonexistent.onnx"), None, "tiny")
    guessed = run_analysis(source, other)
    plain = run_analysis(source, None)
    assert [f.detector for f in guessed.findings] == [f.detector for f in plain.findings]
    own = onnx.load(str(ORT_FIXTURES / "tiny_cnn.onnx"))
    assert run_analysis(source, own) is not None  # the profiled model is used
