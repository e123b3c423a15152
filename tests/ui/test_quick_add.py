"""Quick add (L-2): Ctrl+Space popup, fuzzy filter, Enter/double-click adds under the
cursor, Esc closes without a change."""

from __future__ import annotations

from pathlib import Path

from helpers.gui import open_model
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from designer.core.scope import MAIN_SCOPE
from designer.ui.main_window import MainWindow
from designer.ui.tools.quick_add import open_quick_add


def test_action_needs_a_document(window: MainWindow) -> None:
    action = window.actions_by_name["quick_add"]
    assert action.shortcut() == QKeySequence("Ctrl+Space")
    assert not action.isEnabled() and "Open or create" in action.toolTip()
    assert open_quick_add(window) is None


def test_typing_filters_and_enter_adds_under_cursor(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    open_model(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None and window.actions_by_name["quick_add"].isEnabled()
    view, doc = tab.view, tab.session.doc
    local = QPoint(180, 120)
    scene = view.mapToScene(local)
    popup = open_quick_add(window, view.viewport().mapToGlobal(local))
    assert popup is not None and popup.isVisible()
    assert popup.model.rowCount() > 150  # every operator before typing
    QTest.keyClicks(popup.search, "mxpl")
    assert popup.model.index(0, 0).data() == "MaxPool"
    assert popup.model.rowCount() < 10
    QTest.keyClick(popup.search, Qt.Key.Key_Down)
    assert popup.list.currentIndex().row() == 1
    QTest.keyClick(popup.search, Qt.Key.Key_Up)
    assert popup.current_op() == ("", "MaxPool")
    QTest.keyClick(popup.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not popup.isVisible())
    key = doc.scope().keys[-1]
    node = doc.scope().node(key)
    assert node.op_type == "MaxPool" and node.name == "MaxPool"
    x, y = doc.positions[MAIN_SCOPE][key]
    assert abs(x + 55 - scene.x()) <= 1 and abs(y + 22 - scene.y()) <= 1
    assert view.selected_keys() == [key]
    tab.session.undo_stack.undo()
    assert not doc.scope().has_node(key)


def test_double_click_adds_and_escape_closes(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    open_model(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    doc = tab.session.doc
    count = len(doc.scope().keys)
    popup = open_quick_add(window, QPoint(-10_000, -10_000))  # off the canvas: its centre
    assert popup is not None
    QTest.keyClick(popup.search, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not popup.isVisible())
    assert len(doc.scope().keys) == count

    popup = open_quick_add(window)
    assert popup is not None
    QTest.keyClicks(popup.search, "qqqzzz")
    assert popup.model.rowCount() == 0 and "No operator" in popup.hint.text()
    QTest.keyClick(popup.search, Qt.Key.Key_Return)  # nothing to add: nothing happens
    assert len(doc.scope().keys) == count
    popup.search.setText("sigmoid")
    first = popup.model.index(0, 0)
    assert first.data() == "Sigmoid"
    popup.list.doubleClicked.emit(first)
    qtbot.waitUntil(lambda: not popup.isVisible())
    assert doc.scope().proto.node[-1].op_type == "Sigmoid"
    tab.session.undo_stack.setClean()
