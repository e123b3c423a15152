"""Model comparison in the GUI: the Compare view (two canvases and a table of changes),
opened by File > Compare Models… and by Show Changes after a model-wide step. The diff
itself is Qt-free, in :mod:`designer.core.diff`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import onnx

from designer.core.diff import ModelDiff

if TYPE_CHECKING:
    from designer.ui.diff.tab import DiffTab
    from designer.ui.main_window import MainWindow

__all__ = ["diff_tabs", "open_diff_tab"]


def diff_tabs(window: MainWindow) -> list[DiffTab]:
    from designer.ui.diff.tab import DiffTab

    return [
        w for i in range(window.tabs.count()) if isinstance(w := window.tabs.widget(i), DiffTab)
    ]


def open_diff_tab(
    window: MainWindow,
    diff: ModelDiff,
    a: tuple[str, onnx.ModelProto, Path | None],
    b: tuple[str, onnx.ModelProto, Path | None],
    title: str,
) -> DiffTab:
    """Add the Compare view of ``a`` (label, model, external-data folder) and ``b`` as a
    tab and show it. The models must be private to the tab (copies of live ones)."""
    from designer.ui.diff.tab import DiffTab

    tab = DiffTab(diff, a, b, title, show_grid=window.settings.show_grid)
    index = window.tabs.addTab(tab, title)
    window.tabs.setTabToolTip(index, f"A: {a[0]}\nB: {b[0]}")
    window.tabs.setCurrentIndex(index)
    window.stack.setCurrentWidget(window.tabs)
    return tab
