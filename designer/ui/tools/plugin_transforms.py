"""Transform plug-ins (entry-point group ``onnx_designer.transforms``) in Tools > Global Model
Modification, after the built-in transforms, by plug-in name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from designer.activities.plugin_transforms import PluginTransform, transform_plugins
from designer.ui.dialogs.transform_runner import TransformDialog
from designer.ui.session import DocumentSession
from designer.ui.tools.global_modification import DialogFactory, open_dialog

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

MENU_TITLE = "&Global Model Modification"


def transforms_menu(window: MainWindow) -> QMenu:
    """The Global Model Modification submenu of Tools (made here if it is missing)."""
    tools: QMenu = window.menus["Tools"]
    for action in tools.actions():
        menu = action.menu()
        if isinstance(menu, QMenu) and menu.title() == MENU_TITLE:
            return menu
    return tools.addMenu(MENU_TITLE)


def _factory(transform: PluginTransform) -> DialogFactory:
    def make(session: DocumentSession, parent: QWidget) -> TransformDialog:
        from designer.ui.dialogs.plugin_transform_dialog import PluginTransformDialog

        return PluginTransformDialog(session, transform, parent)

    return make


def install(window: MainWindow) -> None:
    transforms = transform_plugins()
    if not transforms:
        return
    menu = transforms_menu(window)
    menu.addSeparator()
    actions: list[QAction] = []
    for transform in transforms:
        action = QAction(f"{transform.title.replace('&', '&&')}…", window)
        tip = transform.description or f"Transform plug-in {transform.name}"
        action.setStatusTip(tip)
        action.setToolTip(tip)
        action.setData(transform.name)
        factory = _factory(transform)
        action.triggered.connect(lambda _c=False, f=factory: open_dialog(window, f))
        menu.addAction(action)
        window.actions_by_name[f"plugin_transform_{transform.name}"] = action
        actions.append(action)

    def update(tab: object) -> None:
        for action in actions:
            action.setEnabled(tab is not None)

    window.currentTabChanged.connect(update)
    update(window.tab())
