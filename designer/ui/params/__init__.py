"""Widgets of the Parameters and Initializer windows: attribute rows, panels, editors."""
