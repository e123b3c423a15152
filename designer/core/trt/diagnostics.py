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
    PROFILES_KEY,
    TrtSettingsError,
    has_settings,
    inputs_without_profile,
    metadata_value,
    node_problems,
    parse_profiles,
    read_settings_lenient,
    validate_shapes,
)

#: What every unusable stored setting adds: the build refuses it (it is never skipped).
_BLOCKS_BUILD = "an engine build refuses the model until it is fixed"


def trt_diagnostics(doc: Document) -> list[Diagnostic]:
    """Warnings for missing, stale or unreadable TensorRT settings. O(main-graph nodes)."""
    model = doc.model
    if not has_settings(model):
        return []
    title = model.graph.name or "main"
    out: list[Diagnostic] = []

    def warn(code: str, message: str, tensor: str = "") -> None:
        out.append(Diagnostic(Severity.WARNING, code, message, MAIN_SCOPE, title, tensor=tensor))

    settings, _problems = read_settings_lenient(model)
    text = metadata_value(model.metadata_props, PROFILES_KEY)
    if text is not None:
        try:
            parse_profiles(text)
        except TrtSettingsError as exc:
            warn("trt-settings-invalid", f"TensorRT settings: {exc}; {_BLOCKS_BUILD}")
    out += _node_diagnostics(doc, title)
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


def _node_diagnostics(doc: Document, title: str) -> list[Diagnostic]:
    """One warning per unusable precision / output types stored on a main-graph node (the
    lines of :func:`~designer.core.trt.settings.read_settings_lenient`), on that node so
    the Findings list selects it. O(main-graph nodes)."""
    scope = doc.scope(MAIN_SCOPE)
    out: list[Diagnostic] = []
    for key, node in zip(scope.keys, scope.proto.node, strict=True):
        if not node.metadata_props:
            continue
        # a named node is in the finding's own "node" field; an unnamed one only here
        where = "" if node.name else f"node '(unnamed {node.op_type})': "
        for problem in node_problems(node):
            out.append(
                Diagnostic(
                    Severity.WARNING,
                    "trt-settings-invalid",
                    f"TensorRT settings: {where}{problem}; {_BLOCKS_BUILD} "
                    "(select the node: Parameters > TensorRT)",
                    MAIN_SCOPE,
                    title,
                    node_key=key,
                    node_name=node.name,
                )
            )
    return out
