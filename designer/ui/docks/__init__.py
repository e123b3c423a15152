"""Dock windows. Each module defines ``create_dock(window: MainWindow) -> QDockWidget``;
the main window finds and adds them (see MainWindow)."""
