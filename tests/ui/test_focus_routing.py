"""Focus routes its links as well as the whole graph does (QA canvas-export finding 3):
on both Llama exports, collapsed to their layer boxes and then focused on layers.3 (or
focused straight from the whole graph), no link runs through a box other than its two
ends. Before, the border stubs were linked straight to every reader and the links lost
the layout's bend points: 33 (dynamo) and 64 (TorchScript) link/box crossings."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF

from designer.core.focus import is_stub_key, route_around
from designer.core.viewgraph import NodeKind
from designer.ui.canvas.focus_view import set_focus
from designer.ui.canvas.scene import CanvasScene
from tests.helpers.gui import open_model
from tests.helpers.shared import model

LAYER = "m/model/layers.3"


def crossings(scene: CanvasScene) -> list[tuple[str, str]]:
    """(tensor, box name) of each link whose drawn path passes through a box other than
    its own two ends (boxes 3 px inset; the path sampled every ~4 px)."""
    scene.build_nodes()
    scene.complete()
    nodes = dict(scene.node_items.built)
    rects = {
        k: it.mapRectToScene(QRectF(0, 0, it.width, it.height)).adjusted(3, 3, -3, -3)
        for k, it in nodes.items()
    }
    bad: list[tuple[str, str]] = []
    for edge, item in scene.edge_items.items():
        path = item.mapToScene(item.path())
        n = max(20, int(path.length() / 4))
        points = [path.pointAtPercent(i / n) for i in range(n + 1)]
        bounds = path.boundingRect()
        for key, rect in rects.items():
            if key in (edge.source, edge.target) or not rect.intersects(bounds):
                continue
            if any(rect.contains(p) for p in points):
                bad.append((edge.tensor, nodes[key].view.name))
    return bad


@pytest.mark.parametrize("name", ["llama_24l_h64.dynamo.onnx", "llama_24l_h64.torchscript.onnx"])
@pytest.mark.parametrize("collapsed", [True, False], ids=["collapsed", "whole"])
def test_no_link_runs_through_a_box_of_the_focused_layer(window, qtbot, name, collapsed) -> None:  # type: ignore[no-untyped-def]
    tab = open_model(window, model(name), qtbot)
    view = tab.view
    if collapsed:
        window.actions_by_name["collapse_auto"].trigger()
        assert crossings(view.canvas) == []  # the collapsed graph is routed by its layout
    set_focus(view, LAYER)
    qtbot.wait(10)  # (and once more when the items exist)
    scene = view.canvas
    ops = [i for i in scene.node_items.values() if i.view.kind is NodeKind.OP]
    stubs = [i for k, i in scene.node_items.items() if is_stub_key(k)]
    assert len(ops) > 30 and stubs
    assert crossings(scene) == []
    for stub in (s for s in stubs if s.view.kind is NodeKind.INPUT):  # above its readers
        readers = [e.target for e in scene.graph.edges if e.source == stub.view.key]
        assert all(scene.positions[r][1] > stub.y() for r in readers)
    set_focus(view, None)


def test_a_link_is_routed_down_a_gap_of_each_row_it_passes() -> None:
    """The router alone: a link from (0, 0) down to (0, 300) past a row of two boxes with
    a gap between them, and a box right below its start, runs down the free gap."""
    row = [(-60.0, 100.0, 40.0, 144.0), (80.0, 100.0, 200.0, 144.0)]
    bends = route_around((0.0, 0.0), (0.0, 300.0), row)
    assert bends and all(40.0 < x < 80.0 for x, _y in bends)  # the gap, clear of both
    assert route_around((0.0, 0.0), (0.0, 300.0), [(100.0, 100.0, 200.0, 144.0)]) == []
    assert route_around((0.0, 300.0), (0.0, 0.0), row) == []  # a link running up is left
