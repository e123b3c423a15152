"""Time to compute the scope groups (:func:`designer.core.hierarchy.build_hierarchy`) of a
generated 100k-node model whose nodes carry TorchScript-style scoped names
(``/model/layers.N/block.M/conv``), and the same model with the dynamo exporter's
``pkg.torch.onnx.name_scopes`` metadata instead. Target: ≤ 0.5 s for 100k nodes. Also
times collapsing its view graph to the layers (:func:`designer.core.collapse.collapse_graph`)
and one Find query over it; with ``--canvas``, the offscreen canvas collapsed to the
layers and the redraw after expanding one of them (target: ≤ 0.2 s).

Run: ``.venv/bin/python bench/bench_hierarchy.py [--nodes 100000]``. Not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import residual_model

from designer.core.collapse import collapse_graph, groups_below
from designer.core.document import Document
from designer.core.find import find
from designer.core.hierarchy import auto_depth, build_hierarchy
from designer.core.scope_path import NAME_SCOPES_KEY
from designer.core.viewgraph import build_view_graph


def scoped_model(nodes: int, metadata: bool) -> onnx.ModelProto:
    """``residual_model`` with its 4-node blocks put in ``layers.N`` (25 blocks a layer)."""
    model = residual_model(nodes)
    for index, node in enumerate(model.graph.node):
        block = index // 4
        layer, inner = divmod(block, 25)
        scope = ["model", f"layers.{layer}", f"block.{inner}"]
        if metadata:
            full = ["", "m"]
            for part in scope:
                full.append(f"{full[-1]}.{part}")
            entry = node.metadata_props.add()
            entry.key = NAME_SCOPES_KEY
            entry.value = repr([*full, f"{node.op_type.lower()}_{index}"])
        else:
            node.name = "/" + "/".join(["m", *scope, f"{node.op_type}_{index}"])
    return model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--canvas", action="store_true", help="also time the canvas")
    args = parser.parse_args()
    for metadata in (False, True):
        doc = Document(scoped_model(args.nodes, metadata))
        doc.scope()  # hand out the node keys first, as opening a model does
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            hierarchy = build_hierarchy(doc)
            best = min(best, time.perf_counter() - start)
        groups = sum(1 for _ in hierarchy.groups())
        kind = "name_scopes metadata" if metadata else "scoped node names"
        print(
            f"{kind:>22}: {len(doc.model.graph.node)} nodes → {groups} groups in "
            f"{best * 1000:.0f} ms (target ≤ 500 ms); auto depth {auto_depth(hierarchy)}"
        )
    graph = build_view_graph(doc, doc.scope().id)
    start = time.perf_counter()
    collapsed = collapse_graph(graph, hierarchy, groups_below(hierarchy, 2))
    took = time.perf_counter() - start
    print(
        f"{'collapse to layers':>22}: {len(graph.nodes)} → {len(collapsed.nodes)} boxes in "
        f"{took * 1000:.0f} ms"
    )
    start = time.perf_counter()
    hits = find(doc, "layers.500/", kinds=("scope",)).hits
    took = time.perf_counter() - start
    print(f"{'find a module scope':>22}: {len(hits)} hits in {took * 1000:.0f} ms")
    if args.canvas:
        canvas_bench(doc)
    return 0


def canvas_bench(doc: Document) -> None:
    """Collapse the scene to the layers, then expand one (no document change)."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from designer.ui.canvas.collapse_view import _full_token, collapsed_graph, hierarchy_of
    from designer.ui.canvas.scene import CanvasScene

    _app = QApplication.instance() or QApplication([])
    scene = CanvasScene(doc)
    graph = scene.build_graph()
    table = doc.positions.setdefault(doc.scope().id, {})
    for index, node in enumerate(graph.nodes):  # a grid: the layout is not what is timed
        table[node.key] = (float(index % 100) * 200.0, float(index // 100) * 80.0)
    scene.rebuild(graph)
    hierarchy = hierarchy_of(scene)

    def switch(ids: set[str]) -> float:
        start = time.perf_counter()
        full = _full_token(scene)
        scene.collapsed = ids
        scene.rebuild(collapsed_graph(scene, full))
        return time.perf_counter() - start

    took = switch(groups_below(hierarchy, 2))
    print(f"{'canvas: collapse':>22}: {len(scene.node_items)} boxes in {took * 1000:.0f} ms")
    layer = next(g.id for g in hierarchy.groups() if g.depth == 3)
    took = switch(set(scene.collapsed) - {layer})
    print(
        f"{'canvas: expand one':>22}: {len(scene.node_items)} boxes in {took * 1000:.0f} ms "
        "(target ≤ 200 ms)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
