"""Progress reporting and cancellation shared by the layout steps."""

from __future__ import annotations

from collections.abc import Callable


class Cancelled(Exception):
    """Raised by :func:`~designer.core.layout.layered_layout` when ``cancel()`` returned True."""


class Control:
    """Forwards nondecreasing progress fractions and turns a True ``cancel()`` into Cancelled.

    Both callbacks are optional; each call costs one Python call of the callback.
    """

    def __init__(
        self,
        progress: Callable[[float], None] | None,
        cancel: Callable[[], bool] | None,
    ) -> None:
        self._progress = progress
        self._cancel = cancel
        self._last = 0.0

    def report(self, fraction: float) -> None:
        """Report ``fraction`` (clamped to [0, 1], never below an earlier report)."""
        fraction = min(1.0, max(self._last, fraction))
        self._last = fraction
        if self._progress is not None:
            self._progress(fraction)

    def check(self) -> None:
        """Raise :class:`Cancelled` if the cancel callback says so."""
        if self._cancel is not None and self._cancel():
            raise Cancelled("layout cancelled")
