"""One call from files to reports: profile + optional model → statistics, findings, tables.

Shared by ``onnx-designer report`` and the GUI (report tab Export, Findings dock)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import onnx

from designer.activities.analysis.detectors.base import (
    Context,
    Detector,
    Finding,
    load_detectors,
    run_detectors,
)
from designer.activities.analysis.profile import NotAProfileError, Profile, load_profile
from designer.activities.analysis.reports import REPORTS, build_reports, write_reports
from designer.activities.analysis.stats import ProfileStats, compute_stats
from designer.activities.reports.table import Table

__all__ = ["Analysis", "analyze", "analyze_profile", "read_model_for_analysis"]


@dataclass
class Analysis:
    profile: Profile
    stats: ProfileStats
    findings: list[Finding]

    def tables(self, reports: Sequence[str] = REPORTS) -> dict[str, Table]:
        return build_reports(self.stats, self.findings, reports)

    def write(
        self,
        folder: Path,
        reports: Sequence[str] = REPORTS,
        formats: Sequence[str] = ("csv", "json"),
    ) -> list[Path]:
        return write_reports(self.tables(reports), folder, self.profile.name, formats)


def read_model_for_analysis(path: Path) -> onnx.ModelProto:
    """The model's graph without loading external weights (patterns and shapes only)."""
    if not path.is_file():
        raise NotAProfileError(f"{path}: no such model file")
    try:
        return onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # protobuf raises DecodeError and others
        raise NotAProfileError(f"{path}: not an ONNX model ({type(exc).__name__})") from None


def analyze_profile(
    profile: Profile,
    *,
    iter_start: int | None = None,
    iter_stop: int | None = None,
    detectors: Sequence[Detector] | None = None,
) -> Analysis:
    stats = compute_stats(profile, iter_start, iter_stop)
    chosen = load_detectors() if detectors is None else detectors
    findings = run_detectors(Context(stats, profile.model), chosen)
    return Analysis(profile, stats, findings)


def analyze(
    path: Path,
    *,
    model: Path | onnx.ModelProto | None = None,
    iter_start: int | None = None,
    iter_stop: int | None = None,
    key_node: str | None = None,
    extra: Sequence[Path] = (),
    detectors: Sequence[Detector] | None = None,
) -> Analysis:
    """Read ``path`` (ORT or TensorRT) and analyse it. Raises NotAProfileError or
    ValueError (bad range) with one line."""
    proto = read_model_for_analysis(model) if isinstance(model, Path) else model
    profile = load_profile(path, model=proto, key_node=key_node, extra=extra)
    return analyze_profile(profile, iter_start=iter_start, iter_stop=iter_stop, detectors=detectors)
