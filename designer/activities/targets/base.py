"""The Target protocol: where an activity runs (this machine or an SSH host), and its errors.

A target runs argument vectors (never shell strings: every argument is quoted with
``shlex.quote`` where a shell is involved), streams stdout/stderr line by line to callbacks,
cancels a run by killing its whole process group, copies files both ways and hashes them.
Every long call takes an optional :class:`CancelToken` and/or progress callback so the GUI can
run it off the GUI thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from designer.core.errors import DesignerError

__all__ = [
    "AuthenticationError",
    "CancelToken",
    "Cancelled",
    "ConnectionLost",
    "HostKeyError",
    "LineCallback",
    "PlatformInfo",
    "ProgressCallback",
    "RunResult",
    "Target",
    "TargetError",
    "sha256_file",
]

LineCallback = Callable[[str], None]
ProgressCallback = Callable[[int, int], None]  # (bytes done, bytes total)


class TargetError(DesignerError):
    """Something failed on or on the way to a target (one line, names the target)."""


class ConnectionLost(TargetError):
    """The connection dropped while talking to the target."""


class AuthenticationError(TargetError):
    """The target refused our credentials."""


class HostKeyError(TargetError):
    """The host key is unknown and was refused, or it changed since it was trusted."""


class Cancelled(DesignerError):
    """The user cancelled; whatever was already produced is kept."""


class CancelToken:
    """A thread-safe flag set by the GUI (or Ctrl+C) and polled by long operations."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True as soon as cancelled."""
        return self._event.wait(seconds)

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled("cancelled")


@dataclass(frozen=True)
class RunResult:
    """How a command ended. ``cancelled`` runs were killed on request (exit code < 0)."""

    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    cancelled: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.cancelled

    def last_error_line(self) -> str:
        """The last non-empty stderr line (for one-line error messages)."""
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else f"exit status {self.exit_code}"


@dataclass(frozen=True)
class PlatformInfo:
    """What deployment needs to know of a target: OS, machine, Python and pip tags."""

    system: str  # "Linux"
    machine: str  # "x86_64", "aarch64"
    python: str | None  # absolute path of python3, None if absent
    python_version: tuple[int, int, int] | None
    platform_tags: tuple[str, ...]  # pip --platform values, most specific first
    home: str
    os_name: str = ""  # "Debian 12", "Ubuntu 22.04" (from /etc/os-release); "" if unknown

    def describe(self) -> str:
        """``Linux aarch64, Debian 12, Python 3.11`` (what the connection test and the
        dependency panel show)."""
        parts = [f"{self.system} {self.machine}".strip() or "unknown system"]
        if self.os_name:
            parts.append(self.os_name)
        if self.python_version is None:
            parts.append("no python3")
        else:
            parts.append(f"Python {self.python_version[0]}.{self.python_version[1]}")
        return ", ".join(parts)

    @property
    def python_tag(self) -> str:
        """``"311"`` for CPython 3.11 (pip --python-version takes "3.11")."""
        if self.python_version is None:
            return ""
        return f"{self.python_version[0]}{self.python_version[1]}"


@runtime_checkable
class Target(Protocol):
    """Where an activity runs. Paths on the target are strings (POSIX on SSH targets)."""

    @property
    def name(self) -> str: ...

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        on_stdout: LineCallback | None = None,
        on_stderr: LineCallback | None = None,
        cancel: CancelToken | None = None,
        timeout: float | None = None,
    ) -> RunResult:
        """Run ``argv`` and wait, streaming output lines. On cancel the process group is
        killed and the result has ``cancelled=True``. Raises ConnectionLost if the link drops."""
        ...

    def put(self, local: Path, remote: str, progress: ProgressCallback | None = None) -> None:
        """Copy a local file to ``remote`` (parent folders must exist); atomic on the target."""
        ...

    def get(self, remote: str, local: Path, progress: ProgressCallback | None = None) -> None:
        """Copy ``remote`` to a local file (atomic locally)."""
        ...

    def hashes(self, paths: Sequence[str]) -> dict[str, str | None]:
        """SHA-256 (hex) of each path; None for a missing or unreadable file."""
        ...

    def mkdir(self, path: str) -> None:
        """Create ``path`` and its parents (no error if it exists)."""
        ...

    def exists(self, path: str) -> bool: ...

    def remove(self, path: str) -> None:
        """Delete a file or a whole folder (missing is fine)."""
        ...

    def resolve(self, path: str) -> str:
        """An absolute path: relative paths are taken from the target user's home."""
        ...

    def check_writable(self, path: str) -> str:
        """Create ``path`` if needed and prove it is writable; returns its absolute form.
        Raises TargetError naming the folder otherwise."""
        ...

    def platform(self) -> PlatformInfo: ...

    def close(self) -> None: ...


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a local file, read in 1 MiB chunks (~1 GB/s)."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


# Shell snippet shared by both targets: report python3's path, version and platform as JSON.
PLATFORM_PROBE = (
    "import json,os,platform,sys,sysconfig;"
    "print(json.dumps({'system':platform.system(),'machine':platform.machine(),"
    "'python':sys.executable,'version':list(sys.version_info[:3]),"
    "'platform':sysconfig.get_platform(),'libc':list(platform.libc_ver()),"
    "'home':os.path.expanduser('~'),'os_release':open('/etc/os-release').read()"
    " if os.access('/etc/os-release',os.R_OK) else ''}))"
)


def os_name_from_release(text: str) -> str:
    """``Debian 12`` from /etc/os-release's NAME (without "GNU/Linux") and VERSION_ID."""
    import shlex

    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().isidentifier():
            try:
                words = shlex.split(value)
            except ValueError:
                continue
            fields[key.strip()] = words[0] if words else ""
    name = fields.get("NAME", "").replace(" GNU/Linux", "").strip()
    return f"{name} {fields.get('VERSION_ID', '')}".strip()


def platform_tags(machine: str, libc: Sequence[str], system: str) -> tuple[str, ...]:
    """pip ``--platform`` tags a target accepts, most specific first (manylinux for glibc)."""
    if system != "Linux":
        return ()
    if len(libc) >= 2 and libc[0] == "glibc" and libc[1]:
        try:
            major, minor = (int(x) for x in libc[1].split(".")[:2])
        except ValueError:
            major, minor = 2, 17
    else:
        major, minor = 2, 17
    tags = [f"manylinux_{major}_{m}_{machine}" for m in range(minor, 16, -1)]
    tags.append(f"manylinux2014_{machine}")
    tags.append(f"linux_{machine}")
    return tuple(tags)


def parse_platform_probe(stdout: str, home_fallback: str) -> PlatformInfo:
    """PlatformInfo from :data:`PLATFORM_PROBE`'s output (TargetError on garbage)."""
    import json

    try:
        data = json.loads(stdout.strip().splitlines()[-1])
        version = tuple(int(x) for x in data["version"])
    except (ValueError, KeyError, IndexError, TypeError):
        raise TargetError(
            f"python3 on the target printed unexpected output: {stdout[:80]!r}"
        ) from None
    return PlatformInfo(
        system=str(data.get("system", "")),
        machine=str(data.get("machine", "")),
        python=str(data.get("python", "")),
        python_version=(version[0], version[1], version[2]),
        platform_tags=platform_tags(
            str(data.get("machine", "")), data.get("libc") or [], str(data.get("system", ""))
        ),
        home=str(data.get("home") or home_fallback),
        os_name=os_name_from_release(str(data.get("os_release") or "")),
    )
