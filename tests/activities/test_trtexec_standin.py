"""The stand-in trtexec: real parser, real recorded output, fails like trtexec on bad options."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from designer.activities.trt.command import trtexec_argv, trtexec_profile_argv
from designer.activities.trt.options import TrtBuildOptions, TrtProfileOptions
from designer.activities.trt.version import TrtVersion, parse_banner
from tests.helpers.shared import TRT_SAMPLES
from tests.helpers.trtexec_standin import SCRIPT, standin_files

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "tiny_cnn.onnx"


def run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


def test_unknown_option_fails_like_trtexec(tmp_path: Path) -> None:
    result = run([f"--onnx={EXAMPLE}", "--bogus=3", "--alsoBogus"], tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("&&&& RUNNING TensorRT.trtexec [TensorRT v101601] [b11] # ")
    assert "=== Build Options ===" in result.stdout  # the help, as trtexec prints it
    assert result.stdout.rstrip().splitlines()[-1].startswith("&&&& FAILED TensorRT.trtexec")
    errors = [line for line in result.stderr.splitlines() if "[E]" in line]
    assert errors[0].endswith("[E] Unknown option: --bogus 3")
    assert errors[1].endswith("[E] Unknown option: --alsoBogus ")


def test_11_rejects_removed_flags_and_values(tmp_path: Path) -> None:
    result = run([f"--onnx={EXAMPLE}", "--fp16"], tmp_path, TRTEXEC_STANDIN_VERSION="11.1")
    assert result.returncode == 1 and "[TensorRT v110100]" in result.stdout
    assert "Unknown option: --fp16" in result.stderr
    result = run(
        ["--standin-version=11.1", f"--onnx={EXAMPLE}", "--tacticSources=-CUDNN"], tmp_path
    )
    assert result.returncode == 1 and "Unknown tactic source: CUDNN" in result.stderr
    same = run([f"--onnx={EXAMPLE}", "--tacticSources=-CUDNN", "--skipInference"], tmp_path)
    assert same.returncode == 0, same.stderr  # 10.16 has cuDNN tactics


def test_help_and_no_arguments(tmp_path: Path) -> None:
    result = run(["--help"], tmp_path)
    assert result.returncode == 0 and parse_banner(result.stdout) == TrtVersion(10, 16, 1)
    assert "--stronglyTyped" in result.stdout
    bare = run([], tmp_path, TRTEXEC_STANDIN_VERSION="11.1")
    assert bare.returncode == 0 and "&&&& PASSED" in bare.stdout
    assert parse_banner(bare.stdout) == TrtVersion(11, 1, 0)


def test_build_writes_engine_layer_json_and_timing_cache(tmp_path: Path) -> None:
    options = TrtBuildOptions(
        model=str(EXAMPLE),
        engine=str(tmp_path / "m.engine"),
        layer_info=str(tmp_path / "layers.json"),
        timing_cache=str(tmp_path / "timing.cache"),
        profiles=[{"input": ([1, 3, 32, 32], [1, 3, 32, 32], [2, 3, 32, 32])}],
    )
    argv = trtexec_argv(options, TrtVersion(10, 16, 1), trtexec=str(SCRIPT))
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Engine built in" in result.stdout and str(EXAMPLE) in result.stdout
    assert "&&&& PASSED" in result.stdout.splitlines()[-1]
    assert (tmp_path / "m.engine").read_bytes().startswith(b"trtexec-standin plan\n")
    layers = json.loads((tmp_path / "layers.json").read_text())
    recorded = json.loads((TRT_SAMPLES / "model-trained-exportLayerInfo.log").read_text())
    assert layers == recorded and layers["Layers"]
    cache = tmp_path / "timing.cache"
    assert cache.is_file()
    before = cache.stat().st_mtime_ns
    again = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and cache.stat().st_mtime_ns == before  # kept


def test_profile_writes_profile_and_times(tmp_path: Path) -> None:
    engine = tmp_path / "m.engine"
    engine.write_bytes(b"trtexec-standin plan\n{}")
    prof = TrtProfileOptions(
        build=TrtBuildOptions(model=str(EXAMPLE)),
        use_engine=str(engine),
        export_profile=str(tmp_path / "p.json"),
        export_times=str(tmp_path / "t.json"),
    )
    argv = trtexec_profile_argv(prof, TrtVersion(10, 16, 1), trtexec=str(SCRIPT))
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "=== Profile (18362 iterations ) ===" in result.stdout
    profile = json.loads((tmp_path / "p.json").read_text())
    assert profile[0] == {"count": 18362} and len(profile) == 16
    assert profile[2]["name"] == "node_conv2d_myl0_1" and profile[2]["medianMs"] == 0.0098
    times = json.loads((tmp_path / "t.json").read_text())
    assert times and "computeMs" in times[0]
    missing = run(["--loadEngine=nothing.engine"], tmp_path)
    assert missing.returncode == 1 and "Error opening engine file: nothing.engine" in missing.stderr


def test_failure_modes(tmp_path: Path) -> None:
    no_gpu = run([f"--onnx={EXAMPLE}"], tmp_path, TRTEXEC_STANDIN_NO_GPU="1")
    assert no_gpu.returncode == 1 and "no CUDA-capable device is detected" in no_gpu.stderr
    failing = run([f"--onnx={EXAMPLE}"], tmp_path, TRTEXEC_STANDIN_FAIL_BUILD="1")
    assert failing.returncode == 1 and "Failed to parse onnx file" in failing.stderr
    no_model = run(["--skipInference"], tmp_path)
    assert no_model.returncode == 1 and "Model missing or format not recognized" in no_model.stderr


def test_runs_from_a_copy_with_fixtures_elsewhere(tmp_path: Path) -> None:
    """What an emulated target does: the scripts and fixtures copied, found through the env."""
    for local, rel in standin_files():
        dest = tmp_path / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(local.read_bytes())
    script = tmp_path / "bin" / "trtexec"
    result = subprocess.run(
        [sys.executable, str(script), f"--onnx={EXAMPLE}", "--skipInference", "--noSuchFlag"],
        capture_output=True,
        text=True,
        env={**os.environ, "TRTEXEC_STANDIN_FIXTURES": str(tmp_path / "fixtures")},
        timeout=60,
    )
    assert result.returncode == 1 and "Unknown option: --noSuchFlag" in result.stderr
    missing = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "TRTEXEC_STANDIN_FIXTURES": str(tmp_path / "nowhere")},
        timeout=60,
    )
    assert missing.returncode != 0  # it never falls back silently to other data


@pytest.mark.parametrize("version", ["10.16", "11.1"])
def test_standin_accepts_what_command_builds(tmp_path: Path, version: str) -> None:
    options = TrtBuildOptions(model=str(EXAMPLE), engine=str(tmp_path / "e"), typing="strong")
    argv = trtexec_argv(options, TrtVersion.parse(version), trtexec=str(SCRIPT))
    result = subprocess.run(
        argv, capture_output=True, text=True, env={**os.environ, "TRTEXEC_STANDIN_VERSION": version}
    )
    assert result.returncode == 0, result.stderr
