"""Logging setup for the command line and the window. Qt-free.

Modules log through ``logging.getLogger(__name__)``. :func:`setup_logging` (called by the CLI
and by the main window, as often as one likes) adds two handlers to the root logger:

- stderr: WARNING and above as ``onnx-designer: warning: message`` (DEBUG and above with
  ``verbose``, with the logger's name), except the libraries in :data:`QUIET_ON_STDERR`;
- a recorder that keeps the last :data:`KEEP` records in memory (INFO and above of the
  designer's loggers, DEBUG too with ``verbose``) and hands
  each new one to its listeners: the Log window replays what came before it opened (a
  plug-in reported while the window was being built) and then follows.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import TextIO

KEEP = 2000
Listener = Callable[[logging.LogRecord], None]


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is now (tests and redirections replace it)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:  # StreamHandler.__init__ assigns it
        return


class _CliFormatter(logging.Formatter):
    def __init__(self, verbose: bool) -> None:
        super().__init__()
        self.verbose = verbose

    def format(self, record: logging.LogRecord) -> str:
        where = f" [{record.name}]" if self.verbose else ""
        text = f"onnx-designer: {record.levelname.lower()}{where}: {record.getMessage()}"
        if record.exc_info and self.verbose:
            text += "\n" + self.formatException(record.exc_info)
        return text


class Recorder(logging.Handler):
    """Keeps recent records and tells listeners about new ones (from any thread)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: deque[logging.LogRecord] = deque(maxlen=KEEP)
        self.listeners: list[Listener] = []
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self._guard:
            self.records.append(record)
            listeners = list(self.listeners)
        for listener in listeners:
            listener(record)

    def subscribe(self, listener: Listener) -> list[logging.LogRecord]:
        """Add ``listener``; returns the records kept so far (oldest first)."""
        with self._guard:
            self.listeners.append(listener)
            return list(self.records)

    def unsubscribe(self, listener: Listener) -> None:
        with self._guard:
            if listener in self.listeners:
                self.listeners.remove(listener)


#: Libraries whose records stay off stderr (they went nowhere before; the Log window shows
#: them): paramiko logs every failed connection with a traceback, which the command line
#: already reports in one line.
QUIET_ON_STDERR = ("paramiko",)


def _loud(record: logging.LogRecord) -> bool:
    return not any(record.name == n or record.name.startswith(n + ".") for n in QUIET_ON_STDERR)


_recorder = Recorder()
_stderr = _Stderr()
_stderr.addFilter(_loud)


def recorder() -> Recorder:
    return _recorder


_verbose = [False]


def setup_logging(*, verbose: bool | None = None) -> None:
    """Install the stderr handler and the recorder on the root logger (once); ``verbose``
    shows DEBUG records of the designer's loggers on stderr (None: as set before)."""
    root = logging.getLogger()
    for handler in (_stderr, _recorder):
        if handler not in root.handlers:
            root.addHandler(handler)
    if verbose is None:
        verbose = _verbose[0]
    _verbose[0] = verbose
    _stderr.setLevel(logging.DEBUG if verbose else logging.WARNING)
    _stderr.setFormatter(_CliFormatter(verbose))
    designer = logging.getLogger("designer")
    designer.setLevel(logging.DEBUG if verbose else logging.INFO)
