"""CanvasView: the model canvas widget of one graph scope.

The view turns mouse gestures into intents and pushes the Edits the controller builds
through the session (one undo step each). Its layers (see :mod:`designer.ui.canvas.view_base`):
navigation, document following, gestures (:mod:`designer.ui.canvas.interaction`), and here the
editing commands, settings and Qt event overrides.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QHelpEvent,
    QImageReader,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QResizeEvent,
    QShowEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QToolTip

from designer.core.errors import DesignerError
from designer.core.viewgraph import NodeKind, ViewEdge, ViewGraph
from designer.ui.canvas import controller, readable
from designer.ui.canvas.clipboard import constants_read_by, copy_nodes, paste_edit
from designer.ui.canvas.collapse_view import expand_group, expose_keys, full_graph, member_keys
from designer.ui.canvas.export import FORMATS, ExportOptions, render_scene_to_file
from designer.ui.canvas.focus_view import focus_of
from designer.ui.canvas.interaction import InteractionMixin
from designer.ui.canvas.items import NodeItem
from designer.ui.canvas.settings import NAVIGATION_HELP


class CanvasView(InteractionMixin):
    """The canvas of ``scope_id`` of the session's document (see the module docstring)."""

    # --- selection ------------------------------------------------------------------------
    def select_keys(self, keys: Iterable[int]) -> None:
        """Select nodes ``keys``, opening collapsed groups that hide any of them."""
        self.flush()
        if self.canvas.collapsed or focus_of(self.canvas) is not None:
            keys = list(keys)
            expose_keys(self, keys)
        self.canvas.clearSelection()
        for key in keys:
            item = self.canvas.node_items.get(key)
            if item is not None:
                item.setSelected(True)

    def select_all(self) -> None:
        self.canvas.build_all()
        path = QPainterPath()
        path.addRect(self.canvas.sceneRect())
        self.canvas.setSelectionArea(path)

    def center_on(self, key: int) -> None:
        item = self.canvas.node_items.get(key)
        if item is not None:
            self.centerOn(item)
            self._view_changed()

    # --- editing --------------------------------------------------------------------------
    def pin_outer(self, name: str, at: QPointF | None = None) -> int:
        """Show outer-scope value ``name`` as a node (at ``at``) even while nothing reads it,
        so it can be linked by dragging; returns its key. A view setting, not an edit."""
        self.flush()
        key = self.session.doc.io_key(self.scope_id, "outer", name)
        if at is not None:
            self.canvas.set_positions({key: (at.x(), at.y())})
        self.canvas.pinned_outer.add(name)
        self._pending = True
        self.flush()
        return key

    def _real_edges(self, full: ViewGraph) -> list[ViewEdge]:
        """The selected links as links of ``full`` (the graph with nothing collapsed): a
        drawn link into or out of a module box stands for the links of its tensor between
        the nodes on either side."""
        selected = self.selected_edges()
        if not self.canvas.collapsed:
            return selected
        by_tensor: dict[str, list[ViewEdge]] | None = None
        out: list[ViewEdge] = []
        for edge in selected:
            if full.has_node(edge.source) and full.has_node(edge.target):
                out.append(edge)
                continue
            if by_tensor is None:
                by_tensor = {}
                for link in full.edges:
                    by_tensor.setdefault(link.tensor, []).append(link)
            sources = set(member_keys(self.canvas, [edge.source]))
            targets = set(member_keys(self.canvas, [edge.target]))
            out.extend(
                link
                for link in by_tensor.get(edge.tensor, [])
                if link.source in sources and link.target in targets
            )
        return out

    def select_io(self, kind: str, name: str) -> None:
        """Select the graph input/output (``kind`` "input"/"output") named ``name``."""
        self.flush()
        self.select_keys([self.session.doc.io_key(self.scope_id, kind, name)])

    def delete_selection(self) -> None:
        """Delete selected nodes and links as one undo step (an outer-scope value node is
        unpinned and its consumers disconnected)."""
        self.flush()
        unpinned = self._unpin_selected()
        full = full_graph(self.canvas)  # a selected group box stands for its nodes
        edit = controller.delete_edit(
            self.session.doc, full, self.selected_keys(), self._real_edges(full)
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
        """The selected nodes for the clipboard, with the undrawn Constants they read."""
        doc, keys = self.session.doc, self.selected_keys()
        along = [] if self.canvas.show_constants else constants_read_by(doc, self.scope_id, keys)
        return copy_nodes(doc, self.scope_id, keys, along)

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
        """Write what the canvas shows to ``path`` (PNG, JPEG or SVG), atomically, and say
        what was written on the status bar; raises DesignerError, leaving every file as it
        was, for a path that is one of the document's files (the model, its external data,
        its layout file) or whose suffix names another format than ``options.format``."""
        from designer.core.io.atomic import render_output
        from designer.core.io.model_files import refuse_model_files

        self.flush()
        path = Path(path)
        doc = self.session.doc
        if doc.path is not None:
            refuse_model_files(path, doc.model, doc.path, doc.base_dir)
        named = FORMATS.get(path.suffix.lower())
        chosen = (options.format or "").lower().replace("jpeg", "jpg")
        if named is not None and chosen and named != chosen:
            raise DesignerError(
                f"{path.name}: the name ends in {path.suffix} but the format is "
                f"{chosen.upper()}; change the format or the file name"
            )
        message = render_output(path, lambda out: render_scene_to_file(self.canvas, out, options))
        size = QImageReader(str(path)).size() if (named or chosen) != "svg" else None
        wrote = f"Wrote {path}" + (f" ({size.width():,}×{size.height():,})" if size else "")
        self.statusMessage.emit(f"{wrote}. {message}" if message else wrote)

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

    def drawForeground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        super().drawForeground(painter, rect)
        if self.current_zoom() >= readable.text_free_zoom():
            return
        if self._legend is None or self._legend[0] != self.canvas.generation:
            self._legend = (self.canvas.generation, readable.legend_entries(self.canvas))
        painter.save()
        painter.resetTransform()
        readable.paint_legend(painter, QRectF(self.viewport().rect()), self._legend[1])
        painter.restore()

    # --- Qt events --------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit_if_shown()

    def resizeEvent(self, event: QResizeEvent) -> None:
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
        self.materialize_visible()  # clicks and rubber bands see every item in view
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
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = self._tooltip_at(event.pos())
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)
