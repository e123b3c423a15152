"""Incremental decoding of byte chunks into whole lines for the output callbacks."""

from __future__ import annotations

import codecs

from designer.activities.targets.base import LineCallback

__all__ = ["LineSplitter"]


class LineSplitter:
    """Feeds bytes in, calls ``callback`` once per complete line (without the newline) and
    keeps everything for the RunResult. UTF-8 split across chunks is decoded correctly."""

    def __init__(self, callback: LineCallback | None) -> None:
        self._callback = callback
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._parts: list[str] = []

    def feed(self, data: bytes) -> None:
        text = self._decoder.decode(data)
        if not text:
            return
        self._parts.append(text)
        if self._callback is None:
            return
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._callback(line.rstrip("\r"))

    def close(self) -> str:
        """Flush a last unterminated line; returns all text seen."""
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self._parts.append(tail)
            self._pending += tail
        if self._callback is not None and self._pending:
            self._callback(self._pending.rstrip("\r"))
        self._pending = ""
        return "".join(self._parts)
