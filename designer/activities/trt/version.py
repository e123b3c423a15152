"""The TensorRT version of an installation, read from trtexec's banner or ``tensorrt.__version__``.

trtexec starts every run with ``&&&& RUNNING TensorRT.trtexec [TensorRT v101601] [b11] # …``:
the number is ``major * 10000 + minor * 100 + patch`` (NV_TENSORRT_VERSION), so ``v101601`` is
10.16.1. It also logs ``TensorRT version: 10.16.1`` once it has started. The Python package says
``10.16.1.11`` (major.minor.patch.build).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["TrtVersion", "parse_banner", "parse_python_version"]

_BANNER = re.compile(r"\[TensorRT v(\d{5,})\]")
_LOGGED = re.compile(r"TensorRT version: (\d+)\.(\d+)\.(\d+)")
_DOTTED = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?")


@dataclass(frozen=True, order=True)
class TrtVersion:
    major: int
    minor: int
    patch: int = 0
    build: int = 0

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        return f"{text}.{self.build}" if self.build else text

    @property
    def short(self) -> str:
        """``10.16`` (what the fixtures' folders and ``--trt-version`` use)."""
        return f"{self.major}.{self.minor}"

    @property
    def banner_number(self) -> int:
        """NV_TENSORRT_VERSION as in trtexec's banner (``101601``)."""
        return self.major * 10000 + self.minor * 100 + self.patch

    @classmethod
    def parse(cls, text: str) -> TrtVersion:
        """``"10.16"``, ``"10.16.1"``, ``"10.16.1.11"`` or ``"v101601"``; ValueError otherwise."""
        text = text.strip()
        match = re.fullmatch(r"v?(\d{5,})", text)
        if match:
            return cls.from_number(int(match.group(1)))
        match = _DOTTED.match(text)
        if not match or match.end() != len(text):
            raise ValueError(f"not a TensorRT version: {text!r} (expected e.g. 10.16 or 10.16.1)")
        parts = [int(p) if p else 0 for p in match.groups()]
        return cls(parts[0], parts[1], parts[2], parts[3])

    @classmethod
    def from_number(cls, number: int) -> TrtVersion:
        """From NV_TENSORRT_VERSION: ``101601`` → 10.16.1."""
        return cls(number // 10000, number // 100 % 100, number % 100)


def parse_banner(text: str) -> TrtVersion | None:
    """The version in trtexec output (banner or ``TensorRT version:`` line), or None."""
    match = _BANNER.search(text)
    if match:
        return TrtVersion.from_number(int(match.group(1)))
    match = _LOGGED.search(text)
    if match:
        return TrtVersion(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    return None


def parse_python_version(text: str) -> TrtVersion | None:
    """``tensorrt.__version__`` (e.g. ``10.16.1.11``, last line of the output), or None."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        return TrtVersion.parse(lines[-1])
    except ValueError:
        return None
