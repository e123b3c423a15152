"""Open, check, re-check and save times of the core on generated models of 1k, 10k and 100k
nodes, each as a ratio against plain onnx (load / checker / save) run in the same process.

Run: ``make bench`` or ``.venv/bin/python bench/bench_core.py [--sizes 1000 10000]``.
Not a test: numbers vary with the machine; the ratios are what to compare.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import residual_model

from designer.core.analysis import check_document
from designer.core.edits import SetAttribute
from designer.core.io import open_document, write_model
from designer.core.scope import MAIN_SCOPE


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``repeat`` runs, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def row(label: str, ours: float, reference: float, ref_label: str) -> None:
    ratio = ours / reference if reference > 0 else float("inf")
    print(
        f"  {label:<22} {ours * 1000:9.1f} ms   {ref_label:<22} {reference * 1000:9.1f} ms"
        f"   ratio {ratio:5.2f}"
    )


def bench(size: int, folder: Path) -> None:
    model = residual_model(size)
    path = folder / f"m{size}.onnx"
    onnx.save(model, path)
    repeat = 5 if size <= 10_000 else 2
    print(f"{len(model.graph.node)} nodes, {path.stat().st_size / 2**20:.1f} MiB")

    row(
        "open_document",
        best_of(lambda: open_document(path), repeat),
        best_of(lambda: onnx.load(path), repeat),
        "onnx.load",
    )

    doc = open_document(path)
    row(
        "check_document",
        best_of(lambda: check_document(doc), repeat),
        best_of(lambda: onnx.checker.check_model(model), repeat),
        "onnx.checker",
    )
    row(
        "check (full)",
        best_of(lambda: check_document(doc), 1),
        best_of(lambda: onnx.checker.check_model(model, full_check=True), 1),
        "onnx.checker full",
    )

    scope = doc.scope(MAIN_SCOPE)
    key = scope.keys[len(scope.keys) // 2]
    node = scope.node(key)
    counter = iter(range(10**9))

    def edit_and_recheck() -> None:
        attr = onnx.helper.make_attribute("pads", [1, 1, 1, 1]) if node.op_type == "Conv" else None
        if attr is not None:
            doc.undo_stack.push(SetAttribute(MAIN_SCOPE, key, attr))
        next(counter)
        check_document(doc)

    row(
        "edit + re-check",
        best_of(edit_and_recheck, repeat),
        best_of(lambda: onnx.checker.check_model(model), repeat),
        "onnx.checker",
    )

    out = folder / f"out{size}.onnx"
    ref = folder / f"ref{size}.onnx"
    row(
        "write_model",
        best_of(lambda: write_model(doc.model, out, doc.base_dir), repeat),
        best_of(lambda: onnx.save(model, ref), repeat),
        "onnx.save",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            bench(size, Path(tmp))


if __name__ == "__main__":
    main()
