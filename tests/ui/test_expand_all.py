"""Expand All Modules opens every box and lays the graph out afresh in one layout (it took
one pass over the drawn graph per box: minutes for a few hundred boxes); above the
asynchronous-layout size off the GUI thread, where Cancel keeps the boxes. View state only:
nothing to undo, nothing modified."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from designer.core.document import DocumentEvent
from designer.ui.canvas.collapse_view import collapse_to_depth
from designer.ui.canvas.expand_all import expand_all
from designer.ui.main_window import MainWindow
from tests.helpers.gui import open_model
from tests.helpers.shared import model
from tests.ui.test_collapse_room import _overlaps

LLAMA = "llama_24l_h64.dynamo.onnx"


def test_expand_all_opens_every_box_in_one_layout(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_model(window, model(LLAMA), qtbot)
    view = tab.view
    collapse_to_depth(view, 3)  # layers and the attention/MLP blocks inside them
    assert len(view.canvas.collapsed) > 24
    events: list[DocumentEvent] = []
    unsubscribe = tab.session.doc.subscribe(events.append)
    expand_all(view)
    unsubscribe()
    scene = view.canvas
    assert not scene.collapsed and not any(k < 0 for k in scene.node_items)
    assert len(scene.graph.nodes) == len(view.canvas.build_graph().nodes)
    assert _overlaps(view) == 0
    assert len([e for e in events if e.kind.value == "positions"]) == 1  # one layout
    assert tab.session.undo_stack.count() == 0 and not tab.session.modified


def test_a_large_expand_all_runs_off_the_gui_thread_and_cancel_keeps_the_boxes(
    window: MainWindow, qtbot: QtBot
) -> None:
    tab = open_model(window, model(LLAMA), qtbot)
    view = tab.view
    collapse_to_depth(view, 2)
    boxes = set(view.canvas.collapsed)
    view.settings.async_layout_nodes = 100  # this Llama counts as large
    expand_all(view)
    assert view.job is not None and view.canvas.collapsed == boxes  # still drawn as boxes
    view.cancel_layout()
    assert view.wait_for_layout(30_000)
    assert view.canvas.collapsed == boxes
    expand_all(view)
    assert view.wait_for_layout(60_000)
    assert not view.canvas.collapsed and _overlaps(view) == 0
    assert tab.session.undo_stack.count() == 0 and not tab.session.modified
