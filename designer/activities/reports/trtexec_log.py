"""trtexec build / profiling logs as plain records (Qt-free).

A log gives: the command line and TensorRT version (``&&&& RUNNING TensorRT.trtexec [TensorRT
v101601]``), pass/fail, the option sections (``=== Model Options ===``, ``=== Build Options
===``, ``=== Inference Options ===``, ``=== Device Information ===`` …), the
``=== Performance summary ===`` (throughput, latency / enqueue / H2D / GPU compute / D2H
statistics, totals), the per-layer ``=== Profile (N iterations ) ===`` table of
``--dumpProfile``, the ``--dumpLayerInfo`` layer dump (same fields as the JSON, printed as
``Name: …, LayerType: …``) with its ``Bindings:``, memory and engine-size lines, warnings
and errors. Every part is optional; what a log lacks is None / empty.

A log cut off inside the profile table (a run cancelled or still writing) keeps the rows it
has, but the table lacks its closing ``Total`` row: such a profile is a :class:`CutProfile`
whose ``problem`` (also in ``TrtexecLog.problems``) says in one sentence what is missing, for
the reports to show beside the numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from designer.activities.reports.trt_engine import EngineFormatError, EngineGraph, parse_graph
from designer.activities.reports.trt_metadata import (
    BuildInfo,
    DeviceInfo,
    RunInfo,
    device_from_trtexec,
)
from designer.activities.reports.trt_profile import (
    EngineProfile,
    LatencyStats,
    PerformanceSummary,
    ProfileLayer,
)

__all__ = [
    "CutProfile",
    "TrtexecLog",
    "is_trtexec_log",
    "load_trtexec_log",
    "parse_layer_dump_line",
    "parse_trtexec_log",
    "version_from_code",
]

_PREFIX = re.compile(r"^\[\d+/\d+/\d+-\d+:\d+:\d+\] \[([A-Z])\] ?")
_RUNNING = re.compile(
    r"^&&&& (RUNNING|PASSED|FAILED) TensorRT\.trtexec \[TensorRT v(\d+)\](?: \[b\d+\])? # (.*)$"
)
_SECTION = re.compile(r"^=== (.+?) ===$")
_PROFILE_HEADER = re.compile(r"^=== Profile \((\d+) iterations ?\) ===$")
_PROFILE_ROW = re.compile(r"^\s*([\d.]+)\s+([\d.]+)\s+(?:([\d.]+)\s+)?([\d.]+)\s+(\S.*)$")
_STAT = re.compile(r"(min|max|mean|median|percentile\(([\d.]+)%\))\s*=\s*([-+\d.eE]+)\s*ms")
_OLD_PCT = re.compile(r"percentile\s*=\s*([-+\d.eE]+)\s*ms at ([\d.]+)%")
_BYTES_LINE = re.compile(r"^(?:\[TRT\] )?(Total [A-Za-z ]+Memory|Max Scratch Memory): (\d+) bytes")
_ENGINE_SIZE = re.compile(r"Created engine with size: ([\d.]+) MiB")
_BUILD_TIME = re.compile(r"Engine built in ([\d.]+) sec")
_BINDING = re.compile(
    r"^(Input|Output) binding for (.+?) with dimensions (\S+) and type (\S+) is created"
)
_PERF_STATS = {
    "Latency": "latency",
    "Enqueue Time": "enqueue",
    "H2D Latency": "h2d",
    "GPU Compute Time": "gpu_compute",
    "D2H Latency": "d2h",
}


def version_from_code(code: str | int) -> str:
    """``101601`` → ``"10.16.1"``; ``8601`` → ``"8.6.1"`` (trtexec's ``[TensorRT vNNNN]``)."""
    n = int(code)
    if n >= 100000:  # MMmmpp (10.x and later)
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"  # Mmpp (8.x)


@dataclass
class CutProfile(EngineProfile):
    """A ``--dumpProfile`` table that ends without its "Total" row (the log was cut inside
    it): the rows it has, and ``problem``, one sentence saying what that means. Its sums and
    shares cover only these rows; a report showing them must show ``problem`` too."""

    problem: str = ""


@dataclass
class TrtexecLog:
    """Everything a trtexec log recorded (None / empty where it did not)."""

    source: Path | None = None
    command: str | None = None
    status: str | None = None  # "PASSED" / "FAILED" / None (cut off)
    trt_version: str | None = None
    sections: dict[str, dict[str, str]] = field(default_factory=dict)
    performance: PerformanceSummary | None = None
    profile: EngineProfile | None = None
    graph: EngineGraph | None = None
    memory_bytes: dict[str, int] = field(default_factory=dict)
    engine_size_mib: float | None = None
    build_time_s: float | None = None
    io_bindings: list[tuple[str, str, str, str]] = field(
        default_factory=list
    )  # mode,name,dims,type
    tf32_default: bool = False
    warnings: list[str] = field(default_factory=list)  # trtexec's own [W] lines
    errors: list[str] = field(default_factory=list)  # trtexec's own [E] lines
    # What is wrong with the log itself (one sentence each, naming the file): show them.
    problems: list[str] = field(default_factory=list)

    @property
    def profile_cut(self) -> bool:
        """Whether the profile table ends without its "Total" row (the log was cut in it)."""
        return isinstance(self.profile, CutProfile)

    def section(self, name: str) -> dict[str, str]:
        return self.sections.get(name, {})

    @property
    def flags(self) -> list[str]:
        """The trtexec options on the command line (``--fp16``, ``--shapes=…``)."""
        return [a for a in (self.command or "").split() if a.startswith("--")]

    @property
    def device(self) -> DeviceInfo | None:
        return device_from_trtexec(self.section("Device Information"))

    @property
    def build(self) -> BuildInfo | None:
        """Build options when the log built an engine (``--onnx``), else None."""
        options = self.section("Build Options")
        if not options:
            return None
        return BuildInfo(
            model_options=self.section("Model Options"),
            build_options=options,
            device=self.device,
            trt_version=self.trt_version,
        )

    @property
    def run(self) -> RunInfo | None:
        """Inference options and performance when the log timed inference, else None."""
        if self.performance is None and self.profile is None:
            return None
        return RunInfo(
            performance=self.performance,
            inference_options=self.section("Inference Options"),
            device=self.device,
            trt_version=self.trt_version,
        )


def _stats(text: str) -> LatencyStats:
    values: dict[str, float] = {}
    pct: dict[float, float] = {}
    for match in _STAT.finditer(text):
        if match.group(2) is not None:
            pct[float(match.group(2))] = float(match.group(3))
        else:
            values[match.group(1)] = float(match.group(3))
    for match in _OLD_PCT.finditer(text):
        pct[float(match.group(2))] = float(match.group(1))
    return LatencyStats(
        values.get("min"), values.get("max"), values.get("mean"), values.get("median"), pct
    )


def _first_float(text: str) -> float | None:
    match = re.search(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", text)
    return float(match.group(0)) if match else None


def _performance(section: dict[str, str]) -> PerformanceSummary | None:
    if not section:
        return None
    stats = {attr: _stats(section[key]) for key, attr in _PERF_STATS.items() if key in section}
    return PerformanceSummary(
        throughput_qps=_first_float(section.get("Throughput", "")),
        total_host_walltime_s=_first_float(section.get("Total Host Walltime", "")),
        total_gpu_compute_s=_first_float(section.get("Total GPU Compute Time", "")),
        **stats,
    )


# ---------------------------------------------------------------- --dumpLayerInfo text

_KEY_AHEAD = re.compile(r",\s*(?=\"?[A-Za-z][\w/ .()-]*\"?:(?:\s|$))")


def _split_top(text: str) -> list[str]:
    """Split ``a: 1, b: [x, y], c: {…}`` at commas outside brackets followed by ``key:``."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0 and _KEY_AHEAD.match(text, i):
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _scalar(text: str) -> Any:
    text = text.strip().strip('"')
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def _value(text: str) -> Any:
    import json

    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        if not inner:
            return []
        items, depth, start = [], 0, 0
        for i, ch in enumerate(inner):
            if ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
            elif ch == "," and depth == 0:
                items.append(inner[start:i])
                start = i + 1
        items.append(inner[start:])
        return [_value(item) for item in items if item.strip()]
    if text.startswith("{") and text.endswith("}"):
        return _fields(text[1:-1])
    return _scalar(text)


def _fields(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in _split_top(text):
        key, sep, value = part.partition(":")
        key, value = key.strip().strip('"'), value.removeprefix(" ")
        if not sep:
            continue
        # Metadata holds "[ONNX Layer: a]\x1e[ONNX Layer: b]": text, not a list.
        out[key] = value if key == "Metadata" else _value(value)
    return out


def parse_layer_dump_line(line: str) -> dict[str, Any]:
    """One ``Name: …, LayerType: …, Inputs: [ { … } ], …`` line as a layer-JSON-like dict."""
    return _fields(line.rstrip("\n"))


# ---------------------------------------------------------------- the whole log


def is_trtexec_log(text: str) -> bool:
    """True when ``text`` looks like trtexec output."""
    head = text[:20000]
    return "TensorRT.trtexec" in head or bool(
        re.search(r"^\[\d+/\d+/\d+-\d+:\d+:\d+\] \[I\] === \w", head, re.M)
    )


def _cut_profile(
    log: TrtexecLog, rows: list[ProfileLayer], count: int | None, partial_line: str | None
) -> None:
    """Keep the rows of a profile table that ended without its "Total" row, and say so."""
    where = f"{log.source}: " if log.source is not None else ""
    last = (
        f"; its last line ({partial_line.strip()[:80]!r}) has no line end and may be cut too"
        if partial_line
        else ""
    )
    problem = (
        f"{where}the --dumpProfile table ends after {len(rows)} layer(s) without its 'Total' "
        "row: the log was cut off (run cancelled or still running), so the per-layer times, "
        f"their sum and every share cover only those layers{last}; use the log of a finished "
        "run (or its --exportProfile JSON)"
    )
    log.profile = CutProfile(rows, count, source=log.source, problem=problem)
    log.problems.append(problem)


def parse_trtexec_log(lines: Iterable[str], source: Path | None = None) -> TrtexecLog:
    """Parse trtexec output (any verbosity, cut off or complete). A profile table cut off
    before its "Total" row is kept and flagged (``profile_cut``, ``problems``)."""
    log = TrtexecLog(source=source)
    section: str | None = None
    profile_rows: list[ProfileLayer] | None = None
    profile_count: int | None = None
    layer_dump: list[dict[str, Any]] | None = None
    bindings: list[str] | None = None
    # The last row of the profile table as read, when it ended the input with no line end
    # (``text.split("\n")`` leaves "" after a final newline; file lines keep their "\n").
    open_row: str | None = None
    for raw in lines:
        open_row = None
        line = raw.rstrip("\r\n")
        running = _RUNNING.match(line)
        if running:
            log.command = running.group(3)
            log.trt_version = log.trt_version or version_from_code(running.group(2))
            if running.group(1) != "RUNNING":
                log.status = running.group(1)
            section = None
            continue
        prefix = _PREFIX.match(line)
        if prefix is None:
            # Unprefixed lines: the layer dump and its bindings.
            if layer_dump is not None and line.startswith("Name: "):
                layer_dump.append(parse_layer_dump_line(line))
            elif layer_dump is not None and line.strip() == "Bindings:":
                bindings = []
            elif bindings is not None and line.strip():
                bindings.append(line.strip())
            continue
        level, message = prefix.group(1), line[prefix.end() :]
        if level == "W":
            log.warnings.append(message)
        elif level == "E":
            log.errors.append(message)
        if level != "I":
            continue
        text = message.strip()
        header = _PROFILE_HEADER.match(text)
        if header:
            profile_count, profile_rows, section = int(header.group(1)), [], None
            continue
        if profile_rows is not None:
            row = _PROFILE_ROW.match(message)
            if row and row.group(5).strip() != "Layer":
                name = row.group(5).strip()
                time, avg, median, pct = (
                    float(row.group(1)),
                    float(row.group(2)),
                    float(row.group(3)) if row.group(3) else None,
                    float(row.group(4)),
                )
                if name == "Total":
                    log.profile = EngineProfile(
                        profile_rows, profile_count, time, avg, median, source=source
                    )
                    profile_rows = None
                else:
                    profile_rows.append(ProfileLayer(name, time, avg, median, pct))
                    open_row = None if raw.endswith("\n") else line
                continue
            if "Time(ms)" in message:
                continue
            _cut_profile(log, profile_rows, profile_count, None)
            profile_rows = None
        match = _SECTION.match(text)
        if match:
            section = match.group(1)
            log.sections.setdefault(section, {})
            continue
        if text == "Layer Information:":
            layer_dump, section = [], None
            continue
        if text == "Layers:" and layer_dump is not None:
            continue
        if text.startswith("TensorRT version:"):
            log.trt_version = text.partition(":")[2].strip() or log.trt_version
        if text.startswith("TF32 is enabled by default"):
            log.tf32_default = True
        for pattern, attr in ((_ENGINE_SIZE, "engine_size_mib"), (_BUILD_TIME, "build_time_s")):
            found = pattern.search(text)
            if found:
                setattr(log, attr, float(found.group(1)))
        memory = _BYTES_LINE.match(text)
        if memory:
            log.memory_bytes[memory.group(1)] = int(memory.group(2))
        binding = _BINDING.match(text)
        if binding:
            log.io_bindings.append(binding.groups())  # type: ignore[arg-type]
        if section is not None:
            key, sep, value = text.partition(":")
            if not text or not sep:
                section = None
                continue
            log.sections[section][key.strip()] = value.strip()
    if profile_rows is not None:
        _cut_profile(log, profile_rows, profile_count, open_row)
    log.performance = _performance(log.section("Performance summary"))
    if layer_dump:
        root: dict[str, Any] = {"Layers": layer_dump}
        if bindings:
            root["Bindings"] = bindings
        log.graph = parse_graph(root, source)
    return log


def load_trtexec_log(path: Path) -> TrtexecLog:
    """Read and parse a trtexec log file; one-line error if it is not one."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise EngineFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if not is_trtexec_log(text):
        raise EngineFormatError(
            f"{path}: not a trtexec log (expected lines like '[date] [I] === Build Options ===')"
        )
    return parse_trtexec_log(text.split("\n"), Path(path))
