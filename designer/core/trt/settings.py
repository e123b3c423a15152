"""TensorRT settings stored in the model: optimization profiles (X-1) and layer precisions (X-2).

Where they live (so the model stays a valid ONNX file every other tool still opens):

* **Optimization profiles** are one entry of the model's ``metadata_props``, key
  :data:`PROFILES_KEY` (``onnx_designer.tensorrt``), whose value is JSON::

      {"version": 1,
       "profiles": [{"input_ids": {"min": [1, 1], "opt": [4, 128], "max": [8, 512]}, ...}, ...]}

  One object per profile, in order (profile 0 first); each maps a top-level graph input to
  its full min/opt/max shapes (static dims included).
* **Layer precisions** are ``metadata_props`` of the node itself (ONNX IR 10 node
  metadata; older IR versions keep the field as protobuf keeps any field): key
  :data:`PRECISION_KEY` holds one of :data:`PRECISIONS`, key :data:`OUTPUT_TYPES_KEY` holds
  comma-separated per-output types (``fp16,fp32``). A node's settings therefore move with the
  node: renaming it, deleting it, undoing either, copy/paste and whole-model transforms keep
  them right without bookkeeping. Only main-graph nodes count (TensorRT layer names are the
  main graph's node names).

Reading is tolerant: :func:`read_settings_lenient` returns what is readable plus one line per
problem; :func:`read_settings` raises :class:`TrtSettingsError` listing them instead.
Precisions and output types are read case-insensitively (``FP16`` is ``fp16``): the editors
always write lower case, and trtexec's parser (``stringToValue<DataType>`` in
sampleOptions.cpp) knows lower case only, so what is read is lower-cased before it reaches a
command line. Everything here is pure Python over ``onnx`` protos (no TensorRT needed).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import onnx

from designer.core.errors import DesignerError

PROFILES_KEY = "onnx_designer.tensorrt"
PRECISION_KEY = "onnx_designer.tensorrt.precision"
OUTPUT_TYPES_KEY = "onnx_designer.tensorrt.output_types"
FORMAT_VERSION = 1

#: Layer precisions TensorRT knows (trtexec ``--layerPrecisions`` spelling); None = no constraint.
PRECISIONS: tuple[str, ...] = (
    "fp32",
    "fp16",
    "bf16",
    "fp8",
    "int64",
    "int32",
    "int8",
    "int4",
    "uint8",
    "bool",
)
NO_CONSTRAINT = "No Constraint"


class TrtSettingsError(DesignerError):
    """TensorRT settings in a model (or given for one) are invalid; the message says how."""


Dims = tuple[int, ...]
InputDims = list[int | str]  # a graph input's declared dims: ints, dim names, or "?"


@dataclass(frozen=True)
class InputShapes:
    """min/opt/max shapes of one input in one profile (each the full shape)."""

    min: Dims
    opt: Dims
    max: Dims

    def to_json(self) -> dict[str, list[int]]:
        return {"min": list(self.min), "opt": list(self.opt), "max": list(self.max)}


@dataclass(frozen=True)
class OptimizationProfile:
    """Shapes per input name for one TensorRT optimization profile."""

    shapes: Mapping[str, InputShapes] = field(default_factory=dict)

    def to_json(self) -> dict[str, dict[str, list[int]]]:
        return {name: s.to_json() for name, s in self.shapes.items()}


@dataclass(frozen=True)
class TrtSettings:
    """Everything TensorRT-specific stored in one model.

    ``precisions``: main-graph node name → precision; ``output_types``: node name → one type
    per output. Empty settings mean "nothing stored".
    """

    profiles: tuple[OptimizationProfile, ...] = ()
    precisions: Mapping[str, str] = field(default_factory=dict)
    output_types: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not (self.profiles or self.precisions or self.output_types)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "profiles": [p.to_json() for p in self.profiles],
            "precisions": dict(self.precisions),
            "output_types": {k: list(v) for k, v in self.output_types.items()},
        }


# --- profiles: JSON <-> records ---------------------------------------------------------------
def profiles_value(profiles: Sequence[OptimizationProfile]) -> str:
    """The metadata value that stores ``profiles`` (compact, deterministic JSON)."""
    payload = {"version": FORMAT_VERSION, "profiles": [p.to_json() for p in profiles]}
    return json.dumps(payload, separators=(",", ":"))


def _dims(value: object, where: str) -> Dims:
    if not isinstance(value, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in value
    ):
        raise TrtSettingsError(f"{where} must be a list of integers, not {json.dumps(value)}")
    return _in_range(tuple(value), where)


def parse_profiles(text: str) -> tuple[OptimizationProfile, ...]:
    """Profiles from the JSON value of :data:`PROFILES_KEY`; TrtSettingsError if malformed."""
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrtSettingsError(f"metadata '{PROFILES_KEY}' is not JSON ({exc.msg})") from None
    if not isinstance(payload, dict):
        raise TrtSettingsError(f"metadata '{PROFILES_KEY}' must be a JSON object")
    version = payload.get("version")
    if version != FORMAT_VERSION:
        raise TrtSettingsError(
            f"metadata '{PROFILES_KEY}' has version {version!r}; this designer reads version "
            f"{FORMAT_VERSION}"
        )
    raw = payload.get("profiles", [])
    if not isinstance(raw, list):
        raise TrtSettingsError(f"metadata '{PROFILES_KEY}': 'profiles' must be a list")
    profiles = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise TrtSettingsError(f"profile {i} must be an object of input name → shapes")
        shapes: dict[str, InputShapes] = {}
        for name, value in entry.items():
            where = f"profile {i}, input '{name}'"
            if not isinstance(value, dict) or set(value) != {"min", "opt", "max"}:
                raise TrtSettingsError(f"{where} needs exactly 'min', 'opt' and 'max'")
            shapes[name] = InputShapes(
                _dims(value["min"], f"{where} min"),
                _dims(value["opt"], f"{where} opt"),
                _dims(value["max"], f"{where} max"),
            )
        profiles.append(OptimizationProfile(shapes))
    return tuple(profiles)


# --- reading a model --------------------------------------------------------------------------
def metadata_value(props: Iterable[onnx.StringStringEntryProto], key: str) -> str | None:
    for prop in props:
        if prop.key == key:
            return prop.value
    return None


def parse_output_types(text: str) -> tuple[str, ...]:
    """``fp16,fp32`` → ("fp16", "fp32") (any case); TrtSettingsError for an unknown type."""
    types = tuple(t.strip().lower() for t in text.split(","))
    for t in types:
        if t not in PRECISIONS:
            raise TrtSettingsError(f"unknown output type '{t}'; use one of {', '.join(PRECISIONS)}")
    return types


def known_precision(value: str) -> str | None:
    """``value`` as a :data:`PRECISIONS` entry (``" FP16"`` → ``"fp16"``); None if unknown."""
    cleaned = value.strip().lower()
    return cleaned if cleaned in PRECISIONS else None


def precision_problem(value: str) -> str | None:
    """Why a stored precision ``value`` cannot be used (None when it can)."""
    if known_precision(value) is not None:
        return None
    return f"unknown TensorRT precision '{value}'; use one of {', '.join(PRECISIONS)}"


def output_types_problem(value: str, outputs: int) -> str | None:
    """Why stored output types ``value`` cannot be used on a node with ``outputs`` outputs
    (None when they can): an unknown type, or not one type per output (trtexec would get a
    ``--layerOutputTypes`` entry TensorRT refuses only after parsing the whole model)."""
    try:
        types = parse_output_types(value)
    except TrtSettingsError as exc:
        return str(exc)
    if len(types) != outputs:
        given = f"{len(types)} type" + ("s" if len(types) != 1 else "")
        plural = "s" if outputs != 1 else ""
        return (
            f"output types '{value}': {given} for {outputs} output{plural}; TensorRT needs"
            " one type per output"
        )
    return None


def stored_precision(node: onnx.NodeProto) -> str | None:
    """The precision text stored on ``node``: lower-cased when it names a known precision,
    else as stored (so a view can show what is wrong); None when there is none."""
    if not node.metadata_props:
        return None
    value = metadata_value(node.metadata_props, PRECISION_KEY)
    if value is None:
        return None
    return known_precision(value) or value


def stored_output_types(node: onnx.NodeProto) -> str | None:
    """The output-types text stored on ``node`` as stored (None when there is none)."""
    if not node.metadata_props:
        return None
    return metadata_value(node.metadata_props, OUTPUT_TYPES_KEY)


def node_precision(node: onnx.NodeProto) -> str | None:
    """The precision constraint stored on ``node`` (None: none, or not a known precision)."""
    value = stored_precision(node)
    return value if value in PRECISIONS else None


def node_output_types(node: onnx.NodeProto) -> tuple[str, ...]:
    """Per-output types stored on ``node`` (empty when none, unreadable or not one per
    output: what a build would use)."""
    value = stored_output_types(node)
    if value is None or output_types_problem(value, len(node.output)) is not None:
        return ()
    return parse_output_types(value)


def node_precision_problem(node: onnx.NodeProto) -> str | None:
    """Why the precision stored on ``node`` cannot be used (None: it can, or there is none)."""
    precision = stored_precision(node)
    if precision is None:
        return None
    problem = precision_problem(precision)
    if problem is None and not node.name:
        problem = "a precision needs a named node (TensorRT finds layers by name)"
    return problem


def node_output_types_problem(node: onnx.NodeProto) -> str | None:
    """Why the output types stored on ``node`` cannot be used (None: they can, or none)."""
    types = stored_output_types(node)
    if types is None:
        return None
    problem = output_types_problem(types, len(node.output))
    if problem is None and not node.name:
        problem = "output types need a named node (TensorRT finds layers by name)"
    return problem


def node_problems(node: onnx.NodeProto) -> list[str]:
    """Why the precision / output types stored on ``node`` cannot be used (empty: they can,
    or there are none). The lines of :func:`read_settings_lenient` without the node label."""
    found = (node_precision_problem(node), node_output_types_problem(node))
    return [p for p in found if p is not None]


def read_settings_lenient(model: onnx.ModelProto) -> tuple[TrtSettings, list[str]]:
    """The settings stored in ``model`` and one line per problem found (never raises).

    Unreadable profiles are left out as a whole; an unknown precision, an unknown output
    type or output types that are not one per output leave that entry out (the lines say
    which; whether that is fatal is the caller's business). Stored profiles are not checked
    against the inputs here (:func:`profile_problems` does). O(main-graph nodes).
    """
    problems: list[str] = []
    profiles: tuple[OptimizationProfile, ...] = ()
    text = metadata_value(model.metadata_props, PROFILES_KEY)
    if text is not None:
        try:
            profiles = parse_profiles(text)
        except TrtSettingsError as exc:
            problems.append(str(exc))
    precisions: dict[str, str] = {}
    output_types: dict[str, tuple[str, ...]] = {}
    for node in model.graph.node:
        if not node.metadata_props:
            continue
        found = node_problems(node)
        label = node.name or f"(unnamed {node.op_type})"
        problems += [f"node '{label}': {line}" for line in found]
        if not node.name:
            continue
        precision = node_precision(node)
        if precision is not None:
            precisions[node.name] = precision
        types = node_output_types(node)
        if types:
            output_types[node.name] = types
    return TrtSettings(profiles, precisions, output_types), problems


#: How many problem lines :func:`read_settings` puts in its one message.
SHOWN_PROBLEMS = 5


def problems_message(problems: Sequence[str]) -> str:
    """``problems`` as one message: the first :data:`SHOWN_PROBLEMS`, then how many more."""
    shown = "; ".join(problems[:SHOWN_PROBLEMS])
    rest = len(problems) - SHOWN_PROBLEMS
    if rest > 0:
        shown += f"; and {rest} more (Type Checking or `onnx-designer trt show` lists all)"
    return shown


def read_settings(model: onnx.ModelProto) -> TrtSettings:
    """The settings stored in ``model``; TrtSettingsError listing the problems when any."""
    settings, problems = read_settings_lenient(model)
    if problems:
        raise TrtSettingsError(problems_message(problems))
    return settings


def profile_problems(model: onnx.ModelProto, profiles: Sequence[OptimizationProfile]) -> list[str]:
    """Every invalid entry of ``profiles`` for ``model``, one line each (``profile 0:
    'input' dim 0 …``); empty when all are valid. See :func:`validate_shapes`."""
    problems: list[str] = []
    for i, profile in enumerate(profiles):
        if not profile.shapes:
            problems.append(f"profile {i} has no inputs")
        for name, shapes in profile.shapes.items():
            problem = validate_shapes(model, name, shapes)
            if problem is not None:
                problems.append(f"profile {i}: {problem}")
    return problems


def read_profiles(model: onnx.ModelProto) -> tuple[OptimizationProfile, ...]:
    """Only the profiles (cheap: no node walk); TrtSettingsError when corrupt."""
    text = metadata_value(model.metadata_props, PROFILES_KEY)
    return () if text is None else parse_profiles(text)


def has_settings(model: onnx.ModelProto) -> bool:
    """True when the model stores any TensorRT setting (profiles key or a node constraint)."""
    if metadata_value(model.metadata_props, PROFILES_KEY) is not None:
        return True
    keys = (PRECISION_KEY, OUTPUT_TYPES_KEY)
    return any(
        p.key in keys for n in model.graph.node if n.metadata_props for p in n.metadata_props
    )


def settings_json(settings: TrtSettings) -> str:
    """Human-readable JSON of ``settings`` (what ``trt show --json`` prints)."""
    return json.dumps(settings.to_json(), indent=2)


# --- inputs and validation --------------------------------------------------------------------
def _declared_dims(vi: onnx.ValueInfoProto) -> InputDims | None:
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    dims: InputDims = []
    for d in vi.type.tensor_type.shape.dim:
        if d.HasField("dim_value") and d.dim_value > 0:
            dims.append(d.dim_value)
        else:
            dims.append(d.dim_param or "?")
    return dims


def runtime_inputs(model: onnx.ModelProto) -> dict[str, InputDims | None]:
    """Top-level inputs that are not initializers → declared dims (None: shape unknown)."""
    initializers = {t.name for t in model.graph.initializer}
    return {vi.name: _declared_dims(vi) for vi in model.graph.input if vi.name not in initializers}


def is_dynamic(dims: InputDims | None) -> bool:
    return dims is None or any(isinstance(d, str) for d in dims)


def dynamic_inputs(model: onnx.ModelProto) -> dict[str, InputDims]:
    """Top-level runtime inputs with a free dimension (or no shape) → their dims."""
    return {
        name: dims if dims is not None else []
        for name, dims in runtime_inputs(model).items()
        if is_dynamic(dims)
    }


def inputs_without_profile(
    model: onnx.ModelProto, profiles: Sequence[OptimizationProfile] | TrtSettings
) -> list[str]:
    """Dynamic inputs that some profile lacks (all of them when there is no profile).

    TensorRT needs every dynamic input in every profile; an engine build stops with these.
    """
    if isinstance(profiles, TrtSettings):
        profiles = profiles.profiles
    dynamic = dynamic_inputs(model)
    if not profiles:
        return list(dynamic)
    return [name for name in dynamic if any(name not in p.shapes for p in profiles)]


def validate_shapes(model: onnx.ModelProto, name: str, shapes: InputShapes) -> str | None:
    """Why ``shapes`` cannot be a profile entry for input ``name`` (None when it can).

    Checks: a top-level runtime input of that name; the same rank for min/opt/max and the
    input; static dims equal to the declared ones; every free dim ≥ 1;
    min ≤ opt ≤ max per dim.
    """
    inputs = runtime_inputs(model)
    if name not in inputs:
        return f"'{name}' is not a top-level input of the model"
    declared = inputs[name]
    ranks = {len(shapes.min), len(shapes.opt), len(shapes.max)}
    if len(ranks) != 1:
        return f"'{name}': min, opt and max must have the same rank"
    rank = ranks.pop()
    if declared is not None and rank != len(declared):
        return f"'{name}' has rank {len(declared)}; the profile gives {rank} dims"
    for i in range(rank):
        lo, mid, hi = shapes.min[i], shapes.opt[i], shapes.max[i]
        want = declared[i] if declared is not None else "?"
        if isinstance(want, int):
            if (lo, mid, hi) != (want, want, want):
                return f"'{name}' dim {i} is fixed at {want}; min/opt/max must all be {want}"
            continue
        if min(lo, mid, hi) < 1:
            return f"'{name}' dim {i} ({want}): sizes must be ≥ 1"
        if not lo <= mid <= hi:
            return f"'{name}' dim {i} ({want}): need min ≤ opt ≤ max, got {lo}/{mid}/{hi}"
    return None


def validate_profiles(
    model: onnx.ModelProto, profiles: Sequence[OptimizationProfile]
) -> str | None:
    """The first problem of ``profiles`` for ``model`` (None when all entries are valid)."""
    for i, profile in enumerate(profiles):
        if not profile.shapes:
            return f"profile {i} has no inputs"
        for name, shapes in profile.shapes.items():
            problem = validate_shapes(model, name, shapes)
            if problem is not None:
                return f"profile {i}: {problem}"
    return None


def format_dims(dims: Sequence[int]) -> str:
    """(1, 3, 224, 224) → ``1x3x224x224`` (the CLI and trtexec spelling)."""
    return "x".join(str(d) for d in dims)


#: The largest dim TensorRT takes: trtexec reads shape dims with ``std::stoi`` (32 bits).
MAX_DIM = 2**31 - 1


def parse_dims(text: str) -> Dims:
    """``1x3x224x224`` → (1, 3, 224, 224); TrtSettingsError for anything else."""
    parts = text.strip().lower().split("x")
    if not text.strip() or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
        raise TrtSettingsError(f"'{text}' is not a shape; write dims like 1x3x224x224")
    return _in_range(tuple(int(p) for p in parts), f"'{text}'")


def _in_range(dims: Dims, where: str) -> Dims:
    big = next((d for d in dims if d > MAX_DIM), None)
    if big is not None:
        raise TrtSettingsError(
            f"{where}: dim {big} is larger than TensorRT takes ({MAX_DIM}; trtexec reads "
            "dims as 32-bit integers)"
        )
    return dims


def free_dims_as_one(dims: InputDims) -> Dims:
    """A shape with every free dim set to 1 (the "use 1 for free dims" build choice)."""
    return tuple(d if isinstance(d, int) else 1 for d in dims)
