"""Edit ▸ Find… (Ctrl+F): opens the Find bar of the current document tab (one per tab,
built on first use, above its canvas)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QVBoxLayout

from designer.ui.widgets.find_bar import FindBar

if TYPE_CHECKING:
    from designer.ui.document_tab import DocumentTab
    from designer.ui.main_window import MainWindow


def find_bar(tab: DocumentTab, create: bool = True) -> FindBar | None:
    """The Find bar of ``tab`` (built and put above the canvas when ``create``)."""
    bar = tab.findChild(FindBar)
    if bar is None and create:
        bar = FindBar(tab.view, tab)
        layout = tab.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.insertWidget(layout.indexOf(tab.view), bar)
    return bar


def open_find(window: MainWindow) -> FindBar | None:
    tab = window.tab()
    if tab is None:
        return None
    bar = find_bar(tab)
    assert bar is not None
    bar.open_bar()
    return bar


def install(window: MainWindow) -> None:
    action = QAction("&Find…", window)
    action.setShortcut(QKeySequence(QKeySequence.StandardKey.Find))
    action.setToolTip(
        "Find module scopes, node names, op types, tensor names, initializer names and "
        "attribute values in the shown graph"
    )
    action.triggered.connect(lambda _checked=False: open_find(window))
    edit_menu = window.menus["Edit"]
    edit_menu.addSeparator()
    edit_menu.addAction(action)
    window.actions_by_name["find"] = action
    action.setEnabled(window.tab() is not None)
    window.currentTabChanged.connect(lambda tab: action.setEnabled(tab is not None))
