"""Engine inputs/outputs with shapes and shape profiles (TensorRT 11 ``I/O Tensors``), and
how the engine tab lives beside model tabs (Parameters follows the current tab; closing the
tab leaves nothing behind).

The TensorRT 11-style file is built from the real 10.16 cookbook layer JSON by the documented
schema changes: ``Bindings`` (names) becomes ``I/O Tensors`` (objects with Name, IOMode,
DataType, Dimensions, Location, ProfileInfo) and each tensor's ``Format/Datatype`` string is
split into ``Format`` + ``DataType``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from designer.ui.engine.layer_panel import IOPanel, LayerPanel
from designer.ui.engine.tab import EngineTab
from designer.ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]
LAYER_10 = (
    ROOT.parent
    / "shared"
    / "fixtures"
    / "NVIDIA"
    / "trt-samples-for-hackathon-cn"
    / "cookbook"
    / "07-Tool"
    / "trtexec"
    / "model-trained-exportLayerInfo.log"
)

pytestmark = pytest.mark.skipif(not LAYER_10.is_file(), reason=f"{LAYER_10} is absent")

_DATATYPE = {"Float": "FP32", "Int32": "INT32", "Int64": "INT64"}


def _split(tensor: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in tensor.items() if k != "Format/Datatype"}
    text = tensor.get("Format/Datatype", "")
    out["Format"] = "Row major linear format"
    out["DataType"] = next((v for k, v in _DATATYPE.items() if k in text), "FP32")
    return out


def trt11_file(folder: Path) -> Path:
    root = json.loads(LAYER_10.read_text())
    layers = []
    for layer in root["Layers"]:
        layer = dict(layer)
        layer["Inputs"] = [_split(t) for t in layer.get("Inputs", [])]
        layer["Outputs"] = [_split(t) for t in layer.get("Outputs", [])]
        layers.append(layer)
    produced = {t["Name"]: t for layer in layers for t in layer["Outputs"]}
    consumed = {t["Name"]: t for layer in layers for t in layer["Inputs"]}
    io = []
    for name in root["Bindings"]:
        tensor = produced.get(name) or consumed[name]
        dims = tensor["Dimensions"]
        io.append(
            {
                "Name": name,
                "IOMode": "Output" if name in produced else "Input",
                "DataType": tensor["DataType"],
                "Dimensions": dims,
                "Location": "Device",
                "IsShapeInferenceIO": False,
                "ProfileInfo": [
                    {
                        "MinShape": [1, *dims[1:]],
                        "OptShape": [4, *dims[1:]],
                        "MaxShape": [16, *dims[1:]],
                        "Format": "Row major linear FP32 format (kLINEAR)",
                    }
                ],
            }
        )
    path = folder / "model-trained.onnx.engine.graph.json"
    path.write_text(json.dumps({"Layers": layers, "I/O Tensors": io}))
    return path


def _parameters(window: MainWindow) -> object:
    dock = next(d for d in window.docks if d.objectName() == "dock_parameters")
    return dock.panel  # type: ignore[attr-defined]


def test_a_trt11_engine_shows_io_shapes_and_profiles(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    window.open_files([trt11_file(tmp_path)])
    tab = window.tabs.currentWidget()
    assert isinstance(tab, EngineTab), window.errors
    assert tab.bundle.version_family == "11.x"
    x = next(k for k, i in tab.engine.info.items() if i.io is not None and i.io.name == "x")
    assert tab.engine.graph.node(x).name == "x · FP32 [1,1,28,28]"
    assert "profile 0: min [1,1,28,28] opt [4,1,28,28] max [16,1,28,28]" in (
        tab.engine.node_tooltip(x)
    )
    tab.view.select_keys([x])
    qtbot.waitUntil(lambda: isinstance(_parameters(window), IOPanel))
    from PySide6.QtWidgets import QLabel

    text = " ".join(w.text() for w in _parameters(window).findChildren(QLabel))  # type: ignore[attr-defined]
    assert "min [1,1,28,28] · opt [4,1,28,28] · max [16,1,28,28]" in text
    layers = [i for i in tab.engine.info.values() if i.layer is not None]
    assert len(layers) == 9 and all(i.layer.precision for i in layers if i.layer)  # type: ignore[union-attr]


def test_parameters_follow_the_current_tab_and_closing_leaves_nothing(
    window: MainWindow, qtbot: QtBot, resnet_path: Path
) -> None:
    window.open_files([resnet_path])
    window.open_files([LAYER_10])
    engine = window.tabs.currentWidget()
    assert isinstance(engine, EngineTab)
    engine.view.select_keys([0])
    qtbot.waitUntil(lambda: isinstance(_parameters(window), LayerPanel))
    window.tabs.setCurrentIndex(0)  # the model: its own panel again
    qtbot.waitUntil(lambda: not isinstance(_parameters(window), LayerPanel))
    window.tabs.setCurrentWidget(engine)
    qtbot.waitUntil(lambda: isinstance(_parameters(window), LayerPanel))
    assert window.close_tab(window.tabs.indexOf(engine))
    qtbot.waitUntil(lambda: not isinstance(_parameters(window), LayerPanel))
    assert window.tabs.count() == 1 and window.tab() is not None
