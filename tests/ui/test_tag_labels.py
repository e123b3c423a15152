"""The small tags above a box (graph-input proxies, stubs of far producers) show the end
of a scoped tensor name, the part that tells the tags apart, and never cover each other:
tags too close for full-width pills get narrower ones that keep the end of the name; the
tooltip has the rest."""

from __future__ import annotations

from designer.ui.canvas.headless import ensure_app, headless_scene
from designer.ui.canvas.items import _tail
from tests.helpers.shared import model


def test_tail_of_a_scoped_name() -> None:
    assert _tail("/m/model/rotary_emb/Cast_output_0") == "Cast"
    assert _tail("/m/model/Split_3_output_1") == "Split_3:1"
    assert _tail("/m/x_output_y") == "x_output_y"
    assert _tail("input_ids") == "input_ids"
    assert _tail("ends/") == "ends/"  # nothing after the slash: the whole name


def test_the_stubs_of_a_collapsed_torchscript_llama_read_apart(qapp) -> None:  # type: ignore[no-untyped-def]
    ensure_app()
    scene, _notes = headless_scene(model("llama_24l_h64.torchscript.onnx"), collapse="2")
    scene.build_all()
    labels = [label for item in scene.node_items.values() for _s, _n, label, _stub in item.tags]
    assert labels and not any(label.startswith("/m/") for label in labels)
    per_box = [
        [label for _s, _n, label, _stub in item.tags]
        for item in scene.node_items.values()
        if len(item.tags) > 1
    ]
    assert per_box and all(len(set(box)) == len(box) for box in per_box)  # all read apart


def test_tags_too_close_to_sit_side_by_side_are_narrowed(qapp) -> None:  # type: ignore[no-untyped-def]
    ensure_app()
    scene, _notes = headless_scene(model("llama_24l_h64.torchscript.onnx"), collapse="2")
    scene.build_all()
    crowded = [item for item in scene.node_items.values() if len(item.tags) > 2]
    assert crowded
    for item in crowded:
        rects = [item._tag_rect(slot) for slot, _n, _l, _s in item.tags]
        assert not any(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1 :])
        assert all(item.boundingRect().contains(r) for r in rects)  # drawn inside its bounds
        labels = [label for _s, _n, label, _stub in item.tags]
        assert len(set(labels)) == len(labels)  # narrowed, they keep the ends that differ
