"""Time to compute the scope groups (:func:`designer.core.hierarchy.build_hierarchy`) of a
generated 100k-node model whose nodes carry TorchScript-style scoped names
(``/model/layers.N/block.M/conv``), the same model with the dynamo exporter's
``pkg.torch.onnx.name_scopes`` metadata instead (one entry a node), and with the five
metadata entries torch.onnx writes on every node (``namespace``, ``class_hierarchy``,
``fx_node``, ``name_scopes``, ``stack_trace``). Target: ≤ 0.5 s for 100k nodes. Each is
built ``--runs`` times; "first" is the first build of a process (module paths not yet
parsed, node metadata not yet read, no garbage of the cases before), best and median are
of the rest, which find the node metadata read (it is read once per model change, see
:mod:`designer.core.node_meta`: when a model opens, the view graph reads it before the
groups are made). The metadata read is also timed alone. CPU is the process's CPU time
(``time.process_time``), less disturbed than wall time by other load.

Also times collapsing its view graph to the layers (:func:`designer.core.collapse.collapse_graph`)
and one Find query over it; with ``--canvas``, the offscreen canvas collapsed to the
layers and the redraw after expanding one of them at a time, incrementally as the canvas
does (target: ≤ 0.2 s).

With ``--view``, the same through a canvas view: a double-click's expand (what lies
below moves down; the nodes hidden in the boxes below move later, see
``Document.defer_shift``) and fold, timed to the painted frame, for 11 layers (the median
is of the last 10). The machine's load shows in these numbers: run it a few times.

Run: ``.venv/bin/python bench/bench_hierarchy.py [--nodes 100000] [--runs 6] [--canvas]
[--view]``. Not a test.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import residual_model

from designer.core import scope_path
from designer.core.collapse import collapse_graph, groups_below
from designer.core.document import Document
from designer.core.find import find
from designer.core.hierarchy import Hierarchy, auto_depth, build_hierarchy
from designer.core.node_meta import read_node_metadata
from designer.core.scope_path import NAME_SCOPES_KEY
from designer.core.viewgraph import build_view_graph

#: Stand-ins for the metadata entries torch.onnx writes beside name_scopes (typical sizes).
_DYNAMO_EXTRA = (
    ("namespace", 300),
    ("pkg.torch.onnx.class_hierarchy", 200),
    ("pkg.torch.onnx.fx_node", 120),
)


def scoped_model(nodes: int, metadata: bool, dynamo_entries: bool = False) -> onnx.ModelProto:
    """``residual_model`` with its 4-node blocks put in ``layers.N`` (25 blocks a layer):
    by node name, or by name_scopes metadata (``dynamo_entries``: among the other entries
    the dynamo exporter writes, in its order)."""
    model = residual_model(nodes)
    for index, node in enumerate(model.graph.node):
        block = index // 4
        layer, inner = divmod(block, 25)
        scope = ["model", f"layers.{layer}", f"block.{inner}"]
        if metadata:
            full = ["", "m"]
            for part in scope:
                full.append(f"{full[-1]}.{part}")
            entries = [(NAME_SCOPES_KEY, repr([*full, f"{node.op_type.lower()}_{index}"]))]
            if dynamo_entries:
                extra = [(k, "x" * n) for k, n in _DYNAMO_EXTRA]
                entries = [*extra, *entries, ("pkg.torch.onnx.stack_trace", "s" * 800)]
            for key, value in entries:
                entry = node.metadata_props.add()
                entry.key = key
                entry.value = value
        else:
            node.name = "/" + "/".join(["m", *scope, f"{node.op_type}_{index}"])
    return model


def time_builds(doc: Document, runs: int) -> tuple[list[float], list[float], Hierarchy]:
    """Wall and CPU seconds of ``runs`` builds of ``doc``'s groups, the first one cold."""
    scope_path._METADATA_CACHE.clear()  # as in a fresh process: no module path parsed yet
    gc.collect()  # nor the trees of the cases before: their collection is not this build's
    doc._node_meta.clear()  # nor the node metadata read
    walls, cpus = [], []
    hierarchy = None
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        built = build_hierarchy(doc)
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
        hierarchy = built  # freeing the last one is not part of the build
    assert hierarchy is not None
    return walls, cpus, hierarchy


def report(kind: str, doc: Document, runs: int) -> Hierarchy:
    """Print one line: first build, then best and median of the rest, wall / CPU."""
    walls, cpus, hierarchy = time_builds(doc, runs)
    groups = sum(1 for _ in hierarchy.groups())

    def pair(wall: float, cpu: float) -> str:
        return f"{wall * 1000:.0f}/{cpu * 1000:.0f}"

    rest_w, rest_c = walls[1:], cpus[1:]
    print(
        f"{kind:>22}: {len(doc.scope())} nodes → {groups} groups; ms wall/CPU: first "
        f"{pair(walls[0], cpus[0])}, then (metadata read) best "
        f"{pair(min(rest_w), min(rest_c))}, median "
        f"{pair(statistics.median(rest_w), statistics.median(rest_c))} of {len(rest_w)} "
        f"(target ≤ 500 ms); auto depth {auto_depth(hierarchy)}"
    )
    print(
        f"{'':>22}  node metadata read alone: {metadata_read(doc):.0f} ms CPU; the fields the "
        f"groups read after it: {read_floor(doc):.0f} ms CPU"
    )
    return hierarchy


def metadata_read(doc: Document) -> float:
    """CPU ms (best of 3) of reading the node metadata the designer uses (once per model
    change, shared by the view graph, the Layer Explorer and the groups)."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        read_node_metadata(doc.scope())
        best = min(best, time.process_time() - start)
    return best * 1000


def read_floor(doc: Document) -> float:
    """CPU ms (best of 3) of reading just the fields the build reads once the node
    metadata is known: the name of a node without a name_scopes entry, every node's op type
    and domain. Every read makes a Python object; the build cannot go below this."""
    nodes = doc.scope().proto.node
    paths = doc.node_metadata().paths
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for node, path in zip(nodes, paths, strict=True):
            if path is None:
                _ = node.name
            _ = node.op_type, node.domain
        best = min(best, time.process_time() - start)
    return best * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--canvas", action="store_true", help="also time the canvas")
    parser.add_argument(
        "--view", action="store_true", help="also time expand/collapse on a canvas view"
    )
    parser.add_argument("--runs", type=int, default=6, help="builds per model (≥ 2)")
    args = parser.parse_args()
    runs = max(args.runs, 2)
    for kind, metadata, entries in (
        ("scoped node names", False, False),
        ("dynamo: 5 entries", True, True),
        ("name_scopes metadata", True, False),  # kept for the timings below
    ):
        doc = Document(scoped_model(args.nodes, metadata, entries))
        doc.scope()  # hand out the node keys first, as opening a model does
        hierarchy = report(kind, doc, runs)
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
    if args.view:
        view_bench(doc)
    return 0


def view_bench(doc: Document) -> None:
    """What a double-click does on a canvas collapsed to the layers: open one layer in
    place (what lies below moves down) and fold it again, timed to the painted frame."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from designer.ui.canvas.collapse_view import (
        collapse_group,
        collapse_to_depth,
        expand_group,
        hierarchy_of,
    )
    from designer.ui.canvas.settings import CanvasSettings
    from designer.ui.canvas.view import CanvasView
    from designer.ui.session import DocumentSession

    app = QApplication.instance() or QApplication([])
    graph = build_view_graph(doc, doc.scope().id)
    doc.positions[doc.scope().id] = {  # a grid: the layout is not what is timed
        n.key: (float(i % 100) * 200.0, float(i // 100) * 80.0) for i, n in enumerate(graph.nodes)
    }
    view = CanvasView(DocumentSession(doc), settings=CanvasSettings(async_layout_nodes=10**9))
    view.resize(1200, 800)
    view.show()
    app.processEvents()
    collapse_to_depth(view, 2)
    app.processEvents()
    layers = [g.id for g in hierarchy_of(view.canvas).groups() if g.depth == 3][:11]
    for name, action in (("expand", expand_group), ("collapse", collapse_group)):
        times = []
        for layer in layers:
            start = time.perf_counter()
            action(view, layer)
            app.processEvents()  # the frame is painted
            times.append(time.perf_counter() - start)
        rest = sorted(times[1:])
        print(
            f"{'view: ' + name + ' one':>22}: first {times[0] * 1000:.0f} ms, then median "
            f"{rest[len(rest) // 2] * 1000:.0f} ms, worst {rest[-1] * 1000:.0f} ms "
            "(target ≤ 200 ms)"
        )
    pending = len(doc.deferred_tokens(doc.scope().id))
    start = time.perf_counter()
    _ = doc.positions  # reading them (save, export, an edit) applies the deferred shifts
    took = time.perf_counter() - start
    print(f"{'apply deferred shifts':>22}: {pending} boxes' nodes in {took * 1000:.0f} ms (once)")


def canvas_bench(doc: Document) -> None:
    """Collapse the scene to the layers, then expand one (no document change)."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from designer.ui.canvas.collapse_view import (
        _full_token,
        collapsed_graph,
        hierarchy_of,
        switch_collapsed,
    )
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
        """What the canvas does: an incremental expand when it applies, else a full one."""
        start = time.perf_counter()
        if not switch_collapsed(scene, ids):
            full = _full_token(scene)
            scene.collapsed = ids
            scene.rebuild(collapsed_graph(scene, full))
        return time.perf_counter() - start

    took = switch(groups_below(hierarchy, 2))
    print(f"{'canvas: collapse':>22}: {len(scene.node_items)} boxes in {took * 1000:.0f} ms")
    _app.processEvents()  # idle time after the collapse, as in the GUI (indexes the links)
    layers = [g.id for g in hierarchy.groups() if g.depth == 3][:5]
    times = []
    for layer in layers:  # the first expand also indexes the links of the full graph
        times.append(switch(set(scene.collapsed) - {layer}))
    print(
        f"{'canvas: expand one':>22}: {len(scene.node_items)} boxes; first "
        f"{times[0] * 1000:.0f} ms, then best {min(times[1:]) * 1000:.0f} ms, "
        f"median {sorted(times[1:])[len(times[1:]) // 2] * 1000:.0f} ms (target ≤ 200 ms)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
