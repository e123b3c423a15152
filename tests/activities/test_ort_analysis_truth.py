"""ONNX Runtime analysis says only what is true of the run: an unknown --dim / --check-dim is
a usage error, a cut-off profile is reported as such, Tensor Core alignment and TensorRT
profiles are judged only where they apply, empty profiles and impossible iteration ranges
are one-line errors, and ``profile ort --report-dir`` writes what ``report`` writes.
(A misaligned TensorRT convolution still found: test_trt_truth.)

Real models and profiles from ../shared (read in place); a derived profile changes a real
one only where a test says so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from designer.activities.analysis import analyze
from designer.activities.analysis.analyze import Analysis
from designer.activities.analysis.detectors.base import Finding
from designer.activities.analysis.profile import NotAProfileError
from designer.activities.reports import ProfileFormatError, parse_ort_profile
from tests.activities.analysis_helpers import profile_model
from tests.helpers.shared import ORT_FIXTURES, model

OPT_OFF = next(ORT_FIXTURES.glob("tiny_cnn_opt-disabled_*.json"))  # 3 runs, 10 nodes
TINY = ORT_FIXTURES / "tiny_cnn.onnx"
BERT = "bert_4l_h64.torchscript.onnx"  # inputs input_ids/attention_mask [batch, seq]
SQUEEZENET = "squeezenet1_0.torchscript.onnx"  # input [batch, 3, 224, 224]


def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "designer", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _one_line(done: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _found(analysis: Analysis, detector: str) -> list[Finding]:
    return [f for f in analysis.findings if f.detector == detector]


def _relabelled(source: Path, out: Path, provider: str) -> Path:
    """No GPU here: a real CPU profile with its node events relabelled as ``provider``
    records them (the times stay the CPU's)."""
    events = json.loads(source.read_text())
    for event in events:
        if event.get("cat") == "Node":
            event["args"]["provider"] = provider
    out.write_text(json.dumps(events))
    return out


def _events(path: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text())
    return data


# ------------------------------------------------------------------ 3. --dim names


def test_unknown_dim_name_is_a_usage_error_naming_the_models_dims(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    done = _cli("profile", "ort", model(BERT), "--iterations", "1", "--dim", "sequence=16",
                "--output", out)  # fmt: skip
    _one_line(done, 2, "--dim sequence", "no free dimension 'sequence'", "batch, seq")
    assert not out.exists()  # nothing ran
    fp16 = _cli("fp16", model(BERT), tmp_path / "half.onnx", "--check-dim", "sequence=16")
    _one_line(fp16, 2, "--check-dim sequence", "batch, seq")
    assert not (tmp_path / "half.onnx").exists()
    static = _cli("profile", "ort", TINY, "--dim", "batch=2", "--output", out)
    _one_line(static, 2, "--dim batch", "none by name")


def test_a_known_dim_name_sets_the_profiled_shape(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    done = _cli("profile", "ort", model(BERT), "--iterations", "1", "--dim", "seq=16",
                "--output", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    shapes = [
        e["args"]["input_type_shape"]
        for e in _events(out)
        if e.get("cat") == "Node" and e["args"].get("op_name") == "Gather"
    ]
    assert shapes and any({"int64": [1, 16]} in s for s in shapes)  # ids [batch 1, seq 16]


# ------------------------------------------------------------------ 4. a cut-off profile


def _cut(tmp_path: Path) -> Path:
    """The real profile's first 3000 bytes (it ends inside an event of the first run)."""
    path = tmp_path / "trunc.json"
    path.write_bytes(OPT_OFF.read_bytes()[:3000])
    return path


def test_a_cut_off_profile_is_repaired_and_says_so(tmp_path: Path) -> None:
    cut = _cut(tmp_path)
    assert parse_ort_profile(OPT_OFF).warnings == []
    report = parse_ort_profile(cut)
    assert len(report.events) == 3
    (warning,) = report.warnings  # 2 session events and 3 of the first run's nodes kept
    assert "cut off after 5 events" in warning and "last iteration may be incomplete" in warning
    assert analyze(OPT_OFF).profile.warnings == []
    done = _cli("report", cut, "--output", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "trunc.json: the profile was cut off after 5" in warnings[0]
    summary = json.loads((tmp_path / "out" / "trunc_summary.json").read_text())["rows"]
    rows = [r["value"] for r in summary if r["metric"] == "warning"]
    assert len(rows) == 1 and "cut off after 5 events" in rows[0]
    whole = _cli("report", OPT_OFF, "--output", tmp_path / "whole")
    assert whole.returncode == 0 and "warning" not in whole.stderr


# ------------------------------------------------------------------ 6. alignment-8


def test_alignment_is_not_judged_on_the_cpu_provider() -> None:
    cpu = analyze(OPT_OFF, model=TINY)  # MatMul Times212 has N 10, on CPUExecutionProvider
    assert _found(cpu, "alignment-8") == []


def test_alignment_on_a_gpu_run_pads_weights_only_where_there_are_weights(
    tmp_path: Path,
) -> None:
    gpu = analyze(_relabelled(OPT_OFF, tmp_path / "tiny_cuda.json", "CUDAExecutionProvider"),
                  model=TINY)  # fmt: skip
    (f,) = _found(gpu, "alignment-8")
    assert f.nodes == ("Times212",) and "N 10" in f.problem and "Pad the weights" in f.fix
    # BERT at batch = seq = 3: the weighted MatMuls are 64 x 64; the attention products
    # Q·Kᵀ (N = seq) and scores·V (K = seq) multiply activations, with no weight to pad.
    bert = model(BERT)
    cpu = profile_model(bert, tmp_path, optimize=False, runs=2, free=3)
    assert _found(analyze(cpu, model=bert), "alignment-8") == []
    found = _found(
        analyze(_relabelled(cpu, tmp_path / "bert_cuda.json", "CUDAExecutionProvider"),
                model=bert),
        "alignment-8",
    )  # fmt: skip
    assert len(found) == 8, [f.problem for f in found]  # 2 per layer, 4 layers
    assert all("/attention/self/MatMul" in f.problem for f in found)
    assert all("3 not a multiple of 8" in f.problem for f in found)
    assert not any("Pad the weights" in f.fix for f in found)
    assert all("no weights" in f.fix and "sequence length" in f.fix for f in found)


# ------------------------------------------------------------------ 7. empty profiles


def test_profiles_without_node_events_are_one_line_errors(tmp_path: Path) -> None:
    # The real profile's session events only (load, initialization, the three model_run).
    only_runs = tmp_path / "only_runs.json"
    only_runs.write_text(json.dumps([e for e in _events(OPT_OFF) if e.get("cat") == "Session"]))
    out = tmp_path / "out"
    done = _cli("report", only_runs, "--output", out)
    _one_line(done, 1, "only_runs.json", "no ONNX Runtime node events", "3 model_run")
    with pytest.raises(NotAProfileError, match="no ONNX Runtime node events"):
        analyze(only_runs)
    with pytest.raises(ProfileFormatError, match="no ONNX Runtime node events"):
        parse_ort_profile(only_runs)  # the report tab's reader
    no_layers = tmp_path / "no_layers.json"
    no_layers.write_text('[{"count": 5}]')
    _one_line(_cli("report", no_layers, "--output", out), 1, "no_layers.json", "no layer records")
    assert not out.exists()  # no "0 nodes" reports


# ------------------------------------------------------------------ 8. iteration ranges


@pytest.mark.parametrize(
    ("flags", "needles"),
    [
        (("--iter-stop", "99"), ("--iter-stop 99 is outside", "0..2")),
        (("--iter-start", "10"), ("--iter-start 10 is outside", "0..2")),
        (("--iter-start", "-1"), ("--iter-start -1 is outside", "0..2")),
        (("--iter-start", "2", "--iter-stop", "1"), ("2..1 is inverted", "start 2 is after")),
        (("--iter-stop", "0"), ("--iter-stop 0 is before the default --iter-start 1",)),
    ],
)
def test_impossible_iteration_ranges_say_what_is_wrong(
    tmp_path: Path, flags: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    done = _cli("report", OPT_OFF, *flags, "--output", tmp_path)
    line = _one_line(done, 1, *needles)
    assert "inverted" not in line or "outside" not in line  # 2..1 is inside 0..2
    assert not list(tmp_path.iterdir())


def test_the_whole_range_is_accepted(tmp_path: Path) -> None:
    done = _cli("report", OPT_OFF, "--iter-start", "0", "--iter-stop", "2", "--output", tmp_path)
    assert done.returncode == 0 and "iterations 0..2" in done.stdout


# ------------------------------------------------------------------ 11. dynamic-no-profile


def test_dynamic_inputs_are_information_for_onnx_runtime_and_a_finding_for_tensorrt(
    tmp_path: Path,
) -> None:
    squeezenet = model(SQUEEZENET)
    cpu = profile_model(squeezenet, tmp_path, optimize=False, runs=2, free=1)
    (info,) = _found(analyze(cpu, model=squeezenet), "dynamic-no-profile")
    assert info.severity == "info" and "TensorRT build only" in info.problem
    assert "CPUExecutionProvider" in info.problem and "set-profile" in info.fix
    trt_ep = _relabelled(cpu, tmp_path / "trt_ep.json", "TensorrtExecutionProvider")
    (medium,) = _found(analyze(trt_ep, model=squeezenet), "dynamic-no-profile")
    assert medium.severity == "medium" and "TensorRT build only" not in medium.problem
    assert "input ['batch', '3', '224', '224']" in medium.problem


# ------------------------------------------------------------------ 13. profile ort --report-dir


def test_profile_ort_report_dir_writes_what_report_writes(tmp_path: Path) -> None:
    profile = tmp_path / "tiny.json"
    done = _cli("profile", "ort", TINY, "--iterations", "3", "--output", profile,
                "--report-dir", tmp_path / "profiled")  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = _cli("report", profile, "--model", TINY, "--output", tmp_path / "reported")
    assert report.returncode == 0, report.stderr
    reported = {p.name: p.read_bytes() for p in (tmp_path / "reported").iterdir()}
    profiled = {p.name: p.read_bytes() for p in (tmp_path / "profiled").iterdir()}
    assert len(reported) == 12 and {"tiny_kernel.csv", "tiny_expert.json"} <= set(reported)
    assert set(profiled) == set(reported) | {"tiny_timeline.csv", "tiny_timeline.json"}
    for name, data in reported.items():  # the same layout and numbers, byte for byte
        assert profiled[name] == data, name
