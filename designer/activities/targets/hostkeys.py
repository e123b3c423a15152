"""Host key verification against a known_hosts file (OpenSSH format).

An unknown key goes to a :data:`HostKeyDecider` (the GUI shows the SHA256 fingerprint and
offers accept once / accept always / refuse; the CLI refuses unless told to accept new keys).
A key that differs from the known one is always refused: that is what a man in the middle
looks like, and the user must remove the old line from known_hosts deliberately.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from designer.activities.targets.base import HostKeyError

__all__ = [
    "HostKeyDecider",
    "HostKeyDecision",
    "HostKeyInfo",
    "accept_new",
    "append_known_host",
    "fingerprint_sha256",
    "known_hosts_name",
    "make_policy",
    "refuse_unknown",
]


class HostKeyDecision(Enum):
    ACCEPT_ONCE = "once"
    ACCEPT_ALWAYS = "always"  # written to known_hosts
    REFUSE = "refuse"


@dataclass(frozen=True)
class HostKeyInfo:
    """What the user sees for an unknown host key."""

    host: str
    port: int
    key_type: str  # "ssh-ed25519"
    fingerprint: str  # "SHA256:…" as OpenSSH prints it
    known_hosts: Path


HostKeyDecider = Callable[[HostKeyInfo], HostKeyDecision]


def refuse_unknown(info: HostKeyInfo) -> HostKeyDecision:
    return HostKeyDecision.REFUSE


def accept_new(info: HostKeyInfo) -> HostKeyDecision:
    """Like OpenSSH's StrictHostKeyChecking=accept-new: trust and remember a first key."""
    return HostKeyDecision.ACCEPT_ALWAYS


def fingerprint_sha256(key_blob: bytes) -> str:
    """OpenSSH's ``SHA256:<base64 without padding>`` of a public key blob."""
    digest = base64.b64encode(hashlib.sha256(key_blob).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"


def known_hosts_name(host: str, port: int) -> str:
    """``host`` for port 22, else ``[host]:port`` (OpenSSH's spelling)."""
    return host if port == 22 else f"[{host}]:{port}"


def append_known_host(path: Path, host: str, port: int, key: Any) -> None:
    """Append one ``name keytype base64`` line to ``path`` (created 0600 with its folder)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    line = f"{known_hosts_name(host, port)} {key.get_name()} {key.get_base64()}\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        if f.tell() > 0:
            with open(path, "rb") as check:
                check.seek(-1, os.SEEK_END)
                if check.read(1) != b"\n":
                    f.write("\n")
        f.write(line)


def make_policy(decide: HostKeyDecider, known_hosts: Path, port: int) -> Any:
    """A paramiko MissingHostKeyPolicy calling ``decide`` for unknown keys."""
    import paramiko

    class _Policy(paramiko.MissingHostKeyPolicy):  # type: ignore[misc]
        def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
            host = hostname
            if host.startswith("[") and "]:" in host:
                host = host[1 : host.index("]:")]
            info = HostKeyInfo(
                host, port, key.get_name(), fingerprint_sha256(key.asbytes()), known_hosts
            )
            decision = decide(info)
            if decision is HostKeyDecision.REFUSE:
                raise HostKeyError(
                    f"{known_hosts_name(host, port)}: unknown host key {info.fingerprint} "
                    f"({info.key_type}) was refused; accept it to connect"
                )
            client.get_host_keys().add(hostname, key.get_name(), key)
            if decision is HostKeyDecision.ACCEPT_ALWAYS:
                append_known_host(known_hosts, host, port, key)

    return _Policy()
