"""Plug-ins: the entry-point groups an installed package uses to extend the designer. Qt-free.

A package declares its plug-ins in its ``pyproject.toml``::

    [project.entry-points."onnx_designer.transforms"]
    strip-docs = "my_package.transforms:StripDocs"

Groups (the object each entry point names, and how the designer calls it):

``onnx_designer.transforms``
    A model-wide transform: an object (or a class, instantiated without arguments) with
    ``title: str``, ``description: str`` and ``run(model: onnx.ModelProto, base_dir: Path
    | None) -> onnx.ModelProto`` that returns a new model and leaves ``model`` alone. It appears in
    Tools > Global Model Modification and as ``onnx-designer transform NAME IN OUT``.
``onnx_designer.detectors``
    A profile-analysis detector: a subclass of
    :class:`designer.activities.analysis.detectors.Detector`.
``onnx_designer.tools``
    Custom tools: a :class:`designer.activities.custom_tools.CustomTool`, or a callable
    without arguments returning one or a list of them. They are listed under Tools > User and
    by ``onnx-designer tool list``/``run`` beside the user's own tools.
``onnx_designer.docks``
    A dock window: a callable ``(window: MainWindow) -> QDockWidget``, listed in View >
    Windows.
``onnx_designer.commands``
    CLI subcommands: a callable ``register(subparsers)`` that adds parsers and sets
    ``handler=`` (``(argparse.Namespace) -> int``), as the built-in ones in
    :mod:`designer.commands` do.

Plug-ins are loaded in name order, always after the built-ins. A plug-in that cannot be
imported, or whose object fails when the designer calls it, is reported once as an ERROR
record of this module's logger (the Log window and stderr show it) naming the plug-in, its
entry point and the error, and skipped: it never stops the window or the command line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from importlib.metadata import entry_points
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

TRANSFORMS = "onnx_designer.transforms"
DETECTORS = "onnx_designer.detectors"
TOOLS = "onnx_designer.tools"
DOCKS = "onnx_designer.docks"
COMMANDS = "onnx_designer.commands"

#: Every group, with what its entry points name (the same text as the module doc).
GROUPS: dict[str, str] = {
    TRANSFORMS: "object with title, description, run(model, base_dir) -> ModelProto",
    DETECTORS: "Detector subclass (designer.activities.analysis.detectors)",
    TOOLS: "CustomTool, or a callable returning one or a list of them",
    DOCKS: "callable (window) -> QDockWidget",
    COMMANDS: "callable register(subparsers)",
}

T = TypeVar("T")


class Failed(Enum):
    """What :func:`invoke` returns when the plug-in failed (already reported)."""

    FAILED = "failed"


FAILED = Failed.FAILED


class PluginError(Exception):
    """A plug-in's object is not what its group expects (reported like any failure)."""


@dataclass(frozen=True)
class Plugin:
    """One loaded entry point."""

    group: str
    name: str
    value: str  # "module:attribute"
    obj: Any
    distribution: str | None = None

    @property
    def label(self) -> str:
        source = f" from {self.distribution}" if self.distribution else ""
        return f"plug-in {self.name!r} ({self.group} = {self.value}{source})"


@dataclass(frozen=True)
class PluginFailure:
    """A plug-in (or a built-in extension module) that was skipped, and why."""

    group: str
    name: str
    value: str
    stage: str  # "import", "register", "create", …
    error: str  # "ExceptionType: message"

    @property
    def builtin(self) -> bool:
        """A module of the designer itself (its entry point is a module path)."""
        return not self.group.startswith("onnx_designer.")

    def line(self) -> str:
        what = "built-in module" if self.builtin else "plug-in"
        return (
            f"{what} {self.name!r} ({self.group} = {self.value}) failed at {self.stage} "
            f"({self.error}); skipped"
        )


_failures: list[PluginFailure] = []


def failures() -> list[PluginFailure]:
    """Every failure reported in this process, oldest first."""
    return list(_failures)


def report_failure(group: str, name: str, value: str, stage: str, exc: BaseException) -> None:
    """Log a skipped plug-in once per process: one ERROR line, the traceback at DEBUG."""
    text = str(exc).strip().splitlines()
    failure = PluginFailure(
        group, name, value, stage, f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
    )
    if failure in _failures:
        return
    _failures.append(failure)
    logger.error(failure.line())
    logger.debug("traceback of %s", failure.line(), exc_info=exc)


def load(group: str) -> list[Plugin]:
    """The entry points of ``group`` that import, sorted by name; the others are reported."""
    try:
        found = list(entry_points(group=group))
    except Exception as exc:  # a broken installed distribution's metadata
        report_failure(group, "*", "(metadata)", "discovery", exc)
        return []
    plugins: list[Plugin] = []
    for ep in sorted(found, key=lambda e: (e.name.casefold(), e.value)):
        try:
            obj = ep.load()
        except (Exception, SystemExit) as exc:
            report_failure(group, ep.name, ep.value, "import", exc)
            continue
        dist = getattr(ep, "dist", None)
        plugins.append(Plugin(group, ep.name, ep.value, obj, getattr(dist, "name", None)))
    return plugins


def invoke(plugin: Plugin, stage: str, function: Callable[..., T], *args: Any) -> T | Failed:
    """``function(*args)`` for ``plugin``; :data:`FAILED` (and a report) when it raises.

    A function that raises :class:`PluginError` is reported the same way, so callers check
    a plug-in's result inside ``function``."""
    try:
        return function(*args)
    except (Exception, SystemExit) as exc:
        report_failure(plugin.group, plugin.name, plugin.value, stage, exc)
        return FAILED
