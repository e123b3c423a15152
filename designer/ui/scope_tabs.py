"""Subgraph and local-function tabs of the main window (G-1, G-4).

A tab editing a subgraph or function body holds a :class:`~designer.ui.working.ScopeSession`
(a working copy of its parent tab's document). This module opens them (one tab per scope,
nested scopes through their enclosing scope's tab), keeps the read-only banners and the
undo actions of locked documents in step, confirms, and asks before closing unconfirmed
work. The window calls it from a few hooks; nothing here is needed for plain model tabs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPointF
from PySide6.QtWidgets import QMenu, QMessageBox

from designer.core.scope import ScopeId
from designer.ui.canvas.view import CanvasView
from designer.ui.session import DocumentSession
from designer.ui.working import ScopeSession

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow

CONFIRM_SUBGRAPH = "Confirm Subgraph Edits"
CONFIRM_FUNCTION = "Confirm Local Function Edits"


class ScopeTabs(QObject):
    """Opens, confirms and closes the working-copy tabs of ``window``."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        window.canvas_menu_hooks.append(self._canvas_menu)

    # --- finding tabs ----------------------------------------------------------------------
    def tab_of(self, session: DocumentSession) -> DocumentTab | None:
        return next((t for t in self.window.document_tabs() if t.session is session), None)

    def child_tabs(self, tab: DocumentTab) -> list[DocumentTab]:
        return [
            t
            for t in self.window.document_tabs()
            if isinstance(t.session, ScopeSession) and t.session.parent_session is tab.session
        ]

    def _last_index(self, tab: DocumentTab) -> int:
        """Index of the last tab of ``tab``'s family (itself and its descendants)."""
        last = self.window.tabs.indexOf(tab)
        for child in self.child_tabs(tab):
            last = max(last, self._last_index(child))
        return last

    # --- opening ---------------------------------------------------------------------------
    def open_scope(self, session: DocumentSession, scope_id: ScopeId) -> DocumentTab | None:
        """Focus (or open) the tab editing ``scope_id`` of ``session``'s document. A nested
        scope opens through the tabs of its enclosing scopes (each a working copy of the
        one above), a function from the model's tab. None when it does not exist."""
        tab = self.tab_of(session)
        if tab is None:
            return None
        shown = tab.scope_id
        if scope_id == shown:
            self.window.tabs.setCurrentWidget(tab)
            return tab
        if scope_id.is_within(shown):
            step = ScopeId(shown.function, scope_id.steps[: len(shown.steps) + 1])
        elif shown.is_main and scope_id.function is not None:
            step = ScopeId(scope_id.function)
        elif isinstance(session, ScopeSession):
            return self.open_scope(session.parent_session, scope_id)
        else:
            return None
        child = self._child(tab, step)
        return self.open_scope(child.session, scope_id) if child is not None else None

    def _child(self, tab: DocumentTab, scope_id: ScopeId) -> DocumentTab | None:
        for child in self.child_tabs(tab):
            if child.scope_id == scope_id:
                return child
        if isinstance(tab.session, ScopeSession):
            tab.session.sync_if_stale()
        try:
            tab.session.doc.scope(scope_id)
        except KeyError:
            self.window.statusBar().showMessage("That subgraph or function does not exist", 8000)
            return None
        session = ScopeSession(tab.session, scope_id, self.window)
        new = self.window.add_session(session, scope_id, self._last_index(tab) + 1)
        session.scopeGone.connect(lambda message, t=new: self._scope_gone(t, message))
        return new

    def connect_view(self, tab: DocumentTab) -> None:
        """Subgraph buttons and call nodes of ``tab``'s canvas open their tabs."""
        view = tab.view
        view.subgraphRequested.connect(
            lambda key, attr, index, t=tab: self.open_scope(
                t.session, t.scope_id.child(key, attr, index)
            )
        )
        view.functionRequested.connect(
            lambda fid, t=tab: self.open_scope(t.session, ScopeId(tuple(fid)))
        )
        tab.session.lockChanged.connect(self.refresh)
        tab.lock_banner.linkActivated.connect(lambda _link, t=tab: self._show_blocker(t))

    # --- state -----------------------------------------------------------------------------
    def current_changed(self, tab: DocumentTab | None) -> None:
        """Working copies follow their parent while shown (the shown one and its parents)."""
        following: list[ScopeSession] = []
        session = tab.session if tab is not None else None
        while isinstance(session, ScopeSession):
            following.append(session)
            session = session.parent_session
        for other in self.window.document_tabs():
            if isinstance(other.session, ScopeSession):
                other.session.auto_sync = other.session in following
        for copy in reversed(following):
            copy.sync_if_stale()
        self.refresh()

    def refresh(self) -> None:
        """Banners of read-only documents, the undo stack the Edit menu acts on, Confirm."""
        current = self.window.tab()
        for tab in self.window.document_tabs():
            blocker = tab.session.blocking_session()
            if blocker is None:
                tab.lock_banner.setVisible(False)
            else:
                tab.lock_banner.setText(
                    f"<b>Read-only</b>: <i>{blocker.title.rstrip('*')}</i> has unconfirmed "
                    "edits. Confirm or discard them in that tab (<a href='show'>show it</a>)."
                )
                tab.lock_banner.setVisible(True)
        if current is not None:
            locked = current.session.locked
            stack = None if locked else current.session.undo_stack  # None: no undo at all
            self.window.undo_group.setActiveStack(stack)
        action = self.window.actions_by_name.get("confirm_scope")
        if action is not None:
            session = current.session if current is not None else None
            is_copy = isinstance(session, ScopeSession)
            action.setText(
                CONFIRM_FUNCTION if is_copy and session.is_function else CONFIRM_SUBGRAPH  # type: ignore[union-attr]
            )
            action.setEnabled(is_copy and session.has_unconfirmed)  # type: ignore[union-attr]

    def _show_blocker(self, tab: DocumentTab) -> None:
        blocker = tab.session.blocking_session()
        target = self.tab_of(blocker) if blocker is not None else None
        if target is not None:
            self.window.tabs.setCurrentWidget(target)

    # --- confirming and closing -------------------------------------------------------------
    def confirm(self, tab: DocumentTab | None = None) -> bool:
        tab = tab or self.window.tab()
        if tab is None or not isinstance(tab.session, ScopeSession):
            return False
        if not tab.session.confirm():
            return False
        parent = tab.session.parent_session.title.rstrip("*")
        self.window.statusBar().showMessage(f"Edits of {tab.session.caption} written to {parent}")
        self.refresh()
        return True

    def before_close(self, tab: DocumentTab) -> bool:
        """Close ``tab``'s working-copy tabs first; for a working copy with unconfirmed
        edits ask Confirm / Discard / Cancel. False when the user cancelled."""
        for child in self.child_tabs(tab):
            if not self.window.close_tab(self.window.tabs.indexOf(child)):
                return False
        session = tab.session
        if isinstance(session, ScopeSession) and session.has_unconfirmed:
            self.window.tabs.setCurrentWidget(tab)
            answer = self.window.ask_confirm_changes(tab)
            if answer == "cancel" or (answer == "confirm" and not self.confirm(tab)):
                return False
            if answer == "discard":
                session.undo_stack.clear()
        return True

    def ask(self, tab: DocumentTab) -> str:
        """'confirm', 'discard' or 'cancel' for a working copy being closed."""
        buttons = (
            QMessageBox.StandardButton.Yes
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel
        )
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Unconfirmed edits",
            f"{tab.session.title.rstrip('*')} has edits not yet written into its parent. "
            "Confirm them?",
            buttons,
            self.window,
        )
        box.button(QMessageBox.StandardButton.Yes).setText("Confirm")
        answer = box.exec()
        return {
            QMessageBox.StandardButton.Yes: "confirm",
            QMessageBox.StandardButton.Discard: "discard",
        }.get(QMessageBox.StandardButton(answer), "cancel")

    def _scope_gone(self, tab: DocumentTab, message: str) -> None:
        index = self.window.tabs.indexOf(tab)
        if index < 0:
            return
        tab.session.undo_stack.clear()  # nothing left to confirm into
        self.window.close_tab(index)
        self.window.statusBar().showMessage(message, 8000)

    # --- outer-scope values -----------------------------------------------------------------
    def _canvas_menu(self, menu: QMenu, view: CanvasView, scene_pos: QPointF) -> None:
        if view.scope_id.steps:
            action = menu.addAction("Use Outer-Scope Value…")
            action.triggered.connect(lambda _c=False: self.use_outer_value(view, scene_pos))

    def use_outer_value(self, view: CanvasView, at: QPointF | None = None) -> str | None:
        """Ask for a value of an enclosing scope and pin it on ``view`` (to link by drag)."""
        name = self.ask_outer_value(view)
        if name:
            view.pin_outer(name, at)
        return name

    def ask_outer_value(self, view: CanvasView) -> str | None:
        from designer.ui.dialogs.outer_value import OuterValueDialog

        dialog = OuterValueDialog(view, self.window)
        return dialog.chosen() if dialog.exec() else None
