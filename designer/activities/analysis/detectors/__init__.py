"""The expert system's detectors (SPEC E-2): built-ins plus plug-ins (see base.py)."""

from designer.activities.analysis.detectors.base import (
    ENTRY_POINT_GROUP,
    Context,
    Detector,
    DetectorError,
    Finding,
    load_detectors,
    run_detectors,
)
from designer.activities.analysis.detectors.dynamic import DynamicInputs
from designer.activities.analysis.detectors.patterns import FusedPatterns
from designer.activities.analysis.detectors.placement import (
    CastReformat,
    CpuFallback,
    MemcpyNodes,
    TinyKernels,
)
from designer.activities.analysis.detectors.precision import Alignment8, Fp32TensorCore

BUILTINS: tuple[type[Detector], ...] = (
    Fp32TensorCore,
    Alignment8,
    CpuFallback,
    MemcpyNodes,
    CastReformat,
    FusedPatterns,
    DynamicInputs,
    TinyKernels,
)

__all__ = [
    "BUILTINS",
    "ENTRY_POINT_GROUP",
    "Context",
    "Detector",
    "DetectorError",
    "Finding",
    "load_detectors",
    "run_detectors",
]
