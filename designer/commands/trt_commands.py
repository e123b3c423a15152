"""``onnx-designer trt VERB``: TensorRT settings stored in the model, and engine builds.

The verbs live in two modules: :mod:`designer.commands.trt_settings_verbs` (set-profile,
set-precision, show: model data) and :mod:`designer.commands.trt_build_verbs` (build: an
activity on a target).
"""

from __future__ import annotations

import argparse

from designer.commands import trt_build_verbs, trt_settings_verbs


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    trt = sub.add_parser(
        "trt",
        help="TensorRT: optimization profiles and layer precisions in the model, engine builds",
        description="TensorRT settings stored in the model (optimization profiles, layer "
        "precisions) and engine builds on this machine or an SSH target.",
    )
    verbs = trt.add_subparsers(dest="verb", metavar="VERB", required=True)
    trt_settings_verbs.add_verbs(verbs)
    trt_build_verbs.add_verbs(verbs)
