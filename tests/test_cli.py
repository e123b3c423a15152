"""The onnx-designer command line, run as a real subprocess: exit codes, output, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from helpers.models import function_model, subgraph_model

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "resources" / "examples" / "tiny_cnn.onnx"


def run(*args: str | Path, module: str = "designer.cli") -> subprocess.CompletedProcess[str]:
    """Run ``onnx-designer ARGS`` (the entry point is ``designer.cli:main``)."""
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize("command", ["check", "info", "resave"])
def test_help_on_every_subcommand(command: str) -> None:
    result = run(command, "--help")
    assert result.returncode == 0
    assert f"onnx-designer {command}" in result.stdout


def test_usage_error_exits_2() -> None:
    assert run("check").returncode == 2
    assert run("no-such-command").returncode == 2


def test_check_clean_model(tmp_path: Path) -> None:
    result = run("check", EXAMPLE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 error(s)" in result.stdout


def test_check_reports_errors_with_exit_1(tmp_path: Path) -> None:
    model = onnx.load(EXAMPLE)
    model.graph.node[1].input[0] = "missing_tensor"
    path = tmp_path / "broken.onnx"
    onnx.save(model, path)
    result = run("check", path)
    assert result.returncode == 1
    assert "missing_tensor" in result.stdout and "relu1" in result.stdout
    as_json = run("check", path, "--json")
    assert as_json.returncode == 1
    payload = json.loads(as_json.stdout)
    assert payload["errors"] >= 1
    first = next(d for d in payload["diagnostics"] if d["code"] == "dangling-input")
    assert first["node"] == "relu1" and first["severity"] == "error"


def test_info_text_and_json(tmp_path: Path) -> None:
    path = tmp_path / "sub.onnx"
    onnx.save(subgraph_model(), path)
    text = run("info", path)
    assert text.returncode == 0
    assert "IR version" in text.stdout and "Subgraphs:    5" in text.stdout
    payload = json.loads(run("info", path, "--json").stdout)
    assert payload["subgraph_count"] == 5
    assert payload["node_count"] == 3 + 1 + 1 + 2 + 1 + 1
    assert [i["name"] for i in payload["inputs"]] == ["X", "cond"]
    assert payload["inputs"][0]["type"] == "float32[2, 3]"
    assert payload["initializer_count"] == 2

    fn_path = tmp_path / "fn.onnx"
    onnx.save(function_model(), fn_path)
    payload = json.loads(run("info", fn_path, "--json").stdout)
    assert payload["functions"] == ["local.fn:ScaledAdd"]


def test_resave_is_byte_identical(tmp_path: Path) -> None:
    out = tmp_path / "copy.onnx"
    result = run("resave", EXAMPLE, out)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == EXAMPLE.read_bytes()


def test_bad_inputs_give_one_line_errors(tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(EXAMPLE.read_bytes()[:500])
    noise = tmp_path / "noise.onnx"
    noise.write_bytes(bytes(range(256)) * 8)
    tensor = tmp_path / "tensor.onnx"
    tensor.write_bytes(onnx.helper.make_tensor("t", 1, [2], [1.0, 2.0]).SerializeToString())
    for path in (truncated, noise, tensor, tmp_path / "absent.onnx"):
        for command in ("check", "info"):
            assert_one_line_error(run(command, path), str(path))
    missing_dir = tmp_path / "no" / "such" / "dir" / "out.onnx"
    assert_one_line_error(run("resave", EXAMPLE, missing_dir), "does not exist")
    assert not missing_dir.parent.exists()


def test_model_argument_without_display_explains_instead_of_crashing() -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    result = subprocess.run(
        [sys.executable, "-m", "designer", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )
    assert_one_line_error(result, "no display")


def test_unknown_word_is_a_usage_error() -> None:
    assert run("frobnicate", module="designer").returncode == 2


@pytest.mark.parametrize("args", [["info", str(EXAMPLE), "--json"], ["--help"], ["check", "-h"]])
def test_closed_output_pipe_ends_quietly(args: list[str]) -> None:
    """``onnx-designer … | head``: the reader went away; no BrokenPipeError, no traceback."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "designer.cli", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
    finally:
        os.close(write)
    assert "BrokenPipe" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == ""
