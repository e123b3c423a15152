"""The engine graph tab (SPEC X-5, issue 13 point 2) on the real TensorRT files in
../shared/fixtures: TREx 8.x exports (ResNet18 FP32/FP16/QAT on A100, ResNet50 on RTX 3090,
QAT MobileNet) and the TensorRT 10.16 layer JSON of the cookbook."""

from __future__ import annotations

import shutil
from pathlib import Path

import onnx
import pytest
from helpers.engine_fixtures import A100_FP16 as FP16
from helpers.engine_fixtures import LAYER_JSON_10 as LAYER_10
from helpers.shared import TREX
from helpers.shots import save_screenshot
from onnx import TensorProto, helper
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from pytestqt.qtbot import QtBot

from designer.activities.reports.engine_bundle import load_engine
from designer.core.viewgraph import NodeKind
from designer.ui.engine import is_engine_file
from designer.ui.engine.items import TYPE_COLORS, EngineNodeItem
from designer.ui.engine.layer_panel import IOPanel, LayerPanel
from designer.ui.engine.tab import EngineTab
from designer.ui.main_window import MainWindow

GRAPHS = [*sorted(TREX.rglob("*.engine.graph.json")), LAYER_10]

pytestmark = pytest.mark.skipif(not TREX.is_dir(), reason=f"{TREX} (shared fixtures) is absent")


def _current_engine(window: MainWindow) -> EngineTab:
    tab = window.tabs.currentWidget()
    assert isinstance(tab, EngineTab), window.errors
    return tab


def _layers(tab: EngineTab) -> dict[int, EngineNodeItem]:
    return {k: i for k, i in tab.view.canvas.node_items.items() if i.view.kind == NodeKind.OP}  # type: ignore[misc]


def _parameters(window: MainWindow) -> object:
    dock = next(d for d in window.docks if d.objectName() == "dock_parameters")
    return dock.panel  # type: ignore[attr-defined]


def _drop(window: MainWindow, path: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.parent.name + "/" + p.name)
def test_every_fixture_opens_read_only_with_one_node_per_layer(
    window: MainWindow, path: Path
) -> None:
    assert is_engine_file(path)
    window.open_files([path])
    tab = _current_engine(window)
    layers = load_engine(path).graph.layers
    assert len(_layers(tab)) == len(layers)
    assert {i.view.name for i in _layers(tab).values()} == {layer.name for layer in layers}
    assert window.document_tabs() == []  # not an editable document: no undo stack, no save
    assert not window.actions_by_name["save"].isEnabled()
    assert tab.view.canvas.graph.edges  # tensors link the layers


def test_drag_and_drop_opens_an_engine_like_a_model(window: MainWindow) -> None:
    _drop(window, LAYER_10)
    tab = _current_engine(window)
    assert len(_layers(tab)) == 9
    _drop(window, LAYER_10)  # the same file again: focused, not opened twice
    assert window.tabs.count() == 1


def test_layers_are_coloured_by_type_and_reformats_marked(window: MainWindow) -> None:
    window.open_files([FP16])
    tab = _current_engine(window)
    by_category: dict[str, set[str]] = {}
    for item in _layers(tab).values():
        by_category.setdefault(item.info.category, set()).add(item.color.name())
        assert item.color == TYPE_COLORS[item.info.category]
    assert {"convolution", "pooling", "reformat", "noop"} <= by_category.keys()
    assert len({c for colors in by_category.values() for c in colors}) == len(by_category)
    reformats = [i for i in _layers(tab).values() if i.info.is_reformat]
    assert reformats and all(i.info.category == "reformat" for i in reformats)
    precisions = set(tab.engine.precision.values())
    assert {"FP32", "FP16"} <= precisions  # the FP32 input is reformatted to FP16
    colors = {e.color.name() for e in tab.view.canvas.edge_items.values()}
    assert len(colors) >= 2


def test_latency_shares_show_when_the_profile_is_beside_it(window: MainWindow) -> None:
    window.open_files([FP16])
    tab = _current_engine(window)
    infos = [i.info for i in _layers(tab).values()]
    assert all(i.share is not None for i in infos)
    assert sum(i.share or 0.0 for i in infos) == pytest.approx(1.0, abs=1e-6)
    conv = next(i for i in infos if i.layer is not None and i.layer.name == "Conv_0 + Relu_1")
    assert "%" in conv.caption and "Convolution" in conv.caption
    window.open_files([LAYER_10])  # no profile beside it: no latency
    plain = _current_engine(window)
    assert all(i.info.share is None and "%" not in i.info.caption for i in _layers(plain).values())


def test_load_profile_adds_latencies(window: MainWindow, tmp_path: Path) -> None:
    graph = tmp_path / "alone.onnx.engine.graph.json"
    shutil.copy(FP16, graph)
    window.open_files([graph])
    tab = _current_engine(window)
    assert not tab.engine.profiled
    assert not tab.load_profile(tmp_path / "missing.json")
    assert "no such file" in tab.message.text()
    assert tab.load_profile(FP16.with_name("resnet.onnx.engine.profile.json"))
    assert tab.engine.profiled
    assert all(i.info.share is not None for i in _layers(tab).values())


def test_selecting_a_layer_shows_its_record_in_parameters(window: MainWindow, qtbot: QtBot) -> None:
    window.open_files([FP16])
    tab = _current_engine(window)
    key = tab.engine.layer_key("Conv_0 + Relu_1")
    assert key is not None
    tab.view.select_keys([key])
    qtbot.waitUntil(lambda: isinstance(_parameters(window), LayerPanel))
    panel = _parameters(window)
    assert isinstance(panel, LayerPanel)
    text = _labels(panel)
    assert "trt_turing_cutlass_image_network_first_layer" in text  # the tactic
    assert "Channel major FP16 format" in text  # the output format
    assert "Conv_0, Relu_1" in text  # the ONNX nodes (from the 8.x layer name)
    assert "Open the ONNX model" in text  # none is open
    assert '"TacticValue": "0xe2222883a6602489"' in panel.record.toPlainText()
    inputs = [k for k, i in tab.engine.info.items() if i.io is not None]
    tab.view.select_keys(inputs[:1])
    qtbot.waitUntil(lambda: isinstance(_parameters(window), IOPanel))
    tab.view.select_keys([])
    qtbot.waitUntil(lambda: "TensorRT engine" in _labels(_parameters(window)))


def _labels(widget: object) -> str:
    from PySide6.QtWidgets import QLabel, QWidget

    assert isinstance(widget, QWidget)
    text = " ".join(w.text() for w in widget.findChildren(QLabel))
    return text.replace("\u200b", "")  # the panel's break opportunities in long names


def _model_with_nodes(names: list[str], path: Path) -> Path:
    """A chain of Relu nodes named like the engine's ONNX nodes (no ONNX model of the TREx
    ResNet is among the fixtures; the engine records only node names, which is all the link
    uses)."""
    nodes = [
        helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=name)
        for i, name in enumerate(names)
    ]
    graph = helper.make_graph(
        nodes,
        "named",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info(f"t{len(names)}", TensorProto.FLOAT, [1, 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))
    return path


def test_the_onnx_link_selects_the_nodes_in_the_model_tab(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    engine = load_engine(LAYER_10).graph  # 10.x: names from the Metadata field
    names = [n for layer in engine.layers for n in layer.onnx_nodes]
    assert "node_conv2d" in names and "node_relu" in names
    model = _model_with_nodes(names, tmp_path / "model-trained.onnx")
    window.open_files([model])
    model_tab = window.tab()
    assert model_tab is not None
    window.open_files([LAYER_10])
    tab = _current_engine(window)
    key = tab.engine.layer_key("node_conv2d + node_relu")
    assert key is not None
    tab.view.select_keys([key])
    qtbot.waitUntil(lambda: isinstance(_parameters(window), LayerPanel))
    panel = _parameters(window)
    assert isinstance(panel, LayerPanel)
    assert "Select in model-trained.onnx" in panel.onnx_label.text()
    panel.onnx_label.linkActivated.emit("select")
    assert window.tab() is model_tab
    doc = model_tab.session.doc
    chosen = {doc.scope().node(k).name for k in model_tab.view.selected_keys()}
    assert chosen == {"node_conv2d", "node_relu"}


@pytest.mark.parametrize(
    "content", ['{"hello": 1}', "[1, 2, 3]", '[{"name": "x", "ph": "X", "dur": 3}]', "{broken"]
)
def test_a_json_that_is_not_an_engine_gives_one_line_and_opens_nothing(
    window: MainWindow, tmp_path: Path, content: str
) -> None:
    path = tmp_path / "other.json"
    path.write_text(content)
    window.open_files([path])
    assert window.tabs.count() == 0
    assert len(window.errors) == 1
    assert "\n" not in window.errors[0] and "TensorRT layer-information JSON" in window.errors[0]


def test_first_open_is_readable_and_f_fits(window: MainWindow, qtbot: QtBot) -> None:
    from designer.ui.canvas import style as st

    window.open_files([FP16])
    tab = _current_engine(window)
    qtbot.waitExposed(tab.view)
    assert tab.view.current_zoom() >= st.LOD_TEXT  # names are drawn at first open
    top = tab.view.mapToScene(tab.view.viewport().rect()).boundingRect()
    inputs = [
        tab.view.canvas.node_items[k]
        for k, i in tab.engine.info.items()
        if i.io and i.io.mode == "Input"
    ]
    assert all(top.contains(item.sceneBoundingRect().center()) for item in inputs)
    save_screenshot(window, "engine_graph.png")
    qtbot.keyClick(tab.view, Qt.Key.Key_F)
    whole = tab.view.mapToScene(tab.view.viewport().rect()).boundingRect()
    assert whole.contains(tab.view.canvas.content_rect())


def test_export_image_writes_png_and_svg(window: MainWindow, tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    window.open_files([FP16])
    tab = _current_engine(window)
    assert tab.export_image(tmp_path / "g.png")
    assert QImage(str(tmp_path / "g.png")).height() > 1000  # the whole tall graph
    assert tab.export_image(tmp_path / "g.svg")
    assert "Conv_0 + Relu_1" in (tmp_path / "g.svg").read_text()
    assert not tab.export_image(tmp_path / "g.bmp")
    assert "png" in tab.message.text()


def test_closing_the_engine_tab_returns_to_the_welcome_page(window: MainWindow) -> None:
    window.open_files([LAYER_10])
    assert window.close_tab(0)
    assert window.tabs.count() == 0
    assert window.stack.currentWidget() is window.welcome


def test_lint_findings_are_marked_on_their_layers(window: MainWindow) -> None:
    window.open_files([FP16])
    tab = _current_engine(window)
    marked = {i.view.name: i for i in _layers(tab).values() if i.finding}
    first = marked["Reformatting CopyNode for Input Tensor 0 to Conv_0 + Relu_1"]
    assert first.finding == "info" and "--inputIOFormats" in first.finding_text
    assert "lint finding" in tab.banner.text()
    assert "--inputIOFormats" in tab.view.tooltip_at(
        tab.view.mapFromScene(first.sceneBoundingRect().center())
    )


def test_opening_an_open_engine_with_a_profile_loads_it_in_place(
    window: MainWindow, tmp_path: Path
) -> None:
    from designer.ui.engine import open_engine_tab

    graph = tmp_path / "alone.onnx.engine.graph.json"
    shutil.copy(FP16, graph)
    tab = open_engine_tab(window, graph)
    assert tab is not None and not tab.engine.profiled
    again = open_engine_tab(
        window, graph, profile=FP16.with_name("resnet.onnx.engine.profile.json")
    )
    assert again is tab and tab.engine.profiled and window.tabs.count() == 1
