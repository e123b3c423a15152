"""Real ONNX Runtime profiles of real models for the analysis tests (CPU provider)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

_NP = {1: np.float32, 10: np.float16, 7: np.int64, 6: np.int32, 9: np.bool_, 11: np.float64}


def feeds(model: onnx.ModelProto, free: int = 8) -> dict[str, np.ndarray]:
    """Inputs for every runtime input: free dims = ``free``; ids small, masks ones."""
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    out: dict[str, np.ndarray] = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else free for d in t.shape.dim]
        dtype = _NP[t.elem_type]
        if dtype in (np.int64, np.int32):
            value = np.ones(shape, dtype) if "mask" in vi.name else rng.integers(0, 50, shape)
            out[vi.name] = value.astype(dtype)
        else:
            out[vi.name] = rng.standard_normal(shape).astype(dtype)
    return out


def profile_model(
    model_path: Path, out_dir: Path, *, optimize: bool, runs: int = 3, free: int = 8
) -> Path:
    """Profile ``runs`` runs on the CPU provider (free dims = ``free``); returns the JSON."""
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(
        out_dir / f"{model_path.stem}_{'opt' if optimize else 'noopt'}_{free}"
    )
    so.graph_optimization_level = (
        ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if optimize
        else ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    )
    so.intra_op_num_threads = 1
    session = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
    inputs = feeds(onnx.load(str(model_path), load_external_data=False), free)
    for _ in range(runs):
        session.run(None, inputs)
    return Path(session.end_profiling())
