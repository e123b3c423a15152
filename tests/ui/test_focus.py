"""Focus and breadcrumbs on the 24-layer Llama: Focus on a layer shows that layer's nodes
alone with its border values as stubs; the breadcrumb bar shows where it sits, each crumb
focuses its group, and "model" (or Esc) returns to the whole graph with every position as
it was. View state only: the model is untouched."""

from __future__ import annotations

import os

from helpers.gui import explorer_panel
from PySide6.QtCore import Qt

from designer.core.collapse import group_key
from designer.core.focus import is_stub_key
from designer.core.viewgraph import NodeKind
from designer.ui.canvas.breadcrumbs import BreadcrumbBar
from designer.ui.canvas.collapse_view import hierarchy_of
from designer.ui.canvas.focus_view import focus_of, set_focus
from tests.helpers.gui import open_model
from tests.helpers.shared import model

LLAMA = "llama_24l_h64.dynamo.onnx"
LAYER = "m/model/layers.3"
ATTN = "m/model/layers.3/self_attn"
SHOTS = os.environ.get("NAV_SHOTS")  # a folder: save screenshots there


def _bar(tab) -> BreadcrumbBar:  # type: ignore[no-untyped-def]
    bar = tab.findChild(BreadcrumbBar)
    assert bar is not None
    return bar


def test_focus_shows_one_layer_and_breadcrumbs_navigate(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    tab = open_model(window, model(LLAMA), qtbot)
    view = tab.view
    window.resize(1400, 900)
    before = dict(view.canvas.positions)
    model_bytes = tab.session.doc.model.SerializeToString()
    bar = _bar(tab)
    assert not bar.isVisibleTo(tab)  # nothing focused: no bar
    hierarchy = hierarchy_of(view.canvas)
    layer = set(hierarchy.by_id[LAYER].keys())

    set_focus(view, LAYER)
    shown = view.canvas.node_items
    ops = {k for k, item in shown.items() if item.view.kind is NodeKind.OP}
    drawn = {k for k in layer if view.canvas.graph.has_node(k)}
    assert ops == drawn and len(ops) > 30  # that layer's nodes, nothing else
    stubs = [item.view for k, item in shown.items() if is_stub_key(k)]
    assert {s.kind for s in stubs} == {NodeKind.INPUT, NodeKind.OUTPUT}
    assert any(s.kind is NodeKind.OUTPUT for s in stubs)  # the layer's output leaves it
    assert bar.isVisibleTo(tab)
    assert bar.labels() == ["model", "m", "model", "layers.3"]  # the whole graph, then modules
    assert not bar.buttons[-1].isEnabled()  # the crumb of what is shown
    if SHOTS:
        qtbot.wait(50)
        window.grab().save(os.path.join(SHOTS, "NAV-focus-layer3.png"))

    set_focus(view, ATTN)  # deeper: the attention block alone
    attn = set(hierarchy.by_id[ATTN].keys())
    ops = {k for k, item in view.canvas.node_items.items() if item.view.kind is NodeKind.OP}
    assert ops == {k for k in attn if view.canvas.graph.has_node(k)}
    assert 0 < len(ops) < len(drawn)
    assert bar.labels()[-2:] == ["layers.3", "self_attn"]
    if SHOTS:
        qtbot.wait(50)
        window.grab().save(os.path.join(SHOTS, "NAV-focus-self_attn.png"))

    bar.buttons[-2].click()  # the layers.3 crumb
    assert focus_of(view.canvas) == LAYER
    bar.buttons[0].click()  # "model": the whole graph
    assert focus_of(view.canvas) is None and not bar.isVisibleTo(tab)
    assert len(view.canvas.node_items) == len(view.canvas.graph.nodes) > len(layer)

    set_focus(view, ATTN)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Escape)  # Esc returns to the whole graph too
    assert focus_of(view.canvas) is None
    after = view.canvas.positions
    assert all(after[k] == p for k, p in before.items() if k >= 0)  # nothing moved
    assert tab.session.doc.model.SerializeToString() == model_bytes


def test_focus_a_collapsed_box_from_its_menu_and_expand_inside(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    tab = open_model(window, model(LLAMA), qtbot)
    view = tab.view
    window.actions_by_name["collapse_auto"].trigger()  # 24 layer boxes
    assert group_key(LAYER) in view.canvas.node_items
    box = view.canvas.node_items[group_key(LAYER)]
    from PySide6.QtWidgets import QMenu

    from designer.ui.tools.collapse import _menu_hook

    menu = QMenu()
    _menu_hook(menu, view, box.sceneBoundingRect().center())
    action = next(a for a in menu.actions() if a.text() == "Focus layers.3")
    action.trigger()
    menu.deleteLater()
    assert focus_of(view.canvas) == LAYER
    kinds = {item.view.kind for item in view.canvas.node_items.values()}
    assert NodeKind.OP in kinds  # the focused layer is open
    assert group_key("m/model/layers.4") not in view.canvas.node_items
    assert _bar(tab).labels()[-1] == "layers.3"
    # the layer's own modules fold and open inside the focus
    from designer.ui.canvas.collapse_view import collapse_group, expand_group

    collapse_group(view, ATTN)
    assert group_key(ATTN) in view.canvas.node_items
    expand_group(view, ATTN)
    assert group_key(ATTN) not in view.canvas.node_items
    set_focus(view, None)
    assert group_key("m/model/layers.4") in view.canvas.node_items  # collapsed as before


def test_focus_from_the_explorer_scope_tree(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QModelIndex
    from PySide6.QtWidgets import QApplication, QMenu

    tab = open_model(window, model(LLAMA), qtbot)
    panel = explorer_panel(window)
    panel.grouping.setCurrentIndex(panel.grouping.findData("scope"))
    m = panel.model
    index = panel.model.group_row(LAYER)
    assert index.isValid() and index.parent() != QModelIndex()
    panel.tree.scrollTo(index)
    panel.tree.clearSelection()
    pos = panel.tree.visualRect(index).center()
    panel._context_menu(pos)
    menu = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu) and w.isVisible())
    action = next(a for a in menu.actions() if a.text() == "Focus layers.3")
    action.trigger()
    menu.close()
    assert focus_of(tab.view.canvas) == LAYER
    assert m.group_label(index) == LAYER


def test_an_edit_inside_the_focused_layer_keeps_the_focus(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from designer.core.edits.nodes import RenameNode
    from designer.core.scope import MAIN_SCOPE

    tab = open_model(window, model(LLAMA), qtbot)
    view = tab.view
    set_focus(view, LAYER)
    key = next(k for k, i in view.canvas.node_items.items() if i.view.kind is NodeKind.OP)
    assert tab.session.push(RenameNode(MAIN_SCOPE, key, "renamed_in_focus"))
    view.flush()
    qtbot.waitUntil(lambda: view.canvas.node_items[key].view.name == "renamed_in_focus")
    assert focus_of(view.canvas) == LAYER  # still that layer alone
    ops = {k for k, i in view.canvas.node_items.items() if i.view.kind is NodeKind.OP}
    layer = set(hierarchy_of(view.canvas).by_id[LAYER].keys())
    assert ops and ops <= layer
    qtbot.wait(10)  # stubs are locked once their items exist
    stub = next(i for k, i in view.canvas.node_items.items() if is_stub_key(k))
    assert not stub.flags() & stub.GraphicsItemFlag.ItemIsSelectable
    tab.session.doc.undo_stack.undo()
    view.flush()
    assert focus_of(view.canvas) == LAYER
