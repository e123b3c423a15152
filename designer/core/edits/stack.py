"""The undo history of a document: the one record of its edits, used headless and in the GUI.

Every state of the document the history can reach has a *revision* (the serial number of the
step that produced it; ``base_revision`` before the first step). ``modified`` is simply
"the revision now differs from the revision last saved": undoing back to the saved state makes
a document clean again, and a state reached on a branch that was since discarded never is.
The GUI shows and drives this object through a notifying Qt adapter
(:mod:`designer.ui.history`); it keeps no history of its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING

from designer.core.edits.base import Edit

if TYPE_CHECKING:
    from designer.core.document import Document

#: revision numbers are unique across every history of the process
_serials = itertools.count(1)


class UndoStack:
    """Edits applied to one document; ``index`` edits are applied, the rest can be redone."""

    def __init__(self, doc: Document) -> None:
        self._doc = doc
        self._edits: list[Edit] = []
        self._revisions: list[int] = []  # revision of the state after each step
        self.base_revision = next(_serials)  # the state before the first step
        self.index = 0
        self.saved_revision: int | None = self.base_revision
        self._listeners: list[Callable[[], None]] = []

    # --- listeners -----------------------------------------------------------------------
    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after every push, undo, redo, clear or clean-state change;
        returns a function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    # --- revisions and the clean state ---------------------------------------------------
    @property
    def revision(self) -> int:
        """The revision of the document's state now."""
        return self._revisions[self.index - 1] if self.index else self.base_revision

    @property
    def is_clean(self) -> bool:
        return self.revision == self.saved_revision

    @property
    def clean_index(self) -> int | None:
        """The step count of the saved state, or None when no reachable state is saved."""
        if self.saved_revision == self.base_revision:
            return 0
        if self.saved_revision in self._revisions:
            return self._revisions.index(self.saved_revision) + 1
        return None

    def set_clean(self) -> None:
        """The state now is the saved one (after a save)."""
        self.saved_revision = self.revision
        self._changed()

    def reset_clean(self) -> None:
        """No reachable state is saved (restored crash-recovery work, for example)."""
        self.saved_revision = None
        self._changed()

    # --- changing ------------------------------------------------------------------------
    def push(self, edit: Edit) -> None:
        """Apply ``edit`` and record it. On EditError nothing is applied or recorded."""
        edit.apply(self._doc)
        del self._edits[self.index :]
        del self._revisions[self.index :]
        top = self._edits[-1] if self._edits else None
        if top is not None and not self.is_clean and top.merge(edit):
            self._revisions[-1] = next(_serials)  # a new state, reached by the merged step
            self._changed()
            return
        self._edits.append(edit)
        self._revisions.append(next(_serials))
        self.index += 1
        self._changed()

    @property
    def can_undo(self) -> bool:
        return self.index > 0

    @property
    def can_redo(self) -> bool:
        return self.index < len(self._edits)

    def undo(self) -> None:
        if not self.can_undo:
            return
        self._edits[self.index - 1].revert(self._doc)
        self.index -= 1
        self._changed()

    def redo(self) -> None:
        """Apply the next step again; an EditError leaves the history where it was."""
        if not self.can_redo:
            return
        self._edits[self.index].apply(self._doc)
        self.index += 1
        self._changed()

    def set_index(self, index: int) -> None:
        """Undo or redo until ``index`` steps are applied (the History window's click)."""
        index = max(0, min(index, len(self._edits)))
        while self.index > index:
            self.undo()
        while self.index < index:
            self.redo()

    def clear(self) -> None:
        """Forget every step; the document's state now becomes the clean one (a working copy
        whose edits were confirmed into its parent, or dropped)."""
        self.base_revision = self.revision
        self._edits.clear()
        self._revisions.clear()
        self.index = 0
        self.saved_revision = self.base_revision
        self._changed()

    # --- reading -------------------------------------------------------------------------
    def edits(self) -> list[Edit]:
        """Every step, applied ones first, then those that can be redone (a copy)."""
        return list(self._edits)

    def labels(self) -> list[str]:
        return [e.label for e in self._edits]

    def label(self, index: int) -> str:
        """The label of step ``index`` (0 is the first step)."""
        return self._edits[index].label

    def __len__(self) -> int:
        return len(self._edits)
