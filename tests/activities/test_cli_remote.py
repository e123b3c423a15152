"""The CLI against the real sshd: ``connection test`` and ``profile ort --target ssh://``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import EXAMPLE, SshEnv

ROOT = Path(__file__).resolve().parents[2]
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


def test_connection_test_and_remote_profile(
    ssh_env: SshEnv, wheel_cache: Path, deployed: str, tmp_path: Path
) -> None:
    url = f"ssh://{ssh_env.user.name}@127.0.0.1:{ssh_env.server.port}"
    known = tmp_path / "kh"
    common = ["--identity", ssh_env.key, "--known-hosts", known, "--ssh-config", tmp_path / "none"]
    one_line_error(run("connection", "test", url, *common), "unknown host key")
    ok = run("connection", "test", url, *common, "--accept-new-host-key", "--deploy-dir", deployed)
    assert ok.returncode == 0 and "writable" in ok.stdout, ok.stderr
    env = {"ONNX_DESIGNER_CACHE_DIR": str(wheel_cache.parent)}
    wheels = wheel_cache.parent / "wheels"
    if not wheels.exists():
        wheels.symlink_to(wheel_cache)
    model = tmp_path / HOSTILE
    shutil.copy(EXAMPLE, model)
    result = run(
        "profile",
        "ort",
        model,
        "--target",
        url,
        *common,
        "--deploy-dir",
        deployed,
        "--iterations",
        "3",
        "--offline",
        "--report-dir",
        tmp_path / "r",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a b;rm -rf x.ort-profile.json").is_file()
