"""Crash safety (D-8): modified documents are written to a recovery folder periodically and
offered again after a crash. A clean exit removes the recovery files.

Folder: ``$ONNX_DESIGNER_RECOVERY_DIR`` or the platform's app-data folder + ``/recovery``.
Each entry is ``<id>.onnx`` plus ``<id>.json`` (``{"original": path or null, "saved_at": …}``).
Weights kept in external data are referenced from the original folder, not copied.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QStandardPaths

from designer.core.document import Document
from designer.core.io import write_model
from designer.core.io.atomic import write_atomic

logger = logging.getLogger(__name__)


def recovery_dir() -> Path:
    folder = os.environ.get("ONNX_DESIGNER_RECOVERY_DIR")
    if folder:
        path = Path(folder)
    else:
        base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
        path = Path(base or Path.home() / ".onnx-designer") / "recovery"
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True)
class RecoveryEntry:
    model: Path
    original: Path | None
    saved_at: float
    base_dir: Path | None


def write_recovery(doc: Document, entry_id: str) -> Path:
    """Write ``doc`` as recovery entry ``entry_id`` (atomic; external data referenced)."""
    folder = recovery_dir()
    model_path = folder / f"{entry_id}.onnx"
    from designer.core.io.external import is_external, iter_model_tensors

    has_external = any(is_external(t) for t in iter_model_tensors(doc.model))
    # External tensors stay where they are (nothing read or copied): the entry remembers
    # their folder.
    write_model(doc.model, model_path, doc.base_dir, references_only=has_external)
    meta = {
        "original": str(doc.path) if doc.path else None,
        "saved_at": time.time(),
        "base_dir": str(doc.base_dir) if has_external and doc.base_dir else None,
    }
    write_atomic(folder / f"{entry_id}.json", json.dumps(meta).encode("utf-8"))
    return model_path


def remove_recovery(entry_id: str) -> None:
    folder = recovery_dir()
    for suffix in (".onnx", ".json"):
        (folder / f"{entry_id}{suffix}").unlink(missing_ok=True)


def pending_recoveries() -> list[RecoveryEntry]:
    """Entries left behind by a session that did not exit cleanly, newest first."""
    entries = []
    folder = recovery_dir()
    for meta_path in folder.glob("*.json"):
        model = meta_path.with_suffix(".onnx")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # offered no more; the files stay for a look
            logger.warning("recovery file %s is unreadable (%s); not offered", meta_path, exc)
            continue
        if not model.exists():
            continue
        original = Path(meta["original"]) if meta.get("original") else None
        base = Path(meta["base_dir"]) if meta.get("base_dir") else None
        entries.append(RecoveryEntry(model, original, float(meta.get("saved_at", 0)), base))
    return sorted(entries, key=lambda e: -e.saved_at)


def discard(entry: RecoveryEntry) -> None:
    entry.model.unlink(missing_ok=True)
    entry.model.with_suffix(".json").unlink(missing_ok=True)
