"""How long the GUI thread is kept waiting while the type checker checks a big model on a
pool thread, as the window does (:class:`designer.ui.session._CheckJob`): onnx's checker and
shape inference in this process (``IN_PROCESS``, the designer's way up to this version)
against the helper process (:mod:`designer.core.analysis.onnx_process`, what the window
uses from ``HELPER_NODES`` nodes on).

The GUI thread is stood in for by a loop that sleeps 5 ms at a time; a "stall" is a gap
between its wake-ups, i.e. time it could not run (a frame of the window is 16 ms). Each way
is run ``--runs`` times; the helper's first run includes starting it (once a session).

Run: ``.venv/bin/python bench/bench_check.py [--layers 2000] [--runs 2]`` (2,000 layers of
the generated decoder stack are about 100,000 nodes). Not a test.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from canvas_models import decoder_stack_model

from designer.core.analysis.checker import check_document
from designer.core.analysis.inference import IN_PROCESS, OnnxCalls
from designer.core.analysis.onnx_process import OnnxProcess
from designer.core.document import Document
from designer.core.gcpause import gc_paused


def stalls_while_checking(doc: Document, calls: OnnxCalls) -> tuple[float, float, int]:
    """(seconds the check took, longest stall, stalls over 100 ms) of one check."""
    done = threading.Event()
    took = [0.0]

    def check() -> None:
        with gc_paused():
            start = time.perf_counter()
            check_document(doc, calls=calls)
            took[0] = time.perf_counter() - start
        done.set()

    worker = threading.Thread(target=check)
    gaps: list[float] = []
    last = time.perf_counter()
    worker.start()
    while not done.is_set():
        time.sleep(0.005)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    worker.join()
    return took[0], max(gaps), sum(1 for g in gaps if g > 0.1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    model = decoder_stack_model(args.layers)
    doc = Document(model)
    print(f"{len(model.graph.node)} nodes")
    helper = OnnxProcess()
    try:
        for name, calls in (("in this process", IN_PROCESS), ("helper process", helper)):
            for run in range(args.runs):
                took, longest, count = stalls_while_checking(doc, calls)
                print(
                    f"{name:>16} run {run + 1}: check {took:.2f} s; GUI thread's longest "
                    f"stall {longest * 1000:.0f} ms, {count} stalls over 100 ms"
                )
    finally:
        helper.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
