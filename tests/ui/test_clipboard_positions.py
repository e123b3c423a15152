"""Pasted nodes take the relative positions the clipboard carries, unless those are not
finite coordinates of a sane size: then they are placed on a diagonal, never at NaN."""

from __future__ import annotations

import math

import onnx
import pytest

from designer.ui.canvas.clipboard import _POSITIONS, _positions


def _carrying(text: str) -> onnx.ModelProto:
    model = onnx.ModelProto()
    model.metadata_props.add(key=_POSITIONS, value=text)
    return model


def test_good_positions_are_used() -> None:
    assert _positions(_carrying("[[10, 20], [30.5, -4]]"), 2) == [(10.0, 20.0), (30.5, -4.0)]


@pytest.mark.parametrize(
    "text",
    [
        "[[NaN, 0]]",
        "[[Infinity, 0]]",
        "[[0, -Infinity]]",
        "[[1e400, 0]]",
        "[[1" + "0" * 400 + ", 0]]",
        "[" * 100_000 + "]" * 100_000,
        "[[1, 2, 3]]",
        "{}",
        "not json",
    ],
)
def test_hostile_positions_fall_back_to_a_diagonal(text: str) -> None:
    points = _positions(_carrying(text), 1)
    assert points == [(0.0, 0.0)]
    assert all(math.isfinite(v) for p in points for v in p)
