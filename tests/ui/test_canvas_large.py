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


def test_big_scenes_build_items_as_they_come_into_view(qtbot, decoder_path: Path) -> None:
    session = DocumentSession.open(decoder_path)
    view = CanvasView(session, settings=CanvasSettings(async_layout_nodes=10**9))
    qtbot.addWidget(view)
    canvas = view.canvas
    assert canvas.lazy and len(canvas.node_items.built) < 100  # (what the hidden view shows)
    view.resize(1280, 800)
    view.show()
    qtbot.waitExposed(view)
    # the first view (readable zoom, the graph inputs) built what it shows and little more
    first = len(canvas.node_items.built)
    assert 0 < first < len(canvas.node_items) // 10
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    geo = canvas.geometry()
    shown = {geo.keys[r] for r in geo.boxes_in(visible).tolist()}
    assert shown and shown <= canvas.node_items.built.keys()
    links = {geo.edges[r] for r in geo.links_in(visible).tolist()}
    assert links and links <= canvas.built_edge_items.keys()
    # far zoom draws the overview from arrays: nothing more is built
    view.fit_to_view()
    assert view.overview.active and not view.grab().isNull()
    assert len(canvas.node_items.built) == first
    # scrolling to the end builds the boxes there
    last = list(canvas.node_items)[-1]
    assert last not in canvas.node_items.built
    view.reset_zoom()
    x, y = canvas.positions[last]
    view.centerOn(x, y)
    assert last in canvas.node_items.built and not view.overview.active
    # looking a node up builds it; select all builds everything
    key = list(canvas.node_items)[len(canvas.node_items) // 2]
    assert canvas.node_items[key].key == key
    view.select_all()
    assert len(canvas.node_items.built) == len(canvas.node_items)
    drawn = canvas.geometry().edges
    assert set(canvas.built_edge_items) == set(drawn)
    assert len(canvas.selectedItems()) == len(canvas.node_items) + len(drawn)


def test_lazy_items_draw_what_eager_items_draw(
    qtbot, decoder_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same view of a lazy and of an eager scene: pixel for pixel."""
    import numpy as np
    from PySide6.QtGui import QImage

    from designer.ui.canvas import scene as scene_module

    def pixels(view: CanvasView) -> np.ndarray:
        image = view.viewport().grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)
        data = np.frombuffer(image.constBits(), np.uint8)
        return data.reshape(image.height(), image.bytesPerLine() // 4, 4).copy()

    views = []
    for lazy_at in (2_000, 10**9):
        monkeypatch.setattr(scene_module, "LAZY_NODES", lazy_at)
        view = CanvasView(
            DocumentSession.open(decoder_path), settings=CanvasSettings(async_layout_nodes=10**9)
        )
        qtbot.addWidget(view)
        view.resize(900, 700)
        view.show()
        qtbot.waitExposed(view)
        views.append(view)
    lazy, eager = views
    assert lazy.canvas.lazy and not eager.canvas.lazy
    keys = list(eager.canvas.node_items)
    for key in (keys[0], keys[len(keys) // 3], keys[-2]):
        for view in views:
            view.reset_zoom()
            x, y = view.canvas.positions[key]
            view.centerOn(x + 40, y + 20)
        a, b = pixels(lazy), pixels(eager)
        assert a.shape == b.shape and (a[..., :3] < 160).any()  # boxes and links drawn
        assert int(np.abs(a.astype(int) - b.astype(int)).max()) == 0
    # a move (undoable, as every move) redraws the lazy scene's links like the eager one's
    from designer.ui.canvas import controller

    key = keys[len(keys) // 3]
    for view in views:
        x, y = view.canvas.positions[key]
        view.session.push(controller.move_edit(view.scope_id, {key: (x + 300.0, y + 80.0)}))
        view.flush()
        view.centerOn(x + 300.0, y + 100.0)
    a, b = pixels(lazy), pixels(eager)
    assert int(np.abs(a.astype(int) - b.astype(int)).max()) == 0


def test_a_big_graph_is_built_once_per_change_of_the_model(qtbot, decoder_path: Path) -> None:
    """Collapsing after the first layout or redrawing reuses the view graph (a 100k-node
    graph costs a second to build); any change of the model builds it again."""
    from designer.core.edits.nodes import RenameNode
    from designer.core.scope import MAIN_SCOPE
    from designer.ui.canvas.scene import CanvasScene

    session = DocumentSession.open(decoder_path)
    canvas = CanvasScene(session.doc, MAIN_SCOPE)
    first = canvas.build_graph()
    assert canvas.build_graph() is first  # nothing changed
    session.doc.set_positions(MAIN_SCOPE, {first.nodes[0].key: (5.0, 5.0)})
    assert canvas.build_graph() is first  # positions are not the model
    key = next(n.key for n in first.nodes if n.kind.value == "op")
    assert session.push(RenameNode(MAIN_SCOPE, key, "renamed_for_the_test"))
    again = canvas.build_graph()
    assert again is not first and any(n.name == "renamed_for_the_test" for n in again.nodes)
    session.undo_stack.undo()
    assert all(n.name != "renamed_for_the_test" for n in canvas.build_graph().nodes)
    canvas.show_constants = True  # a view option builds it again too
    assert canvas.build_graph() is not first


def test_a_big_model_is_type_checked_once_it_is_drawn(
    window, qtbot, decoder_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The checker of a big model would share the interpreter with its layout and first
    drawing: it starts once the model is drawn (and collapsed), not with the open."""
    from designer.ui.session import DocumentSession as Session

    started: list[Session] = []
    real = Session.check_now

    def check_now(self: Session) -> None:
        started.append(self)
        real(self)

    monkeypatch.setattr(Session, "check_now", check_now)
    window.open_files([decoder_path])
    tab = window.tab()
    # (a session an earlier test left laying out may run its own deferred check meanwhile)
    mine = lambda: [s for s in started if s is tab.session]  # noqa: E731
    assert tab.view.job is not None and not mine()  # laid out off the GUI thread, unchecked
    qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=60_000)
    assert mine() == [tab.session]  # one check, once drawn
