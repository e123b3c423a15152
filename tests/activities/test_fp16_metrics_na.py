"""The FP16 check's line for an output: no metrics over an empty set of values (every value
Inf/NaN on the converted side reads n/a, not rel L2 0 / cosine 1), and a constant output's
max abs error is relative to its magnitude, not to a range of 0."""

from __future__ import annotations

import numpy as np

from designer.activities.fp16_metrics import Thresholds, measure

LIMITS = Thresholds().resolved("float16")


def test_an_output_with_no_finite_value_reads_n_a() -> None:
    ref = np.array([[0.8, -1.5, 2.0]], np.float32)
    got = np.array([[np.inf, -np.inf, np.nan]], np.float32)
    out = measure("y", ref, got, LIMITS)
    assert not out.passed and out.compared == 0
    line = out.line()
    assert line == (
        "y: rel L2, cosine, max abs n/a (no value is finite on both sides), 1 NaN, 2 Inf "
        "[FAIL: 3 new NaN/Inf]"
    )


def test_some_finite_values_keep_their_metrics() -> None:
    ref = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    got = np.array([1.0, 2.0, np.inf, 4.0], np.float32)
    out = measure("y", ref, got, LIMITS)
    assert out.compared == 3
    assert "rel L2 " in out.line() and "(metrics over the finite values)" in out.line()


def test_a_constant_output_is_measured_against_its_magnitude() -> None:
    ref = np.array([[0.8]], np.float32)
    got = np.array([[0.8000006]], np.float32)
    out = measure("y", ref, got, LIMITS)
    assert out.passed
    assert "of range 0" not in out.line()
    assert "of its magnitude: the output is constant)" in out.line()
