"""TensorRT engines in the GUI (SPEC X-5): the read-only engine graph tab, its Parameters
panel, the report card and the comparison of engines. Parsing is Qt-free, in
``designer.activities.reports`` (``engine_bundle``, ``engine_report``, ``engine_compare``)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import TYPE_CHECKING

from designer.core.errors import DesignerError

if TYPE_CHECKING:
    from designer.ui.engine.tab import EngineTab
    from designer.ui.main_window import MainWindow

__all__ = ["engine_tabs", "is_engine_file", "open_engine_tab"]

#: Suffixes that File > Open hands to the engine reader (trtexec users name the layer JSON
#: ``.json`` or, as the TensorRT cookbook does, ``.log``).
ENGINE_SUFFIXES = (".json", ".log")


def is_engine_file(path: Path) -> bool:
    """True when File > Open should read ``path`` as an engine's files, not as a model: a
    .json/.log name, or any other non-.onnx file whose first character is ``{`` or ``[``.
    Reads at most 64 bytes."""
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        return False
    if suffix in ENGINE_SUFFIXES:
        return True
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return False  # a pipe or device would block the window: the model loader says so
        with open(path, "rb") as f:
            head = f.read(64).lstrip()
    except OSError:
        return False
    return head[:1] in (b"{", b"[")


def engine_tabs(window: MainWindow) -> list[EngineTab]:
    from designer.ui.engine.tab import EngineTab

    return [
        w for i in range(window.tabs.count()) if isinstance(w := window.tabs.widget(i), EngineTab)
    ]


def open_engine_tab(
    window: MainWindow, path: Path, *, profile: Path | None = None
) -> EngineTab | None:
    """Open (or focus) the engine whose layer JSON is ``path`` as a read-only tab; files
    beside it (TREx ``<engine>.<kind>.json``, trtexec logs) and ``profile`` are read too (an
    engine already open takes ``profile`` in its tab).
    A file that is not an engine's: ``window.show_error`` with one line, returns None."""
    from designer.activities.reports.engine_bundle import load_engine
    from designer.ui.engine.tab import EngineTab

    path = Path(path)
    for tab in engine_tabs(window):
        if tab.path.resolve() == path.resolve():
            window.tabs.setCurrentWidget(tab)
            if profile is not None and not tab.load_profile(Path(profile)):
                window.show_error("Cannot load the profile", tab.message.text())
            return tab
    try:
        bundle = load_engine([path])
    except DesignerError as exc:
        window.show_error("Cannot open engine", str(exc))
        return None
    tab = EngineTab(window, bundle, path)
    if profile is not None and not tab.load_profile(Path(profile)):  # checked it matches
        window.show_error("Cannot load the profile", tab.message.text())
    title = tab.title
    if any(other.bundle.name == bundle.name for other in engine_tabs(window)):
        title = f"{path.parent.name}/{title}"  # fp32/ and fp16/resnet.onnx.engine side by side
    index = window.tabs.addTab(tab, title)
    window.tabs.setTabToolTip(index, str(path))
    window.tabs.setCurrentIndex(index)
    window.stack.setCurrentWidget(window.tabs)
    return tab
