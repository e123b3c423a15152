"""The canvas driven like a user would: real widgets offscreen, QTest mouse events."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import helper
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMenu

from designer.core.viewgraph import TerminalState
from designer.ui.canvas.items import NodeItem
from designer.ui.canvas.settings import CanvasSettings
from designer.ui.canvas.view import CanvasView
from designer.ui.session import DocumentSession

LEFT = Qt.MouseButton.LeftButton
NO_MOD = Qt.KeyboardModifier.NoModifier


@pytest.fixture
def view(qtbot, resnet_path: Path) -> CanvasView:
    session = DocumentSession.open(resnet_path)
    canvas = CanvasView(session)
    qtbot.addWidget(canvas)
    canvas.resize(900, 1200)
    canvas.show()
    qtbot.waitExposed(canvas)
    return canvas


def item_named(view: CanvasView, name: str) -> NodeItem:
    return next(i for i in view.canvas.node_items.values() if i.view.name == name)


def node_proto(view: CanvasView, name: str) -> onnx.NodeProto:
    return next(n for n in view.session.doc.model.graph.node if n.name == name)


def to_view(view: CanvasView, point: QPointF) -> QPoint:
    return view.mapFromScene(point)


def drag(view: CanvasView, start: QPoint, end: QPoint, steps: int = 6) -> None:
    viewport = view.viewport()
    QTest.mousePress(viewport, LEFT, NO_MOD, start)
    for k in range(1, steps + 1):
        QTest.mouseMove(viewport, start + (end - start) * (k / steps))
    QTest.mouseRelease(viewport, LEFT, NO_MOD, end)


def test_open_shows_every_node_and_link(view: CanvasView) -> None:
    graph = view.session.doc.model.graph
    assert len(view.canvas.node_items) == len(graph.node) + 2  # + image, logits
    names = {i.view.name for i in view.canvas.node_items.values()}
    assert {"image", "logits", "stem_conv", "head_fc"} <= names
    assert len(view.canvas.edge_items) == 24
    # laid out top to bottom; the first view starts at the input, F shows everything
    assert item_named(view, "image").y() < item_named(view, "stem_conv").y()
    assert item_named(view, "head_fc").y() < item_named(view, "logits").y()
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert visible.contains(item_named(view, "image").sceneBoundingRect())
    view.fit_to_view()
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert visible.contains(view.canvas.content_rect())
    assert view.session.undo_stack.count() == 0  # the first layout is not an edit
    assert not view.session.modified


def test_terminal_colours(view: CanvasView) -> None:
    conv = item_named(view, "stem_conv").view
    assert [t.state for t in conv.inputs] == [
        TerminalState.LINKED,
        TerminalState.INITIALIZER,
        TerminalState.UNCONNECTED,
    ]
    assert conv.inputs[2].optional
    bn = item_named(view, "stem_bn").view
    assert bn.outputs[0].state == TerminalState.LINKED
    assert bn.outputs[1].state == TerminalState.UNCONNECTED


def test_mouse_drag_links_output_to_input_and_undo_redo(view: CanvasView, qtbot) -> None:
    pool = item_named(view, "stem_pool")
    add = item_named(view, "block0_add")
    stack = view.session.undo_stack
    start = to_view(view, pool.output_pos(0) + QPointF(0, -2))
    end = to_view(view, add.input_pos(1) + QPointF(0, 3))
    drag(view, start, end)
    assert list(node_proto(view, "block0_add").input) == ["pool", "pool"]
    assert stack.count() == 1
    view.flush()
    edges = {(e.source, e.target, e.target_index) for e in view.canvas.edge_items}
    assert (pool.key, add.key, 1) in edges
    stack.undo()
    view.flush()
    assert list(node_proto(view, "block0_add").input) == ["pool", "block0b_bn"]
    stack.redo()
    assert list(node_proto(view, "block0_add").input) == ["pool", "pool"]


def test_link_replaces_initializer_in_one_step(view: CanvasView) -> None:
    relu = item_named(view, "stem_relu")
    conv = item_named(view, "block0a_conv")
    assert conv.view.inputs[1].state == TerminalState.INITIALIZER
    assert view.link_terminals((relu.key, 0), (conv.key, 1))
    view.flush()
    assert node_proto(view, "block0a_conv").input[1] == "stem_r"
    assert item_named(view, "block0a_conv").view.inputs[1].state == TerminalState.LINKED
    assert view.session.undo_stack.count() == 1
    view.session.undo_stack.undo()
    assert node_proto(view, "block0a_conv").input[1] == "block0a_w"


def test_link_into_growth_terminal_adds_a_terminal(qtbot, save_model) -> None:
    graph = helper.make_graph(
        [helper.make_node("Concat", ["a", "b"], ["c"], name="cat", axis=0)],
        "g",
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [2]) for n in "ab"],
        [helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, [4])],
    )
    session = DocumentSession.open(save_model(helper.make_model(graph)))
    view = CanvasView(session)
    qtbot.addWidget(view)
    cat = item_named(view, "cat")
    states = [t.state for t in cat.view.inputs]
    assert states == [TerminalState.LINKED, TerminalState.LINKED, TerminalState.GROWTH]
    a_key = item_named(view, "a").key
    assert view.link_terminals((a_key, 0), (cat.key, 2))
    view.flush()
    states = [t.state for t in item_named(view, "cat").view.inputs]
    assert states == [TerminalState.LINKED] * 3 + [TerminalState.GROWTH]


def test_mouse_drag_moves_node_as_one_undo_step(view: CanvasView) -> None:
    item = item_named(view, "block0a_relu")
    before = (item.x(), item.y())
    start = to_view(view, item.scenePos() + QPointF(item.width / 2, item.height / 2))
    drag(view, start, start + QPoint(60, 25), steps=10)
    after = view.session.doc.positions[view.scope_id][item.key]
    assert after != before
    assert after == (item.x(), item.y())
    assert view.session.undo_stack.count() == 1
    view.session.undo_stack.undo()
    assert (item.x(), item.y()) == before


def test_delete_node_disconnects_consumers_in_one_step(view: CanvasView) -> None:
    view.select_keys([item_named(view, "block0a_relu").key])
    assert view.selected_keys() == [item_named(view, "block0a_relu").key]
    count = len(view.session.doc.model.graph.node)
    view.delete_selection()
    view.flush()
    assert len(view.session.doc.model.graph.node) == count - 1
    assert node_proto(view, "block0b_conv").input[0] == ""
    assert "block0a_relu" not in {i.view.name for i in view.canvas.node_items.values()}
    assert view.session.undo_stack.count() == 1
    view.session.undo_stack.undo()
    view.flush()
    assert node_proto(view, "block0b_conv").input[0] == "block0a_r"
    assert "block0a_relu" in {i.view.name for i in view.canvas.node_items.values()}


def test_delete_selected_link_disconnects_input(view: CanvasView) -> None:
    relu = item_named(view, "block1a_relu")
    edge = next(i for e, i in view.canvas.edge_items.items() if e.source == relu.key)
    edge.setSelected(True)
    QTest.keyClick(view.viewport(), Qt.Key.Key_Delete)
    assert node_proto(view, "block1b_conv").input[0] == ""
    assert len(view.session.doc.model.graph.node) == 23 - 2


def test_rubber_band_selects_nodes(view: CanvasView) -> None:
    a, b = item_named(view, "stem_conv"), item_named(view, "stem_relu")
    top_left = to_view(view, QPointF(a.x() - 120, a.y() - 20))
    bottom_right = to_view(view, QPointF(b.x() + b.width + 120, b.y() + b.height + 5))
    drag(view, top_left, bottom_right)
    view._emit_selection()
    chosen = {view.canvas.node_items[k].view.name for k in view.selected_keys()}
    assert {"stem_conv", "stem_bn", "stem_relu"} <= chosen
    assert "head_fc" not in chosen


def test_grid_toggle_and_constants(qtbot, save_model) -> None:
    graph = helper.make_graph(
        [
            helper.make_node("Constant", [], ["k"], name="const", value_float=2.0),
            helper.make_node("Mul", ["x", "k"], ["y"], name="mul"),
        ],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
    )
    session = DocumentSession.open(save_model(helper.make_model(graph)))
    view = CanvasView(session, settings=CanvasSettings(show_grid=True))
    qtbot.addWidget(view)
    names = {i.view.name for i in view.canvas.node_items.values()}
    assert "const" not in names
    assert item_named(view, "mul").view.inputs[1].state == TerminalState.INITIALIZER
    view.set_show_constants(True)
    assert "const" in {i.view.name for i in view.canvas.node_items.values()}
    assert item_named(view, "mul").view.inputs[1].state == TerminalState.LINKED
    view.set_show_constants(False)
    assert "const" not in {i.view.name for i in view.canvas.node_items.values()}
    view.set_show_grid(False)
    assert not view.canvas.show_grid
    assert not view.grab().isNull()


def test_copy_paste_renames_and_is_one_step(view: CanvasView) -> None:
    keys = [item_named(view, n).key for n in ("block0a_conv", "block0a_bn")]
    view.select_keys(keys)
    data = view.copy_selection()
    count = len(view.session.doc.model.graph.node)
    view.paste(data, QPointF(600, 100))
    nodes = view.session.doc.model.graph.node
    assert len(nodes) == count + 2
    assert len({n.name for n in nodes}) == len(nodes)
    pasted = list(nodes)[-2:]
    assert pasted[1].input[0] == pasted[0].output[0]  # the link between them is kept
    assert pasted[0].input[1] == "block0a_w"  # existing initializer reused
    assert len(view.selected_keys()) == 2
    assert view.session.undo_stack.count() == 1
    view.session.undo_stack.undo()
    assert len(view.session.doc.model.graph.node) == count


def test_arrange_is_one_undo_step(view: CanvasView) -> None:
    item = item_named(view, "head_gap")
    view.session.push(
        __import__("designer.ui.canvas.controller", fromlist=["x"]).move_edit(
            view.scope_id, {item.key: (5000.0, 5000.0)}
        )
    )
    assert item.x() == 5000.0
    view.arrange_nodes()
    assert item.x() != 5000.0
    assert view.session.undo_stack.count() == 2
    view.session.undo_stack.undo()
    assert item.x() == 5000.0


def test_positions_persist_in_companion_file(qtbot, resnet_path: Path) -> None:
    session = DocumentSession.open(resnet_path)
    view = CanvasView(session)
    qtbot.addWidget(view)
    key = item_named(view, "head_gap").key
    session.push(
        __import__("designer.ui.canvas.controller", fromlist=["x"]).move_edit(
            view.scope_id, {key: (777.0, 888.0)}
        )
    )
    session.save()
    reopened = DocumentSession.open(resnet_path)
    view2 = CanvasView(reopened)
    qtbot.addWidget(view2)
    assert (item_named(view2, "head_gap").x(), item_named(view2, "head_gap").y()) == (777, 888)
    assert item_named(view2, "stem_conv").pos() == item_named(view, "stem_conv").pos()


def test_problem_icon_follows_checker(qtbot, save_model) -> None:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "missing"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
    )
    session = DocumentSession.open(save_model(helper.make_model(graph)))
    view = CanvasView(session)
    qtbot.addWidget(view)
    with qtbot.waitSignal(session.checked, timeout=10_000):
        session.check_now()
    item = item_named(view, "add")
    assert item.problem == 2
    assert "missing" in item.problem_text


def test_link_tooltip_shows_type(view: CanvasView, qtbot) -> None:
    with qtbot.waitSignal(view.session.checked, timeout=10_000):
        view.session.check_now()
    item = next(i for e, i in view.canvas.edge_items.items() if e.tensor == "gap")
    point = to_view(view, item.path().pointAtPercent(0.5))
    text = view._tooltip_at(point)
    assert text.startswith("gap") and "float32[1, 4, 1, 1]" in text


def test_subgraph_button_emits_request(qtbot, save_model) -> None:
    branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["o"], name="inner")],
        "then",
        [],
        [helper.make_tensor_value_info("o", onnx.TensorProto.FLOAT, [2])],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="cond", then_branch=branch, else_branch=branch)],
        "g",
        [
            helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2]),
        ],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
    )
    session = DocumentSession.open(save_model(helper.make_model(graph)))
    view = CanvasView(session)
    qtbot.addWidget(view)
    view.resize(600, 600)
    view.show()
    item = item_named(view, "cond")
    assert sorted(item.view.subgraphs) == [("else_branch", -1), ("then_branch", -1)]
    calls = []
    view.subgraphRequested.connect(lambda *args: calls.append(args))
    view._request_subgraph(item, QPoint(0, 0))
    menu = view.findChildren(QMenu)[-1]
    assert sorted(a.text() for a in menu.actions()) == ["Open else_branch", "Open then_branch"]
    menu.close()  # closing deletes it (one menu per click)
    qtbot.waitUntil(lambda: not view.findChildren(QMenu))
    single = item_named(view, "cond")
    single.view.subgraphs = [("then_branch", -1)]
    view._request_subgraph(single, QPoint(0, 0))
    assert calls == [(single.key, "then_branch", -1)]


def test_zoom_controls(view: CanvasView) -> None:
    view.reset_zoom()
    assert view.current_zoom() == pytest.approx(1.0)
    view.zoom_in()
    assert view.current_zoom() == pytest.approx(1.25)
    view.zoom_out()
    view.zoom_out()
    assert view.current_zoom() == pytest.approx(0.8)
    event_pos = QPointF(100, 100)
    from PySide6.QtCore import QPoint as P
    from PySide6.QtGui import QWheelEvent

    wheel = QWheelEvent(
        event_pos,
        view.viewport().mapToGlobal(event_pos),
        P(),
        P(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.ControlModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    view.wheelEvent(wheel)
    assert view.current_zoom() == pytest.approx(1.0)
    assert "Ctrl + mouse wheel" in view.settings_help()


def test_right_drag_box_zoom_and_middle_pan(view: CanvasView) -> None:
    viewport = view.viewport()
    zoom = view.current_zoom()
    QTest.mousePress(viewport, Qt.MouseButton.RightButton, NO_MOD, QPoint(300, 300))
    QTest.mouseMove(viewport, QPoint(400, 380))
    QTest.mouseRelease(viewport, Qt.MouseButton.RightButton, NO_MOD, QPoint(400, 380))
    assert view.current_zoom() > zoom * 3
    center = view.mapToScene(viewport.rect().center())
    QTest.mousePress(viewport, Qt.MouseButton.MiddleButton, NO_MOD, QPoint(300, 300))
    QTest.mouseMove(viewport, QPoint(250, 200))
    QTest.mouseRelease(viewport, Qt.MouseButton.MiddleButton, NO_MOD, QPoint(250, 200))
    moved = view.mapToScene(viewport.rect().center())
    assert moved.y() > center.y()
