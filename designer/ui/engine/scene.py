"""The canvas scene of an engine graph: the model canvas's scene (extent, background, grid,
link paths, export) filled from an :class:`EngineViewGraph` instead of a Document.

The engine graph is read-only, so the scene is built once (:meth:`EngineScene.show`) and
never refreshed incrementally; positions come from the canvas's layered layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from PySide6.QtCore import QObject

from designer.activities.reports.engine_view import EngineViewGraph
from designer.core.document import Document
from designer.core.gcpause import gc_paused
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.viewgraph import ViewEdge, ViewGraph
from designer.ui.canvas import style as st
from designer.ui.canvas.placement import Placement, Point, layout_graph, proxied_inputs
from designer.ui.canvas.scene import CanvasScene
from designer.ui.engine.items import EngineEdgeItem, EngineNodeItem

#: Widest layer box (scene units); longer names are elided in the middle.
MAX_WIDTH = 440.0


@dataclass
class EngineSource:
    """What the canvas scene reads of its document: a title path and the positions table
    (the engine has no ONNX model; this is all the scene and the image export need)."""

    path: Path | None
    positions: dict[ScopeId, dict[int, Point]] = field(default_factory=dict)

    def set_positions(
        self,
        scope_id: ScopeId,
        table: Mapping[int, Point],
        *,
        replace: bool = False,
        keep_deferred: bool = False,
    ) -> None:
        """As ``Document.set_positions`` (the scene writes its layout through it); nothing
        listens to an engine's positions, so no event. An engine graph has no collapsed
        boxes, so no deferred shifts either: ``keep_deferred`` changes nothing here."""
        current = self.positions.setdefault(scope_id, {})
        if replace:
            current.clear()
        current.update(table)

    def drawn_positions(self, scope_id: ScopeId) -> dict[int, Point]:
        """As ``Document.drawn_positions``: with no deferred shifts, the table itself."""
        return self.positions.get(scope_id, {})


class EngineScene(CanvasScene):
    """Items for one engine graph; call :meth:`show` with the graph to draw."""

    def __init__(self, path: Path | None, *, parent: QObject | None = None) -> None:
        # The scene only reads ``doc.positions`` and ``doc.path`` (see EngineSource).
        super().__init__(
            cast(Document, EngineSource(path)), MAIN_SCOPE, show_grid=True, parent=parent
        )
        self.engine = EngineViewGraph(ViewGraph(MAIN_SCOPE, [], []), {}, {}, "")

    def build_graph(self) -> ViewGraph:
        return self.engine.graph

    def sizes(self, graph: ViewGraph) -> dict[int, tuple[float, float]]:
        """Boxes fit the name and the caption up to MAX_WIDTH (wider than a model's nodes:
        fused layer names are long, and they are what the user reads)."""
        out = {}
        for node in graph.nodes:
            width, height = st.node_size(node)
            info = self.engine.info.get(node.key)
            text = st.text_width(node.name) + 2 * st.TEXT_PAD + 4
            if info is not None:
                text = max(text, st.text_width(info.caption, "type") + 2 * st.TEXT_PAD)
            out[node.key] = (max(width, min(MAX_WIDTH, text)), height)
        return out

    def show(self, engine: EngineViewGraph, placement: Placement | None = None) -> None:
        """Draw ``engine`` (laid out now unless ``placement`` is given). O(layers) items;
        the layout of a few hundred layers takes well under a second."""
        self.engine = engine
        graph = engine.graph
        sizes = self.sizes(graph)
        if placement is None:
            placement = layout_graph(graph, sizes)
        with gc_paused():
            self.clear_items()
            self.graph = graph
            self.set_positions(placement.positions, replace=True)
            self.routes = placement.routes
            self._place_missing(sizes)
            self.proxied = proxied_inputs(graph)
            for node in graph.nodes:
                if node.key in self.proxied:
                    continue
                item = EngineNodeItem(node, sizes[node.key], engine.info[node.key])
                item.setPos(*self.positions[node.key])
                self.addItem(item)
                # (the canvas scene's tables are typed with its own item classes; these items
                # offer the same attributes, see designer.ui.engine.items)
                self.node_items[node.key] = item  # type: ignore[assignment]
            self._add_edges(graph.edges)
            self._set_tags(graph.edges)
            self.update_scene_rect()
            self.generation += 1

    def _add_edges(self, edges: Iterable[ViewEdge]) -> None:
        for edge in edges:
            if edge.source in self.proxied:
                continue
            if edge.source not in self.node_items or edge.target not in self.node_items:
                continue
            item = EngineEdgeItem(edge, self.engine.precision.get(edge, "other"))
            item.set_path(self._path_of(edge))
            self.addItem(item)
            self._edge_items[edge] = item  # type: ignore[assignment]

    def refresh(self, graph: ViewGraph | None = None) -> set[int]:
        """Nothing to follow: an engine graph does not change once drawn."""
        return set()
