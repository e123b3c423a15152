"""Names in ONNX Designer: node and tensor names are unique in their scope and valid C90
identifiers (SPEC C-2); generated names follow the same rules."""

from __future__ import annotations

import re
from collections.abc import Container

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_]")
_SUFFIX = re.compile(r"(.*?)_(\d+)\Z")

C90_KEYWORDS = frozenset(
    [
        "auto",
        "break",
        "case",
        "char",
        "const",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "float",
        "for",
        "goto",
        "if",
        "int",
        "long",
        "register",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "typedef",
        "union",
        "unsigned",
        "void",
        "volatile",
        "while",
    ]
)


def is_c90_identifier(name: str) -> bool:
    """True when ``name`` is a valid C90 identifier that is not a keyword."""
    return bool(_IDENTIFIER.match(name)) and name not in C90_KEYWORDS


def identifier_problem(name: str) -> str | None:
    """Why ``name`` is not a valid C90 identifier, or None when it is."""
    if not name:
        return "a name cannot be empty"
    if name in C90_KEYWORDS:
        return f"'{name}' is a C keyword"
    if name[0].isdigit():
        return f"'{name}' starts with a digit"
    bad = _INVALID_CHARS.search(name)
    if bad:
        return f"'{name}' contains {bad.group(0)!r}; use letters, digits and '_' only"
    return None


def sanitize_identifier(text: str) -> str:
    """Turn arbitrary text (an op type, a tensor name) into a valid C90 identifier."""
    name = _INVALID_CHARS.sub("_", text) or "_"
    if name[0].isdigit():
        name = "_" + name
    if name in C90_KEYWORDS:
        name += "_"
    return name


def unique_name(base: str, taken: Container[str]) -> str:
    """``base`` made a valid identifier and, if taken, suffixed ``_1``, ``_2``… until free.

    Costs one membership test per candidate; pass a set for large scopes.
    """
    name = sanitize_identifier(base)
    if name not in taken:
        return name
    match = _SUFFIX.match(name)
    stem, start = (match.group(1), int(match.group(2)) + 1) if match else (name, 1)
    counter = start
    while f"{stem}_{counter}" in taken:
        counter += 1
    return f"{stem}_{counter}"
