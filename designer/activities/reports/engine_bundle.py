"""One engine's files together: layer JSON + profile, timing, metadata and trtexec logs.

:func:`load_engine` takes one path or several. Each file's kind is found from its content
(never only its extension: trtexec users name layer JSON ``.log``). Beside a layer JSON it
looks for the siblings TREx writes, ``<engine>.{graph,profile,timing,build.metadata,
profile.metadata,metadata}.json`` and ``<engine>.{build,profile}.log``, and those of the
trtexec samples, ``<model>-exportLayerInfo.*`` / ``-exportProfile.json`` / ``-exportTimes.json``.

:func:`with_profile` adds a profile to an engine already loaded: only when enough of its layers
are the engine's (:func:`match_profile`), and without touching what the engine itself recorded
(its TensorRT version and device); the profiling run's own are kept apart in ``profile_run``.
:func:`own_profile_only` applies the same rule to what :func:`load_engine` combined (the
command line), and :func:`timing_mismatch` tells an ``--exportTimes`` JSON of another engine.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from designer.activities.reports.trt_engine import (
    EXPECTED_LAYER_JSON,
    EngineFormatError,
    EngineGraph,
    parse_graph,
)
from designer.activities.reports.trt_metadata import (
    BuildInfo,
    DeviceInfo,
    RunInfo,
    allowed_precisions,
    parse_build_metadata,
    parse_device_metadata,
    parse_profile_metadata,
)
from designer.activities.reports.trt_profile import (
    EngineProfile,
    EngineTiming,
    PerformanceSummary,
    parse_profile_json,
    parse_timing_json,
)
from designer.activities.reports.trtexec_log import TrtexecLog, is_trtexec_log, parse_trtexec_log

__all__ = [
    "PROFILE_MATCH_MIN",
    "TIMING_RATIO",
    "EngineBundle",
    "FileKind",
    "ProfileMatch",
    "classify",
    "engine_name",
    "load_engine",
    "match_profile",
    "other_engine_message",
    "own_profile_only",
    "profile_companions",
    "read_profile",
    "run_description",
    "sibling_files",
    "timing_mismatch",
    "with_profile",
]

FileKind = Literal[
    "graph", "profile", "timing", "build.metadata", "profile.metadata", "metadata", "log"
]
_TREX_KINDS: tuple[str, ...] = (
    "graph",
    "profile",
    "timing",
    "build.metadata",
    "profile.metadata",
    "metadata",
)
_TREX_SUFFIX = re.compile(
    r"\.(graph|profile|timing|build\.metadata|profile\.metadata|metadata)\.json$"
)
_SAMPLE_SUFFIX = re.compile(r"-export(LayerInfo|Profile|Times)(\.[A-Za-z]+)?$")
# A profile is this engine's when at least this share of its layers are the engine's layers
# (a profile of the same engine matches all; another build of the same model about 70 %).
PROFILE_MATCH_MIN = 0.5


@dataclass
class EngineBundle:
    """All that is known about one engine; every part but ``graph`` is optional."""

    name: str
    graph: EngineGraph
    profile: EngineProfile | None = None
    timing: EngineTiming | None = None
    build: BuildInfo | None = None
    run: RunInfo | None = None
    device_attributes: DeviceInfo | None = None
    logs: list[TrtexecLog] = field(default_factory=list)
    sources: dict[str, list[Path]] = field(default_factory=dict)
    # The run that measured a profile added by with_profile (its TensorRT, device, timings):
    # never the engine's own record, so it is not consulted by trt_version / device.
    profile_run: RunInfo | None = None
    #: Files found beside the engine that could not be read (one line each, naming the
    #: file): skipped so the engine still opens, and said so.
    skipped: tuple[str, ...] = ()

    @property
    def trt_version(self) -> str | None:
        """The exact TensorRT version when a log recorded it (else None; see version_family)."""
        for part in (self.build, self.run, *self.logs):
            version = getattr(part, "trt_version", None)
            if version:
                return str(version)
        return None

    @property
    def version_family(self) -> str:
        version = self.trt_version
        if version:
            return f"{version.split('.')[0]}.x"
        return self.graph.version_family

    @property
    def device(self) -> DeviceInfo | None:
        for part in (self.run, self.build):
            if part is not None and part.device is not None:
                return part.device
        return self.device_attributes

    @property
    def performance(self) -> PerformanceSummary | None:
        """From profile metadata / a profiling log, else computed from the timing JSON."""
        for run in (self.run, self.profile_run):
            if run is not None and run.performance is not None:
                return run.performance
        if self.timing is not None and self.timing.records:
            return self.timing.summary()
        return None

    @property
    def allowed_precisions(self) -> frozenset[str] | None:
        """What the builder was allowed to use (from the build options), None if unknown."""
        found = allowed_precisions(self.build)
        if found is None:
            return None
        flags = {f.split("=")[0] for log in self.logs for f in log.flags}
        if "--noTF32" in flags:
            found = found - {"TF32"}
        return found

    def latency_of(self, layer_name: str) -> float | None:
        """Average ms of one layer in the profile (None without a profile or for no match)."""
        if self.profile is None:
            return None
        found = self.profile.by_name().get(layer_name)
        return None if found is None else found.average_ms


def engine_name(path: Path) -> str:
    """``resnet.onnx.engine.graph.json`` → ``resnet.onnx.engine``;
    ``m-exportLayerInfo.log`` → ``m``."""
    name = path.name
    trex = _TREX_SUFFIX.search(name)
    if trex:
        return name[: trex.start()]
    stem = re.sub(r"\.(json|log|txt)$", "", name)
    sample = _SAMPLE_SUFFIX.search(stem)
    return stem[: sample.start()] if sample else stem


def sibling_files(path: Path) -> list[Path]:
    """Existing companion files of a layer JSON (not including ``path`` itself)."""
    folder, base = path.parent, engine_name(path)
    candidates = [folder / f"{base}.{kind}.json" for kind in _TREX_KINDS]
    candidates += [folder / f"{base}.build.log", folder / f"{base}.profile.log"]
    candidates += [folder / f"{base}-export{k}.json" for k in ("Profile", "Times")]
    return [c for c in candidates if c.is_file() and c.resolve() != path.resolve()]


def profile_companions(path: Path) -> list[Path]:
    """Existing files beside a profile that are named after its engine: TREx's
    ``<engine>.<kind>.json`` and logs, and for the trtexec samples' ``<model>-exportProfile
    .json`` also ``<model>-exportLayerInfo.{json,log}`` (not including ``path`` itself)."""
    found = list(sibling_files(path))
    suffix = "-exportProfile.json"
    if path.name.endswith(suffix):
        base = path.name[: -len(suffix)]
        found += [
            path.with_name(f"{base}-{k}")
            for k in ("exportLayerInfo.json", "exportLayerInfo.log", "exportTimes.json")
        ]
    out: list[Path] = []
    for p in found:
        if p.is_file() and p.resolve() != path.resolve() and p not in out:
            out.append(p)
    return out


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EngineFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if path.suffix.lower() == ".onnx":
        raise EngineFormatError(
            f"{path}: an ONNX model, not an engine's files; give the layer JSON that "
            "trtexec --exportLayerInfo wrote for its engine"
        )
    if b"\0" in data[:4096]:
        raise EngineFormatError(
            f"{path}: a binary file (a serialized engine needs TensorRT to read); export its "
            f"layers with trtexec --loadEngine={path.name} --exportLayerInfo=layers.json "
            "--profilingVerbosity=detailed and open that"
        )
    return data.decode("utf-8", errors="replace")


def classify(path: Path) -> tuple[FileKind, Any]:
    """The kind of one file and its parsed content (JSON value or :class:`TrtexecLog`)."""
    text = _read(path)
    try:
        root = json.loads(text)
    except (ValueError, RecursionError) as exc:
        if is_trtexec_log(text):
            return "log", parse_trtexec_log(text.split("\n"), path)
        if text.lstrip()[:1] in ("{", "["):  # JSON that is cut short or damaged
            where = f" ({exc})" if isinstance(exc, json.JSONDecodeError) else ""
            raise EngineFormatError(
                f"{path}: damaged or cut-off JSON{where} (a stopped run leaves it "
                f"incomplete: write it again); expected {EXPECTED_LAYER_JSON}"
            ) from None
        raise EngineFormatError(
            f"{path}: neither JSON nor a trtexec log; expected {EXPECTED_LAYER_JSON}"
        ) from None
    if isinstance(root, dict):
        if "Layers" in root:
            return "graph", root
        if "performance_summary" in root:
            return "profile.metadata", root
        if "build_options" in root or "model_options" in root:
            return "build.metadata", root
    if isinstance(root, list) and root and all(isinstance(x, dict) for x in root):
        first = root[1] if len(root) > 1 and "count" in root[0] else root[0]
        if "count" in root[0] or "averageMs" in first or "timeMs" in first:
            return "profile", root
        if "latencyMs" in first or "computeMs" in first:
            return "timing", root
        if "ComputeCapability" in first:
            return "metadata", root
        if "Name" in first:
            return "graph", root
    if isinstance(root, list) and root and all(isinstance(x, str) for x in root):
        return "graph", root
    raise EngineFormatError(f"{path}: JSON of unknown kind; expected {EXPECTED_LAYER_JSON}")


def _paths(path_or_paths: Path | str | Iterable[Path | str]) -> list[Path]:
    if isinstance(path_or_paths, (str, Path)):
        return [Path(path_or_paths)]
    return [Path(p) for p in path_or_paths]


def load_engine(
    path_or_paths: Path | str | Sequence[Path | str], siblings: bool = True
) -> EngineBundle:
    """Load an engine from its layer JSON (or a trtexec log with ``--dumpLayerInfo``) plus any
    profile / timing / metadata / log files given or found beside it.

    Explicitly given files win over found siblings of the same kind. Raises
    :class:`EngineFormatError` (one line) when no file holds the engine's layers."""
    given = _paths(path_or_paths)
    if not given:
        raise EngineFormatError(f"no file given; expected {EXPECTED_LAYER_JSON}")
    for p in given:
        if p.is_dir():
            raise EngineFormatError(f"{p}: a folder; give the engine's layer JSON inside it")
        if not p.is_file():
            raise EngineFormatError(f"{p}: no such file")
    found: list[tuple[Path, FileKind, Any]] = [(p, *classify(p)) for p in given]
    skipped: list[str] = []
    if siblings:
        seen = {p.resolve() for p in given}
        for p, kind, _ in list(found):
            if kind != "graph":
                continue
            for extra in sibling_files(p):
                if extra.resolve() in seen:
                    continue
                seen.add(extra.resolve())
                try:
                    found.append((extra, *classify(extra)))
                except EngineFormatError as exc:  # the given files still load
                    skipped.append(f"skipped {exc}")
    return dataclasses.replace(_assemble(found), skipped=tuple(skipped))


def own_profile_only(bundle: EngineBundle, given: Iterable[Path | str]) -> EngineBundle:
    """``bundle`` when it has no profile or its profile is the engine's (:func:`match_profile`,
    as :func:`with_profile` decides: what the command line accepts). A profile of another
    engine is refused when it is one of the ``given`` files (EngineFormatError, the line
    with_profile gives) and left out, with a ``skipped`` line, when it was only found beside
    the layer JSON. (:func:`load_engine` itself keeps any profile: the report card shows
    what is not in the layer JSON.)"""
    if bundle.profile is None:
        return bundle
    match = match_profile(bundle.graph, bundle.profile)
    if match.enough:
        return bundle
    log = next((log for log in bundle.logs if log.profile is bundle.profile), None)
    source = bundle.profile.source or (log.source if log is not None else None)
    path = Path(source) if source is not None else Path("the profile")
    message = other_engine_message(path, log.run if log else None, match, bundle.name)
    if source is None or path.resolve() in {Path(p).resolve() for p in given}:
        raise EngineFormatError(message)
    sources = {k: v for k, v in bundle.sources.items() if k != "profile"}
    skipped = (*bundle.skipped, f"skipped {message}")
    return dataclasses.replace(bundle, profile=None, sources=sources, skipped=skipped)


def _assemble(found: list[tuple[Path, FileKind, Any]]) -> EngineBundle:
    graph: EngineGraph | None = None
    graph_path: Path | None = None
    bundle_parts: dict[str, Any] = {}
    logs: list[TrtexecLog] = []
    sources: dict[str, list[Path]] = {}
    for path, kind, content in found:
        sources.setdefault(kind, []).append(path)
        if kind == "graph" and graph is None:
            graph, graph_path = parse_graph(content, path), path
        elif kind == "profile":
            bundle_parts.setdefault("profile", parse_profile_json(content, path))
        elif kind == "timing":
            bundle_parts.setdefault("timing", parse_timing_json(content, path))
        elif kind == "build.metadata":
            bundle_parts.setdefault("build", parse_build_metadata(content, path))
        elif kind == "profile.metadata":
            bundle_parts.setdefault("run", parse_profile_metadata(content, path))
        elif kind == "metadata":
            bundle_parts.setdefault("device_attributes", parse_device_metadata(content, path))
        elif kind == "log":
            logs.append(content)
    for log in logs:
        if graph is None and log.graph is not None:
            graph, graph_path = log.graph, log.source
        if log.build is not None:
            bundle_parts.setdefault("build", log.build)
        if log.run is not None:
            bundle_parts.setdefault("run", log.run)
        if log.profile is not None:
            bundle_parts.setdefault("profile", log.profile)
    if graph is None:
        names = ", ".join(str(p) for p, _, _ in found)
        raise EngineFormatError(f"{names}: no engine layers found; expected {EXPECTED_LAYER_JSON}")
    assert graph_path is not None
    return EngineBundle(
        name=engine_name(graph_path), graph=graph, logs=logs, sources=sources, **bundle_parts
    )


@dataclass(frozen=True)
class ProfileMatch:
    """How many of a profile's layers name a layer of the engine."""

    matched: int
    profiled: int
    missing: tuple[str, ...] = ()  # the profiled names that are not the engine's, in order

    @property
    def enough(self) -> bool:
        """Whether the profile is taken to be this engine's (see PROFILE_MATCH_MIN)."""
        return self.matched > 0 and self.matched >= PROFILE_MATCH_MIN * self.profiled


def match_profile(graph: EngineGraph, profile: EngineProfile) -> ProfileMatch:
    """Compare the profile's layer names with ``graph``'s (exact names, as the report card
    joins them). Cost: O(layers)."""
    names = {layer.name for layer in graph.layers}
    missing = tuple(p.name for p in profile.layers if p.name not in names)
    return ProfileMatch(len(profile.layers) - len(missing), len(profile.layers), missing)


# A --exportTimes JSON is taken to time the profiled engine when the profile's per-layer
# means add up to between these multiples of its median GPU compute time (per-layer
# profiling only adds time: the same engine gives 1.0-1.4 on the TREx examples; an FP32
# timing beside an FP16 profile of one ResNet-18 gives 0.51, another network's 0.25).
TIMING_RATIO = (0.67, 3.0)


def timing_mismatch(profile: EngineProfile, timing: EngineTiming) -> str | None:
    """Why ``timing`` (--exportTimes) cannot be the profiled engine's, or None when it can
    (or nothing can be told: no GPU compute times, no layer times). Cost: O(records)."""
    compute = sorted(r.compute_ms for r in timing.records if r.compute_ms is not None)
    layers = sum(p.average_ms or 0.0 for p in profile.layers if p.name != "Total")
    if not compute or layers <= 0.0:
        return None
    median = compute[len(compute) // 2]
    low, high = TIMING_RATIO
    if median > 0.0 and low <= layers / median <= high:
        return None
    return (
        f"its median GPU compute time is {median:.4g} ms per iteration while the profile's "
        f"layers add up to {layers:.4g} ms (ratio {layers / median if median else 0.0:.2f}, "
        f"expected {low:g}-{high:g}): it times another engine or another shape"
    )


def run_description(run: RunInfo | None) -> str:
    """``TensorRT 10.16.1 · NVIDIA H100 PCIe`` (what a run recorded of both; "" for neither)."""
    if run is None:
        return ""
    parts = [f"TensorRT {run.trt_version}" if run.trt_version else ""]
    parts.append(run.device.name if run.device is not None and run.device.name else "")
    return " · ".join(p for p in parts if p)


def read_profile(path: Path) -> tuple[EngineProfile, RunInfo | None]:
    """The per-layer profile in ``path`` (a --exportProfile JSON, or a trtexec log with
    --dumpProfile) and, for a log, the run that measured it. EngineFormatError otherwise."""
    kind, content = classify(path)
    if kind == "profile":
        return parse_profile_json(content, path), None
    if kind == "log" and content.profile is not None:
        return content.profile, content.run
    what = "a trtexec log without --dumpProfile" if kind == "log" else f"{kind} JSON"
    raise EngineFormatError(
        f"{path.name} holds no per-layer profile ({what}); give the JSON trtexec "
        "--exportProfile wrote, or a trtexec log of a run with --dumpProfile"
    )


def other_engine_message(
    profile_path: Path, run: RunInfo | None, match: ProfileMatch, engine: str
) -> str:
    """The one line that refuses a profile of another engine (``match`` not enough): what
    was profiled, how many layers match, and what to load instead."""
    measured = run_description(run)
    where = f" ({measured})" if measured else ""
    example = f" (e.g. {match.missing[0]!r})" if match.missing else ""
    return (
        f"{profile_path.name}{where} profiles another engine: {match.matched} of its "
        f"{match.profiled} layers are layers of {engine}{example}; not loaded. Load "
        "this engine's own profile (trtexec --loadEngine=<this engine> "
        "--exportProfile=profile.json)"
    )


def with_profile(bundle: EngineBundle, path: Path) -> tuple[EngineBundle, ProfileMatch]:
    """``bundle`` with the profile in ``path`` instead of its own (``bundle`` is unchanged).

    Raises EngineFormatError (one line: what, and what to do) when ``path`` holds no profile
    or too few of its layers are the engine's: a profile of another engine would give no
    latency to most layers. The engine's recorded version and device stay as they are; a
    log's run goes to ``profile_run``. Cost: parsing ``path``."""
    path = Path(path)
    if not path.is_file():
        raise EngineFormatError(f"{path}: no such file")
    profile, run = read_profile(path)
    match = match_profile(bundle.graph, profile)
    if not match.enough:
        raise EngineFormatError(other_engine_message(path, run, match, bundle.name))
    sources = {**bundle.sources, "profile": [path]}
    changed = dataclasses.replace(bundle, profile=profile, profile_run=run, sources=sources)
    return changed, match
