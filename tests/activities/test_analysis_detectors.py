"""Each expert-system detector on a real profile where it fires and one where it does not."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import onnx
import pytest

from designer.activities.analysis import analyze
from designer.activities.analysis.analyze import Analysis
from designer.activities.analysis.detectors import BUILTINS, Detector
from designer.activities.analysis.detectors.patterns import find_patterns
from designer.core.trt.settings import (
    PROFILES_KEY,
    InputShapes,
    OptimizationProfile,
    profiles_value,
)
from tests.activities.analysis_helpers import profile_model
from tests.helpers.shared import ORT_FIXTURES, TREX, model

OPT_ALL = next(ORT_FIXTURES.glob("tiny_cnn_opt-all_*.json"))
OPT_OFF = next(ORT_FIXTURES.glob("tiny_cnn_opt-disabled_*.json"))
TINY = ORT_FIXTURES / "tiny_cnn.onnx"
RESNET = TREX / "examples" / "pytorch" / "resnet" / "A100"
GPT2 = "gpt2_6l_h64.torchscript.onnx"


def ids(analysis: Analysis) -> set[str]:
    return {f.detector for f in analysis.findings}


def finding(analysis: Analysis, detector: str):  # type: ignore[no-untyped-def]
    return next(f for f in analysis.findings if f.detector == detector)


@pytest.fixture(scope="module")
def gpt2_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real CPU profiles of GPT-2: optimizations off / on, small and large batch."""
    out = tmp_path_factory.mktemp("gpt2")
    path = model(GPT2)
    return {
        "noopt": profile_model(path, out, optimize=False),
        "opt": profile_model(path, out, optimize=True),
        "noopt_big": profile_model(path, out, optimize=False, runs=2, free=64),
    }


def test_every_builtin_has_an_id_and_title() -> None:
    assert len({d.id for d in BUILTINS}) == len(BUILTINS) == 8
    assert all(d.title and d.detect is not Detector.detect for d in BUILTINS)


def test_fp32_rule_fires_on_fp32_engine_not_on_fp16() -> None:
    fp32 = analyze(RESNET / "fp32" / "resnet.onnx.engine.profile.json")
    fp16 = analyze(RESNET / "fp16" / "resnet.onnx.engine.profile.json")
    f = finding(fp32, "fp32-tensor-core")
    assert f.severity == "high" and f.gain_us and 0 < f.gain_percent < 50
    assert "Conv_0" in f.nodes and "--fp16" in f.fix
    assert "fp32-tensor-core" not in ids(fp16)
    # The findings are ordered by expected gain.
    gains = [x.gain_us or 0.0 for x in fp32.findings]
    assert gains == sorted(gains, reverse=True)


def test_fp32_rule_on_cpu_has_no_gpu_gain(gpt2_runs: dict[str, Path]) -> None:
    f = finding(analyze(gpt2_runs["noopt"], model=model(GPT2)), "fp32-tensor-core")
    assert f.severity == "low" and f.gain_us is None and "CPU provider" in f.fix


def test_fp16_model_on_cpu_says_why_it_still_ran_fp32(tmp_path: Path) -> None:
    """ORT's CPU provider has no FP16 Gemm/MatMul: it runs an FP16 model's heavy nodes in
    FP32 behind Casts it inserts. The rule says so instead of asking for FP16 again."""
    from designer.core.transforms import FP16Options, convert_to_fp16

    source = model(GPT2)
    half = tmp_path / "gpt2_fp16.onnx"
    onnx.save(convert_to_fp16(onnx.load(str(source)), FP16Options()).model, str(half))
    profile = profile_model(half, tmp_path, optimize=False, runs=2)
    f = finding(analyze(profile, model=half), "fp32-tensor-core")
    assert "stores" in f.problem and "in FP16" in f.problem and "GPU provider" in f.fix
    assert (
        "stores"
        not in finding(
            analyze(profile_model(source, tmp_path, optimize=False, runs=2), model=source),
            "fp32-tensor-core",
        ).problem
    )


def test_alignment_rule(tmp_path: Path) -> None:
    # Tensor Cores are GPU units: the CPU provider's run of the same model has no finding.
    assert "alignment-8" not in ids(analyze(OPT_OFF, model=TINY))
    fires = analyze(_gpu_run(tmp_path), model=TINY)
    f = finding(fires, "alignment-8")
    assert f.nodes == ("Times212",) and "N 10" in f.problem and "10 -> 16" in f.fix
    assert "CUDAExecutionProvider" in f.problem and "Pad the weights" in f.fix  # fc_w
    clean = analyze(RESNET / "fp16" / "resnet.onnx.engine.profile.json")
    assert "alignment-8" not in ids(clean)


def _gpu_run(tmp_path: Path) -> Path:
    """No GPU here: a recorded CPU profile of tiny_cnn relabelled the way ORT's CUDA provider
    records a run (compute nodes on CUDAExecutionProvider, Softmax left on the CPU, the copy
    back to the host as a MemcpyToHost node)."""
    events = json.loads(OPT_OFF.read_text())
    out = []
    for e in events:
        e = copy.deepcopy(e)
        if e.get("cat") == "Node":
            if not e["name"].startswith("Softmax"):
                e["args"]["provider"] = "CUDAExecutionProvider"
            if e["name"].startswith("Plus214"):
                out.append(e)
                e = copy.deepcopy(e)
                e["name"] = e["name"].replace("Plus214", "Memcpy_token_1")
                e["args"]["op_name"] = "MemcpyToHost"
                e["ts"] += e["dur"]
        out.append(e)
    path = tmp_path / "tiny_cnn_cuda.json"
    path.write_text(json.dumps(out))
    return path


def test_cpu_fallback_and_memcpy(tmp_path: Path) -> None:
    gpu = analyze(_gpu_run(tmp_path), model=TINY)
    fallback = finding(gpu, "cpu-fallback")
    assert fallback.nodes == ("Softmax",) and "CUDAExecutionProvider" in fallback.problem
    memcpy = finding(gpu, "memcpy")
    assert memcpy.nodes == ("Memcpy_token_1",) and memcpy.gain_us and memcpy.gain_us > 0
    cpu = analyze(OPT_OFF, model=TINY)
    assert not {"cpu-fallback", "memcpy"} & ids(cpu)


def test_cast_reformat_rule(gpt2_runs: dict[str, Path]) -> None:
    fires = analyze(OPT_ALL, model=TINY)  # NCHWc layout reorders ORT inserted
    f = finding(fires, "cast-reformat")
    assert "ReorderOutput" in f.problem and f.gain_us and f.gain_us > 0
    trt = analyze(RESNET / "fp16" / "resnet.onnx.engine.profile.json")
    assert "Reformat" in finding(trt, "cast-reformat").problem
    assert "cast-reformat" not in ids(analyze(OPT_OFF, model=TINY))
    assert "cast-reformat" not in ids(analyze(gpt2_runs["noopt"], model=model(GPT2)))


def test_fused_patterns_reported_until_ort_fuses_them(gpt2_runs: dict[str, Path]) -> None:
    gpt2 = onnx.load(str(model(GPT2)), load_external_data=False)
    found = {m.pattern.name for m in find_patterns(gpt2)}
    assert {"FastGelu", "Attention"} <= found
    plain = analyze(gpt2_runs["noopt"], model=model(GPT2))
    problems = [f.problem for f in plain.findings if f.detector == "fused-patterns"]
    assert any("FastGelu" in p for p in problems) and any("Attention" in p for p in problems)
    optimized = analyze(gpt2_runs["opt"], model=model(GPT2))
    problems = [f.problem for f in optimized.findings if f.detector == "fused-patterns"]
    assert not any("FastGelu" in p for p in problems)  # ORT fused it: FastGelu nodes ran
    assert any(t.node.op_type == "FastGelu" for t in optimized.stats.nodes)
    assert "fused-patterns" not in ids(analyze(OPT_OFF, model=TINY))


def test_decomposed_layernorm_found_in_bert() -> None:
    bert = onnx.load(str(model("bert_4l_h64.torchscript.onnx")), load_external_data=False)
    assert "Gelu" in {m.pattern.name for m in find_patterns(bert)}


def test_dynamic_inputs_without_profiles(tmp_path: Path, gpt2_runs: dict[str, Path]) -> None:
    f = finding(analyze(gpt2_runs["noopt"], model=model(GPT2)), "dynamic-no-profile")
    assert "input_ids" in f.problem and "set-profile" in f.fix
    assert "dynamic-no-profile" not in ids(analyze(OPT_OFF, model=TINY))  # static inputs
    with_profile = onnx.load(str(model(GPT2)), load_external_data=False)
    shapes = InputShapes((1, 1), (1, 8), (4, 64))
    entry = with_profile.metadata_props.add()
    entry.key = PROFILES_KEY
    entry.value = profiles_value(
        [OptimizationProfile({"input_ids": shapes, "attention_mask": shapes})]
    )
    assert "dynamic-no-profile" not in ids(analyze(gpt2_runs["noopt"], model=with_profile))


def test_tiny_kernels_small_batch_only(gpt2_runs: dict[str, Path]) -> None:
    small = finding(analyze(gpt2_runs["noopt"], model=model(GPT2)), "tiny-kernels")
    assert "batch too small" in small.problem and "larger batch" in small.fix
    big = analyze(gpt2_runs["noopt_big"], model=model(GPT2))
    assert "tiny-kernels" not in ids(big)
