"""Opening or folding a box moves the nodes hidden in the boxes below later (a deferred
shift per box, ``Document.defer_shift``). Random expand/fold/reveal toggles on the Llama
canvas give exactly the positions of shifting every hidden node at once (the reference:
``DEFER_HIDDEN`` off, on a second copy): what is drawn, the document's positions, the
layout file, and a box dragged (MoveNodes) and undone afterwards."""

from __future__ import annotations

import random

from designer.core.io.companion import positions_to_json
from designer.core.io.load import open_document
from designer.core.viewgraph import NodeKind, build_view_graph
from designer.ui.canvas import collapse_view as cv
from designer.ui.canvas.controller import move_edit
from designer.ui.canvas.settings import CanvasSettings
from designer.ui.canvas.view import CanvasView
from designer.ui.session import DocumentSession
from tests.helpers.shared import model

LLAMA = "llama_24l_h64.dynamo.onnx"
STEPS = 40


def _view(qtbot, seed: int) -> CanvasView:  # type: ignore[no-untyped-def]
    doc = open_document(model(LLAMA))
    graph = build_view_graph(doc, doc.scope().id)
    rng = random.Random(seed)  # fractional positions: sums in another order would differ
    doc.positions[doc.scope().id] = {
        n.key: (i % 40 * 210.3 + rng.random(), i // 40 * 90.7 + rng.random())
        for i, n in enumerate(graph.nodes)
    }
    view = CanvasView(DocumentSession(doc), settings=CanvasSettings(async_layout_nodes=10**9))
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    cv.collapse_to_depth(view, 2)
    return view


def _drawn(view: CanvasView) -> dict[int, tuple[float, float]]:
    return {k: (i.x(), i.y()) for k, i in view.canvas.node_items.items()}


def _choices(view: CanvasView) -> list[tuple[str, object]]:
    """What can be done now: open a drawn box, fold an open group, reveal a hidden node."""
    scene = view.canvas
    hierarchy = cv.hierarchy_of(scene)
    drawn = set(scene.node_items)
    out: list[tuple[str, object]] = []
    for node in scene.graph.nodes:
        if node.kind is NodeKind.GROUP and node.group.startswith("m/model/layers."):
            out.append(("expand", node.group))
    for group in hierarchy.groups():
        layer = group.depth >= 3 and group.id.startswith("m/model/layers.")
        if layer and any(k in drawn for k in group.own_keys):  # open and drawn
            out.append(("collapse", group.id))
    hidden = [k for k in hierarchy.group_of if k >= 0 and k not in drawn]
    out.extend(("reveal", k) for k in hidden[::97])
    return sorted(out, key=repr)


def _do(view: CanvasView, action: str, arg: object) -> None:
    if action == "expand":
        cv.expand_group(view, str(arg))
    elif action == "collapse":
        cv.collapse_group(view, str(arg))
    else:
        assert isinstance(arg, int)
        cv.expose_keys(view, [arg])


def test_random_toggles_match_shifting_everything_at_once(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lazy, ref = _view(qtbot, 7), _view(qtbot, 7)
    assert lazy.session.doc.positions == ref.session.doc.positions
    rng = random.Random(11)
    deferred_seen = 0
    for _step in range(STEPS):
        choices = _choices(ref)
        assert choices == _choices(lazy)
        action, arg = rng.choice(choices)
        monkeypatch.setattr(cv, "DEFER_HIDDEN", False)
        _do(ref, action, arg)
        assert ref.session.doc.deferred_tokens(ref.scope_id) == []
        monkeypatch.setattr(cv, "DEFER_HIDDEN", True)
        _do(lazy, action, arg)
        deferred_seen = max(deferred_seen, len(lazy.session.doc.deferred_tokens(lazy.scope_id)))
        assert lazy.canvas.collapsed == ref.canvas.collapsed
        assert _drawn(lazy) == _drawn(ref)  # what is drawn: exactly where the reference has it
    assert deferred_seen > 10  # boxes below really had their nodes' shift deferred
    assert lazy.session.doc.deferred_tokens(lazy.scope_id)  # still pending here
    # a box dragged: its nodes' true positions are moved (MoveNodes), and undone
    box = next(k for k in sorted(lazy.canvas.node_items) if k < 0 and k in ref.canvas.node_items)
    assert lazy.canvas.graph.node(box).kind is NodeKind.GROUP
    moves = {}
    for view in (lazy, ref):
        x, y = view.canvas.positions[box]
        moves[id(view)] = cv.member_moves(view.canvas, {box: (x + 33.25, y - 12.5)})
        assert view.session.push(move_edit(view.scope_id, moves[id(view)]))
    assert moves[id(lazy)] == moves[id(ref)]
    assert lazy.session.doc.deferred_tokens(lazy.scope_id) == []  # read: applied
    assert lazy.session.doc.positions == ref.session.doc.positions
    for view in (lazy, ref):
        view.session.doc.undo_stack.undo()
        view.flush()
    assert lazy.session.doc.positions == ref.session.doc.positions
    assert _drawn(lazy) == _drawn(ref)


def test_layout_file_and_redraws_see_true_positions(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lazy, ref = _view(qtbot, 3), _view(qtbot, 3)
    steps = [("expand", "m/model/layers.2"), ("expand", "m/model/layers.9")]
    steps += [("collapse", "m/model/layers.2/self_attn"), ("expand", "m/model/layers.0")]
    for action, arg in steps:
        monkeypatch.setattr(cv, "DEFER_HIDDEN", False)
        _do(ref, action, arg)
        monkeypatch.setattr(cv, "DEFER_HIDDEN", True)
        _do(lazy, action, arg)
    doc = lazy.session.doc
    assert doc.deferred_tokens(lazy.scope_id)
    assert positions_to_json(doc) == positions_to_json(ref.session.doc)  # the layout file
    assert doc.deferred_tokens(lazy.scope_id) == []
    for action, arg in [("expand", "m/model/layers.20"), ("collapse", "m/model/layers.9")]:
        monkeypatch.setattr(cv, "DEFER_HIDDEN", False)
        _do(ref, action, arg)
        monkeypatch.setattr(cv, "DEFER_HIDDEN", True)
        _do(lazy, action, arg)
    assert doc.deferred_tokens(lazy.scope_id)
    for view in (lazy, ref):  # a full redraw places every box from its nodes
        cv.redraw(view)
    assert _drawn(lazy) == _drawn(ref)
    assert doc.positions == ref.session.doc.positions


def test_collapse_to_depth_after_toggles(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lazy, ref = _view(qtbot, 5), _view(qtbot, 5)
    for action, arg in [("expand", "m/model/layers.4"), ("collapse", "m/model/layers.4")]:
        monkeypatch.setattr(cv, "DEFER_HIDDEN", False)
        _do(ref, action, arg)
        monkeypatch.setattr(cv, "DEFER_HIDDEN", True)
        _do(lazy, action, arg)
    assert lazy.session.doc.positions == ref.session.doc.positions  # expand + fold: as before
    for view in (lazy, ref):
        cv.collapse_to_depth(view, 1)
    assert _drawn(lazy) == _drawn(ref)
    assert lazy.session.doc.positions == ref.session.doc.positions
