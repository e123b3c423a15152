"""What the canvas draws, as JSON (``onnx-designer layout``), so layouts can be checked and
compared by tools.

Read from a real (offscreen) scene, not recomputed: box ids are the layout file's node keys
(the node name, ``#<index>`` when unnamed, ``input:NAME``/``output:NAME``/``outer:NAME``),
coordinates are scene units with y pointing down, and each link's points run from the
source's output terminal through its bends to the target's input terminal. Stubs (widely
read or far tensors) and graph-input proxies drawn above a reader are boxes of kind ``stub``
and ``proxy`` with the reader's id as ``target``. A collapsed module scope
(``--collapse``) is one box of kind ``group``, id ``group:<scope path>``, labelled with its
scope name (e.g. ``layers.3``), with ``group`` (the path) and ``caption`` (op and parameter
counts).
"""

from __future__ import annotations

from designer.core.document import Document
from designer.core.scope import ScopeId
from designer.core.viewgraph import NodeKind, ViewNode
from designer.ui.canvas.items import NodeItem
from designer.ui.canvas.scene import CanvasScene

FORMAT = "onnx-designer-canvas"
VERSION = 1
_PREFIX = {NodeKind.INPUT: "input", NodeKind.OUTPUT: "output", NodeKind.OUTER: "outer"}
_GROUP = NodeKind.GROUP


def box_id(doc: Document, scope_id: ScopeId, view: ViewNode) -> str:
    """The id a box has in the layout file (stable across reopening)."""
    if view.kind is _GROUP:
        return f"group:{view.group}"
    prefix = _PREFIX.get(view.kind)
    if prefix is not None:
        return f"{prefix}:{view.name}"
    scope = doc.scope(scope_id)
    node = scope.node(view.key)
    return node.name or f"#{scope.index_of(view.key)}"


def _r(value: float) -> float:
    return round(value, 2)


def scene_layout(scene: CanvasScene, scope_label: str) -> dict[str, object]:
    """Boxes and links of ``scene`` as plain JSON data (builds any links not built yet)."""
    scene.complete()
    doc, scope_id = scene.doc, scene.scope_id
    ids = {key: box_id(doc, scope_id, item.view) for key, item in scene.node_items.items()}
    boxes: list[dict[str, object]] = []
    for key, item in scene.node_items.items():
        boxes.append(_box(ids[key], item))
        for slot, tensor, _label, stub in item.tags:
            rect = item.mapRectToScene(item._tag_rect(slot))
            boxes.append(
                {
                    "id": f"{ids[key]}<{slot}",
                    "kind": "stub" if stub else "proxy",
                    "label": tensor,
                    "target": ids[key],
                    "x": _r(rect.x()),
                    "y": _r(rect.y()),
                    "w": _r(rect.width()),
                    "h": _r(rect.height()),
                }
            )
    links: list[dict[str, object]] = []
    drawn = scene.edge_items  # (a lazy scene builds them in the order they came into view)
    for edge in (e for e in scene.graph.edges if e in drawn):
        source, target = scene.node_items[edge.source], scene.node_items[edge.target]
        bends = scene.routes.get((edge.source, edge.target), [])
        points = [source.output_xy(edge.source_index), *bends, target.input_xy(edge.target_index)]
        links.append(
            {
                "source": ids[edge.source],
                "target": ids[edge.target],
                "tensor": edge.tensor,
                "points": [[_r(x), _r(y)] for x, y in points],
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "scope": scope_label,
        "boxes": boxes,
        "links": links,
    }


def _box(box: str, item: NodeItem) -> dict[str, object]:
    view = item.view
    entry: dict[str, object] = {
        "id": box,
        "kind": view.kind.value,
        "label": view.name,
        "x": _r(item.x()),
        "y": _r(item.y()),
        "w": _r(item.width),
        "h": _r(item.height),
    }
    if view.kind == NodeKind.OP:
        entry["type"] = view.op_type
        if view.domain:
            entry["domain"] = view.domain
    elif view.kind is _GROUP:
        entry["group"] = view.group
        entry["caption"] = view.op_type
    return entry
