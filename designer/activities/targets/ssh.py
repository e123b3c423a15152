"""An SSH host as a target (paramiko): password or key auth, verified host keys, OpenSSH
proxies, live output, process-group cancel, SFTP transfers with atomic renames."""

from __future__ import annotations

import logging
import select
import shlex
import socket
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from designer.activities.targets.base import (
    PLATFORM_PROBE,
    AuthenticationError,
    CancelToken,
    ConnectionLost,
    HostKeyError,
    LineCallback,
    PlatformInfo,
    ProgressCallback,
    RunResult,
    TargetError,
    parse_platform_probe,
)
from designer.activities.targets.hostkeys import (
    HostKeyDecider,
    fingerprint_sha256,
    known_hosts_name,
    make_policy,
    refuse_unknown,
)
from designer.activities.targets.proxy import resolve_host
from designer.activities.targets.streams import LineSplitter

__all__ = ["SshSettings", "SshTarget", "handshake_problem"]

# paramiko logs a failed handshake with a traceback from its transport thread; without a
# handler Python's last-resort handler prints it over the one-line error. Keep it in the log.
logging.getLogger("paramiko").addHandler(logging.NullHandler())
logger = logging.getLogger(__name__)

_PGID_MARK = b"@@designer-pgid "
_HASH_SCRIPT = (
    'for f in "$@"; do if [ -f "$f" ] && [ -r "$f" ]; then '
    'h=$(sha256sum < "$f") && echo "${h%% *}" || echo -; else echo -; fi; done'
)


@dataclass(frozen=True)
class SshSettings:
    """How to reach one SSH target. Secrets live here only in memory (see secrets.py)."""

    host: str
    user: str
    port: int = 22
    password: str | None = None
    key_file: Path | None = None
    passphrase: str | None = None
    known_hosts: Path | None = None  # default ~/.ssh/known_hosts
    ssh_config: Path | None = None  # default ~/.ssh/config
    connect_timeout: float = 15.0
    name: str | None = None

    @property
    def display_name(self) -> str:
        return self.name or f"{self.user}@{self.host}:{self.port}"

    def known_hosts_path(self) -> Path:
        return self.known_hosts or Path.home() / ".ssh" / "known_hosts"


class SshTarget:
    """A connected SSH target; use :meth:`connect` (or a ``with`` block) before anything."""

    def __init__(self, settings: SshSettings, decide: HostKeyDecider = refuse_unknown) -> None:
        self.settings = settings
        self._decide = decide
        self._client: Any = None
        self._sftp: Any = None
        self._home: str | None = None
        self._platform: PlatformInfo | None = None

    @property
    def name(self) -> str:
        return self.settings.display_name

    # -- connection ------------------------------------------------------------------------
    def connect(self) -> SshTarget:
        """Open the connection (about 0.1-0.3 s on a LAN with a key). Raises HostKeyError,
        AuthenticationError or TargetError with a one-line message."""
        import paramiko

        s = self.settings
        resolved = resolve_host(s.host, s.port, s.user, s.ssh_config)
        where = f"{s.user}@{known_hosts_name(resolved.hostname, resolved.port)}"
        known = s.known_hosts_path()
        client = paramiko.SSHClient()
        if known.is_file():
            try:
                client.load_host_keys(str(known))
            except (OSError, paramiko.SSHException) as exc:
                raise TargetError(f"cannot read known_hosts file {known}: {exc}") from None
        client.set_missing_host_key_policy(make_policy(self._decide, known, resolved.port))
        sock = paramiko.ProxyCommand(resolved.proxy_command) if resolved.proxy_command else None
        pkey = None
        if s.key_file is not None:
            pkey = _load_key(s.key_file, s.passphrase)
        started = time.monotonic()
        try:
            client.connect(
                resolved.hostname,
                port=resolved.port,
                username=s.user,
                password=s.password,
                pkey=pkey,
                look_for_keys=False,
                allow_agent=False,
                sock=sock,
                timeout=s.connect_timeout,
                banner_timeout=s.connect_timeout,
                auth_timeout=s.connect_timeout,
            )
        except HostKeyError:
            client.close()
            raise
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise HostKeyError(
                f"WARNING: the host key of {where} has CHANGED (now {exc.key.get_name()} "
                f"{fingerprint_sha256(exc.key.asbytes())}); this can mean someone is "
                f"intercepting the connection. Refused. If the change is expected, remove the "
                f"old entry from {known}"
            ) from None
        except paramiko.PasswordRequiredException:
            client.close()
            raise AuthenticationError(
                f"{where}: the private key is encrypted; give its passphrase"
            ) from None
        except paramiko.AuthenticationException:
            client.close()
            what = "password" if s.password and pkey is None else "key or password"
            raise AuthenticationError(
                f"{where}: authentication failed (wrong {what}, or not authorized for user "
                f"{s.user})"
            ) from None
        except (OSError, paramiko.SSHException, EOFError) as exc:
            client.close()
            via = f" via proxy ({resolved.proxy_command})" if resolved.proxy_command else ""
            elapsed = time.monotonic() - started
            reason = handshake_problem(exc, s.connect_timeout, elapsed) or (
                getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            )
            raise TargetError(f"cannot connect to {where}{via}: {reason}") from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(5)
        self._client = client
        return self

    def close(self) -> None:
        if self._sftp is not None:
            try:
                self._sftp.close()
            except Exception as exc:  # the connection is going away anyway
                logger.debug("%s: closing SFTP failed (%s: %s)", self.name, type(exc).__name__, exc)
            self._sftp = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> SshTarget:
        if self._client is None:
            self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _transport(self) -> Any:
        transport = self._client.get_transport() if self._client is not None else None
        if transport is None or not transport.is_active():
            raise ConnectionLost(f"{self.name}: the connection was lost")
        return transport

    def _sftp_client(self) -> Any:
        if self._sftp is None:
            try:
                self._sftp = self._client.open_sftp()
            except Exception as exc:
                self._raise_lost(exc, "cannot open SFTP")
        return self._sftp

    def _raise_lost(self, exc: BaseException, what: str) -> None:
        transport = self._client.get_transport() if self._client is not None else None
        if transport is None or not transport.is_active():
            raise ConnectionLost(f"{self.name}: the connection was lost ({what})") from None
        raise TargetError(f"{self.name}: {what}: {exc}") from None

    # -- commands --------------------------------------------------------------------------
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
        """Run ``argv`` (each argument shell-quoted) under ``/bin/sh`` as the leader of the
        session sshd made for it; cancel kills that whole process group on the target."""
        inner = f"printf '%s%s\\n' '{_PGID_MARK.decode()}' \"$$\"; "
        if cwd:
            inner += f"cd -- {shlex.quote(cwd)} || exit 125; "
        inner += "exec "
        if env:
            inner += "env " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + " "
        inner += shlex.join(argv)
        command = f"exec /bin/sh -c {shlex.quote(inner)}"
        start = time.monotonic()
        try:
            channel = self._transport().open_session()
            channel.exec_command(command)
        except ConnectionLost:
            raise
        except Exception as exc:
            self._raise_lost(exc, f"cannot start {argv[0]!r}")
        out, err = LineSplitter(on_stdout), LineSplitter(on_stderr)
        head = b""
        pgid: int | None = None
        cancelled = False
        kill_sent = gave_up_at = 0.0
        while True:
            _readable, _, _ = select.select([channel], [], [], 0.05)
            got = False
            while channel.recv_ready():
                data = channel.recv(65536)
                got = True
                if pgid is None:
                    head += data
                    if b"\n" in head or len(head) > 256:
                        first, _, rest = head.partition(b"\n")
                        if first.startswith(_PGID_MARK):
                            pgid = int(first[len(_PGID_MARK) :] or b"0") or -1
                            data = rest
                        else:
                            pgid, data = -1, head
                        head = b""
                    else:
                        continue
                out.feed(data)
            while channel.recv_stderr_ready():
                err.feed(channel.recv_stderr(65536))
                got = True
            if channel.exit_status_ready() and not got and not channel.recv_ready():
                break
            transport = channel.get_transport()
            if (channel.closed and not channel.exit_status_ready()) or not transport.is_active():
                out.close(), err.close()
                raise ConnectionLost(
                    f"{self.name}: the connection was lost while running {argv[0]!r}"
                )
            timed_out = timeout is not None and time.monotonic() - start > timeout
            if not cancelled and ((cancel is not None and cancel.cancelled) or timed_out):
                cancelled = True
                self._signal_group(pgid, "TERM")
                kill_sent = time.monotonic()
            elif cancelled and kill_sent and time.monotonic() - kill_sent > 2.0:
                self._signal_group(pgid, "KILL")
                kill_sent = 0.0
                gave_up_at = time.monotonic() + 10.0
            elif cancelled and not kill_sent and time.monotonic() > gave_up_at:
                break  # the channel never reported an exit: stop waiting for it
        code = channel.recv_exit_status() if channel.exit_status_ready() else -1
        if code == -1 and not cancelled and not self._alive():
            # paramiko reports -1 for a channel whose transport died: the link dropped.
            out.close(), err.close()
            raise ConnectionLost(f"{self.name}: the connection was lost while running {argv[0]!r}")
        channel.close()
        return RunResult(
            tuple(argv), code, out.close(), err.close(), cancelled, time.monotonic() - start
        )

    def _signal_group(self, pgid: int | None, signal_name: str) -> None:
        if pgid is None or pgid <= 1:
            return
        # "kill -SIG -PGID": no "--", which dash's builtin kill does not accept.
        self._exec_simple(f"kill -{signal_name} -{pgid} 2>/dev/null; true")

    def _exec_simple(self, command: str, timeout: float = 60.0) -> tuple[int, str, str]:
        """Run a shell command line (already quoted) and collect its output."""
        try:
            _, stdout, stderr = self._client.exec_command(command, timeout=timeout)
            out = stdout.read().decode("utf-8", "replace")
            err = stderr.read().decode("utf-8", "replace")
            return stdout.channel.recv_exit_status(), out, err
        except Exception as exc:
            self._raise_lost(exc, "a command failed")
            raise  # unreachable

    # -- files -----------------------------------------------------------------------------
    def put(self, local: Path, remote: str, progress: ProgressCallback | None = None) -> None:
        sftp = self._sftp_client()
        tmp = f"{remote}.part-{uuid.uuid4().hex[:8]}"
        try:
            sftp.put(str(local), tmp, callback=progress, confirm=True)
            sftp.posix_rename(tmp, remote)
        except OSError as exc:
            self._cleanup(tmp)
            raise TargetError(
                f"{self.name}: cannot write {remote}: {exc.strerror or exc}"
            ) from None
        except Exception as exc:
            self._raise_lost(exc, f"copying {local.name} failed")

    def get(self, remote: str, local: Path, progress: ProgressCallback | None = None) -> None:
        sftp = self._sftp_client()
        tmp = local.with_name(f".{local.name}.part-{uuid.uuid4().hex[:8]}")
        try:
            sftp.get(remote, str(tmp), callback=progress)
            tmp.replace(local)
        except FileNotFoundError:
            tmp.unlink(missing_ok=True)
            raise TargetError(f"{self.name}: {remote} does not exist") from None
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            if isinstance(exc, (socket.error, EOFError)) and not self._alive():
                raise ConnectionLost(
                    f"{self.name}: the connection was lost copying {remote}"
                ) from None
            raise TargetError(f"cannot copy {remote} to {local}: {exc.strerror or exc}") from None
        except Exception as exc:
            tmp.unlink(missing_ok=True)
            self._raise_lost(exc, f"copying {remote} failed")

    def _alive(self) -> bool:
        transport = self._client.get_transport() if self._client is not None else None
        return bool(transport is not None and transport.is_active())

    def _cleanup(self, path: str) -> None:
        try:
            self._sftp_client().remove(path)
        except Exception as exc:  # a partial copy left behind is reported, not fatal
            logger.warning(
                "%s: cannot remove the partial file %s (%s: %s)",
                self.name,
                path,
                type(exc).__name__,
                exc,
            )

    def hashes(self, paths: Sequence[str]) -> dict[str, str | None]:
        """One round trip: ``sha256sum`` of each file on the target (in order)."""
        if not paths:
            return {}
        code, out, err = self._exec_simple(
            f"sh -c {shlex.quote(_HASH_SCRIPT)} sh " + " ".join(shlex.quote(p) for p in paths)
        )
        lines = out.split("\n")
        if code != 0 or len(lines) < len(paths):
            raise TargetError(f"{self.name}: cannot hash files ({err.strip() or 'no sha256sum?'})")
        return {p: (h if h != "-" else None) for p, h in zip(paths, lines, strict=False)}

    def mkdir(self, path: str) -> None:
        code, _, err = self._exec_simple(f"mkdir -p -- {shlex.quote(path)}")
        if code != 0:
            raise TargetError(f"{self.name}: cannot create folder {path}: {err.strip()}")

    def exists(self, path: str) -> bool:
        try:
            self._sftp_client().lstat(path)
            return True
        except FileNotFoundError:
            return False
        except OSError:
            return True  # exists but unreadable
        except Exception as exc:
            self._raise_lost(exc, f"checking {path}")
            return False

    def remove(self, path: str) -> None:
        self._exec_simple(f"rm -rf -- {shlex.quote(path)}")

    def home(self) -> str:
        if self._home is None:
            try:
                self._home = str(self._sftp_client().normalize("."))
            except Exception as exc:
                self._raise_lost(exc, "cannot find the home folder")
        return str(self._home)

    def resolve(self, path: str) -> str:
        if path == "~":
            return self.home()
        if path.startswith("~/"):
            path = path[2:]
        return path if path.startswith("/") else f"{self.home().rstrip('/')}/{path}"

    def check_writable(self, path: str) -> str:
        absolute = self.resolve(path)
        q = shlex.quote(absolute)
        code, _, err = self._exec_simple(
            f'mkdir -p -- {q} && t=$(mktemp {q}/.write-test-XXXXXX) && rm -f -- "$t"'
        )
        if code != 0:
            reason = err.strip().splitlines()[-1] if err.strip() else f"exit status {code}"
            raise TargetError(
                f"{self.name}: deployment folder {absolute} is not writable ({reason}); choose "
                "another folder or fix its permissions"
            )
        return absolute

    def platform(self) -> PlatformInfo:
        """One round trip; remembered for the session."""
        if self._platform is None:
            _code, out, _err = self._exec_simple(
                f"python3 -c {shlex.quote(PLATFORM_PROBE)} 2>&1 || "
                "{ echo; echo @@nopython; uname -s; uname -m; }"
            )
            if "@@nopython" in out:
                tail = out.split("@@nopython", 1)[1].split()
                self._platform = PlatformInfo(
                    system=tail[0] if tail else "",
                    machine=tail[1] if len(tail) > 1 else "",
                    python=None,
                    python_version=None,
                    platform_tags=(),
                    home=self.home(),
                )
            else:
                self._platform = parse_platform_probe(out, self.home())
        return self._platform


def _load_key(path: Path, passphrase: str | None) -> Any:
    """Load a private key of any type paramiko knows (Ed25519, ECDSA, RSA)."""
    import paramiko

    if not path.is_file():
        raise AuthenticationError(f"private key {path} does not exist")
    try:
        return paramiko.PKey.from_path(
            str(path), password=passphrase.encode() if passphrase else None
        )
    except (paramiko.PasswordRequiredException, TypeError):
        # cryptography raises TypeError for an encrypted OpenSSH key without a password.
        raise AuthenticationError(f"private key {path} is encrypted; give its passphrase") from None
    except (paramiko.SSHException, ValueError) as exc:
        hint = "wrong passphrase?" if passphrase else "not a private key?"
        raise AuthenticationError(f"cannot load private key {path} ({hint} {exc})") from None
    except OSError as exc:
        raise AuthenticationError(
            f"cannot read private key {path}: {exc.strerror or exc}"
        ) from None


def handshake_problem(exc: BaseException, timeout: float, elapsed: float) -> str | None:
    """What a failed SSH handshake means for the user, or None for other failures.

    paramiko says "Error reading SSH protocol banner…" when the peer sent something that is
    not SSH or closed the connection (nothing appended for an EOF, nor for a banner that
    timed out: ``elapsed``, the seconds the attempt took, tells them apart), and
    "No existing session" when the banner never came within ``timeout`` (a port that accepts
    and stays silent; which of the two arrives first is a race)."""
    text = str(exc).strip()
    banner = "Error reading SSH protocol banner"
    timed_out = text == banner and elapsed >= 0.9 * timeout  # EOF and time-out read the same
    if text == "No existing session" or timed_out or text == f"{banner}timed out":
        return (
            f"the server did not answer the SSH handshake within {timeout:g} s (is an SSH "
            "server listening on that port, or is a firewall holding the connection?)"
        )
    if text.startswith(banner) or "protocol version" in text or "Invalid SSH banner" in text:
        return (
            "the server does not speak SSH (it sent something else or closed the connection "
            "during the handshake); check the host and port"
        )
    return None
