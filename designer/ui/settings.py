"""Persistent settings (D-6) in one place, with typed accessors.

Stored with QSettings; ``ONNX_DESIGNER_CONFIG_DIR`` puts them in an INI file in that folder
(tests and portable installs use it).
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings

MAX_RECENT = 10


def app_settings() -> QSettings:
    folder = os.environ.get("ONNX_DESIGNER_CONFIG_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        return QSettings(str(Path(folder) / "settings.ini"), QSettings.Format.IniFormat)
    return QSettings("onnx-designer", "ONNX Designer")


def _bool(value: object, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("1", "true", "yes")


class Settings:
    """Typed view over :func:`app_settings`."""

    def __init__(self) -> None:
        self.store = app_settings()

    # canvas
    @property
    def show_grid(self) -> bool:
        return _bool(self.store.value("canvas/show_grid"), True)

    @show_grid.setter
    def show_grid(self, on: bool) -> None:
        self.store.setValue("canvas/show_grid", on)

    @property
    def show_constants(self) -> bool:
        return _bool(self.store.value("canvas/show_constants"), False)

    @show_constants.setter
    def show_constants(self, on: bool) -> None:
        self.store.setValue("canvas/show_constants", on)

    @property
    def collapse_large_models(self) -> bool:
        """Open models above :attr:`collapse_above_nodes` nodes collapsed by module scope."""
        return _bool(self.store.value("canvas/collapse_large_models"), True)

    @collapse_large_models.setter
    def collapse_large_models(self, on: bool) -> None:
        self.store.setValue("canvas/collapse_large_models", on)

    @property
    def collapse_above_nodes(self) -> int:
        value = self.store.value("canvas/collapse_above_nodes")
        return int(str(value)) if value not in (None, "") else 20_000

    @collapse_above_nodes.setter
    def collapse_above_nodes(self, count: int) -> None:
        self.store.setValue("canvas/collapse_above_nodes", count)

    # documents
    @property
    def default_opset(self) -> int | None:
        value = self.store.value("documents/default_opset")
        return int(str(value)) if value not in (None, "") else None

    @default_opset.setter
    def default_opset(self, opset: int | None) -> None:
        self.store.setValue("documents/default_opset", opset if opset is not None else "")

    @property
    def autosave_seconds(self) -> int:
        value = self.store.value("documents/autosave_seconds")
        return int(str(value)) if value not in (None, "") else 60

    @autosave_seconds.setter
    def autosave_seconds(self, seconds: int) -> None:
        self.store.setValue("documents/autosave_seconds", seconds)

    @property
    def recent_files(self) -> list[str]:
        value = self.store.value("documents/recent")
        if not value:
            return []
        return [str(v) for v in (value if isinstance(value, list) else [value])]

    def add_recent(self, path: Path) -> None:
        entry = str(path)
        files = [f for f in self.recent_files if f != entry]
        self.store.setValue("documents/recent", [entry, *files][:MAX_RECENT])

    def clear_recent(self) -> None:
        self.store.setValue("documents/recent", [])
