"""An emulated aarch64 (Jetson-like) SSH target: Debian 12 arm64 under qemu-user, sshd in a chroot.

How it works (all as root, every step bounded by a timeout):

1. Tools: ``qemu-user-static``, ``binfmt-support``, ``mmdebstrap`` and ``arch-test`` are
   installed with apt only when missing.
2. binfmt: ``binfmt_misc`` is mounted if needed and ``qemu-aarch64`` enabled
   (``update-binfmts``, else a registration written with the ``F`` flag), so the kernel runs
   aarch64 ELF files through qemu, inside a chroot too.
3. The root: ``mmdebstrap`` builds Debian 12 arm64 with openssh-server, python3 and
   python3-venv ONCE (about 4 minutes) into ``<name>.build-<pid>``, adds the test user, writes a
   stamp and renames it into place, so a killed build is never taken as a cache. It lives
   outside the checkout: ``ONNX_DESIGNER_AARCH64_ROOT`` or
   ``/var/cache/onnx-designer-tests/aarch64-root`` (``~/.cache/…`` when that is not writable).
4. A server (aarch64_sshd.py): sshd of that root on a loopback port in a private mount
   namespace, the root the read-only lower layer of an overlay, stopped by pid afterwards.

Where something cannot be had (not root, no binfmt, no network to Debian's mirror), the tests
skip with that reason; with ``CI=true`` they fail instead, since CI must run them.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

RECIPE = 1  # bump when the root's contents change: older caches are rebuilt
SUITE = "bookworm"
PACKAGES = ("openssh-server", "python3", "python3-venv", "ca-certificates")
TEST_USER = "odtest"
STAMP = ".designer-test-root.json"
APT_TOOLS = {
    "/usr/bin/qemu-aarch64-static": "qemu-user-static",
    "/usr/sbin/update-binfmts": "binfmt-support",
    "/usr/bin/mmdebstrap": "mmdebstrap",
    "/usr/bin/arch-test": "arch-test",
}
BINFMT = Path("/proc/sys/fs/binfmt_misc")
# The kernel's aarch64 ELF pattern (as qemu's own qemu-binfmt-conf.sh writes it).
AARCH64_MAGIC = r"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00"
AARCH64_MASK = r"\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff"


def _seconds(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


MIRROR = os.environ.get("ONNX_DESIGNER_DEBIAN_MIRROR", "http://deb.debian.org/debian")
BUILD_TIMEOUT = _seconds("ONNX_DESIGNER_AARCH64_BUILD_TIMEOUT", 900)
APT_TIMEOUT = 600.0
# pytest-timeout for the modules using the target: the first root build runs inside the first
# test's setup (apt + mmdebstrap), later runs take about a minute.
MODULE_TIMEOUT = int(BUILD_TIMEOUT + 2 * APT_TIMEOUT + 300)


class Unavailable(Exception):
    """The emulated target cannot be had on this machine (the message says why)."""


def unavailable(reason: str) -> NoReturn:
    """Skip with ``reason``; under CI (``CI=true``) fail instead, since CI must run these."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"aarch64 target unavailable in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def cache_base() -> Path:
    """Where the root (and the test wheel cache) live: outside the checkout, kept between runs."""
    override = os.environ.get("ONNX_DESIGNER_TEST_CACHE")
    if override:
        return Path(override)
    system = Path("/var/cache/onnx-designer-tests")
    if getattr(os, "geteuid", lambda: -1)() == 0:  # root (no geteuid: not POSIX)
        return system
    return Path(os.path.expanduser("~/.cache/onnx-designer-tests"))


def root_path() -> Path:
    override = os.environ.get("ONNX_DESIGNER_AARCH64_ROOT")
    return Path(override) if override else cache_base() / "aarch64-root"


def wheel_cache() -> Path:
    """Host-side wheels for the emulated target (pip download fills it once)."""
    return cache_base() / "wheels"


def _run(argv: Sequence[str], timeout: float, what: str) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise Unavailable(f"{what} took more than {timeout:.0f} s") from None
    except OSError as exc:
        raise Unavailable(f"{what}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        lines = [x for x in (done.stderr + done.stdout).splitlines() if x.strip()]
        raise Unavailable(f"{what} failed: {lines[-1] if lines else done.returncode}")
    return done


def host_problem() -> str | None:
    """Why this host cannot run the emulated target at all, or None."""
    if platform.system() != "Linux":
        return "the emulated aarch64 target needs Linux (binfmt_misc, chroot)"
    if os.geteuid() != 0:
        return "the emulated aarch64 target needs root (chroot, mounts, binfmt)"
    if platform.machine() != "x86_64":
        return f"the emulated aarch64 target is made for x86_64 hosts, not {platform.machine()}"
    for tool in ("unshare", "chroot", "mount", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"{tool} is absent"
    return None


def ensure_tools() -> None:
    """apt-get install what is missing (only then; the dpkg lock is waited for)."""
    missing = sorted({pkg for path, pkg in APT_TOOLS.items() if not os.path.exists(path)})
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise Unavailable(f"{', '.join(missing)} missing and no apt-get to install them")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    lock = ["-o", "DPkg::Lock::Timeout=300"]
    for argv in (
        ["apt-get", *lock, "update", "-qq"],
        ["apt-get", *lock, "install", "-y", "-qq", "--no-install-recommends", *missing],
    ):
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=APT_TIMEOUT, env=env
            )
        except subprocess.TimeoutExpired:
            raise Unavailable(f"apt-get took more than {APT_TIMEOUT:.0f} s") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["?"])[-1]
            raise Unavailable(f"cannot install {', '.join(missing)}: {last}")


@dataclass(frozen=True)
class Binfmt:
    interpreter: str
    fix_binary: bool  # "F": the kernel keeps the interpreter open, chroots need no copy of it


def _binfmt_entry() -> Binfmt | None:
    entry = BINFMT / "qemu-aarch64"
    try:
        text = entry.read_text()
    except OSError:
        return None
    if not text.startswith("enabled"):
        return None
    fields = dict(line.split(" ", 1) for line in text.splitlines()[1:] if " " in line)
    return Binfmt(fields.get("interpreter", ""), "F" in fields.get("flags:", ""))


def ensure_binfmt() -> Binfmt:
    """Make the kernel run aarch64 ELF files through qemu; Unavailable when it cannot."""
    if not (BINFMT / "register").exists():
        try:
            _run(
                ["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT)],
                30,
                "mounting binfmt_misc",
            )
        except Unavailable as exc:
            raise Unavailable(f"binfmt cannot be registered here ({exc})") from None
    found = _binfmt_entry()
    if found is not None:
        return found
    if shutil.which("update-binfmts"):
        with contextlib.suppress(Unavailable):
            _run(["update-binfmts", "--enable", "qemu-aarch64"], 30, "update-binfmts")
        found = _binfmt_entry()
        if found is not None:
            return found
    line = f":qemu-aarch64:M::{AARCH64_MAGIC}:{AARCH64_MASK}:/usr/bin/qemu-aarch64-static:F"
    try:
        (BINFMT / "register").write_text(line)
    except OSError as exc:
        raise Unavailable(
            f"binfmt cannot be registered here ({BINFMT}/register: {exc.strerror or exc})"
        ) from None
    found = _binfmt_entry()
    if found is None:
        raise Unavailable("binfmt cannot be registered here (qemu-aarch64 stays disabled)")
    return found


def root_ready(root: Path) -> bool:
    try:
        stamp = json.loads((root / STAMP).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(stamp, dict) and stamp.get("recipe") == RECIPE


def _mirror_problem() -> str | None:
    url = f"{MIRROR}/dists/{SUITE}/Release"
    try:
        with urllib.request.urlopen(url, timeout=15) as response:
            response.read(64)
    except OSError as exc:
        return f"no network to Debian's mirror ({url}: {exc}): the aarch64 root cannot be built"
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def customize_root(root: Path) -> None:
    """What the tests need beyond the packages: the test user (key logins only) and sshd's
    privilege-separation folder; the packages' own host keys are dropped (sessions bring one)."""
    chroot = ["chroot", str(root)]
    users = (root / "etc" / "passwd").read_text()
    if f"\n{TEST_USER}:" not in f"\n{users}":
        _run([*chroot, "useradd", "-m", "-s", "/bin/sh", TEST_USER], 120, "useradd in the root")
    # "*" (no password) instead of useradd's "!" (locked): sshd without PAM refuses locked users.
    _run([*chroot, "usermod", "-p", "*", TEST_USER], 120, "usermod in the root")
    (root / "run" / "sshd").mkdir(parents=True, exist_ok=True)
    for key in (root / "etc" / "ssh").glob("ssh_host_*"):
        key.unlink()


def build_root(root: Path, log: Path) -> None:
    """mmdebstrap the root into a temporary folder, customize, stamp, rename into place."""
    problem = _mirror_problem()
    if problem:
        raise Unavailable(problem)
    for stale in root.parent.glob(f"{root.name}.build-*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _pid_alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    draft = root.with_name(f"{root.name}.build-{os.getpid()}")
    shutil.rmtree(draft, ignore_errors=True)
    argv = [
        "mmdebstrap",
        "--arch=arm64",
        "--variant=apt",
        f"--include={','.join(PACKAGES)}",
        SUITE,
        str(draft),
        MIRROR,
    ]
    start = time.monotonic()
    with open(log, "w") as out:
        try:
            done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            shutil.rmtree(draft, ignore_errors=True)
            raise Unavailable(
                f"building the aarch64 root took more than {BUILD_TIMEOUT:.0f} s (log: {log})"
            ) from None
    if done.returncode != 0:
        shutil.rmtree(draft, ignore_errors=True)
        lines = [x for x in log.read_text(errors="replace").splitlines() if x.strip()]
        raise Unavailable(
            f"mmdebstrap failed ({lines[-1] if lines else done.returncode}; log: {log})"
        )
    finish_root(draft, root, time.monotonic() - start)


def finish_root(draft: Path, root: Path, seconds: float = 0.0) -> None:
    """Customize a freshly made root, stamp it and rename it into place (replacing an old
    recipe's root)."""
    customize_root(draft)
    stamp = {"recipe": RECIPE, "suite": SUITE, "packages": list(PACKAGES), "seconds": seconds}
    (draft / STAMP).write_text(json.dumps(stamp))
    if root.exists():
        old = root.with_name(f"{root.name}.old-{os.getpid()}")
        root.rename(old)
        shutil.rmtree(old, ignore_errors=True)
    draft.rename(root)


def ensure_root() -> Path:
    """The cached root, built first if needed (one builder at a time, others wait)."""
    root = root_path()
    if root_ready(root):
        return root
    import fcntl  # POSIX only: imported here so that this module loads everywhere

    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.with_name(f"{root.name}.lock"), "w") as lock:
        deadline = time.monotonic() + BUILD_TIMEOUT + 60
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise Unavailable(
                        "another session's aarch64 root build never finished"
                    ) from None
                time.sleep(2)
        if not root_ready(root):
            build_root(root, root.with_name(f"{root.name}.build.log"))
    return root


_PREPARED: list[Path | Unavailable] = []  # this session's outcome, tried once
BINFMT_FOUND: list[Binfmt] = []


def interpreter_layer(folder: Path) -> Path | None:
    """Without binfmt's ``F`` flag the kernel opens qemu by its path INSIDE the chroot: a layer
    holding a copy of it there (None when the flag is set and nothing is needed)."""
    if not BINFMT_FOUND or BINFMT_FOUND[0].fix_binary or not BINFMT_FOUND[0].interpreter:
        return None
    interpreter = BINFMT_FOUND[0].interpreter
    dest = folder / interpreter.lstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(interpreter, dest)
    return folder


def prepare() -> Path:
    """Everything up to a usable root; raises Unavailable with the reason (once per
    session: later callers get the same answer without trying again)."""
    if not _PREPARED:
        try:
            problem = host_problem()
            if problem:
                raise Unavailable(problem)
            ensure_tools()
            BINFMT_FOUND.append(ensure_binfmt())
            _PREPARED.append(ensure_root())
        except Unavailable as exc:
            _PREPARED.append(exc)
    outcome = _PREPARED[0]
    if isinstance(outcome, Unavailable):
        raise outcome
    return outcome
