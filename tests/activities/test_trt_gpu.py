"""A real TensorRT build and profile of a shared model, on this machine's GPU.

Runs only where the ``tensorrt`` Python package, a CUDA device and a trtexec exist; skipped
elsewhere with the reason (the machines of the project's CI have no GPU: there the stand-in
trtexec replays real TensorRT output, see test_trt_activity.py).
"""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path

import pytest

from designer.activities.targets import LocalTarget

SHARED_MODELS = Path(__file__).resolve().parents[2].parent / "shared" / "models"
MODEL = SHARED_MODELS / "squeezenet1_0.torchscript.onnx"


def _cuda_device_reason() -> str | None:
    """None when the CUDA driver reports at least one device, else why not."""
    for name in ("libcuda.so.1", "libcuda.so"):
        try:
            cuda = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        return "no CUDA driver (libcuda) on this machine"
    if cuda.cuInit(0) != 0:
        return "the CUDA driver failed to initialise (no GPU?)"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return "no CUDA device"
    return None


@pytest.fixture(scope="module")
def gpu() -> object:
    pytest.importorskip("tensorrt", reason="needs the tensorrt Python package and a CUDA GPU")
    reason = _cuda_device_reason()
    if reason:
        pytest.skip(f"needs a CUDA GPU: {reason}")
    if not MODEL.is_file():
        pytest.skip(f"{MODEL} missing (the shared models are expected beside the checkout)")
    from designer.activities.trt.detect import detect_tensorrt

    found = detect_tensorrt(LocalTarget())
    if getattr(found, "trtexec", None) is None:
        pytest.skip(f"no trtexec found: {getattr(found, 'reason', '')}")
    return found


def test_real_build_and_profile(gpu: object, tmp_path: Path) -> None:
    from designer.activities.reports import model_nodes
    from designer.activities.reports.trt_tables import load_trt_report
    from designer.activities.trt.options import TrtBuildOptions, TrtProfileOptions
    from designer.activities.trt.run import run_trt_build, run_trt_profile
    from designer.core.io import read_model

    model = tmp_path / MODEL.name
    shutil.copy(MODEL, model)
    shape = [1, 3, 224, 224]
    profiles = [{"input": (shape, shape, shape)}]
    engine = tmp_path / "squeezenet.engine"
    build = TrtBuildOptions(
        model=str(model),
        engine=str(engine),
        fp16=True,
        profiles=profiles,
        layer_info=str(tmp_path / "layers.json"),
    )
    built = run_trt_build(LocalTarget(), build, detection=gpu)
    assert built.status == "ok", built.error
    assert engine.stat().st_size > 10_000
    assert set(built.outputs) >= {"engine", "layer_info", "log"}
    profile = TrtProfileOptions(
        build=TrtBuildOptions(model=str(model), profiles=profiles),
        use_engine=str(engine),
        iterations=50,
        export_profile=str(tmp_path / "profile.json"),
        export_times=str(tmp_path / "times.json"),
    )
    measured = run_trt_profile(LocalTarget(), profile, detection=gpu)
    assert measured.status == "ok", measured.error
    report = load_trt_report(
        measured.profile,
        layer_info=built.outputs["layer_info"],
        log=measured.outputs["log"],
        times=measured.outputs.get("times"),
    )
    assert report.layers and report.total_ms > 0
    assert report.performance is not None and report.performance.gpu_compute is not None
    names = {n.name for n in model_nodes(read_model(model))}
    mapped = set(report.onnx_node_share())
    assert mapped & names, "no engine layer maps back to an ONNX node"
