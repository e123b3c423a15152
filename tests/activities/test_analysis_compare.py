"""Comparing two runs: a model profiled before and after sanitize, two TensorRT engines
(FP32 vs FP16) matched through their ONNX layer metadata, and the ``compare`` command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from designer.activities.analysis import compute_stats, load_profile
from designer.activities.analysis.compare import compare_stats
from designer.activities.numerics import ort_evaluator
from designer.core.transforms.sanitize import sanitize
from tests.activities.analysis_helpers import profile_model
from tests.helpers.shared import ORT_FIXTURES, TREX, model

RESNET = TREX / "examples" / "pytorch" / "resnet" / "A100"


@pytest.fixture(scope="module")
def sanitized_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    out = tmp_path_factory.mktemp("sanitize")
    original = model("gpt2_6l_h64.torchscript.onnx")
    result = sanitize(onnx.load(str(original)), None, original.parent, ort_evaluator)
    clean = out / "gpt2_sanitized.onnx"
    onnx.save(result.model, str(clean))
    a = profile_model(original, out, optimize=False, runs=6)
    b = profile_model(clean, out, optimize=False, runs=6)
    return original, clean, a, b


def test_sanitize_shows_removed_nodes_and_the_time_delta(
    sanitized_pair: tuple[Path, Path, Path, Path],
) -> None:
    original, clean, a, b = sanitized_pair
    ma, mb = onnx.load(str(original)), onnx.load(str(clean))
    cmp = compare_stats(
        compute_stats(load_profile(a, model=ma)), compute_stats(load_profile(b, model=mb))
    )
    kept = {n.name for n in mb.graph.node}
    removed = {d.key for d in cmp.removed}
    assert removed and not removed & kept  # every removed node is really gone from B
    assert all(d.a_us and d.a_us > 0 and d.b_us is None for d in cmp.removed)
    assert not cmp.added
    assert cmp.total_b_us - cmp.total_a_us == pytest.approx(sum(d.delta_us for d in cmp.nodes))
    removed_time = sum(d.a_us or 0.0 for d in cmp.removed)
    # The time of the removed nodes is what B no longer spends on them (B's total itself
    # depends on the machine's load: timings are compared, not asserted to shrink).
    assert removed_time > 0
    assert cmp.total_a_us == pytest.approx(sum(d.a_us or 0.0 for d in cmp.nodes))
    assert all(d.delta_us == pytest.approx(-(d.a_us or 0.0)) for d in cmp.removed)
    ratios = cmp.node_ratios()
    assert all(ratios[d.key] == 0.0 for d in cmp.removed)
    tables = cmp.tables()
    summary = {r[0]: r for r in tables["compare_summary"].rows}
    assert summary["nodes_removed"][1] == len(cmp.removed)
    ops = {r[0]: r for r in tables["compare_op_types"].rows}
    assert ops["Identity"][2] is None  # sanitize removed every Identity


def test_trt_engines_matched_by_onnx_metadata() -> None:
    fp32 = compute_stats(load_profile(RESNET / "fp32" / "resnet.onnx.engine.profile.json"))
    fp16 = compute_stats(load_profile(RESNET / "fp16" / "resnet.onnx.engine.profile.json"))
    cmp = compare_stats(fp32, fp16)
    conv = next(d for d in cmp.nodes if d.key == "Conv_0")
    assert conv.status == "both" and conv.ratio is not None and conv.ratio < 1.0
    assert cmp.total_b_us < cmp.total_a_us  # FP16 is faster


def test_compare_cli(sanitized_pair: tuple[Path, Path, Path, Path]) -> None:
    original, clean, a, b = sanitized_pair
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "designer",
            "compare",
            str(a),
            str(b),
            "--model",
            str(original),
            "--model-b",
            str(clean),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"compare_summary", "compare_nodes", "compare_op_types"} == set(data)
    assert any(r["status"] == "removed" for r in data["compare_nodes"]["rows"])
    text = subprocess.run(
        [sys.executable, "-m", "designer", "compare", str(a), str(b)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert text.returncode == 0 and "removed" in text.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "designer", "compare", str(a), str(ORT_FIXTURES / "tiny_cnn.onnx")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 1 and "not a profile" in bad.stderr
