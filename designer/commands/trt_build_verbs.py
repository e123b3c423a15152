"""Verbs of ``onnx-designer trt`` (registered by :mod:`designer.commands.trt_commands`)."""

from __future__ import annotations

import argparse


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's verbs to the ``trt`` parser (``build`` comes with the activity)."""
