"""The Edit protocol: the only way a Document changes.

An edit checks everything it needs *before* it changes anything, so a failing ``apply``
raises :class:`EditError` and leaves the document untouched. ``revert`` restores the document
exactly (byte for byte) as it was before ``apply``. ``scopes`` says which graph scopes it
changes (a subgraph tab accepts only edits inside its own scope).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from designer.core.errors import EditError
from designer.core.scope import ScopeId

#: What :meth:`Edit.scopes` answers: the scopes changed, or None for the model as a whole.
Scopes = tuple[ScopeId, ...] | None

if TYPE_CHECKING:
    from designer.core.document import Document


class Edit(ABC):
    """One undoable change with a label for the History window."""

    label: str = "Edit"

    @abstractmethod
    def apply(self, doc: Document) -> None:
        """Make the change (and notify listeners); raise EditError without changing anything."""

    @abstractmethod
    def revert(self, doc: Document) -> None:
        """Undo exactly what the last ``apply`` did."""

    @abstractmethod
    def scopes(self) -> Scopes:
        """The graph scopes (main graph, subgraphs, function bodies) this edit changes, or
        None when it changes the model as a whole (model properties, the list of local
        functions, every scope at once)."""

    def merge(self, other: Edit) -> bool:
        """Absorb ``other`` (already applied after this one) into this edit; True if done."""
        return False


class CompoundEdit(Edit):
    """Several edits as one undo step; applied in order, reverted in reverse order.

    If one child fails, the children already applied are reverted before the error
    propagates, so the compound is all or nothing.
    """

    def __init__(self, label: str, edits: Sequence[Edit]) -> None:
        self.label = label
        self.edits = list(edits)

    def apply(self, doc: Document) -> None:
        done: list[Edit] = []
        try:
            for edit in self.edits:
                edit.apply(doc)
                done.append(edit)
        except EditError:
            for edit in reversed(done):
                edit.revert(doc)
            raise

    def revert(self, doc: Document) -> None:
        for edit in reversed(self.edits):
            edit.revert(doc)

    def scopes(self) -> Scopes:
        """Every child's scopes (in order, once each); None if any child changes the model
        as a whole."""
        out: dict[ScopeId, None] = {}
        for edit in self.edits:
            scopes = edit.scopes()
            if scopes is None:
                return None
            out.update(dict.fromkeys(scopes))
        return tuple(out)
