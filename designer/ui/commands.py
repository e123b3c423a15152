"""QUndoCommand wrappers around core edits: the GUI's undo stack drives Edit.apply/revert."""

from __future__ import annotations

from PySide6.QtGui import QUndoCommand

from designer.core.document import Document
from designer.core.edits import Edit


class EditCommand(QUndoCommand):
    """One core Edit on the QUndoStack.

    The session applies the edit *before* pushing (so an EditError never reaches Qt's
    push), hence the first ``redo`` that QUndoStack.push makes is skipped.
    """

    def __init__(self, doc: Document, edit: Edit, *, applied: bool = True) -> None:
        super().__init__(edit.label)
        self.doc = doc
        self.edit = edit
        self._skip_redo = applied

    def redo(self) -> None:
        if self._skip_redo:
            self._skip_redo = False
            return
        self.edit.apply(self.doc)

    def undo(self) -> None:
        self.edit.revert(self.doc)

    def id(self) -> int:
        return 1  # every edit may try merging; Edit.merge decides

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, EditCommand) or other.doc is not self.doc:
            return False
        if self.edit.merge(other.edit):
            self.setText(self.edit.label)
            return True
        return False
