"""TensorRT layer-information JSON (``trtexec --exportLayerInfo``) as plain records (Qt-free).

Reads the schema of TensorRT 8.x, 10.x and 11.x:

- 8.x / 10.x: ``{"Layers": [...], "Bindings": ["in", "out"]}``; each tensor has one
  ``"Format/Datatype"`` string; 10.x adds ``StreamId`` and ``Metadata`` (the ONNX node names,
  ``[ONNX Layer: a]`` entries separated by ``\\u001e`` or ``\\u001f``).
- 11.x: ``"I/O Tensors"`` (objects: Name, IOMode, DataType, Dimensions, Location,
  IsShapeInferenceIO, ProfileInfo[{MinShape, OptShape, MaxShape, Format}]) replaces
  ``Bindings``, and each tensor's ``Format/Datatype`` is split into ``Format`` + ``DataType``.
- A bare list of layers as root; layers given only by name (profiling verbosity
  ``layer_names_only``), as strings or as dicts with only ``Name``.

Anything missing or unknown becomes ``None`` ("not recorded"); only a file that is not a layer
JSON at all raises :class:`EngineFormatError` with one line naming what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from designer.activities.reports.trt_formats import (
    REFORMAT_NAME,
    EngineTensor,
    as_dims,
    as_int,
    as_str,
    bytes_per_element,
    layout_of,
    names_from_layer_name,
    parse_tensor,
    precision_of,
    split_metadata,
)
from designer.core.errors import DesignerError

__all__ = [
    "EXPECTED_LAYER_JSON",
    "EngineFormatError",
    "EngineGraph",
    "EngineIOTensor",
    "EngineLayer",
    "EngineTensor",
    "ShapeProfile",
    "VersionFamily",
    "bytes_per_element",
    "layout_of",
    "load_graph",
    "parse_graph",
    "parse_layer",
    "precision_of",
    "split_metadata",
]

VersionFamily = Literal["8.x", "10.x", "11.x", "unknown"]
EXPECTED_LAYER_JSON = (
    'a TensorRT layer-information JSON (trtexec --exportLayerInfo): {"Layers": [...]} '
    "or a list of layers"
)


def _items(value: Any) -> list[Any]:
    """A JSON list as a list; anything else (missing, a number, an object) as no items."""
    return value if isinstance(value, list) else []


class EngineFormatError(DesignerError):
    """A file is not the TensorRT engine file it was taken for (one line: what was expected)."""


@dataclass(frozen=True)
class EngineLayer:
    """One engine layer. ``kind`` is TREx's "type" (``ParameterType`` when recorded, else
    ``LayerType``); ``layer_type`` the implementation (``CaskConvolution``, ``kgen``, …).
    ``onnx_nodes`` come from ``Metadata`` (10.x+, ``onnx_nodes_source == "metadata"``) or are
    guessed from the fused layer name (8.x, ``"name"``). ``raw`` is the full record as read."""

    index: int
    name: str
    layer_type: str | None = None
    parameter_type: str | None = None
    inputs: tuple[EngineTensor, ...] = ()
    outputs: tuple[EngineTensor, ...] = ()
    tactic_name: str | None = None
    tactic_value: str | None = None
    kernel_shape: tuple[int, ...] | None = None
    onnx_nodes: tuple[str, ...] = ()
    onnx_nodes_source: Literal["metadata", "name", "none"] = "none"
    origin: str | None = None
    weights_count: int | None = None
    weights_type: str | None = None
    bias_count: int | None = None
    bias_type: str | None = None
    stream_id: int | None = None
    detailed: bool = True
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def kind(self) -> str:
        return self.parameter_type or self.layer_type or "not recorded"

    @property
    def is_reformat(self) -> bool:
        """A Reformat layer (layout/precision conversion, including 8.x Q/DQ reformats) or a
        ``Reformatting CopyNode``; NoOp copy nodes that do no work are not counted."""
        if self.kind == "NoOp":
            return False
        return "Reformat" in (self.layer_type, self.parameter_type) or bool(
            REFORMAT_NAME.match(self.name)
        )

    @property
    def is_qdq(self) -> bool:
        """A stand-alone (unfused) quantize/dequantize layer."""
        if self.origin == "QDQ":
            return True
        if self.kind in ("Quantize", "Dequantize"):
            return True
        if self.kind == "Scale" and self.inputs and self.outputs:
            return (self.inputs[0].precision == "INT8") != (self.outputs[0].precision == "INT8")
        return False

    @property
    def precision(self) -> str | None:
        """The layer's precision as TREx reports it: its first input's, else its first output's."""
        for tensor in (*self.inputs[:1], *self.outputs[:1]):
            if tensor.precision:
                return tensor.precision
        return None

    @property
    def output_precision(self) -> str | None:
        return self.outputs[0].precision if self.outputs else None

    @property
    def tactic(self) -> str | None:
        return self.tactic_name or self.tactic_value

    @property
    def weights_bytes(self) -> int | None:
        """Bytes of weights + bias (None when neither is recorded)."""
        total: float | None = None
        for count, dtype in (
            (self.weights_count, self.weights_type),
            (self.bias_count, self.bias_type),
        ):
            size = bytes_per_element(precision_of(dtype))
            if count is not None and size is not None:
                total = (total or 0) + count * size
        return None if total is None else int(total)

    @property
    def activation_bytes(self) -> int | None:
        """Bytes of the layer's output tensors (None when no size is known)."""
        sizes = [t.size_bytes for t in self.outputs if t.size_bytes is not None]
        return sum(sizes) if sizes else None


def _constant(raw: Any) -> tuple[int | None, str | None]:
    if not isinstance(raw, Mapping):
        return None, None
    return as_int(raw.get("Count")), as_str(raw.get("Type"))


def parse_layer(raw: Any, index: int) -> EngineLayer:
    """One layer record; a string (names-only verbosity) gives a layer with only a name."""
    if isinstance(raw, str):
        return EngineLayer(index=index, name=raw, detailed=False, raw={"Name": raw})
    if not isinstance(raw, Mapping):
        raise EngineFormatError(f"layer {index} is {type(raw).__name__}, expected an object")
    name = str(raw.get("Name", raw.get("LayerName", f"layer {index}")))
    inputs = tuple(parse_tensor(t) for t in _items(raw.get("Inputs")) if t is not None)
    outputs = tuple(parse_tensor(t) for t in _items(raw.get("Outputs")) if t is not None)
    metadata = raw.get("Metadata") if isinstance(raw.get("Metadata"), str) else None
    onnx = split_metadata(metadata)
    source: Literal["metadata", "name", "none"] = "metadata" if onnx else "none"
    if not onnx and "Metadata" not in raw:
        onnx = names_from_layer_name(name)
        source = "name" if onnx else "none"
    w_count, w_type = _constant(raw.get("Weights"))
    b_count, b_type = _constant(raw.get("Bias"))
    return EngineLayer(
        index=index,
        name=name,
        layer_type=as_str(raw.get("LayerType")),
        parameter_type=as_str(raw.get("ParameterType")),
        inputs=inputs,
        outputs=outputs,
        tactic_name=as_str(raw.get("TacticName")),
        tactic_value=as_str(raw.get("TacticValue")),
        kernel_shape=as_dims(raw.get("Kernel")),
        onnx_nodes=onnx,
        onnx_nodes_source=source,
        origin=as_str(raw.get("Origin")),
        weights_count=w_count,
        weights_type=w_type,
        bias_count=b_count,
        bias_type=b_type,
        stream_id=as_int(raw.get("StreamId")),
        detailed=len(raw) > 1,
        raw=dict(raw),
    )


@dataclass(frozen=True)
class ShapeProfile:
    """One optimization profile of an I/O tensor (11.x ``ProfileInfo``)."""

    min_shape: tuple[int, ...] | None
    opt_shape: tuple[int, ...] | None
    max_shape: tuple[int, ...] | None
    format: str | None = None


@dataclass(frozen=True)
class EngineIOTensor:
    """An engine input or output. From 11.x ``I/O Tensors`` directly; from a 10.x/8.x
    ``Bindings`` name, completed from the layer that consumes or produces it."""

    name: str
    mode: str | None = None  # "Input" / "Output"
    datatype: str | None = None
    precision: str | None = None
    dims: tuple[int, ...] | None = None
    location: str | None = None
    format: str | None = None
    is_shape_io: bool | None = None
    profiles: tuple[ShapeProfile, ...] = ()


@dataclass
class EngineGraph:
    """The layers of one engine in execution order, its I/O tensors and the schema family."""

    layers: list[EngineLayer]
    io_tensors: list[EngineIOTensor]
    version_family: VersionFamily
    source: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def detailed(self) -> bool:
        """False when the engine was built without detailed profiling verbosity."""
        return any(layer.detailed for layer in self.layers)

    def layer(self, name: str) -> EngineLayer | None:
        for layer in self.layers:
            if layer.name == name:
                return layer
        return None

    def producers(self) -> dict[str, EngineLayer]:
        """Tensor name → the layer writing it."""
        return {t.name: layer for layer in self.layers for t in layer.outputs}

    def consumers(self) -> dict[str, list[EngineLayer]]:
        """Tensor name → the layers reading it, in execution order."""
        out: dict[str, list[EngineLayer]] = {}
        for layer in self.layers:
            for t in layer.inputs:
                out.setdefault(t.name, []).append(layer)
        return out

    @property
    def io_names(self) -> set[str]:
        return {t.name for t in self.io_tensors}


def _profile(raw: Any) -> ShapeProfile | None:
    if not isinstance(raw, Mapping):
        return None
    return ShapeProfile(
        as_dims(raw.get("MinShape")),
        as_dims(raw.get("OptShape")),
        as_dims(raw.get("MaxShape")),
        as_str(raw.get("Format")),
    )


def _io_from_11(raw: Any) -> EngineIOTensor:
    if not isinstance(raw, Mapping):
        return EngineIOTensor(name=str(raw))
    datatype = as_str(raw.get("DataType", raw.get("Datatype")))
    profiles = tuple(p for p in map(_profile, _items(raw.get("ProfileInfo"))) if p is not None)
    shape_io = raw.get("IsShapeInferenceIO")
    return EngineIOTensor(
        name=str(raw.get("Name", "")),
        mode=as_str(raw.get("IOMode", raw.get("Mode"))),
        datatype=datatype,
        precision=precision_of(datatype),
        dims=as_dims(raw.get("Dimensions")),
        location=as_str(raw.get("Location")),
        format=profiles[0].format if profiles else as_str(raw.get("Format")),
        is_shape_io=shape_io if isinstance(shape_io, bool) else None,
        profiles=profiles,
    )


def _io_from_bindings(names: Sequence[Any], layers: Sequence[EngineLayer]) -> list[EngineIOTensor]:
    produced = {t.name: t for layer in layers for t in layer.outputs}
    consumed = {t.name: t for layer in reversed(layers) for t in layer.inputs}
    out: list[EngineIOTensor] = []
    for raw in names:
        name = str(raw)
        if name in produced:
            mode, tensor = "Output", produced[name]
        elif name in consumed:
            mode, tensor = "Input", consumed[name]
        else:
            out.append(EngineIOTensor(name=name))
            continue
        out.append(
            EngineIOTensor(
                name=name,
                mode=mode,
                precision=tensor.precision,
                dims=tensor.dims,
                location=tensor.location,
                format=tensor.format,
            )
        )
    return out


def _family(root: Any, layers: Sequence[EngineLayer]) -> VersionFamily:
    if isinstance(root, Mapping) and "I/O Tensors" in root:
        return "11.x"
    if any("DataType" in t for layer in layers for t in _raw_tensors(layer)):
        return "11.x"
    if any("Metadata" in layer.raw or "StreamId" in layer.raw for layer in layers):
        return "10.x"
    if any(layer.detailed for layer in layers):
        return "8.x"
    return "unknown"


def _raw_tensors(layer: EngineLayer) -> list[Mapping[str, Any]]:
    tensors = [*_items(layer.raw.get("Inputs")), *_items(layer.raw.get("Outputs"))]
    return [t for t in tensors if isinstance(t, Mapping)]


def _looks_like_layer(item: Any) -> bool:
    return isinstance(item, str) or (isinstance(item, Mapping) and "Name" in item)


def parse_graph(root: Any, source: Path | None = None) -> EngineGraph:
    """An :class:`EngineGraph` from parsed JSON (dict with ``Layers`` or a list of layers)."""
    where = f"{source}: " if source else ""
    if isinstance(root, Mapping) and isinstance(root.get("Layers"), list):
        raw_layers: list[Any] = root["Layers"]
    elif isinstance(root, list) and all(_looks_like_layer(x) for x in root):
        raw_layers = root
    else:
        raise EngineFormatError(f"{where}not {EXPECTED_LAYER_JSON}")
    if not all(_looks_like_layer(x) for x in raw_layers):
        raise EngineFormatError(f"{where}'Layers' holds entries without a Name; expected layers")
    layers = [parse_layer(raw, i) for i, raw in enumerate(raw_layers)]
    io: list[EngineIOTensor] = []
    if isinstance(root, Mapping):
        if isinstance(root.get("I/O Tensors"), list):
            io = [_io_from_11(t) for t in root["I/O Tensors"]]
        elif isinstance(root.get("Bindings"), list):
            io = _io_from_bindings(root["Bindings"], layers)
    extra = (
        {k: v for k, v in root.items() if k not in ("Layers", "Bindings", "I/O Tensors")}
        if isinstance(root, Mapping)
        else {}
    )
    return EngineGraph(layers, io, _family(root, layers), source, extra)


def load_graph(path: Path) -> EngineGraph:
    """Read a layer-information JSON file (any extension: trtexec users often name it .log)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise EngineFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise EngineFormatError(f"{path}: binary file, expected {EXPECTED_LAYER_JSON}") from exc
    try:
        root = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EngineFormatError(
            f"{path}: not JSON (line {exc.lineno}); expected {EXPECTED_LAYER_JSON}"
        ) from exc
    return parse_graph(root, Path(path))
