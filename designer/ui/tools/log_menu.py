"""View > Log: shows and raises the Log window (designer/ui/docks/log.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow


def show_log(window: MainWindow) -> QDockWidget | None:
    dock = window.findChild(QDockWidget, "dock_log")
    if dock is not None:
        dock.show()
        dock.raise_()
    return dock


def install(window: MainWindow) -> None:
    view = window.menus["View"]
    action = QAction("&Log", window)
    action.setStatusTip("Show the Log window: warnings, errors and plug-in problems")
    action.triggered.connect(lambda _c=False: show_log(window))
    windows = window.windows_menu.menuAction()
    actions = view.actions()
    after = actions.index(windows) + 1 if windows in actions else len(actions)
    if after < len(actions):
        view.insertAction(actions[after], action)
    else:
        view.addAction(action)
    window.actions_by_name["show_log"] = action
