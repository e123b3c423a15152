"""Subgraph tools: Tools > Extract Model Subgraph… (G-3) and, in the canvas context menu of
a node with graph attributes (If, Loop, Scan, …), Create Subgraph… for each unset one (G-2).

The dialogs are imported when first used: the window starts without loading them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import onnx
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QMenu

from designer.core.scope import ScopeId
from designer.ui.canvas.items import NodeItem
from designer.ui.canvas.view import CanvasView
from designer.ui.params.node_state import node_schema
from designer.ui.session import DocumentSession

if TYPE_CHECKING:
    from designer.ui.main_window import MainWindow


def unset_graph_attributes(session: DocumentSession, scope_id: ScopeId, key: int) -> list[str]:
    """The GRAPH attributes the node's schema defines that the node does not set yet."""
    node = session.doc.scope(scope_id).node(key)
    schema = node_schema(session.doc, scope_id, node)
    if schema is None:
        return []
    present = {a.name for a in node.attribute}
    return [
        info.name
        for info in schema.attributes.values()
        if info.type == onnx.AttributeProto.GRAPH and info.name not in present
    ]


def node_under(view: CanvasView, scene_pos: QPointF) -> int | None:
    """The operator node at ``scene_pos``, else the only selected one, else None."""
    scope = view.session.doc.scope(view.scope_id)
    for item in view.canvas.items(scene_pos):
        if isinstance(item, NodeItem) and scope.has_node(item.key):
            return item.key
    selected = [k for k in view.selected_keys() if scope.has_node(k)]
    return selected[0] if len(selected) == 1 else None


def create_subgraph(window: MainWindow, view: CanvasView, key: int, attribute: str) -> QDialog:
    from designer.ui.dialogs.create_subgraph import show_create_subgraph

    return show_create_subgraph(window, view.session, view.scope_id, key, attribute)


def extract_subgraph(window: MainWindow) -> QDialog | None:
    """Open the Extract Model Subgraph dialog on the current document (window-modal)."""
    from designer.ui.dialogs.extract_subgraph import ExtractSubgraphDialog

    tab = window.tab()
    if tab is None:
        window.statusBar().showMessage("Open a model to extract one of its subgraphs", 5000)
        return None
    dialog = ExtractSubgraphDialog(
        tab.session,
        status=lambda message: window.statusBar().showMessage(message, 10000),
        open_model=lambda path: window.open_files([path]),
        parent=window,
        output_problem=lambda path: window.output_problem(path, tab.session),
    )
    session = tab.session

    def extracted(what: str, scope_id: ScopeId, path: Path) -> None:
        # Show Changes of an extraction: the subgraph as it sits in the model -> the file
        from designer.core.diff.skeleton import scope_skeleton
        from designer.ui.diff import last_step
        from designer.ui.diff.show_changes import Snapshot

        doc = session.doc
        inside = scope_skeleton(doc.model, doc.scope(scope_id).proto)
        before = Snapshot(
            last_step.label(session, "in the model"), inside, doc.base_dir, private=True
        )
        last_step.remember(window, session, what, before, Snapshot(path.name, path=path))

    dialog.extracted = extracted
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def install(window: MainWindow) -> None:
    tools = window.menus["Tools"]
    tools.addSeparator()
    extract = QAction("E&xtract Model Subgraph…", window)
    extract.setToolTip("Write a subgraph or local function body as a standalone model")
    extract.triggered.connect(lambda _checked=False: extract_subgraph(window))
    tools.addAction(extract)
    window.actions_by_name["extract_subgraph"] = extract

    def hook(menu: QMenu, view: CanvasView, scene_pos: QPointF) -> None:
        key = node_under(view, scene_pos)
        if key is None:
            return
        missing = unset_graph_attributes(view.session, view.scope_id, key)
        if not missing:
            return
        menu.addSeparator()
        for attribute in missing:
            entry = menu.addAction(f"Create Subgraph {attribute}…")
            entry.triggered.connect(
                lambda _c=False, a=attribute: create_subgraph(window, view, key, a)
            )

    window.canvas_menu_hooks.append(hook)
