"""What a transform reports: a readable log (the status dialog's detailed log and the CLI's
output) plus structured counts for ``--json`` and tests, and the cancel/progress hooks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from designer.core.errors import DesignerError

#: Polled between units of work (nodes, scopes, evaluations); True asks the transform to stop.
Cancel = Callable[[], bool]
#: Called with a fraction in [0, 1] and a short message saying what is being done.
Progress = Callable[[float, str], None]


class TransformError(DesignerError):
    """A transform cannot run on this input (bad option, unknown name, unsupported model)."""


class TransformCancelled(DesignerError):
    """The user cancelled a transform; nothing was changed."""

    def __init__(self, what: str = "transform") -> None:
        super().__init__(f"{what} cancelled")


def never() -> bool:
    """The default ``cancel`` callback: never cancel."""
    return False


def silent(fraction: float, message: str) -> None:
    """The default ``progress`` callback: report nothing."""


@dataclass
class Monitor:
    """Bundles a transform's ``cancel`` and ``progress`` callbacks."""

    cancel: Cancel = never
    progress: Progress = silent
    what: str = "transform"

    def check(self) -> None:
        """Raise :class:`TransformCancelled` if cancel was asked for (one callback call)."""
        if self.cancel():
            raise TransformCancelled(self.what)

    def step(self, fraction: float, message: str) -> None:
        self.check()
        self.progress(min(max(fraction, 0.0), 1.0), message)


@dataclass
class TransformLog:
    """Lines for people and counts for programs.

    ``counts`` holds flat integer counters (``"folded.Shape": 3``); ``details`` holds any
    other JSON-ready values (sizes, per-output errors, the blocked nodes).
    """

    title: str
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def info(self, line: str) -> None:
        self.lines.append(line)

    def warn(self, line: str) -> None:
        self.warnings.append(line)
        self.lines.append(f"warning: {line}")

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def counts_with(self, prefix: str) -> dict[str, int]:
        """The counters under ``prefix.`` with the prefix removed, largest first."""
        items = [
            (k[len(prefix) + 1 :], v) for k, v in self.counts.items() if k.startswith(prefix + ".")
        ]
        return dict(sorted(items, key=lambda kv: (-kv[1], kv[0])))

    def text(self) -> str:
        """The whole log as the GUI and the CLI print it."""
        return "\n".join([self.title, *("  " + line for line in self.lines)])

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "lines": list(self.lines),
            "warnings": list(self.warnings),
            "counts": dict(self.counts),
            **self.details,
        }
