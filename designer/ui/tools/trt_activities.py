"""TensorRT activities in the main window (SPEC X-3, X-4, A-1): File > Export > TensorRT
Engine…, Tools > Profile with TensorRT…, and the welcome page's Start Activity choices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from designer.ui.dialogs.trt_dialog import TrtDialog
from designer.ui.tools.activities import model_for_activity

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow


def trt_activity(window: MainWindow, profile: bool, use_current: bool = True) -> TrtDialog | None:
    """Open Export TensorRT Engine (``profile`` False) or Profile with TensorRT, non-modal, on
    the current document's file when ``use_current``; None when the user cancelled saving."""
    model = None
    if use_current:
        go_on, model = model_for_activity(window)
        if not go_on:
            return None
    dialog = TrtDialog(window, model, profile=profile)
    dialog.show()
    return dialog


def _export_menu(window: MainWindow) -> QMenu:
    for action in window.menus["File"].actions():
        menu = action.menu()
        if isinstance(menu, QMenu) and menu.title().replace("&", "") == "Export":
            return menu
    return window.menus["File"].addMenu("&Export")


def install(window: MainWindow) -> None:
    build = QAction("&TensorRT Engine…", window)
    build.setToolTip("Build a TensorRT engine of the model here or on an SSH target")
    build.triggered.connect(lambda _c=False: trt_activity(window, profile=False))
    _export_menu(window).addAction(build)
    window.actions_by_name["export_trt_engine"] = build
    profile = QAction("Profile with &TensorRT…", window)
    profile.setToolTip("Build (or load) an engine and measure it per layer with trtexec")
    profile.triggered.connect(lambda _c=False: trt_activity(window, profile=True))
    tools = window.menus["Tools"]
    anchor = window.actions_by_name.get("remote_connections")
    actions = tools.actions()
    if anchor in actions:
        tools.insertAction(anchor, profile)
    else:
        tools.addAction(profile)
    window.actions_by_name["profile_trt"] = profile
    window.welcome.activityRequested.connect(
        lambda kind: trt_activity(window, profile=kind == "trt-profile", use_current=False)
    )
