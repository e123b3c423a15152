"""The expert system's plug-in interface (SPEC E-2).

A detector is a class with an ``id``, a ``title`` and ``detect(context) -> list[Finding]``;
each finding names one problem, the nodes it concerns (ONNX node names where known, else
profiled names), one actionable fix and, where it can be estimated, the expected gain per
iteration. Detectors come from three places (:func:`load_detectors`): the built-ins, the
entry-point group ``onnx_designer.detectors`` (an installed package declares
``[project.entry-points."onnx_designer.detectors"] name = "module:Class"``) and Python files
given by path (``--detectors FILE.py``; every Detector subclass defined in the file).
An installed plug-in that fails to load, or whose ``detect`` raises, is reported and skipped
(:mod:`designer.plugins`); a file given by path that fails stops the report with one line.
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import onnx

from designer import plugins
from designer.activities.analysis.profile import Profile
from designer.activities.analysis.stats import ProfileStats
from designer.core.errors import DesignerError
from designer.plugins import PluginError

__all__ = [
    "ENTRY_POINT_GROUP",
    "Context",
    "Detector",
    "DetectorError",
    "Finding",
    "Severity",
    "load_detectors",
    "run_detectors",
]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = plugins.DETECTORS
Severity = Literal["high", "medium", "low", "info"]
_RANK = {"high": 0, "medium": 1, "low": 2, "info": 3}


class DetectorError(DesignerError):
    """A detector plug-in could not be loaded (one line)."""


@dataclass(frozen=True)
class Finding:
    detector: str
    severity: Severity
    problem: str
    fix: str
    nodes: tuple[str, ...] = ()
    gain_us: float | None = None  # expected saving per iteration
    gain_percent: float | None = None  # of the node time per iteration

    def as_dict(self) -> dict[str, object]:
        return {
            "detector": self.detector,
            "severity": self.severity,
            "problem": self.problem,
            "fix": self.fix,
            "nodes": list(self.nodes),
            "expected_gain_us": self.gain_us,
            "expected_gain_percent": self.gain_percent,
        }


@dataclass
class Context:
    """What a detector may look at: the profile's statistics over the chosen range and,
    when given, the ONNX model (for graph patterns, weights, TensorRT settings)."""

    stats: ProfileStats
    model: onnx.ModelProto | None = None
    options: dict[str, object] = field(default_factory=dict)

    @property
    def profile(self) -> Profile:
        return self.stats.profile

    def gain(self, us: float) -> tuple[float, float]:
        """(µs per iteration, percent of the node time per iteration)."""
        total = self.stats.per_iteration_us or 1.0
        return us, 100.0 * us / total


class Detector:
    """Base class of every detector (subclass it; override ``detect``)."""

    id = "detector"
    title = "Detector"

    def detect(self, context: Context) -> list[Finding]:
        raise NotImplementedError


def _from_file(path: Path) -> list[type[Detector]]:
    if not path.is_file():
        raise DetectorError(f"{path}: no such detector file")
    name = f"onnx_designer_detectors_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DetectorError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a plug-in's own error, reported in one line
        raise DetectorError(f"{path}: cannot load ({type(exc).__name__}: {exc})") from None
    found = [
        obj
        for _n, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, Detector) and obj is not Detector and obj.__module__ == name
    ]
    if not found:
        raise DetectorError(f"{path}: defines no Detector subclass")
    return found


def _detector_class(obj: object) -> type[Detector]:
    if not (inspect.isclass(obj) and issubclass(obj, Detector)):
        raise PluginError(f"{obj!r} is not a Detector subclass")
    return obj


def _from_entry_points() -> list[type[Detector]]:
    """Installed detector plug-ins by name; a broken one is reported (an ERROR log record
    naming it: the Log window, stderr) and skipped, so the report still runs."""
    found: list[type[Detector]] = []
    for plugin in plugins.load(ENTRY_POINT_GROUP):
        cls = plugins.invoke(plugin, "load", _detector_class, plugin.obj)
        if cls is not plugins.FAILED:
            found.append(cls)
    return found


def load_detectors(files: Iterable[Path] = (), *, plugins: bool = True) -> list[Detector]:
    """Built-ins, then entry-point plug-ins, then detectors defined in ``files``; one
    instance per class (a later one with the same ``id`` replaces an earlier one)."""
    from designer.activities.analysis.detectors import BUILTINS

    classes: list[type[Detector]] = list(BUILTINS)
    if plugins:
        classes += _from_entry_points()
    for path in files:
        classes += _from_file(Path(path))
    by_id: dict[str, Detector] = {}
    for cls in classes:
        by_id[cls.id] = cls()
    return list(by_id.values())


def run_detectors(context: Context, detectors: Sequence[Detector]) -> list[Finding]:
    """Every detector's findings, largest expected gain first (then severity)."""
    from designer.activities.analysis.detectors import BUILTINS

    findings: list[Finding] = []
    for detector in detectors:
        if type(detector) in BUILTINS:
            findings.extend(detector.detect(context))
            continue
        try:
            found = detector.detect(context)
        except Exception as exc:  # a plug-in's bug must not lose the other findings
            logger.error(
                "detector %r (%s) failed (%s: %s); its findings are left out",
                detector.id,
                type(detector).__module__,
                type(exc).__name__,
                exc,
            )
            logger.debug("traceback of detector %r", detector.id, exc_info=exc)
            continue
        findings.extend(found)
    findings.sort(key=lambda f: (-(f.gain_us or 0.0), _RANK.get(f.severity, 9), f.detector))
    return findings
