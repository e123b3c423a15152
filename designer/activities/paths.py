"""Per-user folders of the activities: a cache (wheels, deployment state) and a config folder.

``ONNX_DESIGNER_CACHE_DIR`` and ``ONNX_DESIGNER_CONFIG_DIR`` override them (tests, portable
installs). Otherwise the platform's conventions: XDG on Linux, ``~/Library`` on macOS,
``%LOCALAPPDATA%``/``%APPDATA%`` on Windows. Nothing is created until asked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "onnx-designer"

__all__ = ["APP_NAME", "cache_dir", "config_dir", "wheel_cache_dir"]


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def cache_dir(create: bool = False) -> Path:
    """The per-user cache folder (``ONNX_DESIGNER_CACHE_DIR`` wins). Cost: a few getenv calls."""
    override = os.environ.get("ONNX_DESIGNER_CACHE_DIR")
    if override:
        path = Path(override)
    elif sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(_home() / "AppData" / "Local")
        path = Path(base) / APP_NAME / "Cache"
    elif sys.platform == "darwin":
        path = _home() / "Library" / "Caches" / APP_NAME
    else:
        path = Path(os.environ.get("XDG_CACHE_HOME") or _home() / ".cache") / APP_NAME
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def config_dir(create: bool = False) -> Path:
    """The per-user config folder (``ONNX_DESIGNER_CONFIG_DIR`` wins)."""
    override = os.environ.get("ONNX_DESIGNER_CONFIG_DIR")
    if override:
        path = Path(override)
    elif sys.platform == "win32":
        base = os.environ.get("APPDATA") or str(_home() / "AppData" / "Roaming")
        path = Path(base) / APP_NAME
    elif sys.platform == "darwin":
        path = _home() / "Library" / "Application Support" / APP_NAME
    else:
        path = Path(os.environ.get("XDG_CONFIG_HOME") or _home() / ".config") / APP_NAME
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def wheel_cache_dir(create: bool = False) -> Path:
    """Where wheels downloaded for targets are kept: ``<cache>/wheels``."""
    path = cache_dir() / "wheels"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path
