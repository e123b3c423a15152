"""CanvasView: the model canvas widget of one graph scope.

The view turns mouse gestures into intents and pushes the Edits the controller builds
through the session (one undo step each); it follows ``session.changed`` to keep the scene
in step (coalesced: several events of one compound edit cause one refresh).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSizeF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsView, QToolTip, QWidget

from designer.core.document import ChangeKind, DocumentEvent
from designer.core.errors import DesignerError
from designer.core.scope import MAIN_SCOPE, ScopeId
from designer.core.viewgraph import NodeKind
from designer.ui.canvas import controller, readable
from designer.ui.canvas.clipboard import copy_nodes, paste_edit
from designer.ui.canvas.collapse_view import (
    expand_group,
    expose_keys,
    full_graph,
    member_keys,
    member_moves,
)
from designer.ui.canvas.export import ExportOptions, render_scene_to_file
from designer.ui.canvas.interaction import InteractionMixin
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
from designer.ui.canvas.settings import NAVIGATION_HELP, CanvasSettings
from designer.ui.session import DocumentSession


class CanvasView(InteractionMixin, NavigationMixin, QGraphicsView):
    """The canvas of ``scope_id`` of the session's document (see the module docstring)."""

    selectionChanged = Signal(list)  # node keys selected (op nodes and IO pseudo-nodes)
    statusMessage = Signal(str)
    subgraphRequested = Signal(int, str, int)  # node key, attribute, index
    functionRequested = Signal(object)  # (domain, name, overload) of a local function
    layoutBusy = Signal(bool)
    layoutProgress = Signal(float)  # 0..1 while a layout runs off the GUI thread
    contextMenuRequested = Signal(QPoint, QPointF)  # global position, scene position
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
        session.changed.connect(self._on_changed)
        session.checked.connect(self.canvas.set_check_result)
        self.canvas.selectionChanged.connect(self._schedule_selection)
        self._open()

    # --- opening and layout -------------------------------------------------------------
    def _open(self, purpose: str = "open") -> None:
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

    def _start_job(self, graph: object, purpose: str) -> None:
        self.cancel_layout()
        job = LayoutJob(graph, self.canvas.sizes(graph), purpose)  # type: ignore[arg-type]
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
            if self._pending:  # the document changed meanwhile: draw what it is now
                self._pending = self._model_pending = False
                self.canvas.rebuild(self.canvas.build_graph(), placement)
            else:
                self.canvas.rebuild(job.graph, placement, job.sizes)
            self.canvas.set_check_result(self.session.check_result)
            self._fit_pending = True
            self._fit_if_shown()
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

    def selected_edges(self) -> list[object]:
        return [i.edge for i in self.canvas.selectedItems() if isinstance(i, EdgeItem)]

    def select_keys(self, keys: Iterable[int]) -> None:
        """Select nodes ``keys``, opening collapsed groups that hide any of them."""
        self.flush()
        if self.canvas.collapsed:
            keys = list(keys)
            expose_keys(self, keys)
        self.canvas.clearSelection()
        for key in keys:
            item = self.canvas.node_items.get(key)
            if item is not None:
                item.setSelected(True)

    def select_all(self) -> None:
        self.canvas.complete()
        path = QPainterPath()
        path.addRect(self.canvas.sceneRect())
        self.canvas.setSelectionArea(path)

    def center_on(self, key: int) -> None:
        item = self.canvas.node_items.get(key)
        if item is not None:
            self.centerOn(item)
            self._view_changed()

    # --- editing --------------------------------------------------------------------------
    def link_terminals(self, source: tuple[int, int], target: tuple[int, int]) -> bool:
        """Connect output (key, slot) to input (key, slot); True if the edit was pushed."""
        self.flush()
        result = self.session.check_result
        type_of = (lambda name: result.type_of(self.scope_id, name)) if result else None
        try:
            edit = controller.link_edit(
                self.session.doc, self.canvas.graph, source, target, type_of
            )
        except (DesignerError, KeyError) as exc:
            self.statusMessage.emit(f"Cannot link: {exc}")
            return False
        return self.session.push(edit)

    def pin_outer(self, name: str, at: QPointF | None = None) -> int:
        """Show outer-scope value ``name`` as a node (at ``at``) even while nothing reads it,
        so it can be linked by dragging; returns its key. A view setting, not an edit."""
        self.flush()
        key = self.session.doc.io_key(self.scope_id, "outer", name)
        if at is not None:
            self.canvas.positions[key] = (at.x(), at.y())
        self.canvas.pinned_outer.add(name)
        self._pending = True
        self.flush()
        return key

    def select_io(self, kind: str, name: str) -> None:
        """Select the graph input/output (``kind`` "input"/"output") named ``name``."""
        self.flush()
        self.select_keys([self.session.doc.io_key(self.scope_id, kind, name)])

    def delete_selection(self) -> None:
        """Delete selected nodes and links as one undo step (an outer-scope value node is
        unpinned and its consumers disconnected)."""
        self.flush()
        unpinned = self._unpin_selected()
        edit = controller.delete_edit(
            self.session.doc,
            full_graph(self.canvas),  # a selected group box stands for its nodes
            self.selected_keys(),
            self.selected_edges(),  # type: ignore[arg-type]
        )
        if edit is not None and self.session.push(edit):
            self.statusMessage.emit(edit.label)
        elif unpinned:
            self._pending = True
            self.flush()

    def _unpin_selected(self) -> bool:
        graph = self.canvas.graph
        names = {
            graph.node(k).outputs[0].tensor
            for k in self.selected_keys()
            if graph.has_node(k) and graph.node(k).kind == NodeKind.OUTER
        }
        self.canvas.pinned_outer -= names
        return bool(names)

    def copy_selection(self) -> bytes:
        return copy_nodes(self.session.doc, self.scope_id, self.selected_keys())

    def paste(self, data: bytes, at: QPointF | None = None) -> None:
        """Paste nodes copied by :meth:`copy_selection` (at ``at`` or the view's centre)."""
        self.flush()
        if at is None:
            at = self.mapToScene(self.viewport().rect().center()) - QPointF(60.0, 40.0)
        try:
            edit, adds = paste_edit(self.session.doc, self.scope_id, data, (at.x(), at.y()))
        except DesignerError as exc:
            self.statusMessage.emit(f"Cannot paste: {exc}")
            return
        if self.session.push(edit):
            self._pending = True
            self.flush()
            self.select_keys(a.key for a in adds if a.key is not None)

    def export_image(self, path: Path, options: ExportOptions) -> None:
        """Write the whole canvas to ``path`` (PNG, JPEG or SVG); raises DesignerError."""
        self.flush()
        message = render_scene_to_file(self.canvas, Path(path), options)
        if message:
            self.statusMessage.emit(message)

    # --- settings ---------------------------------------------------------------------------
    def set_show_grid(self, on: bool) -> None:
        self.settings.show_grid = self.canvas.show_grid = on
        self.canvas.invalidate(self.canvas.sceneRect(), self.canvas.SceneLayer.BackgroundLayer)
        self.overview.invalidate()

    def set_show_constants(self, on: bool) -> None:
        if on == self.canvas.show_constants:
            return
        self.settings.show_constants = self.canvas.show_constants = on
        self._pending = True
        self.flush()

    def set_overlay(self, shares: dict[int, float] | None) -> None:
        """Colour nodes by their share of profiled time (node key -> 0..1); None clears."""
        self.flush()
        self.canvas.set_overlay(shares)
        self.overview.invalidate()

    def set_diff_overlay(self, changes: dict[int, tuple[float, str]] | None) -> None:
        """Colour nodes by how much faster (green) or slower (red) a second run was
        (node key -> (change -1..1, label)); None clears."""
        self.flush()
        self.canvas.set_diff_overlay(changes)
        self.overview.invalidate()

    def settings_help(self) -> str:
        return NAVIGATION_HELP

    def fit_to_view(self) -> None:
        self.fit_rect(self.canvas.content_rect())

    def _fit_if_shown(self) -> None:
        if self._fit_pending and self.isVisible() and self.job is None:
            self._fit_pending = False
            self.show_first_view()

    def show_first_view(self) -> None:
        """The view a model opens with: names legible, the graph inputs at the top (the
        whole graph when it fits at a readable zoom); F fits everything."""
        size = self.viewport().size()
        first = readable.first_view(
            self.canvas, QSizeF(size.width(), size.height()), self.settings.max_zoom
        )
        if first is None:
            self.fit_to_view()
            return
        zoom, centre = first
        self.resetTransform()
        self.scale(zoom, zoom)
        self.centerOn(centre)
        self._view_changed()

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        super().drawForeground(painter, rect)
        if self.current_zoom() >= readable.text_free_zoom():
            return
        if self._legend is None or self._legend[0] != self.canvas.generation:
            self._legend = (self.canvas.generation, readable.legend_entries(self.canvas))
        painter.save()
        painter.resetTransform()
        readable.paint_legend(painter, QRectF(self.viewport().rect()), self._legend[1])
        painter.restore()

    def _view_changed(self) -> None:
        self.overview.view_changed()
        self.viewChanged.emit()

    def context_menu_at(self, pos: QPoint) -> None:
        self.contextMenuRequested.emit(self.viewport().mapToGlobal(pos), self.mapToScene(pos))

    # --- Qt events --------------------------------------------------------------------------
    def showEvent(self, event: QEvent) -> None:
        super().showEvent(event)
        self._fit_if_shown()

    def resizeEvent(self, event: QEvent) -> None:
        super().resizeEvent(event)
        self._fit_if_shown()
        self._view_changed()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        if self.current_zoom() < readable.text_free_zoom():
            self.viewport().update()  # the legend stays put: scrolled pixels would move it
        self._view_changed()

    def wheelEvent(self, event: QWheelEvent) -> None:
        if not self.navigation_wheel(event):
            super().wheelEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.delete_selection()
        elif event.key() == Qt.Key.Key_F and not event.modifiers():
            self.fit_to_view()
        else:
            super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.navigation_press(event):
            return
        self.canvas.complete()  # clicks and rubber bands see every link
        if event.button() == Qt.MouseButton.LeftButton and self._press_item(event):
            return
        super().mousePressEvent(event)
        item = self._node_at(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and item is not None:
            start = self.mapToScene(event.position().toPoint())
            chosen = [i for i in self.canvas.selectedItems() if isinstance(i, NodeItem)]
            self._move = (start, {i.key: i.pos() for i in chosen}, False)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        box = self._node_at(event.position().toPoint())
        if box is not None and box.view.kind == NodeKind.GROUP:  # a collapsed module: open it
            expand_group(self, box.view.group)
            return
        fid = self._function_at(event.position().toPoint())
        if fid is not None and event.button() == Qt.MouseButton.LeftButton:
            self.functionRequested.emit(fid)
            return
        super().mouseDoubleClickEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self.navigation_move(event):
            return
        pos = self.mapToScene(event.position().toPoint())
        if self._link is not None:
            self._link_moved(pos)
            return
        if self._move is not None:
            self._drag_nodes(pos, event)
            return
        if not event.buttons():
            self._track_hover(event.position().toPoint())
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self.navigation_release(event):
            return
        if self._link is not None and event.button() == Qt.MouseButton.LeftButton:
            self._finish_link(event.position().toPoint())
            return
        if (
            self._move is not None
            and event.button() == Qt.MouseButton.LeftButton
            and self._finish_move()
        ):
            return
        super().mouseReleaseEvent(event)

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            text = self._tooltip_at(event.pos())  # type: ignore[attr-defined]
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())  # type: ignore[attr-defined]
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)
