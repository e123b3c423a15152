"""The Find bar of a document tab (Edit ▸ Find…, Ctrl+F): a query field, what to search
(node names, op types, tensors, initializers, attribute values), a results list, and
next/previous that select each hit on the canvas and centre on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from designer.core.find import KINDS, FindHit, find
from designer.ui.canvas.reveal import reveal

if TYPE_CHECKING:
    from designer.ui.canvas.view import CanvasView

#: The "Search in" choices: label → kinds searched.
SCOPES: dict[str, tuple[str, ...]] = {
    "Everything": KINDS,
    "Module scopes": ("scope",),
    "Node names": ("node",),
    "Op types": ("op",),
    "Tensor names": ("tensor",),
    "Initializer names": ("initializer",),
    "Attribute values": ("attribute",),
}
LIMIT = 1000
_KIND_LABEL = {
    "scope": "scope",
    "node": "node",
    "op": "op",
    "tensor": "tensor",
    "initializer": "init",
    "attribute": "attr",
}


class _QueryEdit(QLineEdit):
    """Enter: next hit; Shift+Enter: previous; Esc: close the bar."""

    def __init__(self, bar: FindBar) -> None:
        super().__init__(bar)
        self._bar = bar

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self._bar.step(-1 if shift else 1)
            return
        if key == Qt.Key.Key_Escape:
            self._bar.close_bar()
            return
        super().keyPressEvent(event)


class FindBar(QWidget):
    """Searches the scope shown by ``view``; results are recomputed on each query change
    (after a short pause in typing) and when the document changes while the bar is open."""

    def __init__(self, view: CanvasView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("find_bar")
        self.view = view
        self.hits: list[FindHit] = []
        self.current = -1
        self.query = _QueryEdit(self)
        self.query.setPlaceholderText(
            "Find module scope, node, op type, tensor, initializer, attribute…"
        )
        self.query.setClearButtonEnabled(True)
        self.scope_box = QComboBox(self)
        self.scope_box.addItems(list(SCOPES))
        self.scope_box.setToolTip("What to search")
        self.case_box = QCheckBox("Match case", self)
        self.previous_button = QToolButton(self)
        self.previous_button.setText("▲")
        self.previous_button.setToolTip("Previous match (Shift+Enter)")
        self.next_button = QToolButton(self)
        self.next_button.setText("▼")
        self.next_button.setToolTip("Next match (Enter)")
        self.count = QLabel(self)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        self.results = QListWidget(self)
        self.results.setUniformItemSizes(True)
        self.results.setVisible(False)

        row = QHBoxLayout()
        row.setContentsMargins(4, 2, 4, 2)
        row.addWidget(QLabel("Find:", self))
        row.addWidget(self.query, 1)
        row.addWidget(self.scope_box)
        row.addWidget(self.case_box)
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        row.addWidget(self.count)
        row.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 2)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.results)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(200)
        self._quiet = False  # the next timed search only refreshes (the document changed)
        self._timer.timeout.connect(lambda: self.search(jump=not self._quiet))
        self.query.textChanged.connect(lambda _t: self._restart(quiet=False))
        self.scope_box.currentIndexChanged.connect(lambda _i: self.search())
        self.case_box.toggled.connect(lambda _on: self.search())
        self.previous_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        self.close_button.clicked.connect(self.close_bar)
        self.results.currentRowChanged.connect(self._row_chosen)
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        escape.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        escape.activated.connect(self.close_bar)
        self._unsubscribe = view.session.doc.subscribe(lambda _e: self._stale())
        self.destroyed.connect(lambda _o=None, u=self._unsubscribe: u())
        self._update_buttons()

    # --- searching ------------------------------------------------------------------------
    def open_bar(self) -> None:
        """Show the bar with the query selected (Ctrl+F again re-focuses it)."""
        self.setVisible(True)
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query.selectAll()

    def close_bar(self) -> None:
        self._timer.stop()
        self.setVisible(False)
        self.view.setFocus(Qt.FocusReason.OtherFocusReason)

    def _restart(self, quiet: bool) -> None:
        self._quiet = quiet and (self._quiet or not self._timer.isActive())
        self._timer.start()

    def search(self, jump: bool = True) -> None:
        """Run the query now; select the first hit when ``jump``."""
        self._timer.stop()
        self._quiet = False
        text = self.query.text().strip()
        result = find(
            self.view.session.doc,
            text,
            self.view.scope_id,
            kinds=SCOPES[self.scope_box.currentText()],
            limit=LIMIT,
            match_case=self.case_box.isChecked(),
        )
        self.hits = result.hits
        self.current = -1
        self.results.blockSignals(True)
        self.results.clear()
        for hit in self.hits:
            item = QListWidgetItem(f"{_KIND_LABEL[hit.kind]:<6} {hit.text}   — {hit.detail}")
            item.setToolTip(f"{hit.text}\n{hit.detail}")
            if hit.key is None:
                item.setForeground(Qt.GlobalColor.gray)
            self.results.addItem(item)
        self.results.blockSignals(False)
        rows = min(len(self.hits), 7)
        self.results.setFixedHeight(rows * max(self.results.sizeHintForRow(0), 1) + 6)
        self.results.setVisible(bool(self.hits))
        more = "+" if result.truncated else ""
        if not text:
            self.count.setText("")
        elif not self.hits:
            self.count.setText("No matches")
        else:
            self.count.setText(f"{len(self.hits)}{more} matches")
        self._update_buttons()
        if self.hits and jump:
            self.step(1)

    def step(self, delta: int) -> None:
        """Go to the next (``delta`` 1) or previous (-1) hit, wrapping around."""
        if self._timer.isActive():
            self.search()
            return
        if not self.hits:
            return
        self.results.setCurrentRow((self.current + delta) % len(self.hits))

    def _row_chosen(self, row: int) -> None:
        if not 0 <= row < len(self.hits):
            return
        self.current = row
        hit = self.hits[row]
        shown = hit.key is not None and reveal(self.view, hit.key, hit.keys[1:])
        total = f"{len(self.hits)}{'+' if len(self.hits) >= LIMIT else ''}"
        note = "" if shown else " (not on the canvas)"
        self.count.setText(f"{row + 1} of {total}{note}")

    def _stale(self) -> None:
        if self.isVisible() and self.query.text().strip():
            self._restart(quiet=True)  # the document changed: refresh after a pause

    def _update_buttons(self) -> None:
        many = len(self.hits) > 0
        self.previous_button.setEnabled(many)
        self.next_button.setEnabled(many)
