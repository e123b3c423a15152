"""Render the main window with a model to an image (``onnx-designer screenshot``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QMessageLogContext,
    QtMsgType,
    qInstallMessageHandler,
)
from PySide6.QtWidgets import QApplication

from designer.core.errors import DesignerError

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

#: What the offscreen platform says of every window it shows, which tells a user nothing.
_NOISE = "This plugin does not support propagateSizeHints()"


def _quiet_offscreen(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Qt's messages on stderr as Qt writes them, less the offscreen platform's noise."""
    if message != _NOISE:
        print(message, file=sys.stderr)


def render_window(
    model: Path,
    output: Path,
    size: tuple[int, int],
    timeout: float = 60,
    view: str = "first",
) -> None:
    """Open ``model`` in a new window of ``size`` and save it as an image. ``view`` is the
    canvas view shown: "first" (as the model opens), "fit" (after F), or a zoom factor
    applied at the first view's centre (e.g. "2" zooms in twice as far as 100 %)."""
    from designer.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    previous = qInstallMessageHandler(_quiet_offscreen)
    window = MainWindow()
    try:
        _render(app, window, model, output, size, timeout, view)
    finally:  # gone now, not left to a later garbage collection in someone's event loop
        window.close()
        window.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        qInstallMessageHandler(previous)


def _render(
    app: QCoreApplication,
    window: MainWindow,
    model: Path,
    output: Path,
    size: tuple[int, int],
    timeout: float,
    view: str,
) -> None:
    window.resize(*size)
    window.show()
    window.headless_errors = []  # offscreen, a message box would wait for a click forever
    window.open_files([model])
    tab = window.tab()
    if tab is None:
        reason = window.headless_errors[0] if window.headless_errors else "cannot be opened"
        raise DesignerError(reason if str(model) in reason else f"{model}: {reason}")
    tab.view.wait_for_layout(int(timeout * 1000))
    deadline = time.monotonic() + timeout
    while tab.session.check_result is None and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    canvas = tab.view
    canvas.show_first_view()
    if view == "fit":
        canvas.fit_to_view()
    elif view != "first":
        centre = canvas.mapToScene(canvas.viewport().rect().center())
        canvas.resetTransform()
        canvas.scale(float(view), float(view))
        canvas.centerOn(centre)
    settle()
    if not window.grab().save(str(output)):
        raise DesignerError(f"{output}: cannot write the image (check the folder and extension)")


def settle() -> None:
    """Process pending events as an event loop would, deferred deletes included: without
    that, a grab of a freshly opened big model could show a dock tab bar left over from
    arranging the docks ("Log | Type Checking" over the Overview window), which the event
    loop of a running app removes at once (processEvents never runs deferred deletes)."""
    QCoreApplication.processEvents()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
