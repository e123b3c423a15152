"""Fixtures for activity tests: a real sshd on loopback, keys, a test user, a known_hosts."""

from __future__ import annotations

import contextlib
import shutil
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aarch64_sshd import Aarch64Env, start_or_skip
from sshd import (
    SshServer,
    TestUser,
    ensure_test_user,
    keygen,
    make_server_folder,
    sshd_missing_reason,
)
from wheels import make_wheel_cache

from designer.activities.runner import ort_deployment
from designer.activities.targets import SshSettings, SshTarget, accept_new

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "generated"
ORT_FIXTURES = FIXTURES / "onnxruntime-1.32.0-cpu"
EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "tiny_cnn.onnx"


@dataclass
class SshEnv:
    """One running server and what a client needs to log in."""

    server: SshServer
    folder: Path
    user: TestUser
    key: Path  # unencrypted client key, authorized
    enc_key: Path  # encrypted client key (passphrase below), authorized
    passphrase: str
    known_hosts: Path  # already trusts the server's key

    def settings(self, **changes: object) -> SshSettings:
        base: dict[str, object] = {
            "host": "127.0.0.1",
            "user": self.user.name,
            "port": self.server.port,
            "key_file": self.key,
            "known_hosts": self.known_hosts,
            "ssh_config": self.folder / "no_ssh_config",
        }
        base.update(changes)
        return SshSettings(**base)  # type: ignore[arg-type]

    def connect(self, **changes: object) -> SshTarget:
        return SshTarget(self.settings(**changes)).connect()


@pytest.fixture(scope="session")
def ssh_env() -> Iterator[SshEnv]:
    reason = sshd_missing_reason()
    if reason:
        pytest.skip(reason)
    folder = make_server_folder()
    user = ensure_test_user()
    key = keygen(folder / "client_ed25519")
    enc_key = keygen(folder / "client_enc_ed25519", passphrase="open sesame")
    authorized = folder / "authorized_keys"
    authorized.write_text(Path(f"{key}.pub").read_text() + Path(f"{enc_key}.pub").read_text())
    authorized.chmod(0o644)
    server = SshServer(folder, authorized)
    known_hosts = folder / "known_hosts"
    try:
        server.start()
        SshTarget(
            SshSettings(
                "127.0.0.1",
                user.name,
                server.port,
                key_file=key,
                known_hosts=known_hosts,
                ssh_config=folder / "no_ssh_config",
            ),
            decide=accept_new,
        ).connect().close()
        yield SshEnv(server, folder, user, key, enc_key, "open sesame", known_hosts)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def remote_dir(ssh_env: SshEnv) -> Iterator[str]:
    """A fresh folder relative to the test user's home, removed afterwards."""
    rel = f".designer-test/{uuid.uuid4().hex[:10]}"
    yield rel
    with ssh_env.connect() as target:
        target.remove(target.resolve(rel))


@pytest.fixture(scope="session")
def wheel_cache(ssh_env: SshEnv, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with ssh_env.connect() as target:
        p = target.platform()
    if p.python_version is None or p.python_version[:2] != sys.version_info[:2]:
        pytest.skip(
            f"the target's python3 ({p.python_version}) differs from the test venv's "
            f"{sys.version_info[:2]}: the offline wheel cache would not fit"
        )
    root = tmp_path_factory.mktemp("wheels")
    make_wheel_cache(root / f"cp{p.python_tag}-{p.platform_tags[0]}")
    return root


@pytest.fixture(scope="session")
def deployed(ssh_env: SshEnv, wheel_cache: Path) -> Iterator[str]:
    """A deployment folder brought up once for the whole session."""
    rel = f".designer-test/deployed-{uuid.uuid4().hex[:8]}"
    with ssh_env.connect() as target:
        ort_deployment(target, rel, wheel_cache=wheel_cache, allow_download=False).deploy()
    yield rel
    with ssh_env.connect() as target:
        target.remove(target.resolve(rel))


@pytest.fixture(scope="session")
def aarch64_env() -> Iterator[Aarch64Env]:
    """The emulated aarch64 SSH target (Debian 12 arm64 under qemu-user; see aarch64.py)."""
    with contextlib.ExitStack() as stack:
        yield start_or_skip(stack)
