"""Helpers of the TensorRT activity: one-line failure reasons read from a trtexec log, and
the timing-cache location.

trtexec prints everything on stdout as ``[date] [E] message`` (errors), ``[W]`` (warnings),
``[I]`` (info), and a final ``&&&& FAILED TensorRT.trtexec …`` line; :func:`explain_failure`
turns the last relevant lines into "what failed — what to do".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["explain_failure", "local_timing_cache", "timing_cache_name"]

_ERROR = re.compile(r"\[E\]\s*(?:\[TRT\]\s*)?(.*)")
_NO_GPU = (
    "no cuda-capable device",
    "cuda initialization failure",
    "cudaerrornodevice",
    "cudaerrorinsufficientdriver",
    "no cuda device",
    "cuda driver version is insufficient",
    "failed to get cuda device",
    "cannot find a cuda device",
)


def _errors(lines: Sequence[str]) -> list[str]:
    found = []
    for line in lines:
        match = _ERROR.search(line)
        if match and match.group(1).strip():
            found.append(match.group(1).strip())
    return found


def explain_failure(lines: Sequence[str], exit_code: int, tool: str, where: str) -> str:
    """One line: why ``tool`` failed on ``where`` (from its output) and what to do."""
    text = "\n".join(lines).lower()
    if any(marker in text for marker in _NO_GPU):
        return (
            f"no usable CUDA GPU on {where}: {tool} found no CUDA device "
            "(run on a machine with an NVIDIA GPU and a working driver; check nvidia-smi)"
        )
    unknown = next((ln for ln in lines if "Unknown option" in ln), None)
    if unknown is not None:
        option = unknown.split("Unknown option:", 1)[-1].strip() or unknown.strip()
        return (
            f"{tool} on {where} does not know the option {option} "
            "(this TensorRT version lacks it; turn it off or choose another TensorRT)"
        )
    errors = _errors(lines)
    if any("parse" in e.lower() and "onnx" in e.lower() for e in errors) or any(
        "failed to parse onnx" in e.lower() for e in errors
    ):
        first = next(e for e in errors if "onnx" in e.lower())
        return (
            f"TensorRT could not parse the ONNX model on {where}: {first} "
            "(check the model with Type Checking; unsupported operators need a plugin)"
        )
    if errors:
        return f"{tool} failed on {where}: {errors[-1]} (see the log for the whole output)"
    tail = [ln.strip() for ln in lines if ln.strip() and not ln.startswith("&&&&")]
    last = tail[-1] if tail else f"exit status {exit_code}"
    return f"{tool} failed on {where} (exit status {exit_code}): {last}"


def timing_cache_name(version: str) -> str:
    """Timing caches are per TensorRT version (a cache of another version is rejected)."""
    safe = re.sub(r"[^0-9A-Za-z._-]", "_", version or "unknown")
    return f"timing-{safe}.cache"


def local_timing_cache(version: str) -> Path:
    """``<user cache>/trt/timing-<version>.cache`` for builds on this machine."""
    from designer.activities.paths import cache_dir

    folder = cache_dir() / "trt"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / timing_cache_name(version)
