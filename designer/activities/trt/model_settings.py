"""The model's stored TensorRT settings (profiles, layer precisions) merged into build options.

One function for ``trt build``, ``profile trt`` and the GUI dialogs, so they agree: the stored
settings come from :func:`designer.core.trt.settings.read_settings`; what the options already
hold overrides them (per input of a profile, per node); dynamic inputs without a profile stop
the build, or get 1 for their free dims when the user says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import onnx

from designer.activities.trt.options import ShapeProfile, TrtBuildOptions, TrtOptionError

__all__ = ["with_model_settings"]


def with_model_settings(
    options: TrtBuildOptions,
    model: onnx.ModelProto,
    *,
    free_dims_as_one: bool = False,
    ignore_stored_precisions: bool = False,
    cleared_precisions: Iterable[str] = (),
) -> TrtBuildOptions:
    """``options`` with the model's profiles and precisions filled in (a new object).

    ``options.profiles[i]`` entries override stored profile ``i`` input by input (extra
    profiles are appended); ``options.layer_precisions`` / ``layer_output_types`` override the
    stored ones node by node; ``cleared_precisions`` drops those nodes' layer precisions
    (their output types stay, as with ``trt set-precision --node NODE=none``). Raises
    TrtOptionError (one line) for corrupt stored settings, a dynamic input without a profile,
    or a bad shape."""
    from designer.core.trt import settings as trt

    try:
        stored = trt.read_settings(model)
    except trt.TrtSettingsError as exc:
        raise TrtOptionError(f"the model's TensorRT settings: {exc}") from None
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
    cleared = set(cleared_precisions)
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
