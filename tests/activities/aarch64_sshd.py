"""The emulated aarch64 target's server: sshd of the cached root (see aarch64.py) on a loopback
port, in a private mount namespace (``unshare --mount``).

The cached root is the lowest layer of an overlay, extra read-only layers (e.g. jetson.py's)
lie above it and a per-session folder is the upper one: the cache is never changed and two
sessions never meet. ``/proc``, a minimal ``/dev`` (its own tmpfs with the usual character
devices) and read-only binds are mounted inside; all of it vanishes with the namespace when
sshd and its children are stopped by pid. The client gets a fresh key and a known_hosts line.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aarch64 import (
    TEST_USER,
    Unavailable,
    cache_base,
    interpreter_layer,
    prepare,
    unavailable,
)
from sshd import free_port, keygen

from designer.activities.targets import SshSettings, SshTarget

CONF_DIR = "etc/ssh/designer-test"  # inside the root
OWNER = "owner.pid"  # in a session folder: the test process that started it
START_TIMEOUT = 120.0  # sshd under emulation, on a busy machine
DEV_NODES = {
    "null": (1, 3),
    "zero": (1, 5),
    "full": (1, 7),
    "random": (1, 8),
    "urandom": (1, 9),
    "tty": (5, 0),
}
DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}


@dataclass
class Aarch64Server:
    """sshd of the emulated root on a loopback port, in its own mount namespace."""

    root: Path
    folder: Path  # this session's host folder: overlay upper/work/merged, keys, log
    layers: Sequence[Path] = ()  # read-only layers above the root (topmost first)
    binds: Sequence[tuple[Path, str]] = ()  # host folder → read-only at this path inside
    devices: Sequence[str] = ()  # extra /dev names, made as null devices (a GPU node's place)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def upper(self) -> Path:
        return self.folder / "upper"

    @property
    def log(self) -> Path:
        return self.folder / "sshd.log"

    def write_config(self, authorized_keys: str) -> Path:
        """Config, fresh host key and authorized_keys in the upper layer; returns the host
        key's public file (on the host)."""
        conf = self.upper / CONF_DIR
        conf.mkdir(parents=True, exist_ok=True)
        host_key = keygen(conf / "host_ed25519")
        (conf / "authorized_keys").write_text(authorized_keys)
        (conf / "authorized_keys").chmod(0o644)
        (conf / "sshd_config").write_text(
            f"ListenAddress 127.0.0.1\nPort {self.port}\nHostKey /{CONF_DIR}/host_ed25519\n"
            f"AuthorizedKeysFile /{CONF_DIR}/authorized_keys\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nUsePAM no\n"
            "StrictModes no\nSubsystem sftp internal-sftp\nLogLevel VERBOSE\nPidFile none\n"
            "MaxStartups 50\nMaxSessions 50\n"
        )
        return Path(f"{host_key}.pub")

    def start(self) -> Aarch64Server:
        for name in ("upper", "work", "merged"):
            (self.folder / name).mkdir(parents=True, exist_ok=True)
        # setpriv --pdeathsig: sshd is killed with the test process even when that one dies
        # without running its finalizers (SIGKILL, `timeout`); the exec chain keeps the pid.
        argv = ["setpriv", "--pdeathsig", "KILL"] if shutil.which("setpriv") else []
        argv += ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c"]
        argv += [self.script(), "sh"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.proc = None
                raise Unavailable(f"the emulated sshd exited: {self._log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise Unavailable(f"the emulated sshd did not listen within {START_TIMEOUT:.0f} s")

    def script(self) -> str:
        """The shell run in the new mount namespace: overlay, /proc, a minimal /dev (its own
        tmpfs: nothing of the host's /dev but the usual character devices), read-only binds,
        then sshd in the chroot."""
        q = shlex.quote
        merged = self.folder / "merged"
        lower = ":".join(str(p) for p in [*self.layers, self.root])
        options = f"lowerdir={lower},upperdir={self.upper},workdir={self.folder / 'work'}"
        dev = merged / "dev"
        lines = [
            "set -e",
            f"mount -t overlay overlay -o {q(options)} {q(str(merged))}",
            f"mount -t proc proc {q(str(merged / 'proc'))}",
            f"mount -t tmpfs -o mode=755,nosuid dev {q(str(dev))}",
        ]
        nodes = [*DEV_NODES.items(), *((name, (1, 3)) for name in self.devices)]
        for name, (major, minor) in nodes:
            lines.append(f"mknod -m 666 {q(str(dev / name))} c {major} {minor}")
        for name, link in DEV_LINKS.items():
            lines.append(f"ln -s {q(link)} {q(str(dev / name))}")
        lines.append(f"mkdir {q(str(dev / 'pts'))} {q(str(dev / 'shm'))}")
        for host, inside in self.binds:
            point = q(str(merged / inside.lstrip("/")))
            lines.append(f"mkdir -p {point} && mount --bind {q(str(host))} {point}")
            lines.append(f"mount -o remount,bind,ro {point}")
        lines.append(
            f"exec chroot {q(str(merged))} /usr/sbin/sshd -D -e -f /{CONF_DIR}/sshd_config"
        )
        return "\n".join(lines) + "\n"

    def _log_tail(self) -> str:
        try:
            lines = [x for x in self.log.read_text(errors="replace").splitlines() if x.strip()]
        except OSError:
            return "?"
        return " | ".join(lines[-3:])

    def descendants(self) -> list[int]:
        if self.proc is None:
            return []
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
        found, todo = [], [self.proc.pid]
        while todo:
            for child in children.get(todo.pop(), []):
                found.append(child)
                todo.append(child)
        return found

    def stop(self) -> None:
        """SIGTERM sshd, then SIGKILL it and whatever it started (by pid); the namespace and
        its mounts go with the last of them."""
        if self.proc is None:
            return
        rest = self.descendants()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        for pid in rest:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc = None


@dataclass
class Aarch64Env:
    """A running emulated target and what a client needs to log in."""

    server: Aarch64Server
    key: Path
    known_hosts: Path
    user: str = TEST_USER

    @property
    def root(self) -> Path:
        return self.server.root

    def settings(self, **changes: object) -> SshSettings:
        base: dict[str, object] = {
            "host": "127.0.0.1",
            "user": self.user,
            "port": self.server.port,
            "key_file": self.key,
            "known_hosts": self.known_hosts,
            "ssh_config": self.server.folder / "no_ssh_config",
            "connect_timeout": 60.0,
        }
        base.update(changes)
        return SshSettings(**base)  # type: ignore[arg-type]

    def connect(self, **changes: object) -> SshTarget:
        return SshTarget(self.settings(**changes)).connect()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def chrooted_in(merged: Path) -> list[int]:
    """Pids whose root directory is ``merged`` (a session's sshd and all it started)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{entry}/root") == str(merged):
                    found.append(int(entry))
    return found


def reap_stale_sessions(base: Path) -> None:
    """Sessions whose test process died without stopping them (SIGKILL): kill what still runs
    chrooted in them (by pid) and remove their folders."""
    for folder in base.glob("aarch64-*"):
        try:
            owner = int((folder / OWNER).read_text())
        except (OSError, ValueError):
            continue
        if _alive(owner):
            continue
        for pid in chrooted_in(folder / "merged"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def emulated_target(
    root: Path,
    layers: Sequence[Path] = (),
    binds: Sequence[tuple[Path, str]] = (),
    devices: Sequence[str] = (),
) -> Iterator[Aarch64Env]:
    """Start sshd in ``root`` (see :class:`Aarch64Server` for the rest), yield an
    Aarch64Env, stop it and remove the session's folder."""
    base = cache_base() / "sessions"
    base.mkdir(parents=True, exist_ok=True)
    reap_stale_sessions(base)
    folder = Path(tempfile.mkdtemp(prefix="aarch64-", dir=base))
    (folder / OWNER).write_text(str(os.getpid()))
    qemu = interpreter_layer(folder / "qemu")
    server = Aarch64Server(root, folder, [*layers, *([qemu] if qemu else [])], binds, devices)
    try:
        key = keygen(folder / "client_ed25519")
        host_pub = server.write_config(Path(f"{key}.pub").read_text())
        kind, blob = host_pub.read_text().split()[:2]
        known_hosts = folder / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{server.port} {kind} {blob}\n")
        known_hosts.chmod(0o600)
        server.start()
        yield Aarch64Env(server, key, known_hosts)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def start_or_skip(
    stack: contextlib.ExitStack,
    layers: Sequence[Path] = (),
    binds: Sequence[tuple[Path, str]] = (),
    devices: Sequence[str] = (),
) -> Aarch64Env:
    """Prepare the root and start a server whose stop is pushed onto ``stack``; skip (fail
    under CI) with the reason when the emulated target cannot be had."""
    try:
        return stack.enter_context(emulated_target(prepare(), layers, binds, devices))
    except Unavailable as exc:
        unavailable(str(exc))
