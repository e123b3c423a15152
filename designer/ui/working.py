"""Working copies: the session behind a subgraph or local-function tab.

A :class:`ScopeSession` edits a full copy of its parent's document (same node keys, same
folder for external data, positions copied), so the type checker sees the subgraph in its
real scope and nested subgraphs open from it to any depth. Its edits stay in the copy until
:meth:`ScopeSession.confirm` writes the scope back into the parent as ONE
:class:`~designer.core.edits.scopes.ReplaceScope`. While it has unconfirmed edits the parent
(and every document above) is read-only; while it has none it follows the parent.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from designer.core.document import ChangeKind, Document, DocumentEvent, Position
from designer.core.edits import Edit
from designer.core.edits.scopes import ReplaceScope, outside_digest
from designer.core.scope import ScopeId
from designer.core.viewgraph import display_name
from designer.ui.session import DocumentSession, _weak


def scope_caption(doc: Document, scope_id: ScopeId) -> str:
    """``node ▸ attribute`` (``attribute[i]`` for GRAPHS) or ``ƒ name`` for a function."""
    if scope_id.steps:
        assert scope_id.parent is not None
        step = scope_id.steps[-1]
        parent = doc.scope(scope_id.parent)
        node = display_name(parent.node(step.node_key), parent.index_of(step.node_key))
        attr = step.attribute if step.index < 0 else f"{step.attribute}[{step.index}]"
        return f"{node} ▸ {attr}"
    assert scope_id.function is not None
    return f"ƒ {scope_id.function[1]}"


class ScopeSession(DocumentSession):
    """A working copy of ``parent_session``'s document whose tab shows ``scope_id``."""

    scopeGone = Signal(str)  # why the tab must close (its subgraph/function was removed)

    def __init__(
        self, parent_session: DocumentSession, scope_id: ScopeId, parent: QObject | None = None
    ) -> None:
        super().__init__(parent_session.doc.working_copy(), parent)
        self.parent_session = parent_session
        self.scope_id = scope_id
        self.caption = scope_caption(parent_session.doc, scope_id)
        self.synced_count = parent_session.change_count
        self.stale = False
        #: the window sets this while the tab is shown: a stale copy then syncs at once
        self.auto_sync = False
        self.base_digest = outside_digest(self.doc, scope_id)
        self._follow = QTimer(self)
        self._follow.setSingleShot(True)
        self._follow.setInterval(0)  # after the parent's edit (all its events) is done
        self._follow.timeout.connect(_weak(self, "_after_parent_changed"))
        self._parent_slots = (
            (parent_session.changed, _weak(self, "_on_parent_changed")),
            (parent_session.titleChanged, _weak(self, "_on_parent_title")),
        )
        for signal, slot in self._parent_slots:
            signal.connect(slot)
        parent_session.working_copies.append(self)

    # --- state ---------------------------------------------------------------------------
    @property
    def is_function(self) -> bool:
        return self.scope_id.is_function

    @property
    def has_unconfirmed(self) -> bool:
        return self.doc.modified  # edits since the last sync or confirm

    @property
    def title(self) -> str:
        base = self.parent_session.title.rstrip("*")
        return f"{base} ▸ {self.caption}" + ("*" if self.has_unconfirmed else "")

    @property
    def location(self) -> str:
        return f"{self.caption} of {self.root().location}; confirm to write it there"

    def root(self) -> DocumentSession:
        return self.parent_session.root()

    def _on_clean_changed(self, clean: bool) -> None:
        super()._on_clean_changed(clean)
        self._notify_lock()

    def _notify_lock(self) -> None:
        session: DocumentSession | None = self.parent_session
        while session is not None:
            session.lockChanged.emit()
            session = getattr(session, "parent_session", None)

    def _on_parent_title(self, _title: str) -> None:
        self.titleChanged.emit(self.title)

    # --- following the parent -------------------------------------------------------------
    def _on_parent_changed(self, event: DocumentEvent) -> None:
        if event.kind != ChangeKind.SAVED:
            self._follow.start()

    def _after_parent_changed(self) -> None:
        try:
            self.parent_session.doc.scope(self.scope_id)
        except KeyError:
            self.scopeGone.emit(f"{self.title.rstrip('*')} was closed: it no longer exists")
            return
        if self.has_unconfirmed or self.parent_session.change_count == self.synced_count:
            return
        self.stale = True
        if self.auto_sync:
            self.sync()

    def sync_if_stale(self) -> None:
        if self.stale and not self.has_unconfirmed:
            self.sync()

    def sync(self) -> None:
        """Become a fresh copy of the parent (unconfirmed edits are dropped)."""
        parent = self.parent_session
        self._share_layout()
        self.doc.sync_from(parent.doc)
        self.synced_count = parent.change_count
        self.stale = False
        self.base_digest = outside_digest(self.doc, self.scope_id)
        self.caption = scope_caption(parent.doc, self.scope_id)
        self.undo_stack.clear()
        self.doc.notify(DocumentEvent(ChangeKind.MODEL))
        self.titleChanged.emit(self.title)

    def discard(self) -> None:
        self.sync()

    def _share_layout(self) -> None:
        """Positions this copy laid out for scopes the parent has none for become the
        parent's opening state (like a layout file), so they survive a sync."""
        parent = self.parent_session.doc
        for sid, table in self._positions_within().items():
            if table and not parent.positions.get(sid):
                parent.set_positions(sid, table)

    def _positions_within(self) -> dict[ScopeId, dict[int, Position]]:
        """This copy's positions of its scope and the scopes below, with graph-IO keys
        translated to the parent's."""
        parent = self.parent_session.doc
        out: dict[ScopeId, dict[int, Position]] = {}
        for sid, table in self.doc.positions.items():
            if not sid.is_within(self.scope_id):
                continue
            translated = {}
            for key, pos in table.items():
                entry = self.doc.io_entry(key)
                translated[parent.io_key(*entry) if entry is not None else key] = pos
            out[sid] = translated
        return out

    # --- editing -------------------------------------------------------------------------
    def push(self, edit: Edit) -> bool:
        """Edits must stay inside this tab's scope: the confirm writes only that scope."""
        self.sync_if_stale()
        scopes = edit.scopes()
        if scopes is None or not all(s.is_within(self.scope_id) for s in scopes):
            self.editRejected.emit(
                f"'{edit.label}' changes the model outside {self.caption}; make that change "
                f"in {self.parent_session.title.rstrip('*')}"
            )
            return False
        return super().push(edit)

    def confirm(self) -> bool:
        """Write this tab's scope into the parent as one undo step; False (editRejected)
        when there is nothing to confirm or the parent refuses it."""
        if not self.has_unconfirmed:
            return False
        try:
            proto = self.doc.scope(self.scope_id).proto
        except KeyError:
            self.editRejected.emit(f"{self.caption} no longer exists in this tab")
            return False
        if outside_digest(self.doc, self.scope_id) != self.base_digest:
            self.editRejected.emit(
                f"this tab also changed the model outside {self.caption}; undo those "
                "changes here and make them in the model's tab"
            )
            return False
        parent = self.parent_session
        edit = ReplaceScope(
            self.scope_id,
            proto,
            self.doc.scope_keys(self.scope_id),
            self._positions_within(),
            label=f"Confirm edits of {self.caption}",
        )
        in_step = parent.change_count == self.synced_count
        if not parent.push_unlocked(edit):
            return False
        if in_step and not edit.remapped:
            self.synced_count = parent.change_count  # this copy is what the parent is now
        else:
            self.stale = True
        self.undo_stack.clear()  # the edits are the parent's undo step now
        self.titleChanged.emit(self.title)
        if self.stale and self.auto_sync:
            self.sync()
        return True

    def close(self) -> None:
        self._follow.stop()
        for signal, slot in self._parent_slots:
            signal.disconnect(slot)
        if self in self.parent_session.working_copies:
            self.parent_session.working_copies.remove(self)
        super().close()
        self._notify_lock()
