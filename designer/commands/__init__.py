"""Subcommands of ``onnx-designer``: one module each, found automatically.

A module here defines ``register(subparsers) -> None`` that adds its parser(s) and sets
``handler=`` to a function ``(argparse.Namespace) -> int`` (exit code). Heavy imports go
inside the handler, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil


def register_all(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
