"""Device, build and run facts of an engine (Qt-free).

From TREx's ``*.build.metadata.json`` / ``*.profile.metadata.json`` (fields TREx parsed from
trtexec logs), the A100 ``*.metadata.json`` device dump, or trtexec logs directly (see
:mod:`trtexec_log`): :class:`DeviceInfo`, :class:`BuildInfo` (model and build options),
:class:`RunInfo` (inference options and the performance summary).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from designer.activities.reports.trt_engine import EngineFormatError
from designer.activities.reports.trt_profile import (
    LatencyStats,
    PerformanceSummary,
    as_float,
    stats_from_list,
)

__all__ = [
    "BuildInfo",
    "DeviceInfo",
    "RunInfo",
    "allowed_precisions",
    "device_from_trtexec",
    "parse_build_metadata",
    "parse_device_metadata",
    "parse_profile_metadata",
]


@dataclass(frozen=True)
class DeviceInfo:
    """The GPU: name, compute capability ("8.0"), SM count, memory (MiB), clocks (GHz)."""

    name: str | None = None
    compute_capability: str | None = None
    sms: int | None = None
    global_memory_mib: float | None = None
    compute_clock_ghz: float | None = None
    memory_clock_ghz: float | None = None
    memory_bus_width_bits: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def device_from_trtexec(d: Mapping[str, Any]) -> DeviceInfo | None:
    if not d:
        return None
    cc = d.get("Compute Capability")
    sms = as_float(d.get("SMs"))
    bus = as_float(d.get("Memory Bus Width"))
    return DeviceInfo(
        name=d.get("Selected Device") if isinstance(d.get("Selected Device"), str) else None,
        compute_capability=None if cc is None else str(cc),
        sms=None if sms is None else int(sms),
        global_memory_mib=as_float(d.get("Device Global Memory")),
        compute_clock_ghz=as_float(
            d.get("Compute Clock Rate", d.get("Application Compute Clock Rate"))
        ),
        memory_clock_ghz=as_float(
            d.get("Memory Clock Rate", d.get("Application Memory Clock Rate"))
        ),
        memory_bus_width_bits=None if bus is None else int(bus),
        raw=dict(d),
    )


def parse_device_metadata(root: Any, source: Path | None = None) -> DeviceInfo:
    """The A100 ``*.metadata.json``: a list of per-GPU attribute dicts; the first one is used."""
    item = root[0] if isinstance(root, list) and root else root
    if not isinstance(item, Mapping) or "Name" not in item:
        where = f"{source}: " if source else ""
        raise EngineFormatError(
            f'{where}not a device-attributes JSON (expected [{{"Name", "ComputeCapability", ...}}])'
        )
    cc = item.get("ComputeCapability")
    mem = as_float(item.get("TotalMemory"))
    clock = as_float(item.get("CLOCK_RATE"))
    sms = item.get("MULTIPROCESSOR_COUNT")
    bus = item.get("GLOBAL_MEMORY_BUS_WIDTH")
    return DeviceInfo(
        name=str(item["Name"]),
        compute_capability=".".join(str(c) for c in cc) if isinstance(cc, list) else None,
        sms=sms if isinstance(sms, int) else None,
        global_memory_mib=None if mem is None else mem / 2**20,
        compute_clock_ghz=None if clock is None else clock / 1e6,
        memory_bus_width_bits=bus if isinstance(bus, int) else None,
        raw=dict(item),
    )


@dataclass(frozen=True)
class BuildInfo:
    """How the engine was built: trtexec's Model/Build Options sections, TensorRT version."""

    model_options: Mapping[str, str] = field(default_factory=dict)
    build_options: Mapping[str, str] = field(default_factory=dict)
    device: DeviceInfo | None = None
    trt_version: str | None = None

    @property
    def precision(self) -> str | None:
        """trtexec's "Precision" line, e.g. ``FP32+FP16+INT8``."""
        return self.build_options.get("Precision")


@dataclass(frozen=True)
class RunInfo:
    """How the engine was timed: Inference Options and the Performance summary."""

    performance: PerformanceSummary | None = None
    inference_options: Mapping[str, str] = field(default_factory=dict)
    device: DeviceInfo | None = None
    trt_version: str | None = None


def allowed_precisions(build: BuildInfo | None) -> frozenset[str] | None:
    """Precisions the builder was allowed to choose (``FP32+FP16`` → {FP32, FP16}; TF32 is
    on by default in trtexec unless ``--noTF32``); None when the build options are unknown."""
    if build is None or build.precision is None:
        return None
    found = {p.strip().upper() for p in build.precision.replace(",", "+").split("+") if p.strip()}
    found.discard("")
    if "FP32" in found and "TF32" not in found:
        found.add("TF32")  # trtexec enables TF32 by default
    return frozenset(found)


def _str_dict(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): str(v) for k, v in raw.items()}


def parse_build_metadata(root: Any, source: Path | None = None) -> BuildInfo:
    """TREx ``*.build.metadata.json``: ``{"model_options", "build_options", ...}``."""
    if not isinstance(root, Mapping) or not ({"build_options", "model_options"} & root.keys()):
        where = f"{source}: " if source else ""
        raise EngineFormatError(
            f'{where}not a build-metadata JSON (expected {{"model_options", "build_options"}})'
        )
    device = root.get("device_information")
    return BuildInfo(
        model_options=_str_dict(root.get("model_options")),
        build_options=_str_dict(root.get("build_options")),
        device=device_from_trtexec(device) if isinstance(device, Mapping) else None,
    )


def _perf_from_trex(d: Mapping[str, Any]) -> PerformanceSummary:
    def stats(key: str) -> LatencyStats | None:
        value = d.get(key)
        return stats_from_list(value) if isinstance(value, list) else None

    return PerformanceSummary(
        throughput_qps=as_float(d.get("Throughput")),
        latency=stats("Latency"),
        enqueue=stats("Enqueue Time"),
        h2d=stats("H2D Latency"),
        gpu_compute=stats("GPU Compute Time"),
        d2h=stats("D2H Latency"),
        total_host_walltime_s=as_float(d.get("Total Host Walltime")),
        total_gpu_compute_s=as_float(d.get("Total GPU Compute Time")),
    )


def parse_profile_metadata(root: Any, source: Path | None = None) -> RunInfo:
    """TREx ``*.profile.metadata.json``: ``{"performance_summary", "inference_options",
    "device_information"}``."""
    if not isinstance(root, Mapping) or "performance_summary" not in root:
        where = f"{source}: " if source else ""
        raise EngineFormatError(
            f'{where}not a profile-metadata JSON (expected {{"performance_summary", ...}})'
        )
    perf = root.get("performance_summary")
    device = root.get("device_information")
    return RunInfo(
        performance=_perf_from_trex(perf) if isinstance(perf, Mapping) else None,
        inference_options=_str_dict(root.get("inference_options")),
        device=device_from_trtexec(device) if isinstance(device, Mapping) else None,
    )
