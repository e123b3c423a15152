"""Selecting a node outside the focused group (Find, Layer Explorer, Type Checking all
select through the view) shows the whole graph again and selects it, instead of doing
nothing; a node inside the focus keeps the focus."""

from __future__ import annotations

from designer.ui.canvas.collapse_view import collapse_to_depth, hierarchy_of
from designer.ui.canvas.focus_view import focus_of, set_focus
from tests.helpers.shared import model


def test_selecting_outside_the_focus_ends_it(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers.gui import open_model

    view = open_model(window, model("llama_24l_h64.dynamo.onnx"), qtbot).view
    collapse_to_depth(view, 2)
    set_focus(view, "m/model/layers.3")
    hierarchy = hierarchy_of(view.canvas)
    inside = hierarchy.by_id["m/model/layers.3/mlp/down_proj"].own_keys[0]
    view.select_keys([inside])
    assert focus_of(view.canvas) == "m/model/layers.3" and view.selected_keys() == [inside]
    (outside,) = hierarchy.by_id["m/model/layers.17/mlp/down_proj"].own_keys
    view.select_keys([outside])
    assert focus_of(view.canvas) is None  # it stayed, and nothing was selected
    assert view.selected_keys() == [outside] and outside in view.canvas.node_items
