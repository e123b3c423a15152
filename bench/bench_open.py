"""Open-path benchmark (issue 15 point 5): reading + checking the model, building the view
graph and sizing the boxes, each old against new, at 10,000 and 100,000 nodes.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_open.py [--sizes 10000,100000]
[--runs 5] [--models]`` (``--models`` adds the real exports in ../shared/models).

"Old" is the code as it was before this tuning, taken from git (commit ``OLD_COMMIT``) and
run beside the current code in the same process, in turns, on the same files. Each line
gives the best of ``--runs`` runs, wall time and CPU time of this process
(``time.process_time``; steadier than wall time on a busy machine), with gc paused as the
app does. Models are the generated decoder stacks of ``canvas_models``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import onnx
from canvas_models import NODES_PER_LAYER, decoder_stack_model
from PySide6.QtWidgets import QApplication

from designer.core.document import Document
from designer.core.gcpause import gc_paused
from designer.core.io.load import open_document, read_model
from designer.core.scope import MAIN_SCOPE
from designer.core.viewgraph import ViewNode, build_view_graph
from designer.ui.canvas import style

ROOT = Path(__file__).resolve().parents[1]
#: The last commit before the open path was tuned.
OLD_COMMIT = "5ffe3a52a01753e3d5bf6a40237acda5dae9bea3"
MODELS = ROOT.parent / "shared" / "models"


def old_module(name: str, path: str, replace: tuple[tuple[str, str], ...] = ()) -> types.ModuleType:
    """Module ``path`` as it was at OLD_COMMIT, loaded under ``name``."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for old, new in replace:
        source = source.replace(old, new)
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)  # our own history
    return module


class Old:
    """The old open path: read_model (with its validate), build_view_graph, node_size."""

    def __init__(self) -> None:
        old_module("_old_validate", "designer/core/validate.py")
        self.load = old_module(
            "_old_load",
            "designer/core/io/load.py",
            (("from designer.core.validate import", "from _old_validate import"),),
        )
        self.viewgraph = old_module("_old_viewgraph", "designer/core/viewgraph.py")
        self.style = old_module("_old_style", "designer/ui/canvas/style.py")

    def open_document(self, path: Path) -> Document:
        return Document(self.load.read_model(path), path.resolve())


def best(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, tuple[float, float]]:
    """Best (wall, cpu) seconds of each function, run in turns."""
    out = {k: (float("inf"), float("inf")) for k in fns}
    for _ in range(runs):
        for key, fn in fns.items():
            with gc_paused():
                wall, cpu = time.perf_counter(), time.process_time()
                fn()
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            out[key] = (min(out[key][0], wall), min(out[key][1], cpu))
    return out


def report(label: str, times: dict[str, tuple[float, float]]) -> None:
    (ow, oc), (nw, nc) = times["old"], times["new"]
    print(
        f"  {label:<26} old {ow * 1000:7.0f} ms wall {oc * 1000:7.0f} ms cpu   "
        f"new {nw * 1000:7.0f} ms wall {nc * 1000:7.0f} ms cpu   "
        f"new/old cpu {nc / oc:4.2f}"
    )


def bench_file(path: Path, old: Old, runs: int) -> None:
    report(
        "read_model",
        best({"old": lambda: old.load.read_model(path), "new": lambda: read_model(path)}, runs),
    )
    report(
        "open_document",
        best({"old": lambda: old.open_document(path), "new": lambda: open_document(path)}, runs),
    )
    doc = open_document(path)
    report(
        "build_view_graph",
        best(
            {
                "old": lambda: old.viewgraph.build_view_graph(doc, MAIN_SCOPE),
                "new": lambda: build_view_graph(doc, MAIN_SCOPE),
            },
            runs,
        ),
    )
    nodes: list[ViewNode] = build_view_graph(doc, MAIN_SCOPE).nodes
    old_size = old.style.node_size
    report(
        "sizes (node_sizes)",
        best(
            {
                "old": lambda: {n.key: old_size(n) for n in nodes},
                "new": lambda: style.node_sizes(nodes),
            },
            runs,
        ),
    )
    report(
        "sizes (node_size each)",
        best(
            {
                "old": lambda: {n.key: old_size(n) for n in nodes},
                "new": lambda: {n.key: style.node_size(n) for n in nodes},
            },
            runs,
        ),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--models", action="store_true", help="also the real exports")
    args = parser.parse_args()
    _app = QApplication.instance() or QApplication([])
    try:
        old = Old()
    except (subprocess.CalledProcessError, FileNotFoundError):
        print(
            f"bench_open: skipped: the old code (commit {OLD_COMMIT[:7]}) is not in this "
            "checkout's git history (a shallow clone or no git); run it in a full clone"
        )
        return
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"decoder_{size}.onnx"
            onnx.save(decoder_stack_model(max(1, size // NODES_PER_LAYER)), path)
            print(f"decoder stack, {size} nodes ({path.stat().st_size / 2**20:.1f} MiB)")
            bench_file(path, old, args.runs)
    if args.models:
        for path in sorted(MODELS.glob("*.onnx")):
            print(path.name)
            bench_file(path, old, args.runs)


if __name__ == "__main__":
    main()
