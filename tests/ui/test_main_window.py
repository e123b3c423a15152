"""The main window with real widgets offscreen: tabs, save/close, recovery, menus, layout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QImage
from pytestqt.qtbot import QtBot

from designer.core.edits import MoveNodes
from designer.core.scope import MAIN_SCOPE
from designer.ui import recovery
from designer.ui.main_window import MainWindow
from designer.ui.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "examples" / "tiny_cnn.onnx"


def open_and_wait(window: MainWindow, path: Path, qtbot: QtBot) -> None:
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    assert tab.view.wait_for_layout(30_000)
    qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=30_000)


def move_first_node(window: MainWindow) -> None:
    tab = window.tab()
    assert tab is not None
    key = tab.session.doc.scope().keys[0]
    assert tab.session.push(MoveNodes(MAIN_SCOPE, {key: (500.0, 500.0)}))


def test_open_shows_a_tab_and_the_welcome_page_otherwise(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    assert window.stack.currentWidget() is window.welcome
    open_and_wait(window, resnet_path, qtbot)
    assert window.stack.currentWidget() is window.tabs
    assert window.tabs.tabText(0) == resnet_path.name
    assert window.problems.text() == "no errors"
    assert window.close_tab(0)
    assert window.stack.currentWidget() is window.welcome
    assert str(resnet_path.resolve()) in Settings().recent_files
    assert window.welcome.recent.count() == 1


def test_edit_marks_modified_and_save_clears_it(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    open_and_wait(window, resnet_path, qtbot)
    move_first_node(window)
    assert window.tabs.tabText(0).endswith("*")
    assert window.windowTitle().startswith(resnet_path.name + "*")
    window.actions_by_name["undo"].trigger()
    assert not window.tabs.tabText(0).endswith("*")
    window.actions_by_name["redo"].trigger()
    assert window.save()
    assert not window.tabs.tabText(0).endswith("*")
    assert (resnet_path.parent / (resnet_path.name + ".designer.json")).exists()


def test_positions_persist_across_reopen(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    open_and_wait(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    key = tab.session.doc.scope().keys[3]
    name = tab.session.doc.scope().node(key).name
    tab.session.push(MoveNodes(MAIN_SCOPE, {key: (1234.0, 567.0)}))
    assert window.save()
    window.close_tab(0)
    open_and_wait(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    doc = tab.session.doc
    key = next(k for k, n in doc.scope().nodes() if n.name == name)
    assert doc.positions[MAIN_SCOPE][key] == (1234.0, 567.0)


@pytest.mark.parametrize("answer", ["cancel", "discard", "save"])
def test_closing_a_modified_document_asks(
    window: MainWindow, resnet_path: Path, qtbot: QtBot, answer: str
) -> None:
    open_and_wait(window, resnet_path, qtbot)
    move_first_node(window)
    asked = []
    window.ask_save_changes = lambda tab: asked.append(tab) or answer  # type: ignore[method-assign]
    before = resnet_path.read_bytes()
    closed = window.close_tab(0)
    assert asked
    assert closed == (answer != "cancel")
    assert window.tabs.count() == (1 if answer == "cancel" else 0)
    layout_file = resnet_path.parent / (resnet_path.name + ".designer.json")
    assert layout_file.exists() == (answer == "save")
    assert resnet_path.read_bytes() == before  # positions live in the layout file


def test_broken_file_shows_a_message_and_keeps_other_documents(
    window: MainWindow, resnet_path: Path, tmp_path: Path, qtbot: QtBot
) -> None:
    open_and_wait(window, resnet_path, qtbot)
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x08\x07garbage" * 10)
    window.open_files([broken])
    assert window.tabs.count() == 1
    assert len(window.errors) == 1 and str(broken) in window.errors[0]  # type: ignore[attr-defined]


def test_corrupt_layout_file_warns_and_lays_out_fresh(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    (resnet_path.parent / (resnet_path.name + ".designer.json")).write_text("{corrupt")
    open_and_wait(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    assert tab.banner.isVisibleTo(window) and "layout file ignored" in tab.banner.text()
    assert len(tab.session.doc.positions[MAIN_SCOPE]) >= len(tab.session.doc.scope())


def test_drop_a_file_onto_the_window_opens_it(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(resnet_path))])
    event = QDropEvent(
        QPointF(100, 100),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    assert window.tabs.count() == 1


def test_autosave_and_recovery_after_a_crash(
    qtbot: QtBot, resnet_path: Path, tmp_path: Path
) -> None:
    crashed = MainWindow(Settings())
    qtbot.addWidget(crashed)
    crashed.ask_save_changes = lambda tab: "discard"  # type: ignore[method-assign]
    open_and_wait(crashed, resnet_path, qtbot)
    tab = crashed.tab()
    assert tab is not None
    key = tab.session.doc.scope().keys[0]
    tab.session.push(MoveNodes(MAIN_SCOPE, {key: (1.0, 2.0)}))
    from designer.core.edits import RenameNode

    assert tab.session.push(RenameNode(MAIN_SCOPE, key, "renamed_before_crash"))
    crashed.autosave()
    assert recovery.pending_recoveries()
    # A crash: the window goes away without closing its documents.
    crashed.autosave_timer.stop()
    crashed.hide()

    restored = MainWindow(Settings())
    qtbot.addWidget(restored)
    restored.ask_save_changes = lambda tab: "discard"  # type: ignore[method-assign]
    restored.ask_restore = lambda entries: True  # type: ignore[method-assign]
    restored.offer_recovery()
    assert restored.tabs.count() == 1
    doc = restored.tab().session.doc  # type: ignore[union-attr]
    assert doc.path == resnet_path.resolve()
    assert doc.scope().node(doc.scope().keys[0]).name == "renamed_before_crash"
    assert restored.tab().session.modified  # type: ignore[union-attr]
    assert not recovery.pending_recoveries()
    assert onnx.load(resnet_path).graph.node[0].name != "renamed_before_crash"
    restored.tab().session.undo_stack.setClean()  # type: ignore[union-attr]


def test_menus_list_docks_and_toggle_canvas_options(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    open_and_wait(window, resnet_path, qtbot)
    titles = [a.text() for a in window.windows_menu.actions()]
    assert "History" in titles
    window.actions_by_name["show_grid"].setChecked(False)
    assert Settings().show_grid is False
    window.actions_by_name["show_constants"].setChecked(True)
    assert Settings().show_constants is True
    window.history.hide()
    window.reset_layout()
    assert window.history.isVisible()


def test_window_layout_save_and_apply(window: MainWindow, qtbot: QtBot) -> None:
    window.history.hide()
    window.save_layout()
    window.history.show()
    window.apply_layout()
    assert not window.history.isVisible()


def test_new_model_dialog_creates_an_empty_document(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from designer.ui.dialogs.new_model import NewModelDialog

    def run(dialog: NewModelDialog) -> int:
        dialog.opset.setCurrentIndex(dialog.opset.findData(13))
        dialog.contrib.setChecked(True)
        return NewModelDialog.DialogCode.Accepted

    monkeypatch.setattr(NewModelDialog, "exec", run)
    window.new_document()
    tab = window.tab()
    assert tab is not None
    assert tab.session.doc.opset_imports == {"": 13, "com.microsoft": 1}
    assert window.tabs.tabText(0) == "Untitled"


def test_screenshot_command_renders_the_window(tmp_path: Path) -> None:
    out = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "designer",
            "screenshot",
            str(EXAMPLE),
            str(out),
            "--size",
            "1200x800",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "propagateSizeHints" not in result.stderr  # the offscreen platform's noise
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1200, 800)


def test_welcome_recent_entry_opens(window: MainWindow, resnet_path: Path, qtbot: QtBot) -> None:
    Settings().add_recent(resnet_path)
    window._refresh_recent()
    item = window.welcome.recent.item(0)
    window.welcome.recent.itemActivated.emit(item)
    assert window.tabs.count() == 1


def test_canvas_context_menu_and_controls_button(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    open_and_wait(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    seen = []
    window.canvas_menu_hooks.append(lambda menu, view, pos: seen.append(view))
    menu = window.canvas_menu(tab, QPointF(0, 0))
    texts = [a.text() for a in menu.actions()]
    assert "&Arrange Nodes" in texts and "&Windows" in texts
    assert seen == [tab.view]
    controls = tab.controls.menu()
    assert controls is not None
    navigation = next(a for a in controls.actions() if a.text() == "Navigation controls")
    lines = [a.text() for a in navigation.menu().actions()]
    assert any("Ctrl + mouse wheel" in line for line in lines)


def test_canvas_context_menu_pops_up_and_is_deleted_when_closed(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QApplication, QMenu

    open_and_wait(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    tab.view.contextMenuRequested.emit(QPoint(200, 200), QPointF(0, 0))
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    direct = Qt.FindChildOption.FindDirectChildrenOnly
    assert len(tab.view.findChildren(QMenu, "", direct)) == 1  # its submenus are its children
    QApplication.activePopupWidget().close()
    qtbot.waitUntil(lambda: not tab.view.findChildren(QMenu))  # not one menu kept per click


def test_right_click_on_empty_canvas_twice_keeps_the_windows_menu(
    window: MainWindow, resnet_path: Path, qtbot: QtBot
) -> None:
    """The canvas menu's Windows submenu must not take View > Windows down with it."""
    import shiboken6
    from PySide6.QtCore import QEvent, QPoint, Qt
    from PySide6.QtWidgets import QApplication, QMenu

    open_and_wait(window, resnet_path, qtbot)
    tab = window.tab()
    assert tab is not None
    viewport = tab.view.viewport()
    for _ in range(3):
        qtbot.mouseClick(viewport, Qt.MouseButton.RightButton, pos=QPoint(3, 3))
        qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
        popup = QApplication.activePopupWidget()
        windows = next(a for a in popup.actions() if a.text() == "&Windows").menu()
        assert [a.text() for a in windows.actions()] == [
            a.text() for a in window.windows_menu.actions()
        ]
        popup.close()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
        assert shiboken6.isValid(window.windows_menu)
    assert window.windows_menu.actions()
