"""Expand and collapse on the Llama canvas are incremental: the other boxes keep their
items (not rebuilt), their terminals and links, and are drawn where the document has them;
folding the group again gives back the same drawing."""

from __future__ import annotations

from designer.core.collapse import group_key
from designer.ui.canvas.collapse_view import collapse_group, expand_group
from tests.helpers.gui import open_model
from tests.helpers.shared import model

LLAMA = "llama_24l_h64.dynamo.onnx"


def test_expand_and_fold_touch_only_that_group(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    tab = open_model(window, model(LLAMA), qtbot)
    view = tab.view
    window.actions_by_name["collapse_auto"].trigger()
    scene = view.canvas
    far = scene.node_items[group_key("m/model/layers.10")]
    near = scene.node_items[group_key("m/model/layers.4")]
    before_links = len(scene.edge_items)
    start = far.pos()
    expand_group(view, "m/model/layers.5")
    assert scene.node_items[group_key("m/model/layers.10")] is far  # kept, not rebuilt
    assert scene.node_items[group_key("m/model/layers.4")] is near
    assert far.pos().y() > start.y()  # moved down to make room
    for key, item in scene.node_items.items():  # every item where the document has it
        x, y = scene.positions[key]
        assert (item.x(), item.y()) == (x, y)
    links = scene.edge_items
    assert all(e.source in scene.node_items and e.target in scene.node_items for e in links)
    collapse_group(view, "m/model/layers.5")
    assert scene.node_items[group_key("m/model/layers.10")] is far
    assert abs(far.pos().y() - start.y()) < 1e-6  # folded: back where it was
    assert len(scene.edge_items) == before_links
