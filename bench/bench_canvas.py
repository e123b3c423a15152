"""Canvas benchmark: open + layout + first frame, pan/zoom frame times, memory.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_canvas.py [--sizes 10000,100000]
[--repeat N]`` (a few minutes; with ``--repeat`` each size runs in N processes and the table
gives the median of each target, with the lowest and highest). It ends with a table of the
speed targets (issue 15), each beside its limit; the layout of bench_layout's 100k graphs and
a PNG export of a 30k-node model (a fresh ``onnx-designer export-image`` process) are
measured too (``--no-extras`` skips them).
Models are generated transformer decoder stacks (``canvas_models``); each size is measured
in a process of its own (RSS and frame times are those of a process holding that model),
after an untimed open of the bundled example (the first-use costs of a fresh process are
not part of opening a model in a running app).

For each size it prints absolute medians and ratios against a reference measured in the
same run: the plain QGraphicsScene way (a C++ rect item + two text items per node and a path
item per link, no level of detail, no overview), built from the same positions. "First
frame" is the first view as the app opens a model (readable zoom, the graph inputs at the
top; a big scene has built only the items around it); the fit (F) frame after it is printed
beside. Frame times are ``viewport().grab()`` of a 1920x1080 view (a full repaint), medians
over several views at each zoom. Python heap per node is measured with tracemalloc in a
separate pass (view graph + scene + positions, beyond the model) after the first view and
with every item built; RSS is the process's resident size after the 100%-zoom frames.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import onnx
from canvas_models import NODES_PER_LAYER, decoder_stack_model
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QPainterPath, QPen
from PySide6.QtWidgets import (
    QApplication,
    QGraphicsScene,
    QGraphicsView,
)

from designer.ui.canvas.settings import CanvasSettings
from designer.ui.canvas.view import CanvasView
from designer.ui.session import DocumentSession

VIEW_W, VIEW_H = 1920, 1080
ZOOMS = (1.0, 0.5, 0.2, 0.05, 0.01)


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def frame_ms(view: QGraphicsView) -> float:
    start = time.perf_counter()
    view.viewport().grab()
    return (time.perf_counter() - start) * 1000


def frames_at(view: QGraphicsView, zoom: float, centers: list[QPointF], zoom_fn) -> float:  # type: ignore[no-untyped-def]
    zoom_fn(zoom)
    times = []
    for c in centers:
        view.centerOn(c)
        if hasattr(view, "_view_changed"):
            view._view_changed()
        QApplication.processEvents()
        times.append(frame_ms(view))
    return statistics.median(times)


def open_ours(path: Path) -> tuple[CanvasView, dict[str, float]]:
    t0 = time.perf_counter()
    session = DocumentSession.open(path)
    t1 = time.perf_counter()
    view = CanvasView(session, settings=CanvasSettings())
    view.resize(VIEW_W, VIEW_H)
    view.show()
    view.wait_for_layout(600_000)
    QApplication.processEvents()
    t2 = time.perf_counter()
    first = frame_ms(view)  # the first view, as the app opens it (readable zoom)
    t3 = time.perf_counter()
    view.fit_to_view()
    fit = frame_ms(view)  # then F: everything (the overview tiles at this size)
    return view, {
        "open": t1 - t0,
        "layout+scene": t2 - t1,
        "first frame": first / 1000,
        "total": t3 - t0,
        "then fit (F)": fit / 1000,
    }


def reference_scene(view: CanvasView) -> tuple[QGraphicsView, float]:
    """The plain way, same positions: C++ items, no LOD (build time in seconds)."""
    view.canvas.build_all()  # ours, to read their geometry (not timed)
    start = time.perf_counter()
    scene = QGraphicsScene()
    for item in view.canvas.node_items.values():
        rect = scene.addRect(QRectF(item.x(), item.y(), item.width, item.height))
        rect.setBrush(item.color)
        t1 = scene.addSimpleText(item.view.name)
        t1.setPos(item.x() + 6, item.y() + 4)
        t2 = scene.addSimpleText(item.view.op_type)
        t2.setPos(item.x() + 6, item.y() + 22)
    pen = QPen()
    pen.setCosmetic(True)
    for edge_item in view.canvas.edge_items.values():
        scene.addPath(QPainterPath(edge_item.path()), pen)
    scene.setSceneRect(view.canvas.sceneRect())
    ref = QGraphicsView(scene)
    ref.keep_scene = scene  # type: ignore[attr-defined]  # the view does not own its scene
    ref.resize(VIEW_W, VIEW_H)
    ref.show()
    frame_ms(ref)
    return ref, time.perf_counter() - start


def heap_per_node(path: Path) -> tuple[float, float]:
    """Bytes per node after the first view (what a big scene builds at open: the items
    around the visible area), and with every node and link item built (panned everywhere)."""
    session = DocumentSession.open(path)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    view = CanvasView(session, settings=CanvasSettings(async_layout_nodes=10**9))
    view.resize(VIEW_W, VIEW_H)
    view.show()
    QApplication.processEvents()
    view.viewport().grab()
    opened = tracemalloc.get_traced_memory()[0]
    view.canvas.build_all()
    everything = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    n = max(len(view.canvas.node_items), 1)
    view.close()
    view.deleteLater()
    return (opened - before) / n, (everything - before) / n


#: Issue 15 point 5 (and the PNG export of point 4): (label, limit, unit).
TARGETS = {
    "open10k": ("open + layout + first frame, 10k nodes", 0.6, "s"),
    "open100k": ("open + layout + first frame, 100k nodes", 4.0, "s"),
    "rss100k": ("RSS at 100k nodes", 800.0, "MB"),
    "layout100k": ("layout of 100k nodes (bench_layout graphs, slower one)", 0.6, "s"),
    "far100k": ("zoomed-out frame at 100k nodes (slowest of 0.01 / fit)", 16.0, "ms"),
    "heap": ("Python heap per node (largest size measured)", 2048.0, "B"),
    "export30k": ("PNG export of a 30k-node model (onnx-designer export-image)", 10.0, "s"),
}
RESULTS: dict[str, float] = {}
REF: dict[str, str] = {}  # the in-process reference beside a result, when there is one
SPREAD: dict[str, tuple[float, float, int]] = {}  # with --repeat: (lowest, highest, runs)


def warm_up() -> None:
    """Open the bundled example once, untimed: the measured open is that of a running app,
    not the first-use costs of a fresh process (imports, caches: about 0.2 s)."""
    view, _times = open_ours(EXAMPLE)
    view.close()
    view.deleteLater()


#: The model ``make run`` opens.
EXAMPLE = Path(__file__).resolve().parents[1] / "resources" / "examples" / "tiny_cnn.onnx"


def write_model(size: int, tmp: Path) -> Path:
    path = tmp / f"decoder_{size}.onnx"
    onnx.save(decoder_stack_model(max(1, size // NODES_PER_LAYER)), str(path))
    return path


def bench(size: int, path: Path, heap: bool) -> None:
    view, times = open_ours(path)
    nodes = len(view.canvas.node_items)
    links = len(view.canvas.geometry().edges)  # (edge_items would build every link item)
    print(f"\n== decoder stack, {nodes:,} canvas nodes, {links:,} links ==")
    for k, v in times.items():
        print(f"  {k:<14} {v:8.2f} s")
    built = len(view.canvas.node_items.built)
    print(f"  node items built for the first view: {built:,} of {nodes:,}")
    # eight places along the graph, from the positions (looking items up would build them all)
    keys = list(view.canvas.node_items)
    picked = [keys[int(i * (len(keys) - 1) / 7)] for i in range(8)]
    sizes = view.canvas.node_items.sizes
    centers = [
        QPointF(
            view.canvas.positions[k][0] + sizes[k][0] / 2,
            view.canvas.positions[k][1] + sizes[k][1] / 2,
        )
        for k in picked
    ]

    def ours_zoom(z: float) -> None:
        view.resetTransform()
        view.scale(z, z)

    ours = {z: frames_at(view, z, centers, ours_zoom) for z in ZOOMS}
    view.fit_to_view()
    ours["fit"] = frame_ms(view)
    rss = rss_mb()
    ref, ref_build = reference_scene(view)

    def ref_zoom(z: float) -> None:
        ref.resetTransform()
        ref.scale(z, z)

    refs = {z: frames_at(ref, z, centers[:3], ref_zoom) for z in ZOOMS}
    ref.fitInView(view.canvas.sceneRect())
    refs["fit"] = frame_ms(ref)
    print(
        f"  scene build: ours {times['layout+scene']:.2f} s (incl. layout), plain C++ items "
        f"{ref_build:.2f} s (no layout) -> ratio {times['layout+scene'] / ref_build:.2f}"
    )
    print("  frame median (ms) at zoom:   ours   plain  ratio")
    for z in (*ZOOMS, "fit"):
        view_zoom = z if z != "fit" else view.current_zoom()
        label = f"{z:>5}" if z != "fit" else f"fit={view_zoom:.1e}"
        print(f"    {label:<12} {ours[z]:10.1f} {refs[z]:7.1f} {ours[z] / refs[z]:6.2f}")
    print(f"  RSS after frames: {rss:,.0f} MB")
    ref.close()
    tag = {10_000: "10k", 100_000: "100k"}.get(size)
    if tag:
        RESULTS[f"open{tag}"] = times["total"]
        REF[f"open{tag}"] = (
            f"scene build {times['layout+scene']:.2f} s vs plain C++ items {ref_build:.2f} s"
        )
    if tag == "100k":
        RESULTS["rss100k"] = rss
        far = max(ours[0.01], ours["fit"])
        RESULTS["far100k"] = far
        REF["far100k"] = f"plain QGraphicsScene {max(refs[0.01], refs['fit']):.0f} ms"
    if heap:
        per_node, built = heap_per_node(path)
        print(
            f"  Python heap per node (view graph + scene): {per_node:,.0f} B at open, "
            f"{built:,.0f} B with every item built"
        )
        RESULTS["heap"] = max(RESULTS.get("heap", 0.0), per_node)
    view.close()


def bench_layout_100k() -> None:
    """layered_layout on bench_layout's 100k residual chain and transformer (best of 3)."""
    from bench_layout import residual_chain, transformer

    from designer.core.gcpause import gc_paused
    from designer.core.layout import layered_layout

    worst = 0.0
    graphs = (("residual", residual_chain(100_000)), ("transformer", transformer(100_000)))
    for name, graph in graphs:
        best = float("inf")
        for _ in range(3):
            with gc_paused():  # as the canvas's layout job runs it
                start = time.perf_counter()
                layered_layout(*graph)
                best = min(best, time.perf_counter() - start)
        print(f"  layout {name} 100k: {best:.2f} s")
        worst = max(worst, best)
    RESULTS["layout100k"] = worst
    REF["layout100k"] = "OGDF one-run Sugiyama ~1.0 s (bench_layout.py)"


def bench_export(tmp: Path) -> None:
    """``onnx-designer export-image`` of the 30k-node decoder stack to PNG, a fresh process."""
    path = tmp / "decoder_30000.onnx"
    onnx.save(decoder_stack_model(30_000 // NODES_PER_LAYER), str(path))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "designer", "export-image", str(path), str(tmp / "out.png")],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        print(f"  export failed: {done.stderr.strip()}")
        return
    print(f"  PNG export of 30k nodes: {seconds:.2f} s")
    RESULTS["export30k"] = seconds


def print_targets() -> None:
    load = os.getloadavg()
    print(f"\n== targets (load average {load[0]:.1f} {load[1]:.1f} on {os.cpu_count()} CPUs) ==")
    for key, (label, limit, unit) in TARGETS.items():
        if key not in RESULTS:
            print(f"  {label:<62} {'not measured':>12}   limit {limit:g} {unit}")
            continue
        value = RESULTS[key]
        verdict = "ok" if value <= limit else "OVER"
        ref = f"  ({REF[key]})" if key in REF else ""
        if key in SPREAD:
            low, high, count = SPREAD[key]
            ref = f"  (median of {count}: {low:.2f}–{high:.2f}){ref}"
        print(f"  {label:<62} {value:9.2f} {unit:<2} limit {limit:g} {unit}  {verdict}{ref}")


def _run_child(command: list[str], size: int, *, quiet: bool) -> dict[str, Any] | None:
    """One measured process; its printout (unless ``quiet``) and its results."""
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    found: dict[str, Any] | None = None
    for line in done.stdout.splitlines():
        if line.startswith(RESULTS_LINE):
            found = json.loads(line[len(RESULTS_LINE) :])
        elif not quiet:
            print(line)
    if done.returncode != 0:
        print(f"  the {size:,}-node run failed:\n{done.stderr.strip()}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--no-heap", action="store_true", help="skip the tracemalloc pass")
    parser.add_argument("--no-extras", action="store_true", help="skip layout and export runs")
    parser.add_argument(
        "--repeat", type=int, default=1, help="processes per size; the table gives medians"
    )
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # a child: SIZE MODEL
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    del app
    if args.one:  # measured alone: RSS and frames are those of a process with one model
        warm_up()
        bench(int(args.one[0]), Path(args.one[1]), heap=not args.no_heap)
        print(RESULTS_LINE + json.dumps({"results": RESULTS, "ref": REF}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[str, list[float]] = {}
        for size in (int(s) for s in args.sizes.split(",")):
            path = write_model(size, Path(tmp))
            command = [sys.executable, __file__, "--one", str(size), str(path)]
            if args.no_heap:
                command.append("--no-heap")
            for run in range(args.repeat):
                child = _run_child(command, size, quiet=run > 0)
                if child is None:
                    continue
                for key, value in child["results"].items():
                    runs.setdefault(key, []).append(value)
                REF.update(child["ref"])
                if run > 0:
                    opened = {k: v for k, v in child["results"].items() if k.startswith("open")}
                    print(
                        f"  run {run + 1}: "
                        + ", ".join(f"{k} {v:.2f} s" for k, v in opened.items())
                    )
        for key, values in runs.items():  # the median of the runs (heap: the worst)
            RESULTS[key] = max(values) if key == "heap" else statistics.median(values)
            if len(values) > 1 and key != "heap":  # (heap: one value per size)
                SPREAD[key] = (min(values), max(values), len(values))
        if not args.no_extras:
            print("\n== layout and export ==")
            bench_layout_100k()
            bench_export(Path(tmp))
    print_targets()


#: How a child process hands its results to the parent (one line of its output).
RESULTS_LINE = "BENCH-RESULTS "


if __name__ == "__main__":
    main()
