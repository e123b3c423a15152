"""Screenshots taken by GUI tests: into docs/screenshots only when asked
(``ONNX_DESIGNER_SCREENSHOTS=1``), else into a temporary folder, so a test run never
changes tracked files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QWidget

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def save_screenshot(widget: QWidget, name: str) -> Path:
    folder = DOCS if os.environ.get("ONNX_DESIGNER_SCREENSHOTS") else Path(tempfile.gettempdir())
    path = folder / name
    assert widget.grab().save(str(path)), f"cannot write {path}"
    return path
