"""Real TensorRT engine files from ../shared/fixtures, and files derived from them in tests.

The derived files change a real file only by a documented schema change (TensorRT 11
inspector JSON) or by removing information (names-only verbosity, missing fields), so the
numbers a test checks still come from a real engine.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from helpers.shared import TREX, TRT_SAMPLES

A100 = TREX / "examples" / "pytorch" / "resnet" / "A100"
RTX3090 = TREX / "examples" / "tensorflow" / "resnet" / "RTX-3090"
TREX_INPUTS = TREX / "tests" / "inputs"
LAYER_JSON_10 = TRT_SAMPLES / "model-trained-exportLayerInfo.log"

A100_FP32 = A100 / "fp32" / "resnet.onnx.engine.graph.json"
A100_FP16 = A100 / "fp16" / "resnet.onnx.engine.graph.json"
A100_QAT = A100 / "qat" / "resnet-qat.onnx.engine.graph.json"
A100_QAT_RESIDUAL = A100 / "qat-residual" / "resnet-qat-residual.onnx.engine.graph.json"
A100_QAT_QGAP = A100 / "qat-residual-qgap" / "resnet-qat-residual-qgap.onnx.engine.graph.json"
RTX_FP16 = RTX3090 / "fp16" / "resnet.onnx.engine.graph.json"
RTX_FP32 = RTX3090 / "fp32" / "resnet.onnx.engine.graph.json"
RTX_QAT = RTX3090 / "qat" / "resnet-qat.onnx.engine.graph.json"


def all_trex_graphs() -> list[Path]:
    """Every layer JSON of the TREx fixtures (TensorRT 8.x), sorted."""
    graphs = sorted(TREX.rglob("*.graph.json"))
    if not graphs:
        raise FileNotFoundError(
            f"{TREX}: the shared TREx fixtures are expected beside the checkout"
        )
    return graphs


_DATATYPE_11 = {
    "FP32": "Float",
    "FP16": "Half",
    "BF16": "BF16",
    "INT8": "Int8",
    "INT32": "Int32",
    "INT64": "Int64",
    "BOOL": "Bool",
    "UINT8": "UInt8",
    "FP8": "FP8",
}


def _precision(text: str) -> str:
    from designer.activities.reports.trt_engine import precision_of

    found = precision_of(text)
    assert found is not None, text
    return found


def to_trt11(root: dict[str, Any]) -> dict[str, Any]:
    """A 10.x/8.x layer JSON rewritten by the TensorRT 11 inspector schema changes
    (docs.nvidia.com, "Migrating IEngineInspector Usage from TensorRT 10.x to 11.x"):

    - ``Bindings`` (names) → ``I/O Tensors``: objects with Name, IOMode, DataType, Dimensions,
      Location, IsShapeInferenceIO and ProfileInfo [{MinShape, OptShape, MaxShape, Format}];
    - every tensor's ``Format/Datatype`` → ``Format`` + ``DataType``.
    """
    out = copy.deepcopy(root)
    producers = {t["Name"]: t for layer in out["Layers"] for t in layer.get("Outputs", [])}
    consumers = {t["Name"]: t for layer in out["Layers"] for t in layer.get("Inputs", [])}
    io = []
    for name in out.pop("Bindings"):
        mode, tensor = (
            ("Output", producers[name]) if name in producers else ("Input", consumers[name])
        )
        dims = tensor["Dimensions"]
        io.append(
            {
                "Name": name,
                "IOMode": mode,
                "DataType": _DATATYPE_11[_precision(tensor["Format/Datatype"])],
                "Dimensions": dims,
                "Location": tensor.get("Location", "Device"),
                "IsShapeInferenceIO": False,
                "ProfileInfo": [
                    {
                        "MinShape": dims,
                        "OptShape": dims,
                        "MaxShape": dims,
                        "Format": tensor["Format/Datatype"],
                    }
                ],
            }
        )
    for layer in out["Layers"]:
        for tensor in [*layer.get("Inputs", []), *layer.get("Outputs", [])]:
            text = tensor.pop("Format/Datatype")
            tensor["Format"] = text
            tensor["DataType"] = _DATATYPE_11[_precision(text)]
    out["I/O Tensors"] = io
    return out


def names_only(root: dict[str, Any]) -> dict[str, Any]:
    """What ``--profilingVerbosity=layer_names_only`` leaves: layer names and bindings."""
    return {"Layers": [layer["Name"] for layer in root["Layers"]], "Bindings": root["Bindings"]}


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: Path, root: Any) -> Path:
    path.write_text(json.dumps(root), encoding="utf-8")
    return path
