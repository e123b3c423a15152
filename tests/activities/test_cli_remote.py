"""The CLI against the real sshd: ``connection test`` and ``profile ort --target ssh://``."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

from conftest import EXAMPLE, SshEnv
from sshd import SshServer, processes_with

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


def _serve(mode: str) -> tuple[socket.socket, threading.Event]:
    """A loopback port that speaks HTTP (``http``) or accepts and stays silent (``silent``)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    stop = threading.Event()

    def loop() -> None:
        server.settimeout(0.2)
        held = []
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            if mode == "http":
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                conn.close()
            else:
                held.append(conn)
        for conn in held:
            conn.close()

    threading.Thread(target=loop, daemon=True).start()
    return server, stop


def test_port_that_does_not_speak_ssh(tmp_path: Path) -> None:
    for mode, needle in (("http", "does not speak SSH"), ("silent", "did not answer the SSH")):
        server, stop = _serve(mode)
        try:
            port = server.getsockname()[1]
            result = run(
                "connection",
                "test",
                f"ssh://u@127.0.0.1:{port}",
                "--known-hosts",
                tmp_path / "kh",
                "--ssh-config",
                tmp_path / "none",
                "--connect-timeout",
                "2",
            )
        finally:
            stop.set()
            server.close()
        one_line_error(result, needle)  # no paramiko traceback above it


def test_dropped_connection_reported_once(ssh_env: SshEnv, deployed: str, tmp_path: Path) -> None:
    server = SshServer(ssh_env.folder, ssh_env.folder / "authorized_keys").start()
    marker = f"marker{uuid.uuid4().hex[:8]}"
    model = tmp_path / f"{marker}.onnx"
    shutil.copy(EXAMPLE, model)
    url = f"ssh://{ssh_env.user.name}@127.0.0.1:{server.port}"
    argv = [sys.executable, "-m", "designer.cli", "profile", "ort", str(model), "-v"]
    argv += ["--deploy-dir", deployed]
    argv += ["--target", url, "--identity", str(ssh_env.key), "--accept-new-host-key"]
    argv += ["--known-hosts", str(tmp_path / "kh"), "--ssh-config", str(tmp_path / "none")]
    argv += ["--iterations", str(10**7), "--warmup", "0", "--offline"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "iteration" in line:
                server.kill_all()
        assert proc.wait(120) == 1
    finally:
        proc.kill()
        server.stop()
        for pid in processes_with(marker):
            os.kill(pid, 9)
    errors = [line for line in lines if "connection was lost" in line]
    assert len(errors) == 1 and errors[0].startswith("onnx-designer: error:"), lines
    assert lines[-1] == errors[0] and "Traceback" not in "".join(lines)


def test_url_path_is_an_absolute_deploy_folder(ssh_env: SshEnv, tmp_path: Path) -> None:
    folder = f"/tmp/designer-url-{uuid.uuid4().hex[:8]}"
    url = f"ssh://{ssh_env.user.name}@127.0.0.1:{ssh_env.server.port}{folder}"
    common = ["--identity", ssh_env.key, "--known-hosts", tmp_path / "kh"]
    common += ["--ssh-config", tmp_path / "none", "--accept-new-host-key"]
    try:
        result = run("connection", "test", url, *common)
        assert result.returncode == 0, result.stderr
        assert f"deployment folder {folder} writable" in result.stdout
        assert os.path.isdir(folder)  # the server is this machine: not under the home folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
