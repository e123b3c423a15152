"""The model's stored TensorRT settings (profiles, layer precisions) merged into build options.

One function for ``trt build``, ``profile trt`` and the GUI dialogs, so they agree: the stored
settings come from :func:`designer.core.trt.settings.read_settings_lenient`; what the options
already hold overrides them (per input of a profile, per node); dynamic inputs without a
profile stop the build, or get 1 for their free dims when the user says so. A stored value
the build would use but cannot (an unknown precision, output types that are not one per
output, an unreadable profile) stops it before anything runs.

A prebuilt engine (``prebuilt_engine=True``) already holds its profiles and precisions, so
nothing stored applies and nothing is required: only the shapes the user gives are used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

import onnx

from designer.activities.trt.options import ShapeProfile, TrtBuildOptions, TrtOptionError

__all__ = ["prebuilt_engine_shapes_note", "with_model_settings"]


def with_model_settings(
    options: TrtBuildOptions,
    model: onnx.ModelProto,
    *,
    free_dims_as_one: bool = False,
    ignore_stored_precisions: bool = False,
    cleared_precisions: Iterable[str] = (),
    prebuilt_engine: bool = False,
) -> TrtBuildOptions:
    """``options`` with the model's profiles and precisions filled in (a new object).

    ``options.profiles[i]`` entries override stored profile ``i`` input by input (extra
    profiles are appended); ``options.layer_precisions`` / ``layer_output_types`` override the
    stored ones node by node; ``cleared_precisions`` drops those nodes' layer precisions
    (their output types stay, as with ``trt set-precision --node NODE=none``). Raises
    TrtOptionError (one line) for corrupt stored settings the build would use, a dynamic
    input without a profile, or a bad shape.

    ``prebuilt_engine``: the options are for profiling an engine built before, which fixed
    its own profiles and precisions (trtexec ignores build options with ``--loadEngine``):
    stored settings are neither read nor required, ``options.profiles`` (the user's shapes)
    are kept as given (checked against the model's inputs), and ``free_dims_as_one`` fills
    1s only for dynamic inputs the user gave no shape."""
    from designer.core.trt import settings as trt

    if prebuilt_engine:
        return _for_prebuilt_engine(options, model, free_dims_as_one)
    cleared = set(cleared_precisions)
    problems = _stored_problems(model, options, ignore_stored_precisions, cleared)
    if problems:
        raise TrtOptionError(f"the model's TensorRT settings: {trt.problems_message(problems)}")
    stored, _ = trt.read_settings_lenient(model)
    profiles: list[ShapeProfile] = [
        {n: (list(s.min), list(s.opt), list(s.max)) for n, s in p.shapes.items()}
        for p in stored.profiles
    ]
    for index, override in enumerate(options.profiles):
        if index < len(profiles):
            profiles[index].update(override)
        else:
            profiles.append(dict(override))
    dynamic = trt.dynamic_inputs(model)
    missing = [n for n in dynamic if not profiles or any(n not in p for p in profiles)]
    if missing and free_dims_as_one:
        if not profiles:
            profiles.append({})
        for name in missing:
            if not dynamic[name]:
                raise TrtOptionError(
                    f"input {name!r} declares no shape, so its free dims are unknown: give it"
                    " an optimization profile"
                )
            ones = list(trt.free_dims_as_one(dynamic[name]))
            for p in profiles:
                p.setdefault(name, (ones, ones, ones))
    elif missing:
        raise TrtOptionError(
            f"dynamic input(s) {', '.join(missing)} have no TensorRT optimization profile; set"
            " one (trt set-profile) or use 1 for free dims"
        )
    for index, p in enumerate(profiles):
        for name, (lo, opt, hi) in p.items():
            problem = trt.validate_shapes(
                model, name, trt.InputShapes(tuple(lo), tuple(opt), tuple(hi))
            )
            if problem:
                raise TrtOptionError(f"profile {index}, input {name!r}: {problem}")
    precisions = {} if ignore_stored_precisions else dict(stored.precisions)
    precisions.update(options.layer_precisions)
    output_types = (
        {} if ignore_stored_precisions else {n: list(t) for n, t in stored.output_types.items()}
    )
    output_types.update(options.layer_output_types)
    for node in cleared:
        precisions.pop(node, None)
    return dataclasses.replace(
        options,
        profiles=profiles,
        layer_precisions=precisions,
        layer_output_types=output_types,
    )


def _stored_problems(
    model: onnx.ModelProto,
    options: TrtBuildOptions,
    ignore_precisions: bool,
    cleared: set[str],
) -> list[str]:
    """The stored values this build would use but cannot, one line each: an unreadable
    profiles entry, and per node an unusable precision or output types, unless the build
    ignores the stored precisions or the options replace (or clear) that node's value."""
    from designer.core.trt import settings as trt

    problems: list[str] = []
    text = trt.metadata_value(model.metadata_props, trt.PROFILES_KEY)
    if text is not None:
        try:
            trt.parse_profiles(text)
        except trt.TrtSettingsError as exc:
            problems.append(str(exc))
    if ignore_precisions:
        return problems
    for node in model.graph.node:
        if not node.metadata_props:
            continue
        label = node.name or f"(unnamed {node.op_type})"
        checks = (
            (trt.node_precision_problem, set(options.layer_precisions) | cleared),
            (trt.node_output_types_problem, set(options.layer_output_types)),
        )
        for check, replaced in checks:
            problem = check(node)
            if problem is not None and node.name not in replaced:
                problems.append(f"node '{label}': {problem}")
    return problems


def _for_prebuilt_engine(
    options: TrtBuildOptions, model: onnx.ModelProto, free_dims_as_one: bool
) -> TrtBuildOptions:
    """``options`` for a prebuilt engine: the user's shapes only (checked), none stored."""
    from designer.core.trt import settings as trt

    profiles: list[ShapeProfile] = [dict(p) for p in options.profiles[:1]]
    if free_dims_as_one:
        given = profiles[0] if profiles else {}
        for name, dims in trt.dynamic_inputs(model).items():
            if name in given:
                continue
            if not dims:
                raise TrtOptionError(
                    f"input {name!r} declares no shape, so its free dims are unknown: give"
                    " its shape"
                )
            ones = list(trt.free_dims_as_one(dims))
            given[name] = (ones, ones, ones)
        profiles = [given] if given else []
    for p in profiles:
        for name, (lo, opt, hi) in p.items():
            problem = trt.validate_shapes(
                model, name, trt.InputShapes(tuple(lo), tuple(opt), tuple(hi))
            )
            if problem:
                raise TrtOptionError(problem)
    return dataclasses.replace(
        options, profiles=profiles, layer_precisions={}, layer_output_types={}
    )


def prebuilt_engine_shapes_note(model: onnx.ModelProto, shapes: Mapping[str, object]) -> str | None:
    """What trtexec does with the dynamic inputs of ``model`` that ``shapes`` (the inference
    shapes passed as ``--shapes``) leaves out when it loads a prebuilt engine; None when
    there are none.

    Without ``--shapes`` trtexec's inference shapes stay empty ("Input inference shapes:
    model"; with ``--loadEngine`` there are no build profiles whose opt shapes it would copy
    over: sampleOptions.cpp, 10.16 and 11.1 alike), and when it sets up inference it sets
    every free dim to 1 (the 10.16 log of a ``--loadEngine`` run without ``--shapes``:
    "Shape missing for input with dynamic shape: x Automatically setting shape to:
    1x1x28x28")."""
    from designer.core.trt import settings as trt

    missing = [n for n in trt.dynamic_inputs(model) if n not in shapes]
    if not missing:
        return None
    return (
        f"no shape given for dynamic input(s) {', '.join(missing)}: trtexec then sets each"
        " of their free dims to 1 (its 'Shape missing for input with dynamic shape'"
        " warning), which fails if the engine's profile does not cover 1; give their"
        " shapes to run others"
    )
