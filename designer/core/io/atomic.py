"""Temporary files of a save: their names, durable writes, and cleaning up after a crash.

Every file a save writes starts as ``.<final name>.~od<pid>@<host>~<random>.<kind>.tmp``
in the folder of its final name (``kind`` is ``part`` for contents, ``journal`` for the
list of data files a save is about to create or replace; the final name is cut short where
the whole would pass the folder's file name length limit). ``pid`` and ``host`` (8 hex
digits of the host name's hash) say which process wrote it: a temporary file is *stale*
when that process no longer runs on this host, or, written on another host (a shared
folder), when it has not changed for a day; one of this process when no save of this
process is writing it any more. The next save into the folder removes stale
files of this naming; nothing else is touched. Temporary files of older versions
(``.<name>.XXXXXXXX.tmp`` beside a model) are removed when older than a day.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import secrets
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

logger = logging.getLogger(__name__)

STALE_SECONDS = 24 * 3600  # for temporary files of another host or an older version
_HOST = hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]
_OURS = re.compile(
    r"^\.(?P<name>.+)\.~od(?P<pid>\d+)@(?P<host>[0-9a-f]{8})~[0-9a-z]+\.(?P<kind>part|journal)\.tmp$"
)
#: Names of the temporary files this process is writing (its own others are stale).
_ACTIVE: set[str] = set()
_LEGACY = re.compile(r"^\.(?P<name>.+\.(onnx|data|designer\.json))\.[a-z0-9_]{8}\.tmp$")


#: File name length limit (bytes) where the folder's own cannot be asked (POSIX's usual).
NAME_MAX = 255


def temp_path(target: Path, kind: str = "part") -> Path:
    """A fresh temporary name for ``target`` in its folder (not created).

    The copy of ``target``'s name in it is cut short (whole characters) where the whole
    name would pass the folder's file name length limit, so any name the folder accepts
    can be saved; the name still matches ``_OURS`` and the stale-file rules apply as to
    any other (they read the process and host, not the name)."""
    token = secrets.token_hex(4)
    suffix = f".~od{os.getpid()}@{_HOST}~{token}.{kind}.tmp"
    room = name_max(target.parent) - len(os.fsencode(f".{suffix}"))
    return target.with_name(f".{_fit(target.name, room)}{suffix}")


def name_max(folder: Path) -> int:
    """The longest file name (bytes) ``folder`` takes; ``NAME_MAX`` where it cannot say."""
    try:
        limit = os.pathconf(folder if str(folder) else ".", "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):  # no pathconf (Windows), no such folder
        return NAME_MAX
    return limit if isinstance(limit, int) and limit > 0 else NAME_MAX


def _fit(name: str, room: int) -> str:
    """The longest start of ``name`` whose encoded file name takes at most ``room`` bytes,
    whole characters only; at least its first character (``_OURS`` needs one)."""
    if len(os.fsencode(name)) <= room:
        return name
    used = 0
    for end, char in enumerate(name):
        used += len(os.fsencode(char))
        if used > room:
            return name[: max(end, 1)]
    return name


def create_temp(target: Path, kind: str = "part", path: Path | None = None) -> tuple[int, Path]:
    """Create a temporary file for ``target`` exclusively (named ``path`` if given, one from
    :func:`temp_path`); returns (fd, path)."""
    while True:
        chosen = path
        path = chosen or temp_path(target, kind)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            fd = os.open(path, flags, 0o666)  # the umask applies, as for any new file
        except FileExistsError:
            if chosen is not None:
                raise
            path = None
            continue
        _ACTIVE.add(path.name)
        return fd, path


def release(path: Path) -> None:
    """``path`` (from :func:`create_temp`) was renamed or removed, or its save is over."""
    _ACTIVE.discard(path.name)


def fsync_dir(folder: Path) -> None:
    """Make renames in ``folder`` durable (where the platform and file system allow it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # Windows cannot open folders; their renames are durable there
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def link_target(path: Path) -> Path:
    """``path``, or the file its symbolic link(s) lead to (the folder of which is where the
    temporary file and the rename happen, so the link itself is never replaced)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a flushed temporary file and one rename; on
    failure ``path`` is as it was and no temporary file stays. A symbolic link is written
    through (its target gets the data, the link stays), as a model opened through one is
    saved to its target."""
    path = link_target(path)
    fd, tmp = create_temp(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    finally:
        release(tmp)
    with contextlib.suppress(OSError):
        fsync_dir(path.parent)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (True when that cannot be told: whatever
    it holds is left alone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except (OSError, OverflowError, ValueError):
        return True  # cannot tell
    return True


def is_stale(path: Path, now: float | None = None) -> bool:
    """True for a temporary file of our naming whose writer is gone (see module doc)."""
    now = time.time() if now is None else now
    match = _OURS.match(path.name)
    try:
        age = now - path.lstat().st_mtime
    except OSError:
        return False
    if match is None:
        return _LEGACY.match(path.name) is not None and age > STALE_SECONDS
    pid = int(match["pid"])
    if match["host"] == _HOST and pid == os.getpid():
        return path.name not in _ACTIVE
    if match["host"] != _HOST or os.name == "nt" or pid <= 0:  # os.kill(pid, 0) ends it there
        return age > STALE_SECONDS
    return not pid_alive(pid)


def write_journal(model: Path, files: list[str], temps: list[str]) -> Path:
    """Record, before they appear, the data files a save creates or makes obsolete and its
    temporary files (paths relative to the model's folder), so that a killed save's
    leftovers can be found by a later one."""
    fd, path = create_temp(model, "journal")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"model": model.name, "files": files, "temps": temps}, f)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            path.unlink()
        release(path)
        raise
    return path


#: Given a folder, a model file name and the journal's files: those still in use.
InUse = Callable[[Path, str, list[str]], set[str]]


def clean_stale(folder: Path, in_use: InUse) -> list[Path]:
    """Remove stale temporary files of our naming in ``folder``; for a stale journal, also
    the data files it lists that ``in_use`` does not report as used. Returns what was
    removed. Errors (a file vanishing, no permission) leave the file where it is."""
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".tmp")]
    except OSError:
        return removed
    now = time.time()
    for entry in sorted(entries, key=lambda e: not e.name.endswith(".journal.tmp")):
        path = Path(entry.path)
        if not entry.is_file(follow_symlinks=False) or not is_stale(path, now):
            continue
        if path.name.endswith(".journal.tmp"):
            removed.extend(_finish_journal(folder, path, in_use))
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed


def _finish_journal(folder: Path, journal: Path, in_use: InUse) -> list[Path]:
    try:
        info = json.loads(journal.read_text(encoding="utf-8"))
        model, files = str(info["model"]), [str(f) for f in info["files"]]
        temps = [str(t) for t in info.get("temps", [])]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        logger.warning("save journal %s cannot be read (%s); left in place", journal, error)
        return []
    removed = _remove(folder, [t for t in temps if _OURS.match(Path(t).name)])
    if not (folder / model).is_file():
        return removed  # nothing to compare with: keep the data files
    used = in_use(folder, model, files)
    return removed + _remove(folder, [f for f in files if f not in used])


def _remove(folder: Path, names: list[str]) -> list[Path]:
    """Remove the regular files ``names`` (relative, inside ``folder``); what was removed.
    A name that leads out of ``folder`` once symbolic links are resolved (a linked
    sub-folder, say, in a folder unpacked from elsewhere with a journal in it) is left
    alone: a journal never removes anything outside its own folder."""
    removed: list[Path] = []
    try:
        root = os.path.realpath(folder)
    except OSError:
        return removed
    for name in names:
        candidate = folder / name
        if Path(name).is_absolute() or ".." in Path(name).parts:
            continue
        with contextlib.suppress(OSError, ValueError):
            if candidate.is_symlink() or not candidate.is_file():
                continue
            if os.path.commonpath([root, os.path.realpath(candidate)]) != root:
                continue
            if os.path.realpath(candidate.parent) != os.path.join(root, *Path(name).parts[:-1]):
                continue  # a linked folder on the way, even one that leads back inside
            candidate.unlink()
            removed.append(candidate)
    return removed


def same_file(source: Path, target: Path) -> bool:
    """True when ``target`` names the file ``source`` is: the same path once resolved (a
    symbolic link, ``..``, another spelling) or the same file reached another way (a hard
    link, a linked folder: ``os.path.samefile`` when both exist)."""
    with contextlib.suppress(OSError, RuntimeError):  # a link loop is not the input
        if source.resolve() == target.resolve():
            return True
    with contextlib.suppress(OSError):  # what cannot be examined is not the input
        return source.exists() and target.exists() and source.samefile(target)
    return False


def write_output(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` atomically (a temporary file in its folder, then one
    rename; an existing file keeps its permissions); DesignerError when that fails, and
    ``target`` is as it was."""
    from designer.core.errors import DesignerError

    try:
        mode: int | None = target.stat().st_mode & 0o777
    except OSError:
        mode = None
    try:
        write_atomic(target, data, mode)
    except OSError as exc:
        raise DesignerError(f"{target}: cannot write ({exc.strerror or exc})") from None


def render_output(target: Path, render: Callable[[Path], T]) -> T:
    """Let ``render`` write a file of ``target``'s name in a private temporary folder (for
    writers that cannot write atomically themselves: Qt's image writers), then move its
    bytes to ``target`` with :func:`write_output`; returns what ``render`` returned. An
    error of ``render`` names ``target``, not the private file. Cost: the file's bytes in
    memory once."""
    import tempfile

    from designer.core.errors import DesignerError

    with tempfile.TemporaryDirectory(prefix="onnx-designer-") as folder:
        scratch = Path(folder) / (target.name or "output")
        try:
            value = render(scratch)
        except DesignerError as exc:
            raise type(exc)(str(exc).replace(str(scratch), str(target))) from None
        try:
            data = scratch.read_bytes()
        except OSError as exc:
            raise DesignerError(f"{target}: nothing was written ({exc.strerror or exc})") from None
    write_output(target, data)
    return value
