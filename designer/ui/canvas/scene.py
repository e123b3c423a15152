"""The canvas scene of one graph scope: one item per node and per link, kept in step with
the Document incrementally (a changed node updates its item and its links; only a MODEL
change rebuilds everything). The scene reads the document and never changes the model.
A scene of more than LAZY_NODES nodes builds its items only as they come into view or are
looked up (designer.ui.canvas.lazy); its boxes and links are arrays (:meth:`geometry`).

Positions live in ``doc.positions[scope]`` (top-left corners); the scene reads them through
the read-only :attr:`CanvasScene.positions`. Nodes without one get a quick placement next to
their neighbours, written with :meth:`CanvasScene.set_positions` (``Document.set_positions``:
view state like a companion-file load, not an undo step, but notified as a POSITIONS event
like every move).

The scene is built in layers (as the canvas view is, see designer.ui.canvas.view_base)::

    QGraphicsScene
      SceneLinks      positions, geometry arrays, link items and paths, stubs, routes
                      (designer.ui.canvas.scene_links)
        CanvasScene   state, node items, building, incremental updates, extent, background;
                      mixes in SceneMarks: input tags, problem icons, overlays of node items
                      (designer.ui.canvas.scene_marks, no Qt base)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from PySide6.QtCore import QObject, QRect, QRectF
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from designer.core.document import Document
from designer.core.focus import is_stub_key
from designer.core.gcpause import gc_paused
from designer.core.hierarchy import Hierarchy
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.viewgraph import ViewEdge, ViewGraph, build_view_graph
from designer.ui.canvas import style as st
from designer.ui.canvas.collapse_view import collapsed_graph
from designer.ui.canvas.grid import draw_grid
from designer.ui.canvas.items import EdgeItem, NodeItem
from designer.ui.canvas.lazy import LazyNodeItems, SceneGeometry
from designer.ui.canvas.placement import (
    Placement,
    Point,
    place_missing,
    proxied_inputs,
    stubbed_outputs,
)
from designer.ui.canvas.scene_links import SceneLinks
from designer.ui.canvas.scene_marks import SceneMarks

MARGIN = 400.0


#: Room around node boxes for terminals, problem icons and proxy tags.
CONTENT_PAD = 40.0

#: Scenes with more drawable nodes than this build node and link items as they come into
#: view (designer.ui.canvas.lazy); a zoomed-out view shows the overview, drawn from arrays.
LAZY_NODES = 2_000

#: How far around the visible area items are built ahead (a share of its width and height).
AHEAD = 0.5


class CanvasScene(SceneMarks, SceneLinks):
    """Items for ``doc``'s scope ``scope_id``; call :meth:`rebuild` once positions exist."""

    def __init__(
        self,
        doc: Document,
        scope_id: ScopeId = MAIN_SCOPE,
        *,
        show_constants: bool = False,
        show_grid: bool = True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.doc = doc
        self.scope_id = scope_id
        self.show_constants = show_constants
        self.show_grid = show_grid
        self.grid_color = st.GRID
        self.background = st.BACKGROUND
        self.graph = ViewGraph(scope_id, [], [])
        self.node_items = LazyNodeItems(self._make_item)
        self._edge_items: dict[ViewEdge, EdgeItem] = {}
        #: True when items are built as they come into view (more than LAZY_NODES nodes)
        self.lazy = False
        self._geometry: SceneGeometry | None = None
        #: The area the view shows (set by the view): items there exist after every change
        self.visible_hint: QRectF | None = None
        self._tags: dict[int, list[tuple[int, str, bool]]] = {}  # see _set_tags
        self._ahead: tuple[int, QRectF] | None = None  # (generation, area) built last
        self._full_graph: tuple[tuple[int, bool, frozenset[str]], ViewGraph] | None = None
        self.routes: dict[tuple[int, int], list[Point]] = {}
        self.proxied: dict[int, str] = {}
        # Outputs (node key, output index) → tensor drawn as a stub above each reader; and
        # the producer of each stubbed tensor (a click on a stub jumps there).
        self.stubbed: dict[tuple[int, int], str] = {}
        self.long_links: set[ViewEdge] = set()  # links too long to draw: stubs as well
        self.stub_sources: dict[str, int] = {}
        self.pinned_outer: set[str] = set()  # outer-scope values shown even when unused
        self._problems: dict[int, tuple[int, str]] = {}
        self._overlay: dict[int, tuple[float, str]] = {}  # key -> (heat 0..1, label)
        self._overlay_fills: dict[int, QColor] = {}  # comparison overlay colours
        self.generation = 0  # bumped on every geometry change (the overview cache key)
        self._content: QRectF | None = None  # cached content_rect
        #: True while this scene writes positions itself (it draws them as it goes)
        self.writing_positions = False
        # Collapse bookkeeping (designer.ui.canvas.collapse_view): the uncollapsed graph the
        # drawing came from and the collapsed graph derived from it, the graph being
        # collapsed right now, and the module groups with the graph they were built for.
        self.collapse_full: ViewGraph | None = None
        self.collapse_derived: ViewGraph | None = None
        self.collapse_building: ViewGraph | None = None
        self.collapse_hierarchy: tuple[ViewGraph, Hierarchy] | None = None
        #: True while collapse_view opens or folds one box quickly: positions of the nodes
        #: hidden in the boxes below move later (``Document.defer_shift``)
        self.drawn_only = False
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)

    # --- building --------------------------------------------------------------------------
    def build_all(self) -> None:
        """Build every node and link item (select all, whole-scene operations)."""
        self.build_nodes()
        self.complete()

    def build_nodes(self) -> None:
        """Build every node item of a lazy scene (an image export draws them all)."""
        if self.lazy:
            built = self.node_items.built
            with gc_paused():
                for key in self.node_items:
                    if key not in built:
                        self._make_item(key)

    def materialize(self, rect: QRectF | None) -> None:
        """Build the node and link items of a lazy scene in ``rect`` and around it (the
        view calls this with its visible area whenever it changes)."""
        if rect is not None:
            self.visible_hint = QRectF(rect)
        if not self.lazy or rect is None or rect.isEmpty():
            return
        done = self._ahead
        if done is not None and done[0] == self.generation and done[1].contains(rect):
            return  # built already (every paint asks)
        dx, dy = rect.width() * AHEAD, rect.height() * AHEAD
        area = rect.adjusted(-dx, -dy, dx, dy)
        self._ahead = (self.generation, area)
        geo = self.geometry()
        built, keys = self.node_items.built, geo.keys
        links = self._edge_items
        with gc_paused():
            for row in geo.boxes_in(area).tolist():
                key = keys[row]
                if key not in built:
                    self._make_item(key)
            edges = geo.edges
            self._add_edges(
                [edges[r] for r in geo.links_in(area).tolist() if edges[r] not in links]
            )

    def _make_item(self, key: int) -> NodeItem:
        """Build the item of drawable node ``key`` where the document places it."""
        nodes = self.node_items
        item = NodeItem(nodes.view(key), nodes.size(key))
        item.setPos(*self.positions[key])
        if is_stub_key(key):  # a focused group's border stub is a label, not a node
            item.setFlags(QGraphicsItem.GraphicsItemFlag(0))
        tags = self._tags.get(key)
        if tags:
            item.set_tags(tags)
        problem = self._problems.get(key)
        if problem is not None:
            item.set_problem(*problem)
        if key in self._overlay:
            heat, label = self._overlay[key]
            item.set_heat(heat, label, self._overlay_fills.get(key))
        self.addItem(item)
        nodes.built[key] = item
        return item

    @property
    def collapsed(self) -> set[str]:
        """Ids of the module groups drawn as one box (view state kept by the document and
        saved in its layout file)."""
        return self.doc.collapsed.get(self.scope_id, set())

    @collapsed.setter
    def collapsed(self, ids: set[str]) -> None:
        if ids:
            self.doc.collapsed[self.scope_id] = set(ids)
        else:
            self.doc.collapsed.pop(self.scope_id, None)

    def set_positions(self, table: Mapping[int, Point], *, replace: bool = False) -> None:
        """Write positions that are view state, not an undo step (a layout, boxes of
        collapsed modules): through ``Document.set_positions``, so every listener is told."""
        self.writing_positions = True
        try:
            self.doc.set_positions(
                self.scope_id, table, replace=replace, keep_deferred=self.drawn_only
            )
        finally:
            self.writing_positions = False

    def build_graph(self) -> ViewGraph:
        # A big graph is built once per change of the model: collapsing it after the first
        # layout, or redrawing it, reuses it (and the module groups cached on it).
        key = (self.doc.content_revision, self.show_constants, frozenset(self.pinned_outer))
        if self._full_graph is not None and self._full_graph[0] == key:
            graph = self._full_graph[1]
        else:
            graph = build_view_graph(
                self.doc,
                self.scope_id,
                show_constants=self.show_constants,
                pinned_outer=self.pinned_outer,
            )
            self._full_graph = (key, graph) if len(graph.nodes) > LAZY_NODES else None
        # a focused group alone, module scopes drawn as one box each (view state)
        return collapsed_graph(self, graph)

    def sizes(self, graph: ViewGraph) -> dict[int, tuple[float, float]]:
        return st.node_sizes(graph.nodes)

    def rebuild(
        self,
        graph: ViewGraph | None = None,
        placement: Placement | None = None,
        sizes: dict[int, tuple[float, float]] | None = None,
    ) -> None:
        """Drop every item and build the scene from ``graph`` (built now if None).

        ``placement`` (a fresh layout) is written to the document's positions first;
        ``sizes`` are the node sizes when the caller computed them already."""
        with gc_paused():
            self.clear_items()
            self.graph = graph if graph is not None else self.build_graph()
            if sizes is None:
                sizes = self.sizes(self.graph)
            if placement is not None:
                self.set_positions(placement.positions)
                self.routes = placement.routes
            self._place_missing(sizes)
            self.proxied = proxied_inputs(self.graph)
            self._set_stubs(stubbed_outputs(self.graph), sizes)
            proxied, nodes = self.proxied, self.node_items
            nodes.register_all((n for n in self.graph.nodes if n.key not in proxied), sizes)
            self.lazy = len(nodes) > LAZY_NODES
            self._set_tags(self.graph.edges)
            if not self.lazy:  # every item now (each with its tags, problem and overlay)
                for key in nodes.views:
                    self._make_item(key)
                self._add_edges(self.graph.edges)
            self.update_scene_rect()
            self.generation += 1
            self.materialize(self.visible_hint)

    def clear_items(self) -> None:
        """Drop every item and what is known of the drawn nodes (a rebuild starts here)."""
        self.clearSelection()
        for item in [*self.node_items.built.values(), *self._edge_items.values()]:
            self.removeItem(item)
        self.node_items.clear()
        self._edge_items.clear()
        self._tags = {}
        self._geometry = None

    def _place_missing(self, sizes: dict[int, tuple[float, float]]) -> None:
        self.set_positions(place_missing(self.graph, self.positions, sizes))

    # --- incremental updates --------------------------------------------------------------
    def refresh(self) -> set[int]:
        """Bring the items in line with the document (nodes, links, terminals, names).

        Rebuilds the view graph (O(n)) and touches only items that changed; returns the keys
        of node items added, removed or changed."""
        with gc_paused():
            return self.refresh_to(self.build_graph())

    def refresh_to(self, new: ViewGraph, *, restub: bool = False) -> set[int]:
        """Bring the items in line with ``new``, a view graph the caller built (one module
        group opened or folded: designer.ui.canvas.collapse_view.switch_collapsed).

        ``restub``: decide again which links are too long, at the positions as they are
        now (what a full rebuild does; an opened box makes links long, a folded one makes
        them short). Otherwise a link keeps its stub or link status, and new links are
        links (an edit: moving nodes never turns links into stubs)."""
        with gc_paused():
            old = self.graph
            old_nodes = {n.key: n for n in old.nodes}
            new_nodes = {n.key: n for n in new.nodes}
            proxied = proxied_inputs(new)
            if proxied != self.proxied or stubbed_outputs(new) != self.stubbed:
                self.rebuild(new)
                return set(old_nodes) | set(new_nodes)
            self.graph = new
            if not restub:
                self.long_links &= set(new.edges)
            sizes = st.node_sizes(
                n for k, n in new_nodes.items() if k not in proxied and old_nodes.get(k) != n
            )
            self._place_missing_keys(sizes)
            changed: set[int] = set()
            for key in old_nodes.keys() - new_nodes.keys():
                item = self.node_items.pop(key, None)
                if item is not None:
                    self.removeItem(item)
                changed.add(key)
            nodes = self.node_items
            built = nodes.built
            for key, size in sizes.items():
                item = built.get(key)
                nodes.register(new_nodes[key], size)
                if item is not None:
                    item.set_view(new_nodes[key], size)
                elif not self.lazy:
                    self._make_item(key)
                changed.add(key)
            self._geometry = None
            old_edges, new_edges = set(old.edges), set(new.edges)
            gone = old_edges - new_edges
            restubbed = self.restub_long_links(nodes.sizes) if restub else set()
            for edge in gone | restubbed:  # (a link that became a stub loses its item)
                self._drop_edge(edge)
            added = [e for e in new.edges if e not in old_edges]
            unstubbed = [e for e in restubbed if e in new_edges and e in old_edges]
            if not self.lazy:  # a lazy scene builds what is in view below
                self._add_edges(added + unstubbed)  # (stubs are skipped)
            # every node whose links in, or their stub status, changed is tagged again from
            # all of its links: a box below an opened one keeps the stubs of its other links
            retag = changed | {e.target for e in gone} | {e.target for e in restubbed}
            retag.update(e.target for e in added)
            self._set_tags([e for e in new.edges if e.target in retag], clear=retag)
            self.update_edges(changed)
            self._apply_problems({k: built[k] for k in changed if k in built})
            self._apply_overlay({k: built[k] for k in changed if k in built})
            self.update_scene_rect()
            self.generation += 1
            self.materialize(self.visible_hint)
            return changed

    def _place_missing_keys(self, sizes: dict[int, tuple[float, float]]) -> None:
        if any(k not in self.positions for k in sizes):
            full = st.node_sizes(n for n in self.graph.nodes if n.key not in self.proxied)
            full.update(sizes)
            self.set_positions(place_missing(self.graph, self.positions, full))

    def positions_changed(self, keys: Iterable[int]) -> None:
        """Move items to the document's positions of ``keys`` (after MoveNodes or undo)."""
        table = self.positions
        built = self.node_items.built
        geo = self._geometry
        moved = []
        for key in keys:
            pos = table.get(key)
            if pos is None:
                continue
            x, y = pos
            item = built.get(key)
            if item is not None:
                if item.pos().x() != x or item.pos().y() != y:
                    item.setPos(x, y)
                    moved.append(key)
            elif geo is not None and key in geo.rows:  # not built: compare with its row
                row = geo.rows[key]
                if geo.boxes[row, 0] != x or geo.boxes[row, 1] != y:
                    moved.append(key)
        if not moved:
            return
        self.forget_routes(moved)
        if geo is not None:
            if len(moved) > len(geo.keys) // 4:
                self._geometry = None  # cheaper to measure again than to patch
            else:
                geo.move(table, moved)
        self.update_edges(moved)
        self.update_scene_rect()
        self.generation += 1
        self.materialize(self.visible_hint)

    # --- extent and background ---------------------------------------------------------------
    def content_rect(self) -> QRectF:
        """Bounding box of all nodes (padded for terminals and proxies) and link bend points,
        as of the last :meth:`update_scene_rect` (which every change of the drawing calls)."""
        if self._content is None:
            self._content = self._measure_content()
        return QRectF(self._content)

    def _measure_content(self) -> QRectF:
        """Computed from the positions table and node sizes with numpy: asking 100k items for
        their scene bounding rects costs over half a second."""
        if not self.node_items:
            return QRectF()
        geo = self.geometry()
        xy, wh = geo.boxes[:, :2], geo.boxes[:, 2:]
        pad = CONTENT_PAD
        left, top = float(xy[:, 0].min()) - pad, float(xy[:, 1].min()) - pad
        right = float((xy[:, 0] + wh[:, 0]).max()) + pad
        bottom = float((xy[:, 1] + wh[:, 1]).max()) + pad
        if len(geo.edges):  # bend points widen it by 40 (a link's own ends lie on its boxes)
            left = min(left, float(geo.lo[:, 0].min()) - 40.0)
            right = max(right, float(geo.hi[:, 0].max()) + 40.0)
        return QRectF(left, top, right - left, bottom - top)

    def update_scene_rect(self) -> None:
        self._content = None
        rect = self.content_rect()
        if rect.isNull():
            rect = QRectF(0, 0, 800, 600)
        self.setSceneRect(rect.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN))

    def drawBackground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        painter.fillRect(rect, self.background)
        if self.show_grid:
            draw_grid(painter, QRectF(rect), self.grid_color)
