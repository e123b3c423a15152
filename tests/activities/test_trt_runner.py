"""runners/trt_build.py, the Python-builder path: without tensorrt it says so; with tensorrt and
a CUDA device (not on these machines) it really builds the example."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from designer.activities.runners import runner_path
from designer.activities.trt.options import TrtBuildOptions
from designer.activities.trt.python_builder import python_builder_settings
from designer.activities.trt.version import TrtVersion, parse_python_version

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "tiny_cnn.onnx"
HAVE_TRT = importlib.util.find_spec("tensorrt") is not None
HAVE_GPU = shutil.which("nvidia-smi") is not None and Path("/dev/nvidia0").exists()


def runner(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(runner_path("trt_build")), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.skipif(HAVE_TRT, reason="tensorrt is installed here")
def test_without_tensorrt_it_says_so() -> None:
    result = runner("--version")
    assert result.returncode == 2
    assert "tensorrt cannot be imported with" in result.stderr


def test_bad_settings_file(tmp_path: Path) -> None:
    result = runner("--settings", str(tmp_path / "missing.json"))
    assert result.returncode == 2 and "cannot read" in result.stderr


@pytest.mark.skipif(
    not (HAVE_TRT and HAVE_GPU), reason="needs the tensorrt module and a CUDA device (none here)"
)
def test_real_python_build(tmp_path: Path) -> None:  # pragma: no cover - GPU machines only
    version = parse_python_version(runner("--version").stdout)
    assert isinstance(version, TrtVersion)
    options = TrtBuildOptions(
        model=str(EXAMPLE),
        engine=str(tmp_path / "m.engine"),
        typing="strong",
        layer_info=str(tmp_path / "layers.json"),
        timing_cache=str(tmp_path / "t.cache"),
        profiles=[{"input": ([1, 3, 32, 32], [2, 3, 32, 32], [4, 3, 32, 32])}],
    )
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps(python_builder_settings(options, version)))
    result = runner("--settings", str(settings), "--result", str(tmp_path / "r.json"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "m.engine").stat().st_size > 0
    assert json.loads((tmp_path / "layers.json").read_text())["Layers"]
    assert (tmp_path / "t.cache").stat().st_size > 0
