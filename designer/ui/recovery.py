"""Crash safety (D-8): modified documents are written to a recovery folder periodically and
offered again after a crash. A clean exit removes the recovery files.

Folder: ``$ONNX_DESIGNER_RECOVERY_DIR`` or the platform's app-data folder + ``/recovery``.
Each entry is ``<id>.onnx`` plus ``<id>.json``::

    {"original": path or null, "saved_at": seconds, "base_dir": path or null,
     "owner": {"pid": 1234, "host": "name", "started": "…" or null},
     "layout": {"format": "onnx-designer-layout", ...}}

Weights kept in external data are referenced from the original folder, not copied.

``layout`` is the document's arrangement when it was autosaved (node positions, collapsed
module groups, view-only groups): the contents of a companion layout file, written and read
by :mod:`designer.core.io.companion`, so that a restored tab shows the unsaved arrangement.
It lives inside the ``.json`` (written atomically with it) rather than as a file of its own;
the user's ``<model>.onnx.designer.json`` is only written when the user saves. When it
cannot be written the entry is written without it (the model part is never lost for it);
an entry without it (older versions) restores with its nodes arranged anew, as before.

``owner`` is the process that keeps the entry up to date (it autosaved or restored it).
An entry is *held* while that process runs: on this host, ``os.kill(pid, 0)`` succeeds and
the process's start time (Linux: ``/proc/<pid>/stat``; guards against a reused pid) is the
recorded one; on another host (a shared folder), while the entry was written less than
:data:`FOREIGN_STALE_SECONDS` ago (a running session rewrites it every autosave). Held
entries of other processes are neither offered nor deleted. Entries of this process are
offered (the app asks once, at start, before its first autosave; an earlier process may
have had the same pid) unless a tab of this process restored them (:func:`claim`).
Entries without ``owner`` (older versions) are offered as before. An entry whose ``.json``
is not what this module writes is logged and skipped, its files left for a look.
"""

from __future__ import annotations

import json
import logging
import math
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QStandardPaths

from designer.core.document import Document
from designer.core.io import write_model
from designer.core.io.atomic import pid_alive, write_atomic
from designer.core.io.companion import LayoutFileError, apply_layout, positions_to_json
from designer.core.view_groups import all_view_groups, set_view_groups

logger = logging.getLogger(__name__)

#: An entry of another host counts as abandoned when it was not rewritten for this long.
FOREIGN_STALE_SECONDS = 24 * 3600
_HOST = socket.gethostname()
#: Ids of entries a tab of this process restored and now keeps (see :func:`claim`).
_HELD: set[str] = set()


class RecoveryUnavailable(OSError):
    """The recovery folder cannot be made: crash recovery is off, nothing else is."""


def recovery_dir() -> Path:
    """The recovery folder, made if needed; RecoveryUnavailable when it cannot be (a
    read-only home, a path through a file): the message says what to do."""
    folder = os.environ.get("ONNX_DESIGNER_RECOVERY_DIR")
    if folder:
        path = Path(folder)
    else:
        base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
        path = Path(base or Path.home() / ".onnx-designer") / "recovery"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecoveryUnavailable(
            f"crash recovery is off: cannot create the recovery folder {path} "
            f"({exc.strerror or exc}); set ONNX_DESIGNER_RECOVERY_DIR to a writable folder"
        ) from exc
    return path


@dataclass(frozen=True)
class Owner:
    """The process that keeps a recovery entry: pid, host name, and its start time where
    the platform tells it (Linux), so that a reused pid is not taken for the owner."""

    pid: int
    host: str
    started: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"pid": self.pid, "host": self.host, "started": self.started}


@dataclass(frozen=True)
class RecoveryEntry:
    model: Path
    original: Path | None
    saved_at: float
    base_dir: Path | None
    owner: Owner | None = None  # None: written by a version that did not record it

    @property
    def entry_id(self) -> str:
        return self.model.stem


class BadEntry(ValueError):
    """A recovery ``.json`` that parses but is not what :func:`write_recovery` writes."""


def _process_started(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 1 :].split()  # the name in parentheses may hold spaces
    return fields[19] if len(fields) > 19 else None  # field 22 of stat(5)


def current_owner() -> Owner:
    pid = os.getpid()
    return Owner(pid, _HOST, _process_started(pid))


def held_elsewhere(entry: RecoveryEntry, now: float | None = None) -> bool:
    """True while another running process keeps ``entry`` (see the module doc)."""
    owner = entry.owner
    if owner is None:
        return False
    if owner.host != _HOST:
        now = time.time() if now is None else now
        return now - entry.saved_at < FOREIGN_STALE_SECONDS
    if owner.pid == os.getpid():
        return False  # ours, or of an earlier process with our pid: not another one's
    if not pid_alive(owner.pid):
        return False
    if owner.started is not None:
        started = _process_started(owner.pid)
        if started is not None and started != owner.started:
            return False  # the pid was reused by a process started later
    return True


def _optional_str(meta: dict[str, Any], key: str) -> str | None:
    value = meta.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadEntry(f"'{key}' is {type(value).__name__} {value!r}, not a path")
    return value


def _parse_owner(value: object) -> Owner | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadEntry(f"'owner' is {type(value).__name__}, not an object")
    pid, host, started = value.get("pid"), value.get("host"), value.get("started")
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        raise BadEntry(f"'owner.pid' is {pid!r}, not a process id")
    if not isinstance(host, str):
        raise BadEntry(f"'owner.host' is {host!r}, not a host name")
    if started is not None and not isinstance(started, str):
        raise BadEntry(f"'owner.started' is {started!r}, not text")
    return Owner(pid, host, started)


def parse_entry(model: Path, meta: object) -> RecoveryEntry:
    """The entry described by the parsed ``.json`` ``meta``; raises :class:`BadEntry`."""
    if not isinstance(meta, dict):
        raise BadEntry(f"it holds a {type(meta).__name__}, not an object")
    saved_at = meta.get("saved_at", 0)  # older versions may have left it out
    if isinstance(saved_at, bool) or not isinstance(saved_at, int | float):
        raise BadEntry(f"'saved_at' is {saved_at!r}, not a time")
    if not math.isfinite(saved_at):
        raise BadEntry(f"'saved_at' is {saved_at!r}, not a time")
    original = _optional_str(meta, "original")
    base = _optional_str(meta, "base_dir")
    return RecoveryEntry(
        model,
        Path(original) if original else None,
        float(saved_at),
        Path(base) if base else None,
        _parse_owner(meta.get("owner")),
    )


def _read_meta(meta_path: Path) -> dict[str, Any]:
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    parse_entry(meta_path.with_suffix(".onnx"), meta)  # raises BadEntry
    assert isinstance(meta, dict)
    return meta


def write_recovery(
    doc: Document, entry_id: str, on_layout_error: Callable[[str], None] | None = None
) -> Path:
    """Write ``doc`` as recovery entry ``entry_id`` (atomic; external data referenced),
    owned by this process, with its layout (see the module doc). When the layout cannot be
    written the entry is written without it and ``on_layout_error`` (if given) gets a
    message saying so; OSError only when the model part itself cannot be written."""
    folder = recovery_dir()
    model_path = folder / f"{entry_id}.onnx"
    from designer.core.io.external import is_external, iter_model_tensors

    has_external = any(is_external(t) for t in iter_model_tensors(doc.model))
    # External tensors stay where they are (nothing read or copied): the entry remembers
    # their folder.
    write_model(doc.model, model_path, doc.base_dir, references_only=has_external)
    meta: dict[str, Any] = {
        "original": str(doc.path) if doc.path else None,
        "saved_at": time.time(),
        "base_dir": str(doc.base_dir) if has_external and doc.base_dir else None,
        "owner": current_owner().to_json(),
    }
    meta_path = folder / f"{entry_id}.json"
    try:
        with_layout = json.dumps({**meta, "layout": positions_to_json(doc)})
        write_atomic(meta_path, with_layout.encode("utf-8"))
    except (OSError, ValueError) as exc:  # e.g. the disk filled up: keep the model part
        message = (
            f"the layout of {doc.title.rstrip('*')} was not autosaved ({exc}); a restore "
            "after a crash would arrange its nodes anew"
        )
        logger.warning("recovery entry %s: %s", meta_path, message)
        write_atomic(meta_path, json.dumps(meta).encode("utf-8"))
        if on_layout_error is not None:
            on_layout_error(message)
    return model_path


def load_layout(entry: RecoveryEntry, doc: Document) -> int | None:
    """Give ``doc`` (just opened from ``entry.model``) the layout autosaved with ``entry``,
    read by the companion file's reader: positions, collapsed groups and view groups replace
    whatever ``doc`` had. Returns how many nodes got a position, or None when the entry has
    no layout (written by an older version; ``doc`` is left as it is). Raises
    LayoutFileError, ``doc`` then without positions, when the layout cannot be used."""
    meta_path = entry.model.with_suffix(".json")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise LayoutFileError(f"{meta_path}: layout of the recovery copy ignored ({exc})") from None
    layout = meta.get("layout") if isinstance(meta, dict) else None
    if layout is None:
        return None
    doc.clear_positions()
    doc.collapsed.clear()
    for scope_id in all_view_groups(doc):
        set_view_groups(doc, scope_id, [])
    try:
        return apply_layout(doc, layout, meta_path)
    except LayoutFileError:
        doc.clear_positions()
        raise


def claim(entry: RecoveryEntry) -> bool:
    """Make this process the owner of ``entry`` (a tab restored it and will autosave over
    it): it stays on disk, is not offered to other instances while this one runs, and is
    offered again if this one crashes too. False, and nothing changed, when another
    running process took it since it was listed. Costs one rewrite of the entry's
    ``.json`` (its layout kept as it is)."""
    meta_path = entry.model.with_suffix(".json")
    try:
        meta = _read_meta(meta_path)
        current = parse_entry(entry.model, meta)
    except (OSError, ValueError, RecursionError) as exc:
        logger.warning("recovery entry %s changed while restoring (%s)", meta_path, exc)
        return False
    if held_elsewhere(current):
        return False
    meta["owner"] = current_owner().to_json()
    try:
        write_atomic(meta_path, json.dumps(meta).encode("utf-8"))
    except OSError as exc:  # restored all the same; the entry keeps its old owner
        logger.warning("cannot mark recovery entry %s as restored (%s)", meta_path, exc)
    _HELD.add(entry.entry_id)
    return True


def remove_recovery(entry_id: str) -> None:
    """Delete an entry's files (its document was saved or closed). Never raises: closing
    or saving a document must not depend on the safety net; what cannot be removed is
    logged (and offered at a next start, where the user can drop it)."""
    _HELD.discard(entry_id)
    try:
        folder = recovery_dir()
        for suffix in (".onnx", ".json"):
            (folder / f"{entry_id}{suffix}").unlink(missing_ok=True)
    except OSError as exc:
        logger.warning("recovery entry %s cannot be removed: %s", entry_id, exc)


def pending_recoveries() -> list[RecoveryEntry]:
    """Entries left behind by a session that did not exit cleanly, newest first: not those
    a running process (another instance, or a restored tab of this one) keeps. An entry
    whose ``.json`` cannot be read or has unexpected content is logged and skipped."""
    entries = []
    folder = recovery_dir()
    now = time.time()
    for meta_path in folder.glob("*.json"):
        model = meta_path.with_suffix(".onnx")
        try:
            entry = parse_entry(model, json.loads(meta_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, RecursionError) as exc:  # the files stay for a look
            logger.warning(
                "recovery file %s cannot be used (%s); not offered, its files stay in %s",
                meta_path,
                exc,
                folder,
            )
            continue
        if not model.exists() or entry.entry_id in _HELD or held_elsewhere(entry, now):
            continue
        entries.append(entry)
    return sorted(entries, key=lambda e: -e.saved_at)


def discard(entry: RecoveryEntry) -> bool:
    """Delete ``entry``'s files, unless another running process took it since it was
    listed (then False, and they stay)."""
    meta_path = entry.model.with_suffix(".json")
    try:
        current = parse_entry(entry.model, json.loads(meta_path.read_text(encoding="utf-8")))
    except (OSError, ValueError, RecursionError):
        current = entry  # gone or unreadable now: decide on what was listed
    if held_elsewhere(current):
        logger.info("recovery entry %s is kept: another running instance holds it", meta_path)
        return False
    entry.model.unlink(missing_ok=True)
    meta_path.unlink(missing_ok=True)
    _HELD.discard(entry.entry_id)
    return True
