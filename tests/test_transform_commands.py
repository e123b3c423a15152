"""``onnx-designer fp16 | sanitize | cast``: outputs, logs, --json, exit codes, refusals,
and no partial file after an interruption."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from helpers import transform_models as tm

from designer import cli

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "designer.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def one_line_error(result: subprocess.CompletedProcess[str], needle: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in result.stderr


@pytest.fixture
def resnet(tmp_path: Path) -> Path:
    path = tmp_path / "resnet.onnx"
    onnx.save(tm.resnet_like(blocks=1, size=16), path)
    return path


@pytest.mark.parametrize("command", ["fp16", "sanitize", "cast"])
def test_help(command: str) -> None:
    result = run(command, "--help")
    assert result.returncode == 0 and f"onnx-designer {command}" in result.stdout


def test_fp16_text_and_json(resnet: Path, tmp_path: Path) -> None:
    out = tmp_path / "out16.onnx"
    result = run("fp16", resnet, out, "--keep-io-types", "--block-op", "Gemm", "--atol", "0.02")
    assert result.returncode == 0, result.stderr
    assert "Convert to FLOAT16" in result.stdout and "numerical check" in result.stdout
    assert "kept in float32: Gemm 1" in result.stdout
    onnx.checker.check_model(str(out), full_check=True)
    assert out.stat().st_size < 0.6 * resnet.stat().st_size
    result = run(
        "fp16",
        resnet,
        tmp_path / "j.onnx",
        "--json",
        "--auto-block",
        "--rtol",
        "0.05",
        "--atol",
        "0.05",
    )
    payload = json.loads(result.stdout)
    assert payload["check"]["passed"] and payload["counts"]["initializers_converted"] > 0
    assert payload["output"]["path"].endswith("j.onnx")


def test_fp16_inputs_folder_and_failures(resnet: Path, tmp_path: Path) -> None:
    folder = tmp_path / "inputs"
    folder.mkdir()
    value = onnx.numpy_helper.from_array(tm.np.zeros((1, 3, 16, 16), tm.np.float32), "input")
    (folder / "input_0.pb").write_bytes(value.SerializeToString())
    result = run("fp16", resnet, tmp_path / "a.onnx", "--inputs", folder, "--atol", "0.02")
    assert result.returncode == 0 and "folder" in result.stdout
    bad = run("fp16", resnet, tmp_path / "b.onnx", "--inputs", tmp_path / "nowhere")
    one_line_error(bad, "input folder not found")
    assert not (tmp_path / "b.onnx").exists()
    overflow = tmp_path / "overflow.onnx"
    onnx.save(tm.overflow_model(), overflow)
    failed = run("fp16", overflow, tmp_path / "c.onnx")
    one_line_error(failed, "numerical check failed for out")
    assert (tmp_path / "c.onnx").exists()  # written; the check is what failed


def test_fp16_unrunnable_model_reports_skipped(tmp_path: Path) -> None:
    """A check that could not run is no pass: exit 1 (as a failed check), the model is
    written, and the message says why and what to do."""
    src = tmp_path / "custom.onnx"
    onnx.save(tm.custom_op_model(), src)
    result = run("fp16", src, tmp_path / "custom16.onnx")
    assert result.returncode == 1, result.stderr
    assert "numerical check skipped: onnxruntime cannot run the original model" in result.stdout
    assert "could not run" in result.stderr and "--no-check" in result.stderr
    assert (tmp_path / "custom16.onnx").exists()
    skipped = run("fp16", src, tmp_path / "on_purpose.onnx", "--no-check")
    assert skipped.returncode == 0, skipped.stderr


def test_fp16_external_data_stays_external(tmp_path: Path) -> None:
    src = tmp_path / "ext.onnx"
    tm.save_external(tm.resnet_like(channels=32, blocks=1, size=8), str(src))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = run("fp16", src, out_dir / "ext16.onnx", "--atol", "0.05")
    assert result.returncode == 0, result.stderr
    assert (out_dir / "ext16.onnx.data").exists()
    assert (out_dir / "ext16.onnx").stat().st_size < 20_000
    onnx.checker.check_model(str(out_dir / "ext16.onnx"), full_check=True)


def test_sanitize_and_options(tmp_path: Path) -> None:
    src = tmp_path / "shape.onnx"
    onnx.save(tm.shape_subgraph_model(), src)
    result = run("sanitize", src, tmp_path / "s.onnx", "--json")
    payload = json.loads(result.stdout)
    assert result.returncode == 0 and payload["counts"]["nodes_after"] == 4
    assert payload["counts"]["folded.Gather"] == 3
    text = run("sanitize", src, tmp_path / "t.onnx", "--fold-size-threshold", "16", "--passes", "1")
    assert text.returncode == 0 and "over 16 bytes" in text.stdout
    assert run("sanitize", src, tmp_path / "u.onnx", "--passes", "-1").returncode == 2


def test_cast_command(resnet: Path, tmp_path: Path) -> None:
    out = tmp_path / "cast.onnx"
    result = run("cast", resnet, out, "--to", "float16", "--initializer", "fc_w")
    assert result.returncode == 0, result.stderr
    assert "inserted Cast to float of 'fc_w'" in result.stdout
    onnx.checker.check_model(str(out), full_check=True)
    one_line_error(run("cast", resnet, out, "--to", "float16", "--initializer", "nope"), "nope")
    quux = run("cast", resnet, out, "--to", "quux", "--initializer", "fc_w")
    assert quux.returncode == 2 and "argument --to: unknown or unsupported data type 'quux'" in (
        quux.stderr
    )
    one_line_error(run("cast", resnet, out, "--to", "int8"), "--initializer")
    assert run("cast", resnet, out, "--initializer", "fc_w").returncode == 2  # --to missing


@pytest.mark.parametrize(
    "command", [["fp16"], ["sanitize"], ["cast", "--to", "fp16", "--initializer", "fc_w"]]
)
def test_output_equal_to_input_is_refused(command: list[str], resnet: Path) -> None:
    before = resnet.read_bytes()
    alias = resnet.parent / "." / resnet.name
    result = run(command[0], resnet, alias, *command[1:])
    one_line_error(result, "the output path is the input")
    assert resnet.read_bytes() == before


def test_bad_input_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model at all")
    one_line_error(run("sanitize", bad, tmp_path / "o.onnx"), "not an ONNX model")
    one_line_error(run("fp16", tmp_path / "missing.onnx", tmp_path / "o.onnx"), "file not found")


def test_interrupted_write_leaves_no_partial_file(
    resnet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()

    def interrupt(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("designer.core.io.save.os.fsync", interrupt)
    code = cli.main(["fp16", str(resnet), str(out_dir / "o.onnx"), "--no-check"])
    assert code == 1
    assert os.listdir(out_dir) == []
    calls = {"n": 0}

    def cancel_during_run(*_args: object) -> bool:
        calls["n"] += 1
        raise KeyboardInterrupt

    monkeypatch.setattr("designer.core.transforms.log.Monitor.check", cancel_during_run)
    assert cli.main(["sanitize", str(resnet), str(out_dir / "p.onnx")]) == 1
    assert os.listdir(out_dir) == [] and calls["n"] == 1
