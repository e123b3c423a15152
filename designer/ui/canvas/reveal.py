"""Show a node on the canvas: select it and centre the view on it, or — when it has no box
of its own (a hidden Constant, a graph input drawn as proxies beside its readers) — on the
boxes that show it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from designer.ui.canvas.collapse_view import expose_key

if TYPE_CHECKING:
    from designer.ui.canvas.view import CanvasView


def shown_keys(view: CanvasView, key: int) -> list[int]:
    """The keys of the boxes that show node ``key`` on ``view`` (itself when it has one;
    else the boxes reading its outputs); empty when nothing on the canvas shows it."""
    canvas = view.canvas
    items = canvas.node_items
    key = expose_key(view, key)  # a collapsed group hiding it opens
    if key in items:
        return [key]
    readers = [e.target for e in canvas.graph.edges if e.source == key and e.target in items]
    if readers:
        return list(dict.fromkeys(readers))
    scope = view.session.doc.scope(view.scope_id)
    if not scope.has_node(key):
        return []
    outputs = {n for n in scope.node(key).output if n}
    out: list[int] = []
    for other, node in scope.nodes():
        if other in items and outputs.intersection(node.input):
            out.append(other)
    return out


def reveal(view: CanvasView, key: int, others: tuple[int, ...] = ()) -> bool:
    """Select what shows ``key`` (and ``others``) and centre on ``key``; False when nothing
    shows it."""
    view.flush()
    keys = shown_keys(view, key)
    if not keys:
        return False
    for other in others:
        keys.extend(k for k in shown_keys(view, other) if k not in keys)
    view.select_keys(keys)
    view.center_on(keys[0])
    return True
