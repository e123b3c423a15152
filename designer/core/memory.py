"""How much memory this process may still use, to refuse up front what would not fit.

Two limits count: the address-space limit of the process (``ulimit -v``, RLIMIT_AS, less
what is mapped already) and the memory the system has available (MemAvailable). Either
may be unknown (another OS); then nothing is refused.
"""

from __future__ import annotations

from pathlib import Path

from designer.core.errors import DesignerError

GIB = 1 << 30


class OutOfMemoryError(DesignerError):
    """An operation would need more memory than this machine (or this process) has."""


def _proc_kib(path: str, key: str) -> int | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_bytes() -> int | None:
    """Bytes this process can still allocate, as far as can be told (None: unknown)."""
    limits: list[int] = []
    try:
        import resource  # POSIX only
    except ImportError:  # pragma: no cover - Windows
        resource = None  # type: ignore[assignment]
    if resource is not None:
        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            mapped = _proc_kib("/proc/self/status", "VmSize") or 0
            limits.append(max(soft - mapped, 0))
    system = _proc_kib("/proc/meminfo", "MemAvailable")
    if system is not None:
        limits.append(system)
    return min(limits) if limits else None


def require(needed: int, what: str) -> None:
    """Raise OutOfMemoryError (one line: ``what``, the need, what is available) when
    ``needed`` bytes are more than :func:`available_bytes`."""
    available = available_bytes()
    if available is not None and needed > available:
        raise OutOfMemoryError(
            f"{what} needs about {needed / GIB:.1f} GiB of memory, but only "
            f"{available / GIB:.1f} GiB are available"
        )
