"""SshTarget against a real sshd on loopback: auth, host keys, files, cancel, lost links,
ProxyJump."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest
from conftest import SshEnv
from sshd import SshServer, processes_with

from designer.activities.connections import Connection, test_connection
from designer.activities.targets import (
    AuthenticationError,
    CancelToken,
    ConnectionLost,
    HostKeyDecision,
    HostKeyError,
    HostKeyInfo,
    SshTarget,
    TargetError,
)

HOSTILE = "a b;rm -rf x.onnx"


def test_connection_test_reports_platform(ssh_env: SshEnv, remote_dir: str) -> None:
    conn = Connection(
        host="127.0.0.1",
        user=ssh_env.user.name,
        port=ssh_env.server.port,
        key_file=str(ssh_env.key),
        known_hosts=str(ssh_env.known_hosts),
        ssh_config=str(ssh_env.folder / "none"),
        deploy_dir=remote_dir,
    )
    report = test_connection(conn)
    assert conn.name == f"{ssh_env.user.name}@127.0.0.1:{ssh_env.server.port}"
    assert report.platform.python_version is not None
    assert report.deploy_dir == f"{ssh_env.user.home}/{remote_dir}"


def test_password_auth_and_wrong_password(ssh_env: SshEnv) -> None:
    if ssh_env.user.password is None:
        pytest.skip("password auth needs a test user with a known password (run as root)")
    with ssh_env.connect(key_file=None, password=ssh_env.user.password) as target:
        assert target.run(["true"]).ok
    with pytest.raises(AuthenticationError, match="authentication failed"):
        ssh_env.connect(key_file=None, password="wrong")


def test_encrypted_key_needs_its_passphrase(ssh_env: SshEnv) -> None:
    with pytest.raises(AuthenticationError, match="encrypted"):
        ssh_env.connect(key_file=ssh_env.enc_key)
    with pytest.raises(AuthenticationError, match="wrong passphrase"):
        ssh_env.connect(key_file=ssh_env.enc_key, passphrase="nope")
    with ssh_env.connect(key_file=ssh_env.enc_key, passphrase=ssh_env.passphrase) as target:
        assert target.run(["true"]).ok


def test_unknown_host_key_once_always_refuse(ssh_env: SshEnv, tmp_path: Path) -> None:
    known = tmp_path / "kh"
    seen: list[HostKeyInfo] = []
    with pytest.raises(HostKeyError, match="SHA256:"):
        SshTarget(ssh_env.settings(known_hosts=known)).connect()

    def once(info: HostKeyInfo) -> HostKeyDecision:
        seen.append(info)
        return HostKeyDecision.ACCEPT_ONCE

    SshTarget(ssh_env.settings(known_hosts=known), once).connect().close()
    assert not known.exists()
    assert seen[0].fingerprint.startswith("SHA256:") and seen[0].port == ssh_env.server.port
    SshTarget(
        ssh_env.settings(known_hosts=known), lambda i: HostKeyDecision.ACCEPT_ALWAYS
    ).connect().close()
    assert f"[127.0.0.1]:{ssh_env.server.port} ssh-ed25519 " in known.read_text()
    SshTarget(ssh_env.settings(known_hosts=known)).connect().close()  # now known: no prompt


def test_changed_host_key_is_refused(ssh_env: SshEnv, tmp_path: Path) -> None:
    import paramiko

    known = tmp_path / "kh"
    other = paramiko.Ed25519Key.from_private_key_file(str(ssh_env.key))
    known.write_text(f"[127.0.0.1]:{ssh_env.server.port} ssh-ed25519 {other.get_base64()}\n")
    asked: list[HostKeyInfo] = []

    def decide(info: HostKeyInfo) -> HostKeyDecision:
        asked.append(info)
        return HostKeyDecision.ACCEPT_ALWAYS

    with pytest.raises(HostKeyError, match="CHANGED") as info:
        SshTarget(ssh_env.settings(known_hosts=known), decide).connect()
    assert "\n" not in str(info.value) and not asked


def test_hostile_names_round_trip(ssh_env: SshEnv, remote_dir: str, tmp_path: Path) -> None:
    src = tmp_path / HOSTILE
    src.write_bytes(b"payload \x00\xff" * 100)
    with ssh_env.connect() as target:
        folder = target.resolve(f"{remote_dir}/$(touch pwned) 'q'")
        target.mkdir(folder)
        remote = f"{folder}/{HOSTILE}"
        target.put(src, remote)
        assert target.hashes([remote, f"{folder}/none"]) == {
            remote: __import__("hashlib").sha256(src.read_bytes()).hexdigest(),
            f"{folder}/none": None,
        }
        listing = target.run(["ls", "-A", folder], cwd=folder).stdout.splitlines()
        assert listing == [HOSTILE]
        back = tmp_path / "back"
        target.get(remote, back)
        assert back.read_bytes() == src.read_bytes()
        assert target.run(["echo", "$HOME;", "`id`"]).stdout == "$HOME; `id`\n"
        with pytest.raises(TargetError, match="does not exist"):
            target.get(f"{folder}/none", tmp_path / "x")


def test_unwritable_deployment_folder(ssh_env: SshEnv, remote_dir: str) -> None:
    with ssh_env.connect() as target:
        locked = target.resolve(f"{remote_dir}/locked")
        target.mkdir(locked)
        assert target.run(["chmod", "500", locked]).ok
        try:
            with pytest.raises(TargetError, match="not writable"):
                target.check_writable(locked)
            with pytest.raises(TargetError, match="not writable"):
                target.check_writable(f"{remote_dir}/locked/sub")
        finally:
            target.run(["chmod", "700", locked])


def test_cancel_kills_remote_process_tree(ssh_env: SshEnv) -> None:
    marker = f"{int(time.time()) % 1000 + 1000}.{uuid.uuid4().int % 10**6:06d}"
    token = CancelToken()
    lines: list[str] = []
    with ssh_env.connect() as target:
        threading.Timer(1.0, token.cancel).start()
        start = time.monotonic()
        result = target.run(
            ["sh", "-c", f"echo started; sleep {marker} & sleep {marker}; wait"],
            on_stdout=lines.append,
            cancel=token,
        )
        assert result.cancelled and lines == ["started"]
        assert time.monotonic() - start < 6
    time.sleep(0.3)
    assert processes_with(f"sleep {marker}") == []


def test_dropped_connection_is_a_clear_error(ssh_env: SshEnv, tmp_path: Path) -> None:
    server = SshServer(ssh_env.folder, ssh_env.folder / "authorized_keys").start()
    marker = f"{int(time.time()) % 1000 + 2000}.{uuid.uuid4().int % 10**6:06d}"
    lines: list[str] = []
    try:
        target = SshTarget(
            ssh_env.settings(port=server.port, known_hosts=tmp_path / "kh"),
            lambda i: HostKeyDecision.ACCEPT_ONCE,
        ).connect()

        def on_line(line: str) -> None:
            lines.append(line)
            server.kill_all()

        with pytest.raises(ConnectionLost, match="connection was lost") as info:
            target.run(["sh", "-c", f"echo tick; sleep {marker}"], on_stdout=on_line, timeout=30)
        assert "\n" not in str(info.value) and lines == ["tick"]
        target.close()
    finally:
        server.stop()
        for pid in processes_with(f"sleep {marker}"):
            __import__("os").kill(pid, 9)


def test_proxyjump_through_a_second_sshd(ssh_env: SshEnv, tmp_path: Path) -> None:
    jump = SshServer(ssh_env.folder, ssh_env.folder / "authorized_keys").start()
    try:
        config = tmp_path / "ssh_config"
        config.write_text(
            f"Host jumphost\n  HostName 127.0.0.1\n  Port {jump.port}\n"
            f"  User {ssh_env.user.name}\n  IdentityFile {ssh_env.key}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {tmp_path / 'jump_known_hosts'}\n"
            "  StrictHostKeyChecking accept-new\n  BatchMode yes\n"
            "Host finaltarget\n  HostName 127.0.0.1\n  ProxyJump jumphost\n"
        )
        settings = ssh_env.settings(host="finaltarget", ssh_config=config)
        with SshTarget(settings).connect() as target:
            assert target.run(["echo", "via jump"]).stdout == "via jump\n"
        assert "Accepted publickey" in jump.log.read_text()
        broken = tmp_path / "broken_config"
        broken.write_text(config.read_text().replace(f"Port {jump.port}", "Port 1"))
        with pytest.raises(TargetError, match="via proxy"):
            SshTarget(
                ssh_env.settings(host="finaltarget", ssh_config=broken, connect_timeout=3.0)
            ).connect()
    finally:
        jump.stop()
