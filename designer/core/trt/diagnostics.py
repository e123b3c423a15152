"""Type Checking findings about the stored TensorRT settings.

Reported only for a model that stores TensorRT settings at all: a model nobody means to build
with TensorRT would otherwise get a warning for every dynamic input. The engine build checks
:func:`~designer.core.trt.settings.inputs_without_profile` on every model regardless.
"""

from __future__ import annotations

from designer.core.analysis.diagnostics import Diagnostic, Severity
from designer.core.document import Document
from designer.core.scope import MAIN_SCOPE
from designer.core.trt.settings import (
    has_settings,
    inputs_without_profile,
    read_settings_lenient,
    validate_shapes,
)


def trt_diagnostics(doc: Document) -> list[Diagnostic]:
    """Warnings for missing, stale or unreadable TensorRT settings. O(main-graph nodes)."""
    model = doc.model
    if not has_settings(model):
        return []
    title = model.graph.name or "main"
    out: list[Diagnostic] = []

    def warn(code: str, message: str, tensor: str = "") -> None:
        out.append(Diagnostic(Severity.WARNING, code, message, MAIN_SCOPE, title, tensor=tensor))

    settings, problems = read_settings_lenient(model)
    for line in problems:
        warn("trt-settings-invalid", f"TensorRT settings: {line}")
    for i, profile in enumerate(settings.profiles):
        for name, shapes in profile.shapes.items():
            problem = validate_shapes(model, name, shapes)
            if problem is not None:
                warn(
                    "trt-profile-invalid",
                    f"TensorRT optimization profile {i}: {problem}; set the profile again",
                    name,
                )
    for name in inputs_without_profile(model, settings):
        which = (
            "no TensorRT optimization profile"
            if not settings.profiles
            else "no shapes in every TensorRT optimization profile"
        )
        warn(
            "trt-profile-missing",
            f"dynamic input '{name}' has {which}; an engine build needs min/opt/max shapes "
            "(right-click the input > Set TensorRT Optimization Profile…)",
            name,
        )
    return out
