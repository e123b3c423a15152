"""The breadcrumb bar above a canvas: where the focused group sits
(``model › layers.3 › self_attn``). Each crumb focuses that group; ``model`` (or Esc on the
canvas) shows the whole graph again. Hidden while the canvas shows the whole graph."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from designer.core.focus import crumbs
from designer.ui.canvas.collapse_view import hierarchy_of
from designer.ui.canvas.focus_view import focus_of, focus_state, set_focus
from designer.ui.canvas.view import CanvasView


class BreadcrumbBar(QWidget):
    """Crumbs of ``view``'s focused group; follows the view's focus state."""

    def __init__(self, view: CanvasView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.setObjectName("breadcrumbs")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(6, 0, 6, 0)
        self._layout.setSpacing(2)
        self.buttons: list[QToolButton] = []
        self.escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), view)
        self.escape.setContext(Qt.ShortcutContext.WidgetShortcut)
        self.escape.activated.connect(self.show_whole_graph)
        # a bound method: Qt drops the connection when the bar goes (tab closed)
        focus_state(view.canvas).changed.connect(self._focus_changed)
        self.refresh()

    def _focus_changed(self, _group: str) -> None:
        self.refresh()

    def show_whole_graph(self) -> None:
        set_focus(self.view, None)

    def refresh(self) -> None:
        """Rebuild the crumbs from the view's focus (hide the bar without one)."""
        while self._layout.count():
            item = self._layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()  # gone now; deleted when control is back in the event loop
                widget.deleteLater()
        self.buttons = []
        focus = focus_of(self.view.canvas)
        self.escape.setEnabled(focus is not None)
        self.setVisible(focus is not None)
        if focus is None:
            return
        trail = crumbs(hierarchy_of(self.view.canvas), focus)
        for index, (label, group_id) in enumerate(trail):
            if index:
                self._layout.addWidget(QLabel("›"))
            button = QToolButton()
            button.setText(label)
            button.setAutoRaise(True)
            last = index == len(trail) - 1
            if last:  # the crumb of the group shown now: bold, nothing to click
                button.setEnabled(False)
                button.setStyleSheet("font-weight: bold; color: palette(window-text);")
            button.setToolTip(
                "Show the whole graph (Esc)" if group_id is None else f"Focus {group_id}"
            )
            button.clicked.connect(lambda _c=False, g=group_id: set_focus(self.view, g))
            self._layout.addWidget(button)
            self.buttons.append(button)
        self._layout.addStretch(1)

    def labels(self) -> list[str]:
        """The crumbs' texts, first to last."""
        return [b.text() for b in self.buttons]
