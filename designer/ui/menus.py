"""The main window's menus and their shortcuts; every action acts on the current document."""

from __future__ import annotations

import atexit
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from designer.ui.canvas.view import CanvasView
    from designer.ui.main_window import MainWindow


def build_menus(window: MainWindow) -> dict[str, QAction]:
    """Create File, Edit, View, Window and Tools menus; returns actions by name."""
    actions: dict[str, QAction] = {}
    bar = window.menuBar()

    def add(
        menu_name: str,
        name: str,
        text: str,
        slot: Callable[[], object],
        shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
        menu: object = None,
    ) -> QAction:
        target = menu if menu is not None else menus[menu_name]
        action = QAction(text, window)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _checked=False: slot())
        target.addAction(action)  # type: ignore[attr-defined]
        actions[name] = action
        return action

    def on_view(method: Callable[[CanvasView], object]) -> Callable[[], None]:
        def run() -> None:
            view = window.current_view()
            if view is not None:
                method(view)

        return run

    menus = {name: bar.addMenu(name) for name in ("&File", "&Edit", "&View", "&Window", "&Tools")}
    menus = {k.replace("&", ""): v for k, v in menus.items()}
    window.menus = menus

    # File
    add("File", "new", "&New…", window.new_document, QKeySequence.StandardKey.New)
    add("File", "open", "&Open…", window.open_dialog, QKeySequence.StandardKey.Open)
    window.recent_menu = menus["File"].addMenu("Open &Recent")
    menus["File"].addSeparator()
    add("File", "save", "&Save", window.save, QKeySequence.StandardKey.Save)
    add("File", "save_as", "Save &As…", lambda: window.save(save_as=True), "Ctrl+Shift+S")
    add("File", "close", "&Close", window.close_tab, QKeySequence.StandardKey.Close)
    export_menu = menus["File"].addMenu("&Export")
    add("File", "export_image", "Canvas As &Image…", lambda: export_image(window), menu=export_menu)
    menus["File"].addSeparator()
    add("File", "compose", "Co&mpose Models…", lambda: compose_models(window))
    menus["File"].addSeparator()
    add("File", "quit", "E&xit", window.close, QKeySequence.StandardKey.Quit)

    # Edit
    undo = window.undo_group.createUndoAction(window, "&Undo")
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    redo = window.undo_group.createRedoAction(window, "&Redo")
    redo.setShortcuts([QKeySequence("Ctrl+Y"), QKeySequence("Ctrl+Shift+Z")])
    menus["Edit"].addAction(undo)
    menus["Edit"].addAction(redo)
    actions["undo"], actions["redo"] = undo, redo
    menus["Edit"].addSeparator()
    confirm = add(
        "Edit",
        "confirm_scope",
        "Confirm Subgraph Edits",
        window.scope_tabs.confirm,
        "Ctrl+Shift+Return",
    )
    confirm.setToolTip(
        "Write the edits of this subgraph or local function tab into its parent document "
        "(one undo step there)"
    )
    confirm.setEnabled(False)
    menus["Edit"].addSeparator()
    add("Edit", "cut", "Cu&t", on_view(lambda v: cut(window, v)), QKeySequence.StandardKey.Cut)
    add("Edit", "copy", "&Copy", on_view(lambda v: copy(window, v)), QKeySequence.StandardKey.Copy)
    add(
        "Edit",
        "paste",
        "&Paste",
        on_view(lambda v: paste(window, v)),
        QKeySequence.StandardKey.Paste,
    )
    add(
        "Edit",
        "delete",
        "&Delete",
        on_view(lambda v: v.delete_selection()),
        QKeySequence.StandardKey.Delete,
    )
    add(
        "Edit",
        "select_all",
        "Select &All",
        on_view(lambda v: v.select_all()),
        QKeySequence.StandardKey.SelectAll,
    )

    # View
    windows_menu = menus["View"].addMenu("&Windows")
    for dock in window.docks:
        windows_menu.addAction(dock.toggleViewAction())
    window.windows_menu = windows_menu
    grid = add("View", "show_grid", "Show &Grid", lambda: None)
    grid.setCheckable(True)
    grid.setChecked(window.settings.show_grid)
    grid.toggled.connect(lambda on: set_grid(window, on))
    constants = add("View", "show_constants", "Show All &Constants", lambda: None)
    constants.setCheckable(True)
    constants.setChecked(window.settings.show_constants)
    constants.toggled.connect(lambda on: set_constants(window, on))
    menus["View"].addSeparator()
    add("View", "arrange", "&Arrange Nodes", on_view(lambda v: v.arrange_nodes()), "Ctrl+L")
    add("View", "fit", "&Fit to View", on_view(lambda v: v.fit_to_view()), "F")
    add(
        "View",
        "zoom_in",
        "Zoom &In",
        on_view(lambda v: v.zoom_in()),
        QKeySequence.StandardKey.ZoomIn,
    )
    add(
        "View",
        "zoom_out",
        "Zoom &Out",
        on_view(lambda v: v.zoom_out()),
        QKeySequence.StandardKey.ZoomOut,
    )
    add("View", "zoom_reset", "&Actual Size", on_view(lambda v: v.reset_zoom()), "Ctrl+0")

    # Window
    add("Window", "save_layout", "&Save Window Layout", window.save_layout)
    add("Window", "apply_layout", "&Apply Saved Window Layout", window.apply_layout)
    add("Window", "reset_layout", "&Reset Window Layout", window.reset_layout)

    # Tools
    add("Tools", "options", "&Options…", lambda: show_options(window))

    toolbar = window.addToolBar("Main Toolbar")
    toolbar.setObjectName("toolbar_main")
    for name in ("save", "confirm_scope"):  # (undo/redo texts grow with the command)
        toolbar.addAction(actions[name])
    window.main_toolbar = toolbar
    return actions


def set_grid(window: MainWindow, on: bool) -> None:
    from designer.ui.engine import engine_tabs

    window.settings.show_grid = on
    for tab in window.document_tabs():
        tab.view.set_show_grid(on)
    for engine in engine_tabs(window):
        engine.view.set_show_grid(on)


def set_constants(window: MainWindow, on: bool) -> None:
    window.settings.show_constants = on
    for tab in window.document_tabs():
        tab.view.set_show_constants(on)


CLIPBOARD_MIME = "application/x-onnx-designer-nodes"


def copy(window: MainWindow, view: CanvasView) -> None:
    from PySide6.QtCore import QMimeData
    from PySide6.QtWidgets import QApplication

    data = view.copy_selection()
    if not data:
        return
    mime = QMimeData()
    mime.setData(CLIPBOARD_MIME, data)
    QApplication.clipboard().setMimeData(mime)
    global _RELEASE_REGISTERED
    if not _RELEASE_REGISTERED:
        atexit.register(release_clipboard)
        _RELEASE_REGISTERED = True


_RELEASE_REGISTERED = False


def release_clipboard() -> None:
    """Take our nodes off the clipboard while Python still runs (at exit). PySide6 6.11
    crashes the process at its very end (after everything is saved) when the clipboard still
    holds a QMimeData made in Python: Qt deletes it as the application object goes, when
    its Python side is gone. Another program's clipboard content is left alone."""
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        return
    clipboard = QApplication.clipboard()
    mime = clipboard.mimeData()
    if mime is not None and mime.hasFormat(CLIPBOARD_MIME):
        clipboard.clear()


def cut(window: MainWindow, view: CanvasView) -> None:
    copy(window, view)
    view.delete_selection()


def paste(window: MainWindow, view: CanvasView) -> None:
    from PySide6.QtWidgets import QApplication

    mime = QApplication.clipboard().mimeData()
    if mime is not None and mime.hasFormat(CLIPBOARD_MIME):
        view.paste(bytes(mime.data(CLIPBOARD_MIME).data()))


def show_options(window: MainWindow) -> None:
    from designer.ui.dialogs.options import OptionsDialog

    if OptionsDialog(window.settings, window).exec():
        window.autosave_timer.setInterval(window.settings.autosave_seconds * 1000)


def compose_models(window: MainWindow) -> None:
    from designer.ui.dialogs.compose_dialog import show_compose_dialog

    show_compose_dialog(window)


def export_image(window: MainWindow) -> None:
    from designer.ui.dialogs.export_image import ExportImageDialog

    view = window.current_view()
    if view is None:
        return
    dialog = ExportImageDialog(view, window)
    dialog.exec()
