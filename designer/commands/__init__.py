"""Subcommands of ``onnx-designer``: one module each, listed in :data:`ORDER`.

A module here defines ``register(subparsers) -> None`` that adds its parser(s) and sets
``handler=`` to a function ``(argparse.Namespace) -> int`` (exit code). Heavy imports go
inside the handler, so ``--help`` stays fast.

``--help`` lists the commands in :data:`ORDER` (a module found here but not listed follows,
by name), then the plug-ins of the ``onnx_designer.commands`` entry-point group by name
(:mod:`designer.plugins`). A module or plug-in that fails to import or to register is
reported (an ERROR log record naming it) and skipped; the other commands and the window
still work.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
from collections.abc import Callable
from typing import Any

from designer import plugins

logger = logging.getLogger(__name__)

#: The built-in command modules in their ``--help`` order: the model itself, changing it,
#: looking at it, user tools, running it (profiles, reports), TensorRT engines.
ORDER = (
    "model_commands",  # check, info, resave
    "transform_commands",  # fp16, sanitize, cast
    "plugin_commands",  # transform (plug-in transforms), plugins
    "compose_commands",
    "diff_commands",
    "extract_commands",
    "layout_commands",
    "image_commands",
    "gui_commands",
    "tool_commands",
    "activity_commands",  # profile, connection
    "analysis_commands",  # report, compare
    "engine_commands",
    "trt_commands",
)
BUILTIN_GROUP = "designer.commands"


def builtin_modules() -> list[str]:
    """The modules of this package, in :data:`ORDER` (others after it, by name)."""
    found = {info.name for info in pkgutil.iter_modules(__path__)}
    listed = [name for name in ORDER if name in found]
    return listed + sorted(found - set(ORDER))


def register_all(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for name in builtin_modules():
        value = f"{__name__}.{name}"
        try:
            module = importlib.import_module(value)
        except Exception as exc:
            plugins.report_failure(BUILTIN_GROUP, name, value, "import", exc)
            continue
        register = getattr(module, "register", None)
        if register is not None:
            _register(subparsers, BUILTIN_GROUP, name, value, register)
    for plugin in plugins.load(plugins.COMMANDS):
        if not callable(plugin.obj):
            plugins.report_failure(
                plugin.group,
                plugin.name,
                plugin.value,
                "register",
                plugins.PluginError("not a callable register(subparsers)"),
            )
            continue
        _register(subparsers, plugin.group, plugin.name, plugin.value, plugin.obj)


def _register(
    subparsers: argparse._SubParsersAction,  # type: ignore[type-arg]
    group: str,
    name: str,
    value: str,
    register: Callable[[Any], object],
) -> None:
    """``register(subparsers)``; on failure the parsers it added are taken out again."""
    before = dict(subparsers.choices)
    actions = list(subparsers._choices_actions)
    try:
        register(subparsers)
    except (Exception, SystemExit) as exc:  # argparse raises ArgumentError, plug-ins anything
        for key in set(subparsers.choices) - set(before):
            del subparsers.choices[key]
        subparsers._choices_actions[:] = actions
        plugins.report_failure(group, name, value, "register", exc)
