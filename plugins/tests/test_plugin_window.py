"""The example plug-ins in the real main window (pytest-qt, offscreen), installed as a
distribution's entry points in a temporary site folder, and broken plug-ins that must not
stop the window: the Log window and stderr name each one."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import importlib
from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest
from plugin_site import doc_strings, documented_model, install
from PySide6.QtCore import QCoreApplication, QEvent, QThreadPool
from PySide6.QtWidgets import QDockWidget, QListWidget, QMenu
from pytestqt.qtbot import QtBot

from designer import plugins
from designer.ui.dialogs.plugin_transform_dialog import PluginTransformDialog
from designer.ui.dialogs.status_dialog import RunState
from designer.ui.docks.log import LogPanel
from designer.ui.main_window import MainWindow
from designer.ui.settings import Settings

BROKEN_MODULE = (
    "def bad_dock(window):\n    raise RuntimeError('dock factory exploded')\n\n"
    "def not_a_dock(window):\n    return 42\n\n"
    "def bad_tools():\n    raise ValueError('no tools today')\n"
)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty site folder on sys.path, settings in tmp, failures forgotten."""
    monkeypatch.setenv("ONNX_DESIGNER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("ONNX_DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    monkeypatch.setenv("ONNX_DESIGNER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(plugins, "_failures", [])
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    return folder


@pytest.fixture
def make_window(qtbot: QtBot, qapp: object) -> Iterator[object]:
    windows: list[MainWindow] = []

    def make() -> MainWindow:
        win = MainWindow(Settings())
        qtbot.addWidget(win)
        win.show_error = lambda title, message: None  # type: ignore[method-assign]
        win.ask_save_changes = lambda tab: "discard"  # type: ignore[method-assign]
        win.show()
        windows.append(win)
        return win

    yield make
    for win in windows:
        for tab in win.document_tabs():
            tab.session.undo_stack.setClean()
        win.close()
    QThreadPool.globalInstance().waitForDone(30_000)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def open_document(window: MainWindow, path: Path, qtbot: QtBot) -> None:
    window.open_files([path])
    tab = window.tab()
    assert tab is not None
    qtbot.waitUntil(lambda: tab.session.check_result is not None, timeout=20_000)


def test_transform_plugin_runs_from_the_menu_as_one_undo_step(
    site: Path, make_window: object, qtbot: QtBot, tmp_path: Path
) -> None:
    install(
        site,
        "strip-docs",
        {plugins.TRANSFORMS: {"strip-doc-strings": "strip_doc_strings:StripDocStrings"}},
        copies=("strip_doc_strings.py",),
    )
    window = make_window()  # type: ignore[operator]
    action = window.actions_by_name["plugin_transform_strip-doc-strings"]
    menu = next(
        a.menu()
        for a in window.menus["Tools"].actions()
        if isinstance(a.menu(), QMenu) and "Global Model Modification" in a.menu().title()
    )
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert texts[-1] == "Strip Doc Strings…" and len(texts) > 1  # after the built-ins
    assert not action.isEnabled()  # no document yet

    path = tmp_path / "doc.onnx"
    onnx.save(documented_model(), path)
    open_document(window, path, qtbot)
    session = window.tab().session
    before = session.doc.model.SerializeToString()
    action.trigger()
    dialog = next(d for d in window.findChildren(PluginTransformDialog) if d.isVisible())
    with qtbot.waitSignal(dialog.runEnded, timeout=30_000) as ended:
        dialog.run_button.click()
    assert ended.args[0] is RunState.SUCCESS, dialog.status.message.text()
    assert "Strip Doc Strings" in dialog.status.details.toPlainText()
    dialog.status.close()
    assert doc_strings(session.doc.model) == []
    assert session.undo_stack.count() == 1
    session.undo_stack.undo()
    assert session.doc.model.SerializeToString() == before


def test_dock_plugin_follows_the_document(
    site: Path, make_window: object, qtbot: QtBot, tmp_path: Path
) -> None:
    install(
        site,
        "op-counts",
        {plugins.DOCKS: {"op-counts": "op_count_dock:create_dock"}},
        copies=("op_count_dock.py", "op_histogram.py"),
    )
    window = make_window()  # type: ignore[operator]
    dock = window.findChild(QDockWidget, "dock_op_counts")
    assert dock is not None and dock in window.docks
    assert dock.toggleViewAction() in window.windows_menu.actions()
    panel_list = dock.findChild(QListWidget)
    assert panel_list.count() == 0
    path = tmp_path / "doc.onnx"
    onnx.save(documented_model(), path)
    open_document(window, path, qtbot)
    rows = [panel_list.item(i).text().split() for i in range(panel_list.count())]
    assert sorted(op for _n, op in rows) == ["Identity", "If", "Neg", "Relu"]


def test_broken_plugins_do_not_stop_the_window(
    site: Path, make_window: object, qtbot: QtBot, capfd: pytest.CaptureFixture[str]
) -> None:
    install(
        site,
        "broken-plugins",
        {
            plugins.DOCKS: {
                "import-error": "no_such_module_abc:create_dock",
                "exploding": "broken_gui:bad_dock",
                "wrong-type": "broken_gui:not_a_dock",
            },
            plugins.TRANSFORMS: {"missing-attr": "broken_gui:NoSuchTransform"},
            plugins.TOOLS: {"no-tools": "broken_gui:bad_tools"},
        },
        {"broken_gui": BROKEN_MODULE},
    )
    window = make_window()  # type: ignore[operator]
    assert window.isVisible() and window.findChild(QDockWidget, "dock_palette") is not None
    user_menu = next(m for m in window.findChildren(QMenu) if m.title() == "&User")
    user_menu.aboutToShow.emit()  # Tools > User loads the tool plug-ins

    panel = window.findChild(LogPanel)
    assert panel is not None
    messages = "\n".join(message for _l, _n, message in panel.visible_rows())
    expected = [
        "'import-error' (onnx_designer.docks = no_such_module_abc:create_dock) failed at import",
        "'exploding' (onnx_designer.docks = broken_gui:bad_dock) failed at create "
        "(RuntimeError: dock factory exploded)",
        "'wrong-type' (onnx_designer.docks = broken_gui:not_a_dock) failed at create "
        "(PluginError: returned int, not a QDockWidget)",
        "'missing-attr' (onnx_designer.transforms = broken_gui:NoSuchTransform) failed at import",
        "'no-tools' (onnx_designer.tools = broken_gui:bad_tools) failed at create",
    ]
    for needle in expected:
        assert needle in messages
    assert all(
        level == "ERROR" for level, name, _m in panel.visible_rows() if name == "designer.plugins"
    )
    err = capfd.readouterr().err
    for needle in expected:
        assert needle in err
    assert "see View > Log" in window.statusBar().currentMessage()
    assert "problem" in panel.dock.windowTitle()
