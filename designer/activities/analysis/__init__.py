"""Analysis of any profile (SPEC E-1..E-3, B-3): one profile model for ONNX Runtime and
TensorRT profiles, DLProf-style reports over an iteration range, an expert system of
plug-in detectors, and the comparison of two runs. Qt-free."""

from designer.activities.analysis.analyze import Analysis, analyze
from designer.activities.analysis.profile import NotAProfileError, Profile, load_profile
from designer.activities.analysis.stats import ProfileStats, compute_stats

__all__ = [
    "Analysis",
    "NotAProfileError",
    "Profile",
    "ProfileStats",
    "analyze",
    "compute_stats",
    "load_profile",
]
