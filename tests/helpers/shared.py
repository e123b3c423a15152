"""Where the project's shared real data lies: ``../shared`` beside the checkout.

Tests read the real exports and the recorded TensorRT / ONNX Runtime output there in place
(never copied into the project). CI lays a copy of shared/ beside its clone, as here.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
MODELS = SHARED / "models"
FIXTURES = SHARED / "fixtures"
TRT_SAMPLES = (
    FIXTURES / "NVIDIA" / "trt-samples-for-hackathon-cn" / "cookbook" / "07-Tool" / "trtexec"
)
TREX = FIXTURES / "NVIDIA" / "TensorRT" / "tools" / "experimental" / "trt-engine-explorer"
TRT_OPTIONS = FIXTURES / "NVIDIA" / "TensorRT" / "samples" / "common"  # v10.16/, v11.1/
TRT_PYTHON = FIXTURES / "NVIDIA" / "TensorRT" / "python" / "src" / "infer"  # v10.16/, v11.1/
ORT_FIXTURES = FIXTURES / "generated" / "onnxruntime-1.32.0-cpu"


def model(name: str) -> Path:
    """A real export from ../shared/models (fails loudly when it is missing)."""
    path = MODELS / name
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the shared models are expected beside the checkout")
    return path
