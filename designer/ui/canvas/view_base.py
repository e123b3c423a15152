"""The canvas view's foundation: its signals, its state, and how it follows the document.

:class:`~designer.ui.canvas.view.CanvasView` is built in typed layers, each using only what
the layers below it define (no untyped ``self``, no protocol guesses)::

    QGraphicsView
      NavigationMixin   zoom, pan, box zoom, fit (shared with the engine view)
        CanvasViewBase  signals, session/scope/scene, layout jobs, following the document
          InteractionMixin  gestures: link drags, node moves, subgraph buttons, tooltips
            CanvasView      editing commands, settings, Qt event overrides

The view follows ``session.changed`` to keep the scene in step (coalesced: several events of
one compound edit cause one refresh); POSITIONS events move items without a refresh.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QGraphicsView, QWidget

from designer.core.document import ChangeKind, DocumentEvent
from designer.core.gcpause import gc_paused
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.viewgraph import ViewEdge, ViewGraph
from designer.ui.canvas import controller
from designer.ui.canvas.collapse_view import member_keys, member_moves
from designer.ui.canvas.items import EdgeItem, NodeItem
from designer.ui.canvas.layout_job import LayoutJob
from designer.ui.canvas.navigation import NavigationMixin
from designer.ui.canvas.overview import OverviewController
from designer.ui.canvas.placement import (
    Placement,
    grid_placement,
    layout_graph,
    needs_full_layout,
)
from designer.ui.canvas.scene import CanvasScene
from designer.ui.canvas.settings import CanvasSettings
from designer.ui.session import DocumentSession


class CanvasViewBase(NavigationMixin):
    """The canvas of ``scope_id`` of the session's document: state and document following."""

    selectionChanged = Signal(list)  # node keys selected (op nodes and IO pseudo-nodes)
    statusMessage = Signal(str)
    subgraphRequested = Signal(int, str, int)  # node key, attribute, index
    functionRequested = Signal(object)  # (domain, name, overload) of a local function
    layoutBusy = Signal(bool)
    layoutProgress = Signal(float)  # 0..1 while a layout runs off the GUI thread
    viewChanged = Signal()  # zoomed, scrolled or resized (the Overview window follows)

    def __init__(
        self,
        session: DocumentSession,
        scope_id: ScopeId = MAIN_SCOPE,
        settings: CanvasSettings | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.scope_id = scope_id
        self.settings = settings or CanvasSettings()
        self.canvas = CanvasScene(
            session.doc,
            scope_id,
            show_constants=self.settings.show_constants,
            show_grid=self.settings.show_grid,
            parent=self,  # Qt deletes the scene with the view (no GC-order surprises)
        )
        self.overview = OverviewController(self)
        self.setScene(self.canvas)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.ItemSelectionMode.IntersectsItemShape)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.PreventContextMenu)
        self.setMouseTracking(True)
        self.job: LayoutJob | None = None
        self._pending = False  # a refresh is scheduled
        self._model_pending = False
        self._fit_pending = True
        self._selection_pending = False
        self._legend: tuple[int, list[tuple[str, QColor]]] | None = None
        self._opened = False  # the first _open has run
        self._drawn = False  # the first layout off the GUI thread has been drawn
        session.changed.connect(self._on_changed)
        session.checked.connect(self.canvas.set_check_result)
        self.canvas.selectionChanged.connect(self._schedule_selection)
        self._open()

    # --- selection ------------------------------------------------------------------------
    def _schedule_selection(self) -> None:
        if not self._selection_pending:
            self._selection_pending = True
            QTimer.singleShot(0, self._emit_selection)

    def _emit_selection(self) -> None:
        self._selection_pending = False
        self.selectionChanged.emit(self.selected_keys())

    def selected_keys(self) -> list[int]:
        """Node keys selected (a collapsed group's box stands for the nodes inside it)."""
        keys = [i.key for i in self.canvas.selectedItems() if isinstance(i, NodeItem)]
        return member_keys(self.canvas, keys) if self.canvas.collapsed else keys

    def selected_edges(self) -> list[ViewEdge]:
        return [i.edge for i in self.canvas.selectedItems() if isinstance(i, EdgeItem)]

    # --- opening and layout -------------------------------------------------------------
    def _open(self, purpose: str = "open") -> None:
        # Paused: the collector would otherwise walk the fresh 100k-node graph (about a
        # second in collections at that size) while the sizes and the empty scene are made;
        # what the first open makes is frozen after (designer.core.gcpause).
        first, self._opened = not self._opened, True
        with gc_paused(freeze=first):
            self._open_paused(purpose)

    def _open_paused(self, purpose: str) -> None:
        graph = self.canvas.build_graph()
        if not needs_full_layout(graph, self.canvas.positions):
            self.canvas.rebuild(graph)
        elif len(graph.nodes) > self.settings.async_layout_nodes:
            self.canvas.rebuild(graph.__class__(graph.scope, [], []))
            self._start_job(graph, purpose)
        else:
            sizes = self.canvas.sizes(graph)
            self.canvas.rebuild(graph, layout_graph(graph, sizes), sizes)
        self.canvas.set_check_result(self.session.check_result)
        self._fit_pending = True
        self._fit_if_shown()

    def _start_job(self, graph: ViewGraph, purpose: str) -> None:
        self.cancel_layout()
        job = LayoutJob(graph, self.canvas.sizes(graph), purpose)
        job.progress.connect(self.layoutProgress)
        job.finished.connect(lambda placement, j=job: self._job_done(j, placement))
        job.cancelled.connect(lambda j=job: self._job_done(j, None))
        job.failed.connect(lambda message, j=job: self._job_failed(j, message))
        self.job = job
        self.layoutBusy.emit(True)
        self.statusMessage.emit(f"Laying out {len(job.graph.nodes):,} nodes…")
        job.start()

    def _job_done(self, job: LayoutJob, placement: Placement | None) -> None:
        if job is not self.job:
            return
        self.job = None
        self.layoutBusy.emit(False)
        if self._pending and job.purpose != "open":  # edits made while the layout ran
            QTimer.singleShot(0, self.flush)
        if job.purpose == "open":
            if placement is None:  # cancelled: a plain grid, so the model is still usable
                placement = grid_placement(job.graph, job.sizes)
                self.statusMessage.emit("Layout cancelled; nodes placed on a grid")
            else:
                self.statusMessage.emit(f"Laid out in {job.seconds:.1f} s")
            first, self._drawn = not self._drawn, True
            with gc_paused(freeze=first):  # (the first drawing: see _open)
                if self._pending:  # the document changed meanwhile: draw what it is now
                    self._pending = self._model_pending = False
                    self.canvas.rebuild(self.canvas.build_graph(), placement)
                else:
                    self.canvas.rebuild(job.graph, placement, job.sizes)
            self.canvas.set_check_result(self.session.check_result)
            self._fit_pending = True
            self._fit_if_shown()
        elif job.purpose == "expand-all":
            if placement is None:
                self.statusMessage.emit("Expand All cancelled; the modules stay collapsed")
            elif self._pending:
                self.statusMessage.emit("The model changed while it was laid out: expand again")
            else:
                from designer.ui.canvas.expand_all import place_expanded

                place_expanded(self, job.graph, placement)  # type: ignore[arg-type]
                self.statusMessage.emit(f"Expanded and laid out in {job.seconds:.1f} s")
        elif placement is not None:
            self._apply_arrangement(placement)
        else:
            self.statusMessage.emit("Arrange cancelled")

    def _job_failed(self, job: LayoutJob, message: str) -> None:
        if job is self.job:
            self.job = None
            self.layoutBusy.emit(False)
            self.statusMessage.emit(message)
            if job.purpose == "open":
                self.canvas.rebuild(None, grid_placement(job.graph, job.sizes))

    def wait_for_layout(self, timeout_ms: int = 60_000) -> bool:
        """Block (processing events) until a running layout ends; True if none is left."""
        from PySide6.QtCore import QCoreApplication, QDeadlineTimer

        deadline = QDeadlineTimer(timeout_ms)
        while self.job is not None and not deadline.hasExpired():
            QCoreApplication.processEvents()
            time.sleep(0.005)  # let the layout thread have the GIL
        return self.job is None

    def start_expand_all(self, graph: ViewGraph) -> None:
        """Lay ``graph`` (the view with nothing collapsed) out off the GUI thread; when it
        ends, :func:`designer.ui.canvas.expand_all.place_expanded` draws it."""
        self._start_job(graph, "expand-all")

    def arrange_nodes(self) -> None:
        """Lay the whole graph out again as ONE undoable move (off-thread when large)."""
        self.flush()
        graph = self.canvas.graph
        if len(graph.nodes) > self.settings.async_layout_nodes:
            self._start_job(graph, "arrange")
            return
        self._apply_arrangement(layout_graph(graph, self.canvas.sizes(graph)))

    def _apply_arrangement(self, placement: Placement) -> None:
        changed = {
            k: p for k, p in placement.positions.items() if self.canvas.positions.get(k) != p
        }
        if self.canvas.collapsed:  # a group box moves the nodes inside it
            changed = member_moves(self.canvas, changed)
        if changed:
            self.session.push(controller.move_edit(self.scope_id, changed, "Arrange nodes"))
        self.canvas.set_routes(placement.routes)
        self.fit_to_view()

    def cancel_layout(self) -> None:
        if self.job is not None:
            self.job.cancel()

    # --- following the document ----------------------------------------------------------
    def _on_changed(self, event: DocumentEvent) -> None:
        if event.kind == ChangeKind.SAVED:
            return
        if event.scope is not None and not self._concerns(event.scope):
            return
        if event.kind == ChangeKind.POSITIONS and self.canvas.writing_positions:
            return  # the scene wrote them and draws them itself
        if event.kind == ChangeKind.POSITIONS and not self._pending:
            self.canvas.positions_changed(event.node_keys)
            self.overview.invalidate()
            return
        self._model_pending |= event.kind == ChangeKind.MODEL
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self.flush)

    def _concerns(self, scope: ScopeId) -> bool:
        return scope == self.scope_id or self.scope_id.is_within(scope)

    def flush(self) -> None:
        """Apply pending document changes to the scene now (normally done on the next
        event-loop turn, so that one compound edit causes one refresh)."""
        if not self._pending or self.job is not None:
            return
        self._pending = False
        try:
            if self._model_pending:
                self._model_pending = False
                self._open()
            else:
                self.canvas.refresh()
                self.canvas.positions_changed(self.canvas.node_items)
        except KeyError:  # the scope itself is gone (its node was deleted); the tab closes
            self.canvas.rebuild(self.canvas.graph.__class__(self.scope_id, [], []))
        self.overview.invalidate()

    def _fit_if_shown(self) -> None:
        if self._fit_pending and self.isVisible() and self.job is None:
            self._fit_pending = False
            self.show_first_view()

    def _view_changed(self) -> None:
        super()._view_changed()
        self.materialize_visible()
        self.viewChanged.emit()

    def materialize_visible(self) -> None:
        """Have the items of what the view shows (and around it) built: a big scene builds
        them as they come into view (designer.ui.canvas.lazy)."""
        if self.scene() is self.canvas:
            self.canvas.materialize(self.mapToScene(self.viewport().rect()).boundingRect())

    def drawBackground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        # Every paint is covered, also after a transform set without _view_changed (items
        # added here are drawn in this same paint: the scene indexes them before drawing).
        if self.canvas.lazy:
            self.materialize_visible()
        super().drawBackground(painter, rect)
