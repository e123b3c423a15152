"""Saved SSH connections (SPEC A-2): a JSON file in the user config folder, never secrets.

``<config>/connections.json`` (``ONNX_DESIGNER_CONFIG_DIR`` overrides the folder) holds a list
of :class:`Connection` records; passwords and passphrases go through :mod:`secrets`.
Targets are named on the command line as ``local``, a saved name, or
``ssh://user@host:port``.
"""

from __future__ import annotations

import builtins
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from designer.activities import secrets
from designer.activities.paths import config_dir
from designer.activities.targets.base import PlatformInfo, TargetError
from designer.activities.targets.hostkeys import HostKeyDecider, refuse_unknown
from designer.activities.targets.ssh import SshSettings, SshTarget
from designer.core.errors import DesignerError

__all__ = [
    "Connection",
    "ConnectionStore",
    "ConnectionTest",
    "parse_ssh_url",
    "test_connection",
]

AuthKind = Literal["password", "key"]
DEFAULT_DEPLOY_DIR = ".onnx-designer"


@dataclass
class Connection:
    """One saved target. ``name`` defaults to ``user@host:port``."""

    host: str
    user: str
    port: int = 22
    auth: AuthKind = "key"
    key_file: str | None = None
    deploy_dir: str = DEFAULT_DEPLOY_DIR
    known_hosts: str | None = None
    ssh_config: str | None = None
    name: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = f"{self.user}@{self.host}:{self.port}"
        if not self.host or not self.user:
            raise DesignerError("a connection needs a host and a user")
        if not 0 < int(self.port) < 65536:
            raise DesignerError(f"port {self.port} is not between 1 and 65535")

    def secret_account(self, kind: str = "password") -> str:
        return f"{kind}:{self.name}"

    def settings(self, password: str | None = None, passphrase: str | None = None) -> SshSettings:
        """SshSettings with secrets from the arguments, else from the keyring/memory."""
        if self.auth == "password" and password is None:
            password = secrets.get_secret(self.secret_account("password"))
        if self.auth == "key" and passphrase is None:
            passphrase = secrets.get_secret(self.secret_account("passphrase"))
        return SshSettings(
            host=self.host,
            user=self.user,
            port=int(self.port),
            password=password if self.auth == "password" else None,
            key_file=Path(self.key_file).expanduser() if self.key_file else None,
            passphrase=passphrase,
            known_hosts=Path(self.known_hosts).expanduser() if self.known_hosts else None,
            ssh_config=Path(self.ssh_config).expanduser() if self.ssh_config else None,
            name=self.name,
        )


def _deploy_dir_of(path: str) -> str:
    """The deployment folder an ssh:// URL's path names: ``/tmp/x`` is the absolute folder
    /tmp/x, ``/~/x`` the folder x in the user's home, nothing the default (in the home)."""
    if path in ("", "/", "/~", "/~/"):
        return DEFAULT_DEPLOY_DIR
    if path.startswith("/~/"):
        return path[3:]
    return path


def parse_ssh_url(url: str) -> Connection:
    """``ssh://user@host[:port][/deploy/dir]`` → an unsaved Connection (key auth); the path
    is absolute (``/tmp/x``) or, after ``/~/``, relative to the home folder."""
    parts = urlsplit(url)
    if parts.scheme != "ssh" or not parts.hostname or not parts.username:
        raise DesignerError(f"{url!r} is not ssh://user@host[:port]")
    try:
        port = parts.port or 22
    except ValueError:
        raise DesignerError(f"{url!r}: the port is not a number") from None
    deploy = _deploy_dir_of(unquote(parts.path))
    return Connection(
        host=parts.hostname, user=unquote(parts.username), port=port, deploy_dir=deploy
    )


class ConnectionStore:
    """The saved connections; every change is written at once (atomic, mode 0600)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else config_dir() / "connections.json"

    def list(self) -> builtins.list[Connection]:
        if not self.path.is_file():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            items = data["connections"] if isinstance(data, dict) else data
            return [Connection(**item) for item in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise DesignerError(
                f"{self.path}: damaged connections file ({exc}); fix or delete it"
            ) from None

    def get(self, name: str) -> Connection:
        for conn in self.list():
            if conn.name == name:
                return conn
        raise DesignerError(
            f"no saved connection named {name!r} (see: onnx-designer connection list)"
        )

    def add(self, conn: Connection, replace: bool = False) -> None:
        items = self.list()
        if any(c.name == conn.name for c in items) and not replace:
            raise DesignerError(f"a connection named {conn.name!r} exists already")
        items = [c for c in items if c.name != conn.name] + [conn]
        self._save(items)

    def remove(self, name: str) -> None:
        items = self.list()
        if not any(c.name == name for c in items):
            raise DesignerError(f"no saved connection named {name!r}")
        self._save([c for c in items if c.name != name])
        for kind in ("password", "passphrase"):
            secrets.delete_secret(f"{kind}:{name}")

    def _save(self, items: builtins.list[Connection]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"version": 1, "connections": [asdict(c) for c in items]}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".connections.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(payload, f, indent=2)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


@dataclass(frozen=True)
class ConnectionTest:
    """What "Test connection" found."""

    name: str
    platform: PlatformInfo
    deploy_dir: str  # absolute, proven writable
    seconds: float


def test_connection(
    conn: Connection,
    *,
    password: str | None = None,
    passphrase: str | None = None,
    decide: HostKeyDecider = refuse_unknown,
) -> ConnectionTest:
    """Connect, probe the platform and prove the deployment folder writable (about 0.3 s on a
    LAN). Raises TargetError and subclasses with one-line messages."""
    start = time.monotonic()
    target = SshTarget(conn.settings(password, passphrase), decide)
    try:
        target.connect()
        platform = target.platform()
        deploy = target.check_writable(conn.deploy_dir)
    except TargetError:
        raise
    finally:
        target.close()
    return ConnectionTest(conn.name, platform, deploy, time.monotonic() - start)


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
