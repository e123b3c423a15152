"""``designer.core`` never imports PySide6, onnxruntime, tensorrt or paramiko (DESIGN: "The
shape of the house"): checked in a fresh interpreter, and the ruff banned-api rule (TID251)
that guards it is checked to really fire."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BANNED = ("PySide6", "onnxruntime", "tensorrt", "paramiko")

_IMPORT_ALL = """
import importlib, json, pkgutil, sys
import designer.core
names = ["designer.core"]
failed = {}
def onerror(name):
    failed[name] = repr(sys.exc_info()[1])
for info in pkgutil.walk_packages(designer.core.__path__, "designer.core.", onerror=onerror):
    try:
        importlib.import_module(info.name)
        names.append(info.name)
    except Exception as exc:
        failed[info.name] = repr(exc)
banned = sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[1:])
print(json.dumps({"imported": names, "failed": failed, "banned": banned}))
"""


def test_core_imports_no_gui_runtime_or_remote_packages() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, *BANNED],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert not report["failed"], report["failed"]
    assert {"designer.core.document", "designer.core.edits", "designer.core.io"} <= set(
        report["imported"]
    )
    assert report["banned"] == [], f"designer.core pulled in {report['banned']}"


def _ruff() -> list[str]:
    probe = subprocess.run(
        [sys.executable, "-m", "ruff", "--version"], capture_output=True, text=True
    )
    if probe.returncode == 0:
        return [sys.executable, "-m", "ruff"]
    exe = shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed")
    return [exe]


@pytest.fixture
def ruff_project(tmp_path: Path) -> Path:
    """A scratch project with this project's ruff configuration."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for package in ("designer/core", "designer/activities", "designer/ui"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "bad.py").write_text(
            '"""Banned imports."""\n\nimport onnxruntime\nfrom PySide6 import QtCore\n'
            "import paramiko\nimport tensorrt\n\n"
            '__all__ = ["QtCore", "onnxruntime", "paramiko", "tensorrt"]\n'
        )
    return tmp_path


def test_ruff_bans_heavy_imports_in_core_only(ruff_project: Path) -> None:
    ruff = _ruff()

    def check(package: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*ruff, "check", "--no-cache", "--select", "TID251", f"{package}/bad.py"],
            capture_output=True,
            text=True,
            cwd=ruff_project,
            timeout=60,
        )

    core = check("designer/core")
    assert core.returncode == 1, core.stdout + core.stderr
    assert core.stdout.count("TID251") == len(BANNED), core.stdout
    for allowed in ("designer/activities", "designer/ui"):
        result = check(allowed)
        assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_finds_no_banned_import_in_core() -> None:
    ruff = _ruff()
    result = subprocess.run(
        [*ruff, "check", "--no-cache", "--select", "TID", "designer/core"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
