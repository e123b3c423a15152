"""Opening and folding one box incrementally draws the same stubs and links as a full
rebuild of the same collapsed state (README: "Expand and collapse are incremental"): the
box below keeps its stubs (QA finding 4: ``layers.4`` lost its 7 after ``layers.3`` opened),
links the opening made too long are stubs, and folding back gives the first drawing."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from designer.core.collapse import group_key
from designer.ui.canvas.collapse_view import collapse_group, expand_group
from designer.ui.canvas.scene import CanvasScene
from designer.ui.main_window import MainWindow
from tests.helpers.gui import open_model
from tests.helpers.shared import model

LLAMA = "llama_24l_h64.dynamo.onnx"
OPENED = "m/model/layers.3"

Link = tuple[int, int, int, int, str]
Tag = tuple[int, int, str, bool]


def _links(scene: CanvasScene) -> set[Link]:
    """The links drawn as links, by endpoints and tensor (every one has its item)."""
    items = {
        (e.source, e.source_index, e.target, e.target_index, e.tensor) for e in scene.edge_items
    }
    drawn = {
        (e.source, e.source_index, e.target, e.target_index, e.tensor) for e in scene._drawn_links()
    }
    assert items == drawn  # no item for a stub, none missing
    return drawn


def _tags(scene: CanvasScene) -> set[Tag]:
    """The labelled tags (graph-input proxies and stubs) above every drawn node's inputs."""
    return {
        (key, slot, name, stub)
        for key, item in scene.node_items.items()
        for slot, name, _label, stub in item.tags
    }


def _drawing(scene: CanvasScene) -> tuple[set[Link], set[Tag]]:
    return _links(scene), _tags(scene)


def _rebuilt(scene: CanvasScene) -> tuple[set[Link], set[Tag]]:
    """The same document's collapsed state drawn by a fresh scene (as on reopening)."""
    fresh = CanvasScene(scene.doc, scene.scope_id, show_constants=scene.show_constants)
    fresh.pinned_outer = set(scene.pinned_outer)
    fresh.rebuild()
    assert not fresh.lazy
    return _drawing(fresh)


def test_expand_and_fold_keep_the_stubs_of_a_full_rebuild(window: MainWindow, qtbot: QtBot) -> None:
    tab = open_model(window, model(LLAMA), qtbot)
    view = tab.view
    window.actions_by_name["collapse_auto"].trigger()
    scene = view.canvas
    assert not scene.lazy
    first = _drawing(scene)
    assert first == _rebuilt(scene)
    below = group_key("m/model/layers.4")
    stubs_below = {t for t in first[1] if t[0] == below and t[3]}
    assert len(stubs_below) == 7

    far = scene.node_items[group_key("m/model/layers.10")]
    expand_group(view, OPENED)
    assert not scene.graph.has_node(group_key(OPENED))
    assert scene.node_items[group_key("m/model/layers.10")] is far  # incremental, no rebuild
    links, tags = _drawing(scene)
    full_links, full_tags = _rebuilt(scene)
    assert {t for t in tags if t[0] == below} == {t for t in full_tags if t[0] == below}
    assert stubs_below <= tags  # the box below keeps its stubs
    assert tags == full_tags
    assert links == full_links

    collapse_group(view, OPENED)
    assert scene.node_items[group_key("m/model/layers.10")] is far
    assert _drawing(scene) == _rebuilt(scene)
    assert _drawing(scene) == first  # folded back: the first drawing again
