"""Profile an ONNX model with ONNX Runtime's profiler. Runs ON THE TARGET.

Standard library + onnxruntime + numpy only (Python >= 3.9): this file is copied to the target's
deployment directory and run with the deployment venv's python. Never imported by the host.

    python ort_profile.py --model M --out-dir D [--iterations N] [--warmup N]
        [--provider P] [--optimize] [--threads N] [--inputs MANIFEST.json] [--dim NAME=V]...
    python ort_profile.py --list-providers

Writes ``D/profile.json`` (ORT's trace) and ``D/result.json`` (what was run, timings, status).
Progress lines go to stdout; errors to stderr with exit status 2 (bad options/model) or 3
(run failed). SIGTERM/SIGINT end the loop early and still write the (partial) profile.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from typing import Any

EXIT_USAGE = 2
EXIT_FAILED = 3

_NUMPY_TYPES = {
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(double)": "float64",
    "tensor(int8)": "int8",
    "tensor(int16)": "int16",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(uint8)": "uint8",
    "tensor(uint16)": "uint16",
    "tensor(uint32)": "uint32",
    "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
}


class Stop(Exception):
    """Raised by the signal handler: finish up, write what exists."""


def _stop(signum: int, frame: Any) -> None:
    raise Stop(signal.Signals(signum).name)


def log(message: str) -> None:
    print(message, flush=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="ort_profile.py")
    p.add_argument("--model")
    p.add_argument("--out-dir")
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--provider", default="CPUExecutionProvider")
    p.add_argument("--optimize", action="store_true")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--inputs", help="JSON manifest: input name -> .npy file")
    p.add_argument("--dim", action="append", default=[], help="NAME=VALUE for free dimensions")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--list-providers", action="store_true")
    return p.parse_args(argv)


def random_feed(session: Any, dims: dict[str, int], seed: int) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    feed = {}
    for meta in session.get_inputs():
        shape = []
        for d in meta.shape:
            if isinstance(d, int) and d >= 0:
                shape.append(d)
            elif isinstance(d, str) and d in dims:
                shape.append(dims[d])
            else:
                shape.append(1)
        dtype = _NUMPY_TYPES.get(meta.type)
        if dtype is None:
            if meta.type == "tensor(string)":
                feed[meta.name] = np.full(shape, "a", dtype=object)
                continue
            raise ValueError(
                f"input {meta.name!r} has type {meta.type}; give it in an inputs folder"
            )
        if dtype.startswith("float"):
            feed[meta.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == "bool":
            feed[meta.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            feed[meta.name] = rng.integers(0, 2, shape).astype(dtype)
    return feed


def file_feed(manifest_path: str) -> dict[str, Any]:
    import numpy as np

    base = os.path.dirname(os.path.abspath(manifest_path))
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    return {
        name: np.load(os.path.join(base, rel), allow_pickle=False) for name, rel in manifest.items()
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        import onnxruntime as ort
    except ImportError as exc:
        print(f"onnxruntime is not importable on the target: {exc}", file=sys.stderr)
        return EXIT_FAILED
    available = list(ort.get_available_providers())
    if args.list_providers:
        print(json.dumps({"onnxruntime": ort.__version__, "providers": available}))
        return 0
    if not args.model or not args.out_dir:
        print("--model and --out-dir are required", file=sys.stderr)
        return EXIT_USAGE
    if args.provider not in available:
        print(
            "execution provider {} is not available on the target (available: {})".format(
                args.provider, ", ".join(available)
            ),
            file=sys.stderr,
        )
        return EXIT_USAGE
    dims = {}
    for item in args.dim:
        name, _, value = item.partition("=")
        dims[name] = int(value)
    os.makedirs(args.out_dir, exist_ok=True)
    profile_path = os.path.join(args.out_dir, "profile.json")
    result = {
        "status": "failed",
        "onnxruntime": ort.__version__,
        "provider": args.provider,
        "providers_available": available,
        "iterations_done": 0,
        "warmup": args.warmup,
        "iterations": args.iterations,
        "optimize": args.optimize,
        "run_ms": [],
    }
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    session = None
    code = EXIT_FAILED
    try:
        opts = ort.SessionOptions()
        opts.enable_profiling = True
        opts.profile_file_prefix = os.path.join(args.out_dir, "ort_profile")
        level = ort.GraphOptimizationLevel
        opts.graph_optimization_level = (
            level.ORT_ENABLE_ALL if args.optimize else level.ORT_DISABLE_ALL
        )
        if args.threads > 0:
            opts.intra_op_num_threads = args.threads
        providers = [args.provider] + (
            ["CPUExecutionProvider"] if args.provider != "CPUExecutionProvider" else []
        )
        log(f"loading {os.path.basename(args.model)} with {args.provider}")
        t0 = time.perf_counter()
        session = ort.InferenceSession(args.model, sess_options=opts, providers=providers)
        result["session_ms"] = (time.perf_counter() - t0) * 1000.0
        feed = file_feed(args.inputs) if args.inputs else random_feed(session, dims, args.seed)
        result["inputs"] = {k: [list(v.shape), str(v.dtype)] for k, v in feed.items()}
        total = args.warmup + args.iterations
        last_log = 0.0
        for i in range(total):
            t = time.perf_counter()
            session.run(None, feed)
            ms = (time.perf_counter() - t) * 1000.0
            result["run_ms"].append(ms)
            result["iterations_done"] = i + 1
            now = time.perf_counter()
            if now - last_log > 0.2 or i + 1 == total:
                phase = "warm-up" if i < args.warmup else "iteration"
                log(f"{phase} {i + 1}/{total}: {ms:.3f} ms")
                last_log = now
        result["status"] = "ok"
        code = 0
    except Stop as exc:
        result["status"] = "stopped"
        result["error"] = f"stopped by {exc}"
        print(f"stopped by {exc}; writing the partial profile", file=sys.stderr)
        code = EXIT_FAILED
    except Exception as exc:  # the message goes to the host's log as one line
        result["error"] = f"{type(exc).__name__}: {exc}"
        print("profiling failed: {}".format(result["error"]), file=sys.stderr)
        code = EXIT_FAILED if session is not None else EXIT_USAGE
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if session is not None:
            written = session.end_profiling()
            if written and os.path.exists(written):
                os.replace(written, profile_path)
                result["profile"] = "profile.json"
        tmp = os.path.join(args.out_dir, "result.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, os.path.join(args.out_dir, "result.json"))
    if code == 0:
        log(f"profile written: {result['iterations_done']} run(s)")
    return code


if __name__ == "__main__":
    sys.exit(main())
