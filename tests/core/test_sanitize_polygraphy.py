"""Sanitize Graph at least as thorough as ``polygraphy surgeon sanitize --fold-constants``:
node counts (every scope) on real exports, ORT outputs equal before/after with symbolic dims
not 1, a valid result for onnx's affine_grid backend models (constant If conditions are
flattened), and a refusal, not a broken model, when a result would fail the check.

The fast shared models run here; every shared model and the bench models run in
``bench/bench_sanitize.py``, and with ``DESIGNER_SLOW_TESTS=1`` in the last test.
"""

from __future__ import annotations

import importlib.util
import os

import onnx
import pytest
from helpers import sanitize_compare as sc
from helpers.shared import MODELS

from designer.core.transforms import SanitizeOptions, TransformError, sanitize

sanitize_module = importlib.import_module("designer.core.transforms.sanitize")

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("polygraphy") is None
    or importlib.util.find_spec("onnx_graphsurgeon") is None,
    reason="polygraphy and onnx-graphsurgeon are dev extras (the reference to compare with)",
)

FAST = ["squeezenet1_0.torchscript.onnx", "bert_4l_h64.torchscript.onnx"]
MEDIUM = ["gpt2_6l_h64.torchscript.onnx", "t5enc_4l_h64.torchscript.onnx"]
SLOW = sorted(p.name for p in MODELS.glob("*.onnx") if p.name not in FAST + MEDIUM)


def _against_polygraphy(model: onnx.ModelProto) -> tuple[int, int, sc.SanitizeResult]:
    result = sc.ours(model)
    return sc.count_nodes(result.model), sc.count_nodes(sc.polygraphy(model)), result


def _compare(name: str) -> tuple[int, int]:
    model = onnx.load(MODELS / name)
    ours, theirs, result = _against_polygraphy(model)
    assert ours <= theirs, f"{name}: ours {ours} nodes, Polygraphy {theirs}"
    assert sc.check(result.model) is None
    assert sc.max_output_difference(model, result.model) <= sc.TOLERANCE
    return ours, sc.count_nodes(model)


@pytest.mark.parametrize("name", FAST + MEDIUM)
def test_no_more_nodes_than_polygraphy_and_same_outputs(name: str) -> None:
    ours, before = _compare(name)
    assert ours < before


def test_gpt2_symbolic_shapes_fold_what_onnx_inference_cannot() -> None:
    """The case of the issue: Shape→Slice→Squeeze→Unsqueeze→Concat chains behind a
    Reshape with -1 only fold with the symbolic dims (1,217 vs 1,157 on the 12-layer GPT-2)."""
    model = onnx.load(MODELS / "gpt2_6l_h64.torchscript.onnx")
    plain = sanitize(model, evaluator=sc.ort_evaluator)
    symbolic = sc.ours(model)
    assert sc.count_nodes(symbolic.model) < sc.count_nodes(plain.model)
    assert symbolic.log.counts["symbolic_shape_values"] > 0


@pytest.mark.parametrize("name", sc.AFFINE_GRID_MODELS)
def test_affine_grid_backend_models_give_valid_folded_models(name: str) -> None:
    model = sc.backend_model(name)
    ours, theirs, result = _against_polygraphy(model)
    assert sc.check(result.model) is None
    assert ours <= theirs
    assert result.log.counts.get("flattened_if", 0) >= 1
    ifs_before = [n for n in model.graph.node if n.op_type == "If"]
    ifs_after = [n for n in result.model.graph.node if n.op_type == "If"]
    # every condition is constant but "D == 1" (3-D with align_corners), which depends on
    # the values of the size input
    assert len(ifs_after) == (1 if "3d_align" in name else 0) < len(ifs_before)
    feeds = sc.backend_inputs(name)
    assert sc.max_output_difference(model, result.model, feeds) <= sc.TOLERANCE
    text = result.log.text()
    assert "flattened If" in text and "the result passes the model check" in text


def test_a_result_that_fails_the_check_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever goes wrong inside, an invalid result is never handed back."""
    model = sc.backend_model("test_affine_grid_2d_expanded")
    real_summarize = sanitize_module._summarize

    def breaking_summarize(log, after, *args):  # type: ignore[no-untyped-def]
        real_summarize(log, after, *args)
        after.graph.node[-1].input[0] = "no_such_value"

    monkeypatch.setattr(sanitize_module, "_summarize", breaking_summarize)
    with pytest.raises(TransformError, match=r"fails the check.*nothing was changed"):
        sc.ours(model)
    unchecked = sc.ours(model, SanitizeOptions(verify=False))
    assert sc.check(unchecked.model) is not None


@pytest.mark.skipif(
    not os.environ.get("DESIGNER_SLOW_TESTS"), reason="set DESIGNER_SLOW_TESTS=1 (minutes)"
)
@pytest.mark.parametrize("name", SLOW)
def test_every_shared_model_against_polygraphy(name: str) -> None:
    _compare(name)
