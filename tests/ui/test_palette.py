"""Layer Palette (L-1): operators of the document's opsets, views, filter, tooltips, and a
real QDropEvent on the canvas adding a uniquely named node at the drop point."""

from __future__ import annotations

from pathlib import Path

from helpers.gui import open_model
from PySide6.QtCore import QModelIndex, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from designer.core.scope import MAIN_SCOPE
from designer.ui.docks.palette import PalettePanel, add_operator
from designer.ui.main_window import MainWindow
from designer.ui.qtmodels.palette_model import (
    OP_MIME,
    OP_ROLE,
    decode_op,
    doc_summary,
    encode_op,
    fuzzy_filter,
    output_count,
    palette_entries,
)


def panel_of(window: MainWindow) -> PalettePanel:
    dock = next(d for d in window.docks if d.objectName() == "dock_palette")
    widget = dock.widget()
    assert isinstance(widget, PalettePanel)
    return widget


def op_rows(panel: PalettePanel) -> list[str]:
    names = []

    def walk(parent: QModelIndex) -> None:
        for row in range(panel.proxy.rowCount(parent)):
            index = panel.proxy.index(row, 0, parent)
            op = index.data(OP_ROLE)
            if op:
                names.append(op[1])
            walk(index)

    walk(QModelIndex())
    return names


def test_entries_summaries_and_fuzzy_matching() -> None:
    entries = palette_entries({"": 17})
    names = {e.name for e in entries}
    assert {"Conv", "Relu", "MaxPool"} <= names
    assert "Gelu" not in names  # opset 20
    assert "Gelu" in {e.name for e in palette_entries({"": 20})}
    assert doc_summary("First `para` [link](http://x).\n\nSecond") == "First para link."
    assert fuzzy_filter("mxpl", entries)[0].name == "MaxPool"
    assert fuzzy_filter("zzzq", entries) == []
    split = next(e for e in entries if e.name == "TopK")
    assert split.outputs == 2
    assert output_count(None) == 1
    assert decode_op(encode_op("", "Conv")) == ("", "Conv")


def test_views_filter_sort_and_tooltip(window: MainWindow, resnet_path: Path, qtbot: QtBot) -> None:
    panel = panel_of(window)
    assert panel.model.rowCount() == 0
    assert "Open a model to see its operators" in panel.status.text()
    open_model(window, resnet_path, qtbot)
    assert "ai.onnx 17" in panel.status.text()
    panel.set_view("category")
    groups = [panel.proxy.index(r, 0).data() for r in range(panel.proxy.rowCount())]
    assert groups[0].startswith("convolution")  # categories in palette order
    panel.set_view("collection")
    assert panel.proxy.index(0, 0).data().startswith("ai.onnx (opset 17)")
    panel.set_view("name")
    names = op_rows(panel)
    assert len(names) > 150 and names[0] == "Abs"
    panel.order.setChecked(True)
    assert op_rows(panel)[0] == "Xor"
    panel.search.setText("pool")
    panel.search.flush()
    assert set(op_rows(panel)) >= {"MaxPool", "AveragePool", "GlobalMaxPool"}
    assert "Conv" not in op_rows(panel)
    conv = panel.model.findItems("Conv", Qt.MatchFlag.MatchRecursive)[0]
    assert "convolution operator" in conv.toolTip()
    mime = panel.model.mimeData([conv.index()])
    assert mime.hasFormat(OP_MIME)


def drop(view: object, mime: object, pos: QPoint) -> tuple[bool, bool]:
    viewport = view.viewport()  # type: ignore[attr-defined]
    action, button = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton
    none = Qt.KeyboardModifier(0)
    enter = QDragEnterEvent(pos, action, mime, button, none)
    QApplication.sendEvent(viewport, enter)
    event = QDropEvent(QPointF(pos), action, mime, button, none)
    QApplication.sendEvent(viewport, event)
    return enter.isAccepted(), event.isAccepted()


def test_drop_adds_unique_node_at_point_and_undo_removes_it(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    open_model(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    view, doc = tab.view, tab.session.doc
    before = doc.model.SerializeToString()
    count = len(doc.scope().keys)
    pos = QPoint(200, 150)
    scene = view.mapToScene(pos)  # before the drop: adding may grow the scene and scroll
    assert drop(view, encode_op("", "Conv"), pos) == (True, True)
    assert drop(view, encode_op("", "Conv"), pos + QPoint(40, 80)) == (True, True)
    scope = doc.scope()
    assert len(scope.keys) == count + 2
    first, second = scope.keys[-2:]
    assert scope.node(first).name == "Conv" and scope.node(second).name == "Conv_1"
    assert scope.node(first).op_type == "Conv" and len(scope.node(first).output) == 1
    assert view.selected_keys() == [second]
    x, y = doc.positions[MAIN_SCOPE][first]
    item = view.canvas.node_items[first]
    assert abs(x + 55 - scene.x()) <= 1 and abs(y + 22 - scene.y()) <= 1
    assert item.pos().x() == x
    tab.session.undo_stack.undo()
    tab.session.undo_stack.undo()
    assert doc.model.SerializeToString() == before
    assert first not in doc.positions[MAIN_SCOPE]
    # other drags (files, text) are left to the canvas and the window: nothing is added
    other = encode_op("", "Conv")
    other.removeFormat(OP_MIME)
    drop(view, other, pos)
    assert doc.model.SerializeToString() == before
    tab.session.undo_stack.setClean()


def test_double_click_adds_at_canvas_centre(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    open_model(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    panel = panel_of(window)
    panel.set_view("name")
    relu = panel.proxy.mapFromSource(panel.model.findItems("Relu")[0].index())
    panel.tree.doubleClicked.emit(relu)
    node = tab.session.doc.scope().proto.node[-1]
    assert node.op_type == "Relu" and node.name == "Relu"
    tab.session.undo_stack.setClean()


def test_contrib_operators_load_off_thread(window: MainWindow, qtbot: QtBot) -> None:
    from designer.core.document import Document
    from designer.core.new_model import new_model
    from designer.ui.qtmodels.palette_model import contrib_schemas
    from designer.ui.session import DocumentSession

    session = DocumentSession(Document(new_model(17, contrib=True)), window)
    tab = window.add_session(session)
    panel = panel_of(window)
    qtbot.waitUntil(lambda: contrib_schemas().loaded, timeout=30_000)
    qtbot.waitUntil(lambda: "com.microsoft" in panel.status.text(), timeout=5_000)
    domains = {e.domain for e in panel.model.entries}
    if "com.microsoft" in domains:  # onnxruntime is installed with its schema API
        assert "FusedConv" in {e.name for e in panel.model.entries}
        key = add_operator(tab.view, "com.microsoft", "FusedConv", QPointF(0.0, 0.0))
        assert key is not None
        assert session.doc.scope().node(key).domain == "com.microsoft"
    else:
        assert "unavailable" in panel.status.text()
    session.undo_stack.setClean()


def test_local_functions_are_offered_and_dropped_as_call_nodes(
    window: MainWindow, tmp_path: Path, qtbot: QtBot
) -> None:
    import onnx
    from helpers.models import FN_DOMAIN, function_model

    from designer.core.scope import ScopeId
    from designer.ui.tools.quick_add import QuickAddPopup

    path = tmp_path / "fn.onnx"
    onnx.save(function_model(), str(path))
    open_model(window, path, qtbot)
    tab = window.tab()
    assert tab is not None
    panel = panel_of(window)
    panel.set_view("category")
    groups = [panel.proxy.index(r, 0).data() for r in range(panel.proxy.rowCount())]
    assert "local functions (1)" in groups
    item = panel.model.findItems("ScaledAdd  (local.fn)", Qt.MatchFlag.MatchRecursive)[0]
    assert "local function" in item.toolTip() and "(a, b) → (c)" in item.toolTip()
    popup = QuickAddPopup(tab.view, QPointF(0, 0))
    assert any(e.name == "ScaledAdd" for e in popup.entries)
    popup.close()
    before = tab.session.doc.model.SerializeToString()
    assert drop(tab.view, encode_op(FN_DOMAIN, "ScaledAdd"), QPoint(300, 200)) == (True, True)
    node = tab.session.doc.scope().proto.node[-1]
    assert (node.op_type, node.domain, len(node.output)) == ("ScaledAdd", FN_DOMAIN, 1)
    call = tab.view.canvas.node_items[tab.view.selected_keys()[0]]
    assert call.view.function == (FN_DOMAIN, "ScaledAdd", "")  # drawn as a call
    tab.session.undo_stack.undo()
    assert tab.session.doc.model.SerializeToString() == before
    # inside the function's own tab it is not offered (a function cannot call itself)
    fn_tab = window.open_scope(tab.session, ScopeId((FN_DOMAIN, "ScaledAdd", "")))
    assert fn_tab is not None
    assert "ScaledAdd" not in op_rows(panel)
    refused = add_operator(fn_tab.view, FN_DOMAIN, "ScaledAdd", QPointF(0, 0))
    assert refused is None


def test_group_counts_follow_the_filter(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    panel = panel_of(window)
    open_model(window, resnet_path, qtbot)
    panel.set_view("category")

    def counts() -> dict[str, int]:
        shown = {}
        for row in range(panel.proxy.rowCount()):
            index = panel.proxy.index(row, 0)
            label, _, count = index.data().rpartition(" (")
            assert int(count.rstrip(")")) == panel.proxy.rowCount(index)  # says what is shown
            shown[label] = panel.proxy.rowCount(index)
        return shown

    everything = counts()
    panel.search.setText("pool")
    panel.search.flush()
    filtered = counts()
    assert filtered and sum(filtered.values()) < sum(everything.values())
    assert all(filtered[label] <= everything[label] for label in filtered)
    panel.search.setText("")
    panel.search.flush()
    assert counts() == everything
