"""The engine graph as the canvas's plain view records (Qt-free), on every real layer JSON of
../shared/fixtures (TREx 8.x exports and the TensorRT 10.16 cookbook file)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.engine_fixtures import LAYER_JSON_10 as LAYER_10
from helpers.shared import TREX

from designer.activities.reports.engine_bundle import load_engine
from designer.activities.reports.engine_view import build_engine_view, layer_category
from designer.core.viewgraph import NodeKind, TerminalState

GRAPHS = [*sorted(TREX.rglob("*.engine.graph.json")), LAYER_10]

pytestmark = pytest.mark.skipif(not TREX.is_dir(), reason=f"{TREX} (shared fixtures) is absent")


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.parent.name + "/" + p.name)
def test_one_node_per_layer_and_links_follow_the_tensors(path: Path) -> None:
    bundle = load_engine(path)
    latency = (
        {p.name: p.average_ms for p in bundle.profile.layers if p.average_ms is not None}
        if bundle.profile
        else None
    )
    view = build_engine_view(bundle.graph, latency)
    ops = [n for n in view.graph.nodes if n.kind == NodeKind.OP]
    assert [n.key for n in ops] == [layer.index for layer in bundle.graph.layers]
    ios = [n for n in view.graph.nodes if n.kind != NodeKind.OP]
    assert len(ios) == len(bundle.graph.io_tensors)
    for edge in view.graph.edges:
        source, target = view.graph.node(edge.source), view.graph.node(edge.target)
        assert source.outputs[edge.source_index].tensor == edge.tensor
        assert target.inputs[edge.target_index].tensor == edge.tensor
        assert target.inputs[edge.target_index].state == TerminalState.LINKED
        assert view.precision[edge] in {"FP32", "FP16", "INT8", "INT32", "INT64", "BF16", "other"}
    layers = [i for i in view.info.values() if i.layer is not None]
    assert all(i.category != "other" or i.layer.kind == "kgen" for i in layers)  # type: ignore[union-attr]
    assert all(i.is_reformat == (i.category == "reformat") for i in layers)
    if latency:
        assert sum(i.share or 0.0 for i in layers) <= 1.0 + 1e-9
        assert all("%" in i.caption for i in layers if i.share is not None)
    else:
        assert all(i.share is None for i in layers)


def test_categories_of_known_layer_kinds() -> None:
    graph = load_engine(TREX / "tests" / "inputs" / "mobilenet.qat.onnx.engine.graph.json").graph
    kinds = {layer.kind: layer_category(layer) for layer in graph.layers}
    assert kinds["Convolution"] == "convolution"
    assert kinds["Reformat"] == "reformat"
    assert kinds["Pooling"] == "pooling"


def test_the_adapter_stays_qt_free() -> None:
    code = (
        "import sys, designer.activities.reports.engine_view as m; "
        "print(any(k.startswith('PySide6') for k in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
