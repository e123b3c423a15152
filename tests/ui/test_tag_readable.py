"""The stubs above the collapsed layer boxes of both Llama exports read at 100 % zoom (QA
canvas-export finding 2): a layer box is as wide as its input tags need, so each tag shows
the end of its tensor's name (``val_51``, ``…eeze_14``, ``…queeze_6``) instead of a 14-px
blank, the tags of a box read apart, none covers another or the links into its
neighbours, and the layout (window, ``layout``, ``export-image``) leaves that room."""

from __future__ import annotations

import pytest

from designer.core.viewgraph import NodeKind
from designer.ui.canvas import style as st
from designer.ui.canvas.headless import ensure_app, headless_scene
from designer.ui.canvas.items import NodeItem, _tail
from designer.ui.canvas.layout_json import scene_layout
from tests.helpers.shared import model

LLAMAS = ["llama_24l_h64.dynamo.onnx", "llama_24l_h64.torchscript.onnx"]
#: The fewest characters of a name's end a tag must show (besides the ellipsis).
SHOWN = 4


def _layer_boxes(name: str) -> list[NodeItem]:
    ensure_app()
    scene, _notes = headless_scene(model(name), collapse="auto")
    scene.build_all()
    boxes = [
        item
        for item in scene.node_items.values()
        if item.view.kind is NodeKind.GROUP and item.view.name.startswith("layers.")
    ]
    assert len(boxes) == 24
    return boxes


@pytest.mark.parametrize("name", LLAMAS)
def test_the_stubs_above_every_layer_box_show_the_end_of_their_names(qapp, name: str) -> None:  # type: ignore[no-untyped-def]
    boxes = _layer_boxes(name)
    tagged = [item for item in boxes if len(item.tags) > 1]
    assert len(tagged) >= 23  # every layer but the first reads its stubs
    for item in tagged:
        labels = [label for _s, _n, label, _stub in item.tags]
        assert len(set(labels)) == len(labels), labels  # they read apart
        for _slot, tensor, label, _stub in item.tags:
            shown = label.lstrip("…")
            assert len(shown) >= SHOWN and _tail(tensor).endswith(shown), (tensor, label)
            assert st.text_width(label, "small") <= item._tag_width - 8  # drawn whole
        rects = [item._tag_rect(slot) for slot, _n, _l, _s in item.tags]
        assert all(r.width() >= 40 for r in rects)
        assert not any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1 :])
        assert all(item.boundingRect().contains(r) for r in rects)
        spacing = item.width / (len(item.view.inputs) + 1)
        assert all(r.width() <= spacing - 4 for r in rects)  # clear of a neighbour's link


@pytest.mark.parametrize("name", LLAMAS)
def test_the_layout_leaves_the_room_the_stubs_take(qapp, name: str) -> None:  # type: ignore[no-untyped-def]
    """The box sizes the layout used are those drawn: in the layout JSON each layer box
    is the width of its stubs, and no two boxes of a row overlap."""
    ensure_app()
    scene, _notes = headless_scene(model(name), collapse="auto")
    data = scene_layout(scene, "main")
    boxes = data["boxes"]
    assert isinstance(boxes, list)
    stubs = [b for b in boxes if b["kind"] == "stub" and str(b["target"]).startswith("group:")]
    assert stubs and all(b["w"] >= 40 for b in stubs)
    drawn = [b for b in boxes if b["kind"] in ("group", "op", "input", "output")]
    for i, a in enumerate(drawn):
        for b in drawn[i + 1 :]:
            apart = (
                a["x"] + a["w"] <= b["x"]
                or b["x"] + b["w"] <= a["x"]
                or a["y"] + a["h"] <= b["y"]
                or b["y"] + b["h"] <= a["y"]
            )
            assert apart, (a["id"], b["id"])
