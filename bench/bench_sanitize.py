"""Sanitize Graph against ``polygraphy surgeon sanitize --fold-constants`` on every model in
``../shared/models/``, the bench models and onnx's affine_grid backend models.

For each model: nodes before, ours, Polygraphy's (every scope counted the same way), time,
size, whether ours passes the model check, and the largest difference of ORT outputs
before/after on the same random inputs (symbolic dims set to 2, 3, 5, …, not 1, so a shape
folded wrongly shows). Polygraphy is called in-process (``fold_constants`` with the same
defaults as the command: automatic passes, errors tolerated, ORT symbolic shape inference).

Run: ``.venv/bin/python bench/bench_sanitize.py [--only NAME] [--skip-polygraphy]``. Exit
code 1 when ours has more nodes than Polygraphy's, fails the check or changes an output.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import sanitize_compare as sc  # noqa: E402
from helpers import transform_models as tm  # noqa: E402
from models import residual_model  # noqa: E402

SHARED = ROOT / ".." / "shared" / "models"


def _models() -> dict[str, Callable[[], onnx.ModelProto]]:
    found: dict[str, Callable[[], onnx.ModelProto]] = {}
    for path in sorted(SHARED.glob("*.onnx")):
        found[path.name] = functools.partial(onnx.load, path)
    found.update(
        {
            "resnet_like(64ch, 8 blocks)": lambda: tm.resnet_like(channels=64, blocks=8, size=32),
            "mobilenet_like(32ch)": lambda: tm.mobilenet_like(channels=32, size=32),
            "tiny_transformer": tm.tiny_transformer,
            "residual 2k nodes": lambda: residual_model(2000),
            "shape subgraph": tm.shape_subgraph_model,
            "shape subgraph, dynamic batch": lambda: tm.shape_subgraph_model(True),
            "two-pass fold": tm.two_pass_model,
            "if/loop": tm.if_loop_model,
        }
    )
    for name in sc.AFFINE_GRID_MODELS:
        found[name] = functools.partial(sc.backend_model, name)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="substring of model names")
    parser.add_argument("--skip-polygraphy", action="store_true")
    args = parser.parse_args()
    head = f"{'model':42} {'nodes':>6} {'ours':>6} {'poly':>6} {'ours s':>7} {'poly s':>7}"
    print(head + f" {'size in':>12} {'ours':>12} {'poly':>12}  check  max|diff|")
    bad = 0
    for label, build in _models().items():
        if args.only and not any(s in label for s in args.only):
            continue
        model = build()
        start = time.perf_counter()
        ours = sc.ours(model)
        ours_s = time.perf_counter() - start
        poly_nodes, poly_size, poly_s = -1, -1, float("nan")
        if not args.skip_polygraphy:
            start = time.perf_counter()
            poly = sc.polygraphy(model)
            poly_s = time.perf_counter() - start
            poly_nodes, poly_size = sc.count_nodes(poly), poly.ByteSize()
        problem = sc.check(ours.model)
        feeds = sc.backend_inputs(label) if label in sc.AFFINE_GRID_MODELS else None
        diff = sc.max_output_difference(model, ours.model, feeds)
        nodes = sc.count_nodes(ours.model)
        worse = poly_nodes >= 0 and nodes > poly_nodes
        bad += worse or problem is not None or diff > sc.TOLERANCE
        print(
            f"{label[:42]:42} {sc.count_nodes(model):6} {nodes:6} {poly_nodes:6} {ours_s:7.2f} "
            f"{poly_s:7.2f} {model.ByteSize():12,} {ours.model.ByteSize():12,} {poly_size:12,}"
            f"  {'ok' if problem is None else 'BAD'}   {diff:.2e}"
            + ("  MORE NODES" if worse else "")
        )
        if problem is not None:
            print(f"    check: {problem}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
