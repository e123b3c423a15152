"""A real OpenSSH server on a free loopback port, for the SSH target tests.

Decision on users: as root, the tests connect as a dedicated unprivileged user
(``odtest``, created once with ``useradd`` and given a random password once per machine with
``chpasswd``): root would pass every permission check, so "unwritable deployment folder" and
password authentication could not be tested honestly. Not as root, sshd can only log in as the
current user, with keys; password tests are skipped with that reason.

The server's files live in a world-readable temporary folder because sshd reads
``authorized_keys`` with the user's privileges. Host and client keys stay 0600.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
TEST_USER = "odtest"


def sshd_missing_reason() -> str | None:
    """Why no sshd test can run here, or None."""
    if not os.path.exists(SSHD):
        return f"{SSHD} is absent (apt-get install openssh-server)"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen is absent (apt-get install openssh-client)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keygen(path: Path, passphrase: str = "", kind: str = "ed25519") -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, "-N", passphrase, "-C", "designer-test", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


@dataclass
class TestUser:
    name: str
    password: str | None  # None: password auth cannot be tested
    home: Path


def ensure_test_user() -> TestUser:
    """As root: the ``odtest`` user with a fresh random password. Otherwise: ourselves."""
    import pwd

    if os.geteuid() != 0:
        me = pwd.getpwuid(os.getuid())
        return TestUser(me.pw_name, None, Path(me.pw_dir))
    try:
        entry = pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "-m", "-s", "/bin/sh", TEST_USER], check=True, capture_output=True
        )
        entry = pwd.getpwnam(TEST_USER)
    password = _machine_password()
    subprocess.run(
        ["chpasswd"], input=f"{TEST_USER}:{password}\n", text=True, check=True, capture_output=True
    )
    return TestUser(TEST_USER, password, Path(entry.pw_dir))


def _machine_password() -> str:
    """One random password per machine, kept in a root-only file: test sessions running at
    the same time then agree on it instead of resetting each other's."""
    path = Path("/root/.cache/onnx-designer-tests/odtest-password")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not path.exists():
        draft = path.with_name(f"{path.name}.{os.getpid()}")
        draft.write_text("pw-" + secrets.token_hex(8))
        draft.chmod(0o600)
        with contextlib.suppress(FileExistsError):
            os.link(draft, path)  # atomic: the first session's password wins
        draft.unlink()
    return path.read_text().strip()


class SshServer:
    """One ``sshd -D -e -f CONFIG`` process; :meth:`kill_all` also kills its session children
    (a dropped connection as the client sees it)."""

    def __init__(self, folder: Path, authorized_keys: Path, password_auth: bool = True) -> None:
        self.folder = folder
        self.port = free_port()
        self.host_key = folder / "host_ed25519"
        if not self.host_key.exists():
            keygen(self.host_key)
        self.config = folder / f"sshd_config_{self.port}"
        self.log = folder / f"sshd_{self.port}.log"
        self.config.write_text(
            f"ListenAddress 127.0.0.1\nPort {self.port}\nHostKey {self.host_key}\n"
            f"AuthorizedKeysFile {authorized_keys}\n"
            f"PasswordAuthentication {'yes' if password_auth else 'no'}\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin yes\n"
            "UsePAM no\nStrictModes no\nSubsystem sftp internal-sftp\nLogLevel VERBOSE\n"
            f"PidFile {folder}/sshd_{self.port}.pid\nMaxStartups 50\nMaxSessions 50\n"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> SshServer:
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(self.config)],
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"sshd did not listen on {self.port}: {self.log.read_text()[-2000:]}")

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
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
        found: list[int] = []
        todo = [self.proc.pid]
        while todo:
            pid = todo.pop()
            for child in children.get(pid, []):
                found.append(child)
                todo.append(child)
        return found

    def kill_all(self) -> None:
        """SIGKILL sshd and every process it started (by pid): the client sees a dead link."""
        if self.proc is None:
            return
        for pid in [self.proc.pid, *self.descendants()]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(5)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None


def make_server_folder() -> Path:
    """A 0755 temp folder (sshd reads authorized_keys as the test user)."""
    folder = Path(tempfile.mkdtemp(prefix="designer-sshd-"))
    folder.chmod(0o755)
    return folder


def processes_with(marker: str) -> list[int]:
    """Pids whose command line contains ``marker`` (to prove a remote process is gone)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry))
    return found
