"""FP16 conversion and sanitize, against the reference tools in the same run.

FP16: ours (:func:`designer.core.transforms.convert_to_fp16`) vs onnxconverter-common's
``convert_float_to_float16``; sanitize: ours with the onnxruntime evaluator vs Polygraphy's
``fold_constants`` (what ``polygraphy surgeon sanitize --fold-constants`` runs, called
in-process so interpreter start-up is not counted). Prints times, node counts, sizes and
whether each result loads in onnxruntime, with ours/theirs ratios.

Run: ``.venv/bin/python bench/bench_transforms.py [--repeat 3]``. Needs the bench extras
(``onnxconverter-common``, ``polygraphy``, ``onnx-graphsurgeon``); a missing one is reported
and its column left empty. Not a test: numbers vary with the machine; compare the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import transform_models as tm  # noqa: E402
from models import residual_model  # noqa: E402

from designer.activities.numerics import ort_evaluator  # noqa: E402
from designer.core.transforms import convert_to_fp16, count_nodes, sanitize  # noqa: E402


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median seconds of ``repeat`` runs and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def runs_in_ort(model: onnx.ModelProto) -> str:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    try:
        ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        return "yes"
    except Exception as exc:  # what a broken conversion looks like
        return "NO: " + str(exc).splitlines()[0][:60]


def stacked_transformer(layers: int = 6) -> onnx.ModelProto:
    """``layers`` copies of the tiny transformer block chained (wider, for timing)."""
    block = tm.tiny_transformer(dim=128, heads=4, seq=32)
    model = onnx.ModelProto()
    model.CopyFrom(block)
    del model.graph.node[:], model.graph.initializer[:]
    current = "x"
    for layer in range(layers):
        rename = {"x": current, "y": f"l{layer}_y"}
        for node in block.graph.node:
            copy = onnx.NodeProto()
            copy.CopyFrom(node)
            copy.name = f"l{layer}_{node.name}"
            for i, n in enumerate(copy.input):
                copy.input[i] = rename.get(n, f"l{layer}_{n}" if n else n)
            for i, n in enumerate(copy.output):
                copy.output[i] = rename.get(n, f"l{layer}_{n}")
            model.graph.node.append(copy)
        for t in block.graph.initializer:
            clone = onnx.TensorProto()
            clone.CopyFrom(t)
            clone.name = f"l{layer}_{t.name}"
            model.graph.initializer.append(clone)
        current = f"l{layer}_y"
    model.graph.output[0].name = current
    return model


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet_like(64ch, 8 blocks)": lambda: tm.resnet_like(channels=64, blocks=8, size=32),
    "mobilenet_like(32ch)": lambda: tm.mobilenet_like(channels=32, size=32),
    "transformer x6 (dim 128)": stacked_transformer,
    "residual 2k nodes": lambda: residual_model(2000),
    "shape subgraph": tm.shape_subgraph_model,
}


def bench_fp16(repeat: int) -> None:
    try:
        from onnxconverter_common import float16
    except ImportError as exc:
        float16 = None
        print(f"onnxconverter-common missing ({exc}): reference column empty")
    print("\n== FP16: ours vs onnxconverter-common convert_float_to_float16 ==")
    head = f"{'model':30} {'ours s':>8} {'ref s':>8} {'ratio':>6} {'nodes o/r':>11}"
    print(head + f" {'MB o/r':>13}  runs o / r")
    for label, build in MODELS.items():
        model = build()
        ours_t, ours = timed(lambda m=model: convert_to_fp16(m).model, repeat)
        ref_t, ref = float("nan"), None
        if float16 is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref_t, ref = timed(lambda m=model: float16.convert_float_to_float16(m), repeat)
        ref_nodes = count_nodes(ref) if ref is not None else 0
        ref_mb = ref.ByteSize() / 1e6 if ref is not None else float("nan")
        print(
            f"{label:30} {ours_t:8.3f} {ref_t:8.3f} {ours_t / ref_t:6.2f} "
            f"{count_nodes(ours):5}/{ref_nodes:<5} {ours.ByteSize() / 1e6:6.2f}/{ref_mb:<6.2f}"
            f"  {runs_in_ort(ours)} / {runs_in_ort(ref) if ref is not None else '-'}"
        )


def bench_sanitize(repeat: int) -> None:
    try:
        from polygraphy.backend.onnx import fold_constants
    except ImportError as exc:
        fold_constants = None
        print(f"polygraphy missing ({exc}): reference column empty")
    print("\n== Sanitize: ours (ORT evaluator) vs Polygraphy fold_constants ==")
    head = f"{'model':30} {'ours s':>8} {'ref s':>8} {'ratio':>6} {'nodes in':>9}"
    print(head + f" {'ours':>6} {'ref':>6}")
    for label, build in [
        *MODELS.items(),
        ("shape subgraph, dynamic batch", lambda: tm.shape_subgraph_model(True)),
        ("two-pass fold", tm.two_pass_model),
        ("if/loop", tm.if_loop_model),
    ]:
        model = build()
        ours_t, ours = timed(lambda m=model: sanitize(m, evaluator=ort_evaluator).model, repeat)
        ref_t, ref_nodes = float("nan"), -1
        if fold_constants is not None:

            def run_ref(m: onnx.ModelProto = model) -> onnx.ModelProto:
                copy = onnx.ModelProto()
                copy.CopyFrom(m)
                return fold_constants(copy, num_passes=None, error_ok=True)

            ref_t, ref = timed(run_ref, repeat)
            ref_nodes = len(ref.graph.node)
        print(
            f"{label:30} {ours_t:8.3f} {ref_t:8.3f} {ours_t / ref_t:6.2f} "
            f"{len(model.graph.node):9} {len(ours.graph.node):6} {ref_nodes:6}"
        )


def valid(model: onnx.ModelProto | None) -> str:
    """checker (full) / onnxruntime load / topologically sorted, as ``c r s`` flags."""
    from designer.core.transforms import is_sorted

    if model is None:
        return "error"
    try:
        onnx.checker.check_model(model, full_check=True)
        checked = "ok"
    except Exception:
        checked = "BAD"
    loads = "ok" if runs_in_ort(model) == "yes" else "BAD"
    return f"checker {checked}, ort {loads}, sorted {'ok' if is_sorted(model.graph) else 'BAD'}"


def bench_known_cases() -> None:
    """The converter failure cases of issue 5, keep_io_types=True, ours vs the reference."""
    try:
        from onnxconverter_common import float16
    except ImportError:
        return
    from designer.core.transforms import FP16Options

    print("\n== FP16 known failure cases (keep_io_types): ours | onnxconverter-common ==")
    cases = {
        "Resize with scales": tm.resize_scales_model,
        "Cast(to=float)": tm.cast_to_float_model,
        "unsorted graph": lambda: tm.unsorted(tm.resnet_like(blocks=1)),
        "If/Loop subgraphs": tm.if_loop_model,
    }
    for label, build in cases.items():
        ours = convert_to_fp16(build(), FP16Options(keep_io_types=True)).model
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = float16.convert_float_to_float16(build(), keep_io_types=True)
        except Exception:
            ref = None
        print(f"{label:20} {valid(ours)} | {valid(ref)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bench_fp16(args.repeat)
    bench_known_cases()
    bench_sanitize(args.repeat)


if __name__ == "__main__":
    main()
