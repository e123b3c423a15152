"""Mouse gestures of the canvas view: link drags between terminals, node moves, subgraph
buttons, tooltips, the selection. A layer of :class:`~designer.ui.canvas.view.CanvasView` on
:class:`~designer.ui.canvas.view_base.CanvasViewBase`; everything that changes the document
goes through ``link_terminals`` or ``session.push``."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QMenu

from designer.core.errors import DesignerError
from designer.core.summary import type_text
from designer.core.viewgraph import NodeKind, ViewEdge, outer_values
from designer.ui.canvas import controller
from designer.ui.canvas.collapse_view import member_moves
from designer.ui.canvas.items import EdgeItem, LinkPreviewItem, NodeItem
from designer.ui.canvas.precision_menu import popup_precision_menu
from designer.ui.canvas.view_base import CanvasViewBase

DRAG_THRESHOLD = 4  # pixels before a press on a node becomes a move


class InteractionMixin(CanvasViewBase):
    """Gesture state and handlers; the view's Qt event overrides call these."""

    _link: tuple[str, int, int, LinkPreviewItem, QPointF] | None = None
    _move: tuple[QPointF, dict[int, QPointF], bool] | None = None
    _move_edges: list[ViewEdge] | None = None  # links of the dragged nodes

    _hovered_edge: EdgeItem | None = None

    # --- links ------------------------------------------------------------------------------
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

    # --- gestures ---------------------------------------------------------------------------

    def _track_hover(self, pos: QPoint) -> None:
        """Highlight the link under the pointer (one point query of the scene index)."""
        edge = None
        if self.scene() is self.canvas:
            edge = next((i for i in self.items(pos) if isinstance(i, EdgeItem)), None)
        if edge is not self._hovered_edge:
            if self._hovered_edge is not None and self._hovered_edge.scene() is not None:
                self._hovered_edge.set_hovered(False)
            if edge is not None:
                edge.set_hovered(True)
            self._hovered_edge = edge

    def _node_at(self, pos: QPoint) -> NodeItem | None:
        for item in self.items(pos):
            if isinstance(item, NodeItem):
                return item
        return None

    def _terminal_at(self, pos: QPoint) -> tuple[NodeItem, str, int] | None:
        scene_pos = self.mapToScene(pos)
        r = 10
        for item in self.items(pos.x() - r, pos.y() - r, 2 * r, 2 * r):
            if isinstance(item, NodeItem):
                hit = item.terminal_at(scene_pos)
                if hit is not None:
                    return item, hit[0], hit[1]
        return None

    def _press_item(self, event: QMouseEvent) -> bool:
        """Starts a link drag on a terminal, or opens a subgraph; True when handled."""
        pos = event.position().toPoint()
        hit = self._terminal_at(pos)
        if hit is not None:
            item, kind, slot = hit
            preview = LinkPreviewItem()
            self.canvas.addItem(preview)
            if kind == "tag" and item.tag_is_stub(slot):  # a stub: jump to the producer
                self.canvas.removeItem(preview)
                self.show_producer(item.tag_name(slot))
                return True
            if kind == "tag":  # a proxy of a high fan-out graph input: drag from that input
                name = item.tag_name(slot)
                source = next(k for k, n in self.canvas.proxied.items() if n == name)
                anchor = self.mapToScene(pos)
                self._link = ("out", source, 0, preview, anchor)
            else:
                anchor = item.input_pos(slot) if kind == "in" else item.output_pos(slot)
                self._link = (kind, item.key, slot, preview, anchor)
            preview.set_ends(anchor, anchor)
            return True
        node = self._node_at(pos)
        if node is not None and node.view.subgraphs:
            local = node.mapFromScene(self.mapToScene(pos))
            if node.subgraph_button().contains(local):
                self._request_subgraph(node, event.globalPosition().toPoint())
                return True
        if node is not None and node.badge_label:
            local = node.mapFromScene(self.mapToScene(pos))
            if node.precision_badge().contains(local):
                self._precision_menu(node, event.globalPosition().toPoint())
                return True
        return False

    def _precision_menu(self, item: NodeItem, global_pos: QPoint) -> None:
        """The badge's quick menu, for the selection when the node is part of it."""
        selected = self.selected_keys()
        keys = selected if item.key in selected else [item.key]
        popup_precision_menu(self, self.session, self.scope_id, keys, global_pos)

    def show_producer(self, tensor: str) -> None:
        """Select and centre the node producing the stubbed ``tensor``."""
        source = self.canvas.node_items.get(self.canvas.stub_sources.get(tensor, -1))
        if source is None:
            return
        self.canvas.clearSelection()
        source.setSelected(True)
        self.centerOn(source)

    def _request_subgraph(self, item: NodeItem, global_pos: QPoint) -> None:
        graphs = item.view.subgraphs
        if len(graphs) == 1:
            self.subgraphRequested.emit(item.key, graphs[0][0], graphs[0][1])
            return
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one menu per click, not kept
        for attribute, index in graphs:
            label = attribute if index < 0 else f"{attribute}[{index}]"
            action = menu.addAction(f"Open {label}")
            action.triggered.connect(
                lambda _c=False, a=attribute, i=index: self.subgraphRequested.emit(item.key, a, i)
            )
        menu.popup(global_pos)

    def _finish_link(self, pos: QPoint) -> None:
        assert self._link is not None
        kind, key, slot, preview, _anchor = self._link
        self._link = None
        self.canvas.removeItem(preview)
        hit = self._terminal_at(pos)
        if hit is None:
            return
        item, other_kind, other_slot = hit
        if kind == "out" and other_kind == "in":
            self.link_terminals((key, slot), (item.key, other_slot))
        elif kind == "in" and other_kind == "out":
            self.link_terminals((item.key, other_slot), (key, slot))
        elif item.key != key:
            self.statusMessage.emit("Drag from an output (circle) to an input (triangle)")

    def _link_moved(self, pos: QPointF) -> None:
        assert self._link is not None
        self._link[3].set_ends(self._link[4], pos)

    def _finish_move(self) -> bool:
        """Push ONE move for the dragged nodes; True if they moved."""
        assert self._move is not None
        _start, origins, moved = self._move
        self._move = None
        if not moved:
            return False
        items = self.canvas.node_items
        positions = {k: (items[k].x(), items[k].y()) for k in origins if k in items}
        if self.canvas.collapsed:  # a dragged group box moves the nodes inside it
            positions = member_moves(self.canvas, positions)
        if not self.session.push(controller.move_edit(self.scope_id, positions)):
            self.canvas.positions_changed(list(origins))  # refused (read-only): move back
        return True

    def _drag_nodes(self, pos: QPointF, event: QMouseEvent) -> None:
        assert self._move is not None
        start, origins, moved = self._move
        delta = pos - start
        if not moved:
            pixels = self.mapFromScene(pos) - self.mapFromScene(start)
            if pixels.manhattanLength() < DRAG_THRESHOLD:
                return
            self._move = (start, origins, True)
            self.canvas.forget_routes(origins)
            self._move_edges = self.canvas.edges_touching(origins)
        for key, origin in origins.items():
            item = self.canvas.node_items.get(key)
            if item is not None:
                item.setPos(origin + delta)
        self.canvas.update_edges(edges=self._move_edges)

    def _tooltip_at(self, pos: QPoint) -> str:
        hit = self._terminal_at(pos)
        if hit is not None:
            item, kind, slot = hit
            if kind == "tag":
                name = item.tag_name(slot)
                if item.tag_is_stub(slot):
                    source = self.canvas.node_items.get(self.canvas.stub_sources.get(name, -1))
                    origin = f" from {source.view.name}" if source is not None else ""
                    return f"tensor {name}{self._type_suffix(name)}{origin}; click to go there"
                return f"graph input {name}{self._type_suffix(name)}"
            terminal = (item.view.inputs if kind == "in" else item.view.outputs)[slot]
            what = "input" if kind == "in" else "output"
            tensor = terminal.tensor or "(not connected)"
            return f"{what} {terminal.label}: {tensor}{self._type_suffix(terminal.tensor)}"
        for found in self.items(pos):
            if isinstance(found, EdgeItem):
                name = found.edge.tensor
                if found.edge.implicit:
                    reader = self.canvas.node_items[found.edge.target].view.name
                    return f"{name}{self._type_suffix(name)}, read inside {reader}'s subgraph"
                return f"{name}{self._type_suffix(name)}"
            if isinstance(found, NodeItem):
                view = found.view
                if view.kind == NodeKind.OUTER:
                    return self._outer_tooltip(view.outputs[0].tensor)
                text = f"{view.name}  ({view.op_type})"
                if view.function is not None:
                    domain, name, _overload = view.function
                    text += f"\ncalls local function {domain}:{name} (double-click to open)"
                return text + ("\n" + found.problem_text if found.problem_text else "")
        return ""

    def _outer_tooltip(self, name: str) -> str:
        """Name, type and origin of an outer-scope value (typed in its defining scope)."""
        value = outer_values(self.session.doc, self.scope_id).get(name)
        if value is None:
            return f"outer-scope value {name} (no longer defined)"
        result = self.session.check_result
        proto = result.type_of(value.scope, name) if result is not None else None
        kind = type_text(proto) if proto is not None else "(type unknown)"
        return f"outer-scope value {name}\n{kind}\n{value.describe()}"

    def _function_at(self, pos: QPoint) -> tuple[str, str, str] | None:
        item = self._node_at(pos)
        return item.view.function if item is not None else None

    def _type_suffix(self, name: str) -> str:
        result = self.session.check_result
        if not name or result is None:
            return ""
        type_proto = result.type_of(self.scope_id, name)
        return f"\n{type_text(type_proto)}" if type_proto is not None else "\n(type unknown)"
