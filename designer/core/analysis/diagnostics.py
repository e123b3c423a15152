"""Diagnostic records produced by the type checker."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from designer.core.scope import ScopeId


class Severity(IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a document.

    ``code`` is a stable kebab-case identifier of the kind of problem (e.g.
    ``dangling-input``); ``node_key`` names the node when the problem is on one (None for
    graph-level problems); ``tensor`` names the tensor involved, if any.
    """

    severity: Severity
    code: str
    message: str
    scope: ScopeId
    scope_name: str = ""
    node_key: int | None = None
    node_name: str = ""
    tensor: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "severity": self.severity.label,
            "code": self.code,
            "message": self.message,
            "scope": self.scope_name,
            "node": self.node_name,
            "tensor": self.tensor,
        }

    def __str__(self) -> str:
        where = self.scope_name or "main graph"
        if self.node_name:
            where += f" / node {self.node_name}"
        return f"{self.severity.label}: {where}: {self.message}"
