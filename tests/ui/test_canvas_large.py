"""Big graphs: a 5,000-node decoder stack lays out off the GUI thread, can be cancelled,
and far zoom switches to the pre-rendered overview."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import onnx
import pytest

from designer.ui.canvas.settings import CanvasSettings
from designer.ui.canvas.view import CanvasView
from designer.ui.session import DocumentSession

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from canvas_models import decoder_stack_model


@pytest.fixture(scope="module")
def decoder_path(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("large") / "decoder.onnx"
    onnx.save(decoder_stack_model(100), str(path))  # 5,000 nodes
    return path


def test_5k_nodes_open_and_lay_out_off_thread(qtbot, decoder_path: Path) -> None:
    start = time.perf_counter()
    session = DocumentSession.open(decoder_path)
    busy: list[bool] = []
    view = CanvasView(session, settings=CanvasSettings(async_layout_nodes=1000))
    view.layoutBusy.connect(busy.append)
    qtbot.addWidget(view)
    view.resize(1280, 800)
    view.show()
    assert view.job is not None  # laid out on a pool thread
    assert view.wait_for_layout(120_000)
    elapsed = time.perf_counter() - start
    assert len(view.canvas.node_items) == 5002  # + hidden_in, output; mask drawn per use
    assert "mask" in view.canvas.proxied.values()
    tagged = [i for i in view.canvas.node_items.values() if i.tags]
    assert len(tagged) == 100
    assert busy[-1] is False
    assert elapsed < 60, f"opening 5k nodes took {elapsed:.1f} s"
    assert session.undo_stack.count() == 0
    # Far zoom shows the overview; zooming in brings the items back.
    view.fit_to_view()
    assert view.overview.active
    assert not view.grab().isNull()
    assert view.overview.tiles_rendered > 0
    view.reset_zoom()
    view.center_on(tagged[0].key)
    assert not view.overview.active
    assert view.scene() is view.canvas


def test_cancelled_first_layout_falls_back_to_grid(qtbot, decoder_path: Path) -> None:
    session = DocumentSession.open(decoder_path)
    view = CanvasView(session, settings=CanvasSettings(async_layout_nodes=1000))
    qtbot.addWidget(view)
    view.cancel_layout()
    assert view.wait_for_layout(120_000)
    assert len(view.canvas.node_items) == 5002
    xs = {round(i.x()) for i in view.canvas.node_items.values()}
    assert len(xs) > 10  # a grid, not one column


def test_arrange_large_graph_is_one_undo_step(qtbot, decoder_path: Path) -> None:
    session = DocumentSession.open(decoder_path)
    view = CanvasView(session, settings=CanvasSettings(async_layout_nodes=1000))
    qtbot.addWidget(view)
    view.cancel_layout()
    assert view.wait_for_layout(120_000)
    view.arrange_nodes()
    assert view.job is not None
    assert view.wait_for_layout(120_000)
    assert session.undo_stack.count() == 1
    assert session.undo_stack.text(0) == "Arrange nodes"


def test_big_scenes_build_link_items_after_the_first_frame(
    qtbot, decoder_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from designer.ui.canvas import scene as scene_module

    monkeypatch.setattr(scene_module, "LAZY_EDGES", 100)
    monkeypatch.setattr(scene_module, "EDGE_BATCH", 500)
    session = DocumentSession.open(decoder_path)
    view = CanvasView(session, settings=CanvasSettings(async_layout_nodes=10**9))
    qtbot.addWidget(view)
    canvas = view.canvas
    assert canvas.edges_pending and len(canvas._edge_items) == 0
    view.resize(1280, 800)
    view.show()
    view.fit_to_view()
    assert view.overview.active and not view.grab().isNull()  # drawn from arrays meanwhile
    qtbot.waitUntil(lambda: not canvas.edges_pending, timeout=30_000)  # idle-time batches
    built = dict(canvas._edge_items)
    drawn = [e for e in canvas.graph.edges if e.source not in canvas.proxied]
    assert list(built) == drawn  # every link, in graph order
    canvas.rebuild()
    assert canvas.edges_pending
    assert list(canvas.edge_items) == drawn  # reading the links completes them at once
    assert not canvas.edges_pending
