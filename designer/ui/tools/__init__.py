"""Menu tools. Each module defines ``install(window: MainWindow) -> None`` and adds its
actions to ``window.menus`` ("File", "Edit", "View", "Window", "Tools")."""
