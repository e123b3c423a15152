"""Example dock plug-in: the operator counts of the current model, kept up to date.

Install it with an entry point in a package's ``pyproject.toml``::

    [project.entry-points."onnx_designer.docks"]
    op-counts = "op_count_dock:create_dock"

The designer calls ``create_dock(window)`` once when the main window opens and lists the
dock in View > Windows. ``window.currentTabChanged`` says which document is in front
(``window.tab()``, None when no model is), and a document's ``session.checked`` fires after
every change, when its type check is done.
"""

from __future__ import annotations

from typing import Any

from op_histogram import histogram
from PySide6.QtWidgets import QDockWidget, QLabel, QListWidget, QVBoxLayout, QWidget

TITLE = "Operator Counts"


class OpCountPanel(QWidget):
    def __init__(self, window: Any) -> None:
        super().__init__()
        self.window_ = window
        self.summary = QLabel()
        self.list = QListWidget()
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.list, 1)
        self.session: Any = None
        window.currentTabChanged.connect(self.follow)
        self.follow(window.tab())

    def follow(self, tab: Any) -> None:
        session = getattr(tab, "session", None)
        if session is not self.session:
            if self.session is not None:
                self.session.checked.disconnect(self.refresh)
            self.session = session
            if session is not None:
                session.checked.connect(self.refresh)
        self.refresh()

    def refresh(self, _result: object = None) -> None:
        self.list.clear()
        if self.session is None:
            self.summary.setText("Open a model to count its operators.")
            return
        counts = histogram(self.session.doc.model)
        self.summary.setText(f"{sum(counts.values())} node(s), {len(counts)} operator type(s)")
        for op, count in counts.most_common():
            self.list.addItem(f"{count:>6}  {op}")


def create_dock(window: Any) -> QDockWidget:
    dock = QDockWidget(TITLE, window)
    dock.setObjectName("dock_op_counts")
    dock.setWidget(OpCountPanel(window))
    return dock
