"""Verbs of ``onnx-designer trt`` that edit or print the TensorRT settings stored in a model:
``set-profile``, ``set-precision`` and ``show`` (registered by
:mod:`designer.commands.trt_commands`). Each change goes through the same Edits as the GUI."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from designer.core.errors import DesignerError


class _Ordered(argparse.Action):
    """Collect ``--shape`` values and ``--profile`` markers in command-line order."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        items = list(getattr(namespace, "items", None) or [])
        items.append((self.dest, values))
        namespace.items = items


def _parse_shape(text: str) -> tuple[str, Any]:
    from designer.core.trt.settings import InputShapes, parse_dims

    parts = text.split(":")
    if len(parts) < 4 or not parts[0]:
        raise DesignerError(f"--shape '{text}': write NAME:MIN:OPT:MAX with dims like 1x3x224x224")
    name = ":".join(parts[:-3])  # an input name may itself contain ':'
    dims = [parse_dims(p) for p in parts[-3:]]
    return name, InputShapes(dims[0], dims[1], dims[2])


def _profiles_from(items: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = [{}]
    for dest, value in items:
        if dest == "profile_marker":
            if groups[-1]:
                groups.append({})
            continue
        name, shapes = _parse_shape(value)
        if name in groups[-1]:
            raise DesignerError(
                f"input '{name}' is given twice in one profile; separate profiles with --profile"
            )
        groups[-1][name] = shapes
    return [g for g in groups if g]


def _save(doc: Any, out: Path) -> None:
    from designer.core.io import write_model

    report = write_model(doc.model, out, doc.base_dir)
    extra = f" and {len(report.data_files)} data file(s)" if report.data_files else ""
    print(f"saved {report.path}{extra}")


def _set_profile(args: argparse.Namespace) -> int:
    from designer.core.edits.trt import SetOptimizationProfiles, current_profiles
    from designer.core.io import open_document
    from designer.core.trt.settings import OptimizationProfile, inputs_without_profile

    items = getattr(args, "items", None) or []
    try:
        groups = _profiles_from(items)
    except DesignerError as exc:
        args.parser.error(str(exc))
    if args.clear and groups:
        args.parser.error("--clear takes no --shape")
    if not args.clear and not groups:
        args.parser.error("give at least one --shape NAME:MIN:OPT:MAX (or --clear)")
    if args.index is not None and len(groups) != 1:
        args.parser.error("--index replaces one profile: give its shapes without --profile")
    doc = open_document(args.model)
    new = [OptimizationProfile(g) for g in groups]
    stored = list(current_profiles(doc))
    if args.index is not None:
        if not 0 <= args.index < len(stored):
            raise DesignerError(
                f"there is no optimization profile {args.index} (the model has {len(stored)})"
            )
        stored[args.index] = new[0]
        profiles = stored
    elif args.append:
        profiles = stored + new
    else:
        profiles = new
    if args.clear and not stored:
        raise DesignerError(f"{args.model} has no TensorRT optimization profiles to clear")
    doc.undo_stack.push(SetOptimizationProfiles(profiles))
    _save(doc, args.output)
    missing = inputs_without_profile(doc.model, profiles)
    if missing and profiles:
        print(
            "onnx-designer: warning: dynamic input(s) missing from a profile: "
            + ", ".join(missing),
            file=sys.stderr,
        )
    return 0


def _split_assignment(text: str, option: str) -> tuple[str, str]:
    name, sep, value = text.rpartition("=")
    if not sep or not name or not value:
        raise DesignerError(f"{option} '{text}': write NODE=PRECISION")
    return name, value


def _set_precision(args: argparse.Namespace) -> int:
    from designer.core.edits import CompoundEdit, Edit
    from designer.core.edits.trt import SetLayerOutputTypes, SetLayerPrecision
    from designer.core.io import open_document
    from designer.core.scope import MAIN_SCOPE
    from designer.core.trt.settings import node_output_types, node_precision

    try:
        precisions = [_split_assignment(t, "--node") for t in args.node or []]
        types = [_split_assignment(t, "--output-type") for t in args.output_type or []]
    except DesignerError as exc:
        args.parser.error(str(exc))
    if not (precisions or types or args.clear):
        args.parser.error("give at least one --node NAME=PREC, --output-type or --clear")
    doc = open_document(args.model)
    scope = doc.scope(MAIN_SCOPE)
    keys = {node.name: key for key, node in scope.nodes() if node.name}

    def key_of(name: str) -> int:
        if name not in keys:
            raise DesignerError(f"no node named '{name}' in the main graph of {args.model}")
        return keys[name]

    edits: list[Edit] = []
    if args.clear:
        constrained = [k for k, n in scope.nodes() if node_precision(n) or node_output_types(n)]
        if constrained:
            edits.append(SetLayerPrecision(MAIN_SCOPE, constrained, None))
            edits.append(SetLayerOutputTypes(MAIN_SCOPE, constrained, None))
    for name, value in precisions:
        prec = None if value.strip().lower() == "none" else value
        edits.append(SetLayerPrecision(MAIN_SCOPE, [key_of(name)], prec))
    for name, value in types:
        out = None if value.strip().lower() == "none" else value.split(",")
        edits.append(SetLayerOutputTypes(MAIN_SCOPE, [key_of(name)], out))
    if not edits:
        raise DesignerError(f"{args.model} has no layer precisions to clear")
    doc.undo_stack.push(CompoundEdit("Set layer precisions", edits))
    _save(doc, args.output)
    return 0


def _show(args: argparse.Namespace) -> int:
    from designer.core.io import read_model
    from designer.core.trt.settings import (
        dynamic_inputs,
        inputs_without_profile,
        profile_problems,
        read_settings_lenient,
        settings_json,
    )

    model = read_model(args.model)
    settings, problems = read_settings_lenient(model)
    problems += profile_problems(model, settings.profiles)
    missing = inputs_without_profile(model, settings)
    if args.json:
        payload = json.loads(settings_json(settings))
        payload["dynamic_inputs"] = dynamic_inputs(model)
        payload["inputs_without_profile"] = missing
        payload["problems"] = problems
        print(json.dumps(payload, indent=2))
    else:
        _print_settings(args.model, model, settings, missing)
    for line in problems:  # every one, after what could be read (as `check` lists them)
        print(f"onnx-designer: error: {line}", file=sys.stderr)
    return 1 if problems else 0


def _print_settings(path: Path, model: Any, settings: Any, missing: list[str]) -> None:
    """The readable part of ``settings`` (a TrtSettings of ``model``) as text: unusable
    precisions and output types are left out, an invalid profile entry is marked (the
    caller lists the problems)."""
    from designer.core.trt.settings import format_dims, validate_shapes

    print(f"{path}: TensorRT settings")
    print(f"optimization profiles: {len(settings.profiles)}")
    for i, profile in enumerate(settings.profiles):
        print(f"  profile {i}:")
        width = max((len(n) for n in profile.shapes), default=0)
        for name, s in profile.shapes.items():
            bad = "  (invalid)" if validate_shapes(model, name, s) is not None else ""
            print(
                f"    {name:<{width}}  min {format_dims(s.min)}  opt {format_dims(s.opt)}  "
                f"max {format_dims(s.max)}{bad}"
            )
    if missing:
        print("dynamic inputs without a profile: " + ", ".join(missing))
    print(f"layer precisions: {len(settings.precisions)}")
    for name, prec in settings.precisions.items():
        print(f"  {name}  {prec}")
    if settings.output_types:
        print(f"layer output types: {len(settings.output_types)}")
        for name, out in settings.output_types.items():
            print(f"  {name}  {','.join(out)}")


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's verbs to the ``trt`` parser."""
    p = verbs.add_parser(
        "set-profile",
        help="store TensorRT optimization profiles (min/opt/max input shapes) in a model",
        description="Write MODEL to OUT with TensorRT optimization profiles stored in it "
        "(metadata 'onnx_designer.tensorrt'). Each --shape gives one input's full shapes as "
        "NAME:MIN:OPT:MAX with dims like 1x3x224x224; --profile starts the next profile. "
        "By default the given profiles replace the stored ones.",
        epilog="example: trt set-profile m.onnx out.onnx --shape input_ids:1x1:4x128:8x512 "
        "--shape attention_mask:1x1:4x128:8x512 --profile --shape input_ids:1x1:1x1:1x1 "
        "--shape attention_mask:1x1:1x1:1x1",
    )
    p.add_argument("model", type=Path, help="the .onnx file to read")
    p.add_argument("output", type=Path, help="where to write the model")
    p.add_argument(
        "--shape",
        dest="shape",
        action=_Ordered,
        metavar="NAME:MIN:OPT:MAX",
        help="one input's min/opt/max shapes in the current profile (repeatable)",
    )
    p.add_argument(
        "--profile",
        dest="profile_marker",
        action=_Ordered,
        nargs=0,
        help="start the next optimization profile",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--append", action="store_true", help="add after the stored profiles")
    mode.add_argument("--index", type=int, metavar="N", help="replace stored profile N only")
    mode.add_argument("--clear", action="store_true", help="remove every stored profile")
    p.set_defaults(handler=_set_profile, parser=p, items=[])

    p = verbs.add_parser(
        "set-precision",
        help="store TensorRT layer precision constraints on nodes of a model",
        description="Write MODEL to OUT with TensorRT layer precisions stored on the named "
        "main-graph nodes (node metadata 'onnx_designer.tensorrt.precision'). PREC is one of "
        "fp32, fp16, bf16, fp8, int64, int32, int8, int4, uint8, bool, or none to clear. "
        "TensorRT honours them with typing mode obey or prefer.",
    )
    p.add_argument("model", type=Path, help="the .onnx file to read")
    p.add_argument("output", type=Path, help="where to write the model")
    p.add_argument(
        "--node", action="append", metavar="NAME=PREC", help="set a node's precision (repeatable)"
    )
    p.add_argument(
        "--output-type",
        action="append",
        metavar="NAME=PREC[,PREC…]",
        help="set a node's output types, one per output, or none (repeatable)",
    )
    p.add_argument(
        "--clear",
        action="store_true",
        help="first remove every stored precision and output type",
    )
    p.set_defaults(handler=_set_precision, parser=p)

    p = verbs.add_parser(
        "show",
        help="print the TensorRT profiles and precisions stored in a model",
        description="Print the optimization profiles, layer precisions and output types "
        "stored in MODEL, and the dynamic inputs no profile covers, then every problem of "
        "the stored settings (an unreadable value, an unknown precision, output types that "
        "are not one per output, an invalid profile). Exits 1 when there is any problem.",
    )
    p.add_argument("model", type=Path, help="the .onnx file")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(handler=_show)
