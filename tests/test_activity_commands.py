"""``onnx-designer profile ort`` and ``connection …`` run as real subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "resources" / "examples" / "tiny_cnn.onnx"
HOSTILE = "a b;rm -rf x.onnx"


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "designer.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def one_line_error(result: subprocess.CompletedProcess[str], needle: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "argv",
    [["profile", "ort"], ["connection", "add"], ["connection", "list"], ["connection", "test"]],
)
def test_help(argv: list[str]) -> None:
    result = run(*argv, "--help")
    assert result.returncode == 0 and f"onnx-designer {' '.join(argv)}" in result.stdout


def test_usage_errors_exit_2() -> None:
    assert run("profile").returncode == 2
    assert run("profile", "ort").returncode == 2
    assert run("connection", "add", "--host", "h").returncode == 2


def test_profile_local_with_reports(tmp_path: Path) -> None:
    model = tmp_path / HOSTILE
    shutil.copy(EXAMPLE, model)
    result = run(
        "profile",
        "ort",
        model,
        "--iterations",
        "3",
        "--optimize",
        "--report-dir",
        tmp_path / "reports",
    )
    assert result.returncode == 0, result.stderr
    profile = tmp_path / "a b;rm -rf x.ort-profile.json"
    assert f"profile: {profile}" in result.stdout and profile.is_file()
    names = sorted(p.name for p in (tmp_path / "reports").iterdir())
    # what `report` writes (six reports, named as it names them: spaces as underscores) and
    # the timeline, each as CSV and JSON
    assert "a_b;rm_-rf_x.ort-profile_detail.csv" in names and len(names) == 14


def test_profile_errors_are_one_line(tmp_path: Path) -> None:
    one_line_error(run("profile", "ort", tmp_path / "missing.onnx"), "file not found")
    one_line_error(
        run(
            "profile",
            "ort",
            EXAMPLE,
            "--provider",
            "FooExecutionProvider",
            "--output",
            tmp_path / "p.json",
        ),
        "FooExecutionProvider",
    )
    one_line_error(run("profile", "ort", EXAMPLE, "--target", "nosuch"), "no saved connection")
    one_line_error(run("profile", "ort", EXAMPLE, "--dim", "batch"), "NAME=POSITIVE_INTEGER")


def test_connection_add_list_remove(tmp_path: Path) -> None:
    env = {"ONNX_DESIGNER_CONFIG_DIR": str(tmp_path), "ONNX_DESIGNER_SSH_PASSWORD": "s3cret"}
    assert (
        run("connection", "add", "--host", "h", "--user", "u", "--password", env=env).returncode
        == 0
    )
    assert (
        run(
            "connection",
            "add",
            "--host",
            "k",
            "--user",
            "u",
            "--port",
            "2222",
            "--key",
            "id_x",
            "--name",
            "box",
            env=env,
        ).returncode
        == 0
    )
    listed = json.loads(run("connection", "list", "--json", env=env).stdout)
    assert [c["name"] for c in listed] == ["u@h:22", "box"]
    assert "s3cret" not in (tmp_path / "connections.json").read_text()
    one_line_error(run("connection", "add", "--host", "h", "--user", "u", env=env), "exists")
    assert run("connection", "remove", "box", env=env).returncode == 0
    one_line_error(run("connection", "remove", "box", env=env), "no saved connection")
