"""The link half of the canvas scene: where nodes are drawn (the read-only positions table
and the geometry arrays), the link items and their paths, where links end on their nodes,
which links are drawn as stubs, and the layout's bend points.

:class:`SceneLinks` is the layer of :class:`~designer.ui.canvas.scene.CanvasScene` on
QGraphicsScene; CanvasScene adds the node items and their marks (``scene_marks``), building,
incremental updates and extent. A lazy scene builds link items as they come into view
(:meth:`SceneLinks.complete` builds the rest).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QGraphicsScene

from designer.core.document import Document
from designer.core.gcpause import gc_paused
from designer.core.scope import ScopeId
from designer.core.viewgraph import ViewEdge, ViewGraph
from designer.ui.canvas.items import EdgeItem, edge_path_xy
from designer.ui.canvas.lazy import LazyNodeItems, SceneGeometry, input_xy, output_xy
from designer.ui.canvas.placement import Point, long_links


class SceneLinks(QGraphicsScene):
    """Positions, geometry arrays and link items of one scope's drawing."""

    # Set by CanvasScene.__init__ (and kept up to date by the scene).
    doc: Document
    scope_id: ScopeId
    drawn_only: bool
    graph: ViewGraph
    node_items: LazyNodeItems
    lazy: bool
    routes: dict[tuple[int, int], list[Point]]
    proxied: dict[int, str]
    stubbed: dict[tuple[int, int], str]
    long_links: set[ViewEdge]
    stub_sources: dict[str, int]
    _edge_items: dict[ViewEdge, EdgeItem]
    _geometry: SceneGeometry | None

    # --- positions and geometry -----------------------------------------------------------
    @property
    def positions(self) -> Mapping[int, Point]:
        """The document's positions of this scope (read-only: see ``CanvasScene.set_positions``);
        while :attr:`drawn_only` (a quick expand or fold), exact for what is drawn only."""
        if self.drawn_only:
            return self.doc.drawn_positions(self.scope_id)
        return self.doc.positions.get(self.scope_id, {})

    def geometry(self) -> SceneGeometry:
        """Boxes and link ends as arrays (built on demand, kept up to date by moves)."""
        if self._geometry is None:
            with gc_paused():
                self._geometry = SceneGeometry(
                    self.node_items.views,
                    self.node_items.sizes,
                    self.positions,
                    self._drawn_links(),
                    self.routes,
                )
        return self._geometry

    def _drawn_links(self) -> list[ViewEdge]:
        """The links drawn as links (not stubs, not from a proxied input, both ends drawn)."""
        views, proxied, stubbed, long_links = (
            self.node_items.views,  # (a dict: its membership test runs in C)
            self.proxied,
            self.stubbed,
            self.long_links,
        )
        # (cheap int tests first: hashing a tuple per link costs 0.1 s at 100k)
        stub_sources = {key for key, _slot in stubbed}
        long_sources = {e.source for e in long_links} if long_links else set()
        return [
            e
            for e in self.graph.edges
            if e.source in views
            and e.target in views
            and e.source not in proxied
            and not (e.source in stub_sources and (e.source, e.source_index) in stubbed)
            and not (e.source in long_sources and e in long_links)
        ]

    # --- link items -----------------------------------------------------------------------
    @property
    def edge_items(self) -> dict[ViewEdge, EdgeItem]:
        """Link items by link; complete (a lazy scene builds the missing ones first)."""
        if self.lazy:
            self.complete()
        return self._edge_items

    @property
    def edges_pending(self) -> bool:
        """Whether some drawn links have no item yet (a lazy scene)."""
        return self.lazy and len(self._edge_items) < len(self.geometry().edges)

    @property
    def built_edge_items(self) -> dict[ViewEdge, EdgeItem]:
        """The link items built so far (queued links left out; see :attr:`edge_items`)."""
        return self._edge_items

    def complete(self) -> None:
        """Build every link item not built yet (export and whole-scene operations)."""
        if self.lazy:
            with gc_paused():
                self._add_edges(self.geometry().edges)

    def _add_edges(self, edges: Iterable[ViewEdge]) -> None:
        built = self._edge_items
        for edge in edges:
            if edge in built or edge.source in self.proxied or self.is_stub(edge):
                continue
            if edge.source not in self.node_items or edge.target not in self.node_items:
                continue
            item = EdgeItem(edge)
            item.set_path(self._path_of(edge))
            self.addItem(item)
            self._edge_items[edge] = item

    def _drop_edge(self, edge: ViewEdge) -> None:
        item = self._edge_items.pop(edge, None)
        if item is not None:
            self.removeItem(item)

    def pending_links(self) -> list[tuple[ViewEdge, QPainterPath]]:
        """The drawn links that have no item yet, with the path each would get (the image
        export draws those without building 100k items)."""
        if not self.lazy:
            return []
        built = self._edge_items
        return [(e, self._path_of(e)) for e in self.geometry().edges if e not in built]

    def update_edges(
        self, keys: Iterable[int] | None = None, edges: list[ViewEdge] | None = None
    ) -> None:
        """Recompute the paths of links touching ``keys`` (a moved or resized node), or of
        ``edges`` when the caller knows them (a drag computes them once)."""
        built = self._edge_items
        for edge in edges if edges is not None else self.edges_touching(keys or ()):
            item = built.get(edge)
            if item is not None:  # (a lazy scene builds the others with their new path)
                item.set_path(self._path_of(edge))

    # --- link ends ------------------------------------------------------------------------
    def _path_of(self, edge: ViewEdge) -> QPainterPath:
        x0, y0 = self.output_point(edge.source, edge.source_index)
        x1, y1 = self.input_point(edge.target, edge.target_index)
        return edge_path_xy(x0, y0, x1, y1, self.routes.get((edge.source, edge.target), ()))

    def output_point(self, key: int, slot: int) -> tuple[float, float]:
        """Where a link leaves output ``slot`` of node ``key`` (its item's, when built: a
        dragged item is ahead of the document)."""
        item = self.node_items.built.get(key)
        if item is not None:
            return item.output_xy(slot)
        nodes = self.node_items
        return output_xy(self.positions[key], nodes.size(key), nodes.view(key), slot)

    def input_point(self, key: int, slot: int) -> tuple[float, float]:
        item = self.node_items.built.get(key)
        if item is not None:
            return item.input_xy(slot)
        nodes = self.node_items
        return input_xy(self.positions[key], nodes.size(key), nodes.view(key), slot)

    def edges_touching(self, keys: Iterable[int]) -> list[ViewEdge]:
        """Links drawn to or from nodes ``keys`` (built or not)."""
        if self.lazy:
            geo = self.geometry()
            return [geo.edges[r] for r in geo.touching(keys)]
        chosen = keys if isinstance(keys, set | frozenset | dict) else set(keys)
        if not chosen:
            return []
        return [e for e in self._edge_items if e.source in chosen or e.target in chosen]

    # --- stubs and routes -----------------------------------------------------------------
    def _set_stubs(
        self, stubbed: dict[tuple[int, int], str], sizes: dict[int, tuple[float, float]]
    ) -> None:
        """Which links are stubs: outputs read widely, and links that are too long as laid
        out now (decided when the scene is built, and again when one box opens or folds;
        moving nodes later changes neither)."""
        self.stubbed = stubbed
        self.long_links = set()
        self.restub_long_links(sizes)

    def restub_long_links(self, sizes: Mapping[int, tuple[float, float]]) -> set[ViewEdge]:
        """Decide again which links of the (new) graph are too long, at the positions as
        they are now, as :meth:`_set_stubs` does when the scene is built: an incremental
        expand or fold then draws what a full rebuild would (links its nodes made long
        are stubs, links it shortened are links again). Returns the links whose status
        changed (in the graph before or now); O(links)."""
        stubbed = self.stubbed
        new = long_links(
            self.graph,
            self.positions,
            sizes,
            lambda e: e.source in self.proxied or (e.source, e.source_index) in stubbed,
        )
        changed = new ^ self.long_links
        self.long_links = new
        self.stub_sources = {tensor: key for (key, _slot), tensor in stubbed.items()}
        self.stub_sources.update({e.tensor: e.source for e in new})
        return changed

    def is_stub(self, edge: ViewEdge) -> bool:
        """Whether ``edge`` is drawn as a stub above its reader (not as a link)."""
        return (edge.source, edge.source_index) in self.stubbed or edge in self.long_links

    def forget_routes(self, keys: Iterable[int]) -> None:
        """Links of moved nodes no longer follow the layout's bend points."""
        if self.routes:
            for edge in self.edges_touching(keys):
                self.routes.pop((edge.source, edge.target), None)

    def set_routes(self, routes: dict[tuple[int, int], list[Point]]) -> None:
        self.routes = dict(routes)
        self._geometry = None
        self.update_edges(edges=list(self._edge_items))
