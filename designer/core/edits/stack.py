"""An undo stack for headless use and tests (the GUI wraps edits in a QUndoStack instead)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from designer.core.edits.base import Edit

if TYPE_CHECKING:
    from designer.core.document import Document


class UndoStack:
    """Edits applied to one document; ``index`` edits are applied, the rest can be redone."""

    def __init__(self, doc: Document) -> None:
        self._doc = doc
        self._edits: list[Edit] = []
        self.index = 0
        self.clean_index: int | None = 0
        self._listeners: list[Callable[[], None]] = []

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    @property
    def is_clean(self) -> bool:
        return self.index == self.clean_index

    def set_clean(self) -> None:
        self.clean_index = self.index
        self._changed()

    def push(self, edit: Edit) -> None:
        """Apply ``edit`` and record it. On EditError nothing is applied or recorded."""
        edit.apply(self._doc)
        del self._edits[self.index :]
        if self.clean_index is not None and self.clean_index > self.index:
            self.clean_index = None  # the clean state was in the discarded redo part
        top = self._edits[-1] if self._edits else None
        if top is not None and self.clean_index != self.index and top.merge(edit):
            self._changed()
            return
        self._edits.append(edit)
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
        self.index -= 1
        self._edits[self.index].revert(self._doc)
        self._changed()

    def redo(self) -> None:
        if not self.can_redo:
            return
        self._edits[self.index].apply(self._doc)
        self.index += 1
        self._changed()

    def labels(self) -> list[str]:
        return [e.label for e in self._edits]

    def __len__(self) -> int:
        return len(self._edits)
