"""``onnx-designer profile trt``: exit codes, one-line errors, --print-command, a real run
with the stand-in trtexec (real TensorRT 10.16 output, real option parser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.trt_fixtures import (
    STANDIN,
    cli_model,  # noqa: F401 (the fixture model)
)
from helpers.trt_gpu import fake_gpu  # noqa: F401 (a fixture)

from designer.cli import main

pytestmark = pytest.mark.usefixtures("fake_gpu")


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["profile", "trt", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for flag in (
        "--use-engine",
        "--iterations",
        "--lock-clocks",
        "--fp16",
        "--target",
        "--print-command",
    ):
        assert flag in out


def test_usage_error_is_2(model: Path) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["profile", "trt", str(model), "--iterations", "many"])
    assert exit_.value.code == 2


def test_print_command_per_version(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["profile", "trt", str(model), "--free-dims-as-one", "--print-command"]
    assert main([*base, "--trt-version", "10.16", "--fp16", "--iterations", "5"]) == 0
    line = capsys.readouterr().out.strip()
    assert "--fp16" in line and "--iterations=5" in line and "--noDataTransfers" in line
    assert main([*base, "--trt-version", "11.1", "--fp16"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("onnx-designer: ") and "\n" not in err and "strongly typed" in err


def test_run_with_standin_writes_report(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["profile", "trt", str(model), "--free-dims-as-one", "--trtexec", str(STANDIN),
         "--iterations", "10", "--layer-json", str(tmp_path / "l.json"),
         "--times-json", str(tmp_path / "t.json"), "--report-dir", str(tmp_path / "rep")]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"profile: {tmp_path / 'tiny.trt-profile.json'}" in out
    assert "15 layers" in out
    written = sorted(p.name for p in (tmp_path / "rep").iterdir())
    assert "tiny.trt-profile_layers.csv" in written and len(written) == 8


def test_failure_is_one_line_and_keeps_the_log(
    model: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRTEXEC_STANDIN_NO_GPU", "1")
    code = main(["profile", "trt", str(model), "--free-dims-as-one", "--trtexec", str(STANDIN)])
    err = capsys.readouterr().err.strip()
    assert code == 1 and "\n" not in err
    assert "no usable CUDA GPU" in err and "(log: " in err
    assert Path(err.rsplit("(log: ", 1)[1].rstrip(")")).is_file()
