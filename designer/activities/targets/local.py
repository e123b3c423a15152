"""This machine as a target: subprocesses in their own process group, plain file copies."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from designer.activities.targets.base import (
    PLATFORM_PROBE,
    CancelToken,
    LineCallback,
    PlatformInfo,
    ProgressCallback,
    RunResult,
    TargetError,
    parse_platform_probe,
    sha256_file,
)
from designer.activities.targets.streams import LineSplitter

__all__ = ["LocalTarget"]

_KILL_GRACE_S = 2.0


class LocalTarget:
    """Runs commands on this machine. ``python`` is the interpreter activities use (default:
    the one running the designer, which has onnxruntime)."""

    def __init__(self, python: str | None = None) -> None:
        self.python = python or sys.executable
        self._platform: PlatformInfo | None = None

    @property
    def name(self) -> str:
        return "local"

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
        """Start ``argv`` in a new session (its own process group), pump both pipes on
        threads, poll for cancel every 50 ms. Cancel or timeout: SIGTERM to the group, SIGKILL
        after 2 s."""
        full_env = None if env is None else {**os.environ, **env}
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise TargetError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None
        out, err = LineSplitter(on_stdout), LineSplitter(on_stderr)
        pumps = [
            threading.Thread(target=_pump, args=(proc.stdout, out), daemon=True),
            threading.Thread(target=_pump, args=(proc.stderr, err), daemon=True),
        ]
        for pump in pumps:
            pump.start()
        cancelled = False
        while proc.poll() is None:
            timed_out = timeout is not None and time.monotonic() - start > timeout
            if (cancel is not None and cancel.wait(0.05)) or timed_out:
                cancelled = True
                _kill_group(proc)
                break
            if cancel is None:
                time.sleep(0.05)
        proc.wait()
        for pump in pumps:
            pump.join(5)
        return RunResult(
            tuple(argv),
            proc.returncode,
            out.close(),
            err.close(),
            cancelled,
            time.monotonic() - start,
        )

    def put(self, local: Path, remote: str, progress: ProgressCallback | None = None) -> None:
        _copy(local, Path(remote), progress)

    def get(self, remote: str, local: Path, progress: ProgressCallback | None = None) -> None:
        _copy(Path(remote), local, progress)

    def hashes(self, paths: Sequence[str]) -> dict[str, str | None]:
        result: dict[str, str | None] = {}
        for path in paths:
            try:
                result[path] = sha256_file(Path(path))
            except OSError:
                result[path] = None
        return result

    def mkdir(self, path: str) -> None:
        try:
            Path(path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TargetError(f"cannot create folder {path}: {exc.strerror or exc}") from None

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def remove(self, path: str) -> None:
        p = Path(path)
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)

    def resolve(self, path: str) -> str:
        p = Path(path).expanduser()
        return str(p if p.is_absolute() else Path.home() / p)

    def check_writable(self, path: str) -> str:
        absolute = self.resolve(path)
        self.mkdir(absolute)
        try:
            with tempfile.NamedTemporaryFile(dir=absolute, prefix=".write-test-"):
                pass
        except OSError as exc:
            raise TargetError(
                f"deployment folder {absolute} is not writable ({exc.strerror or exc}); "
                "choose another folder or fix its permissions"
            ) from None
        return absolute

    def platform(self) -> PlatformInfo:
        """Probe ``self.python`` once (about 30 ms) and remember the answer."""
        if self._platform is None:
            result = self.run([self.python, "-c", PLATFORM_PROBE], timeout=60)
            if not result.ok:
                raise TargetError(f"local python {self.python} failed: {result.last_error_line()}")
            self._platform = parse_platform_probe(result.stdout, str(Path.home()))
        return self._platform

    def close(self) -> None:
        pass

    def __enter__(self) -> LocalTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pump(stream: object, splitter: LineSplitter) -> None:
    read = stream.read1 if hasattr(stream, "read1") else stream.read  # type: ignore[attr-defined]
    while data := read(65536):
        splitter.feed(data)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after the grace period."""
    for sig, wait in ((signal.SIGTERM, _KILL_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; children may survive it: kill the group for good.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        return


def _copy(src: Path, dst: Path, progress: ProgressCallback | None) -> None:
    """Copy in 1 MiB chunks to a temp file beside ``dst``, then rename (atomic)."""
    try:
        total = src.stat().st_size
        fd, tmp = tempfile.mkstemp(dir=dst.parent, prefix=f".{dst.name}.", suffix=".part")
    except OSError as exc:
        raise TargetError(f"cannot copy {src} to {dst}: {exc.strerror or exc}") from None
    done = 0
    try:
        with open(src, "rb") as fin, os.fdopen(fd, "wb") as fout:
            while block := fin.read(1 << 20):
                fout.write(block)
                done += len(block)
                if progress is not None:
                    progress(done, total)
        shutil.copymode(src, tmp)
        os.replace(tmp, dst)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise TargetError(f"cannot copy {src} to {dst}: {exc.strerror or exc}") from None
