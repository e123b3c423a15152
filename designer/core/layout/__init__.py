"""Layered graph layout on plain records (ids, sizes, edges) → positions. Qt-free."""

from designer.core.layout.layered import (
    Cancelled,
    LayoutEdge,
    LayoutNode,
    LayoutOptions,
    LayoutResult,
    layered_layout,
    layered_layout_of,
)

__all__ = [
    "Cancelled",
    "LayoutEdge",
    "LayoutNode",
    "LayoutOptions",
    "LayoutResult",
    "layered_layout",
    "layered_layout_of",
]
