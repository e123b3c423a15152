"""Expand All Modules: every group opens and the whole graph is laid out afresh, in one
layout (off the GUI thread for a large graph, with the layout's progress and Cancel), as
Collapse to Level lays its boxes out afresh. Opening the boxes one at a time made room for
each by moving everything below it: one pass over the drawn graph per box, which took
minutes for a few hundred boxes. Positions are view state here, not an undo step."""

from __future__ import annotations

from typing import TYPE_CHECKING

from designer.core.viewgraph import ViewGraph
from designer.ui.canvas.collapse_view import forget_pushes, hierarchy_of
from designer.ui.canvas.focus_view import focus_state
from designer.ui.canvas.placement import Placement, layout_graph

if TYPE_CHECKING:
    from designer.ui.canvas.view import CanvasView


def expand_all(view: CanvasView) -> None:
    """Open every group of the view and lay the graph out afresh (nothing collapsed:
    nothing to do). A graph above the view's asynchronous-layout size is laid out by a
    layout job; the boxes stay as they are until it ends, and stay if it is cancelled."""
    scene = view.canvas
    view.flush()
    if not scene.collapsed:
        return
    hierarchy_of(scene)  # settles the shifts pending for the nodes inside the boxes
    kept = scene.collapsed
    scene.collapsed = set()
    graph = scene.build_graph()
    scene.collapsed = kept
    if len(graph.nodes) > view.settings.async_layout_nodes:
        view.start_expand_all(graph)
        return
    place_expanded(view, graph, layout_graph(graph, scene.sizes(graph)))


def place_expanded(view: CanvasView, graph: ViewGraph, placement: Placement) -> None:
    """Draw ``graph`` (the view with nothing collapsed) at ``placement`` and show its
    first view."""
    scene = view.canvas
    focus_state(scene).set(None)  # the whole graph is laid out afresh
    forget_pushes(scene)
    scene.collapsed = set()
    scene.set_positions(placement.positions)
    scene.rebuild(graph, placement)
    view.overview.invalidate()
    view.show_first_view()
