"""How the main window gets its docks and tools: built-in modules and entry-point plug-ins
(:mod:`designer.plugins`; a broken one is reported and skipped), and the default dock
arrangement (Nsight's: palette and explorer left, type checking bottom, the rest right)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar, QWidget

from designer import plugins

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow

#: Where docks go by default: name fragment → area; tabbed per area.
DOCK_AREAS = (
    ("palette", Qt.DockWidgetArea.LeftDockWidgetArea),
    ("explorer", Qt.DockWidgetArea.LeftDockWidgetArea),
    ("type_check", Qt.DockWidgetArea.BottomDockWidgetArea),
    ("log", Qt.DockWidgetArea.BottomDockWidgetArea),
    ("history", Qt.DockWidgetArea.BottomDockWidgetArea),  # the right side's tabs fit then
)

#: Width of the side dock areas: at least SIDE_WIDTH, wider where their tab titles need it
#: (each title whole, never "Fin…"), up to SIDE_MAX_WIDTH (30 % of the default window; the
#: window may not have its size yet: offscreen, the screen is 800 px wide).
SIDE_WIDTH = 320
SIDE_MAX_WIDTH = 420

#: The tab shown first in each group (Nsight's defaults).
FRONT_DOCKS = ("dock_palette", "dock_parameters", "dock_type_check")
#: Docks of their own below the left group, always in view (not a tab among others).
BELOW_LEFT = ("dock_overview",)


def install_plugins(window: MainWindow, package_name: str, function: str) -> None:
    """Call ``function(window)`` of every module of ``package_name`` that has it, in name
    order; docks it returns join ``window.docks``. A module that fails to import or to
    install is reported (an ERROR record naming it: Log window, stderr) and skipped."""
    package = importlib.import_module(package_name)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        value = f"{package_name}.{info.name}"
        try:
            module = importlib.import_module(value)
        except Exception as exc:
            plugins.report_failure(package_name, info.name, value, "import", exc)
            continue
        factory = getattr(module, function, None)
        if factory is None:
            continue
        try:
            result = factory(window)
        except Exception as exc:
            plugins.report_failure(package_name, info.name, value, function, exc)
            continue
        if isinstance(result, QDockWidget):
            if not result.objectName():
                result.setObjectName(f"dock_{info.name}")
            window.docks.append(result)


def install_dock_plugins(window: MainWindow) -> None:
    """Docks of the ``onnx_designer.docks`` entry-point group, after the built-in ones, by
    plug-in name: each is a callable ``(window) -> QDockWidget``."""
    for plugin in plugins.load(plugins.DOCKS):
        dock = plugins.invoke(plugin, "create", _plugin_dock, plugin, window)
        if dock is not plugins.FAILED:
            window.docks.append(dock)


def _plugin_dock(plugin: plugins.Plugin, window: MainWindow) -> QDockWidget:
    dock = plugin.obj(window)
    if not isinstance(dock, QDockWidget):
        if isinstance(dock, QWidget):
            dock.deleteLater()
        raise plugins.PluginError(f"returned {type(dock).__name__}, not a QDockWidget")
    if not dock.objectName():
        dock.setObjectName(f"dock_plugin_{plugin.name}")
    return dock


def arrange_docks(window: MainWindow) -> None:
    """Default layout: docks grouped as tabs per side, so any number of them fits."""
    groups: dict[Qt.DockWidgetArea, list[QDockWidget]] = {}
    below = [d for d in window.docks if d.objectName() in BELOW_LEFT]
    for dock in window.docks:
        if dock in below:
            continue
        area = next(
            (a for part, a in DOCK_AREAS if part in dock.objectName()),
            Qt.DockWidgetArea.RightDockWidgetArea,
        )
        window.addDockWidget(area, dock)
        groups.setdefault(area, []).append(dock)
    left = groups.get(Qt.DockWidgetArea.LeftDockWidgetArea)
    for dock in below:  # split before tabifying: splitting a tabbed dock adds a tab
        if left:
            window.splitDockWidget(left[0], dock, Qt.Orientation.Vertical)
        else:
            window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
    for docks in groups.values():
        for other in docks[1:]:
            window.tabifyDockWidget(docks[0], other)
    tidy_tab_bars(window)  # once every area is tabbed: Qt re-shows stale ones till then
    for docks in groups.values():
        front = next((d for d in docks if d.objectName() in FRONT_DOCKS), docks[0])
        front.raise_()
    if below:
        window.resizeDocks(below, [200] * len(below), Qt.Orientation.Vertical)
    sides = [g for a, g in groups.items() if a != Qt.DockWidgetArea.BottomDockWidgetArea]
    widths = [max(SIDE_WIDTH, min(SIDE_MAX_WIDTH, tabs_width(window, g))) for g in sides]
    window.resizeDocks([g[0] for g in sides], widths, Qt.Orientation.Horizontal)
    bottom = groups.get(Qt.DockWidgetArea.BottomDockWidgetArea)
    if bottom:  # a quarter of the window (five or more rows of problems), at least 170 px
        height = max(170, window.height() // 4)
        window.resizeDocks([bottom[0]], [height], Qt.Orientation.Vertical)


def tabs_width(window: QMainWindow, group: list[QDockWidget]) -> int:
    """The width the tab bar of ``group`` (docks tabbed together) needs to show every
    title whole, and room for a count a dock adds to its title ("Findings (12)"), in
    pixels; 0 for a dock alone (no tab bar). Every bar Qt made for the group has the same
    tabs, so any of them tells."""
    titles = {d.windowTitle() for d in group}
    needs = [
        sum(bar.tabSizeHint(i).width() for i in range(bar.count()))
        + bar.fontMetrics().horizontalAdvance(" (99)")
        for bar in window.findChildren(QTabBar)
        if bar.parent() is window
        and bar.count() > 1
        and {bar.tabText(i) for i in range(bar.count())} == titles
    ]
    return max(needs, default=0)


def tidy_tab_bars(window: QMainWindow) -> None:
    """Hide the tab bars Qt leaves behind: Qt 6.11 makes two tab bars for the first
    tabify of every dock area but the first, and again when it restores a saved layout,
    and lays out only one; the other stayed visible in the middle of the window (over the
    report cards' toolbars, the Overview). The bar in use follows the dock raised in its
    group; a left-behind one does not. Each group's current tab is kept."""
    docks = [d for d in window.findChildren(QDockWidget) if not d.isFloating()]
    groups: list[list[QDockWidget]] = []
    grouped: set[int] = set()
    for dock in docks:
        if id(dock) in grouped:
            continue
        group = [dock, *window.tabifiedDockWidgets(dock)]
        grouped.update(id(d) for d in group)
        shown = [d for d in group if d.toggleViewAction().isChecked()]  # not closed
        if len(shown) > 1:
            groups.append(shown)
    bars = [b for b in window.findChildren(QTabBar) if b.parent() is window and b.count()]
    before = {id(bar): bar.tabText(bar.currentIndex()) for bar in bars}
    follows: set[int] = set()
    for group in groups:
        titles = {d.windowTitle() for d in group}
        mine = [b for b in bars if {b.tabText(i) for i in range(b.count())} <= titles]
        seen = []
        for dock in (group[0], group[1], group[0]):
            dock.raise_()
            seen.append([bar.currentIndex() for bar in mine])
        for index, bar in enumerate(mine):
            if len({state[index] for state in seen}) > 1:
                follows.add(id(bar))
    for bar in bars:
        if id(bar) not in follows:
            if bar.isVisibleTo(window):
                bar.hide()
            continue
        by_title = {d.windowTitle(): d for d in docks}
        current = by_title.get(before[id(bar)])
        if current is not None:
            current.raise_()
