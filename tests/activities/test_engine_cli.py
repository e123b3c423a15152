"""``onnx-designer engine info|report|lint|compare`` on real engine files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.engine_fixtures import A100_FP16, A100_FP32, A100_QAT, A100_QAT_QGAP, LAYER_JSON_10
from helpers.shared import TRT_SAMPLES

from designer.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["engine", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_info_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "info", str(A100_QAT))
    assert code == 0
    assert "device: NVIDIA A100 80GB PCIe" in out and "precision allowed: FP32+FP16+INT8" in out
    assert "input: input.1 FP32 32x3x224x224" in out
    code, out, _ = run(capsys, "info", str(LAYER_JSON_10), "--json")
    info = json.loads(out)
    assert code == 0 and info["schema"] == "10.x" and info["layers"] == 9
    assert [t["name"] for t in info["io_tensors"]] == ["x", "y", "z"]
    code, out, _ = run(capsys, "info", str(LAYER_JSON_10), str(TRT_SAMPLES / "result-04.log"))
    assert code == 0 and "TensorRT: 10.16.1" in out and "engine size: 12.5765 MiB" in out
    assert "Total Weights Memory: 13100672 bytes" in out


def test_report_prints_and_writes_tables(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "report", str(A100_QAT), "--top", "3")
    assert code == 0 and "Latency by layer type:" in out and "Reformat" in out
    assert "note: per-layer times sum to" in out
    code, out, _ = run(
        capsys, "report", str(A100_QAT), "--json", "--output", str(tmp_path), "--format", "csv"
    )
    doc = json.loads(out)
    shares = [r["percent"] for r in doc["tables"]["layer_types"]["rows"]]
    assert code == 0 and sum(shares) == pytest.approx(100.0)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".csv"] * 6
    code, _, err = run(
        capsys, "report", str(A100_QAT), "--output", str(tmp_path), "--format", "xml"
    )
    assert code == 2 and "--format" in err


def test_lint_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(A100_QAT))
    assert code == 1 and "warning: [int8-conv-float-output]" in out and "fix:" in out
    code, out, _ = run(capsys, "lint", str(A100_QAT_QGAP))  # info findings only
    assert code == 0 and "0 warnings, 2 info" in out
    code, _, _ = run(capsys, "lint", str(A100_QAT_QGAP), "--fail-on", "info")
    assert code == 1
    code, out, _ = run(capsys, "lint", str(A100_QAT), "--json", "--fail-on", "never")
    findings = json.loads(out)["findings"]
    assert code == 0 and {f["severity"] for f in findings} == {"warning", "info"}


def test_compare(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "compare", str(A100_FP32), str(A100_FP16), "--top", "2")
    assert code == 0 and "23 layer groups matched" in out
    code, out, _ = run(
        capsys,
        "compare",
        str(A100_FP32),
        str(A100_FP16),
        str(A100_QAT),
        "--json",
        "--output",
        str(tmp_path),
    )
    doc = json.loads(out)
    assert (
        code == 0
        and len(doc["engines"]) == 3
        and doc["chart"]["latency_ms"][1] < doc["chart"]["latency_ms"][0]
    )
    assert (tmp_path / "compare_matched_layers.csv").is_file()
    code, _, err = run(capsys, "compare", str(A100_FP32))
    assert code == 2 and "at least two" in err


def test_bad_files_give_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "model.json"
    bad.write_text('{"graph": {}}')
    code, out, err = run(capsys, "info", str(bad))
    assert code == 1 and out == "" and err.count("\n") == 1 and "--exportLayerInfo" in err
    code, _, err = run(capsys, "lint", str(tmp_path / "missing.json"))
    assert code == 1 and "no such file" in err
    with pytest.raises(SystemExit) as usage:
        main(["engine", "report"])
    assert usage.value.code == 2
    capsys.readouterr()


def test_export_image_verb_is_registered(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["engine", "export-image", "--help"])
    assert done.value.code == 0 and "--profile" in capsys.readouterr().out
