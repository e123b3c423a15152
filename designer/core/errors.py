"""Errors the core raises for bad input; each carries a one-line message a user can act on."""

from __future__ import annotations


class DesignerError(Exception):
    """Base of every error caused by user input (files, values, edits).

    ``str(error)`` is a single line naming what failed and why; callers show it as is,
    never with a traceback. Line breaks and other unprintable characters in it (a name
    may hold them) are written as escapes.
    """

    def __str__(self) -> str:
        return one_line(super().__str__())


def one_line(text: str) -> str:
    """``text`` with line breaks and other unprintable characters written as escapes
    (``\\n``, ``\\u2028``), so a message naming them stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


class ModelLoadError(DesignerError):
    """A model file could not be opened (missing, unreadable, not ONNX, broken external data)."""


class ModelSaveError(DesignerError):
    """A model could not be written; the previous file on disk is left intact."""


class EditError(DesignerError):
    """An edit cannot be applied to the document as it is (bad name, unknown node, …)."""


class ValueSyntaxError(DesignerError):
    """Text in the P-2 value syntax is invalid.

    ``position`` is the 0-based character offset where parsing failed and ``expected``
    says what the parser wanted there.
    """

    def __init__(self, text: str, position: int, expected: str) -> None:
        self.text = text
        self.position = position
        self.expected = expected
        found = repr(text[position]) if position < len(text) else "end of text"
        super().__init__(f"at position {position}: expected {expected}, found {found}")
