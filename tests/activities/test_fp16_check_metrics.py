"""The FP16 check's whole-output metrics on known arrays: relative L2, cosine, max abs error
of the range, top-k agreement, NaN/Inf counts, the limits and their defaults per type."""

from __future__ import annotations

import math

import numpy as np
import pytest

from designer.activities.fp16_metrics import (
    DEFAULT_LIMITS,
    Thresholds,
    classifier_like,
    cosine,
    measure,
    measure_all,
    range_error,
    rel_l2,
    topk_agreement,
)
from designer.activities.numerics import compare_outputs

LIMITS = Thresholds().resolved("float16")


def test_relative_l2_on_known_arrays() -> None:
    e = np.array([3.0, 4.0], np.float32)  # ‖e‖ = 5
    assert rel_l2(e, np.array([3.0, 4.5], np.float32)) == pytest.approx(0.1)
    assert rel_l2(e, e) == 0.0
    zero = np.zeros(3, np.float32)
    assert rel_l2(zero, zero) == 0.0
    assert math.isinf(rel_l2(zero, np.ones(3, np.float32)))


def test_cosine_on_known_arrays() -> None:
    e = np.array([1.0, 0.0], np.float32)
    assert cosine(e, np.array([0.0, 2.0], np.float32)) == pytest.approx(0.0)
    assert cosine(e, np.array([5.0, 0.0], np.float32)) == pytest.approx(1.0)  # scale-free
    assert cosine(e, np.array([1.0, 1.0], np.float32)) == pytest.approx(1 / math.sqrt(2))
    assert cosine(e, -e) == pytest.approx(-1.0)
    zero = np.zeros(2, np.float32)
    assert cosine(zero, zero) == 1.0 and cosine(zero, e) == 0.0


def test_max_abs_error_of_the_range() -> None:
    e = np.array([-2.0, 0.0, 2.0], np.float32)  # range 4
    max_abs, span, ratio = range_error(e, np.array([-2.0, 0.2, 2.0], np.float32))
    assert max_abs == pytest.approx(0.2) and span == 4.0 and ratio == pytest.approx(0.05)
    constant = np.full(4, 8.0, np.float32)  # no range: against the magnitude
    assert range_error(constant, constant + 0.08)[2] == pytest.approx(0.01)
    assert range_error(np.zeros(2), np.full(2, 0.5))[2] == pytest.approx(0.5)


def test_topk_agreement_and_what_is_classifier_like() -> None:
    e = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]], np.float32)
    a = e.copy()
    a[0, 8], a[0, 9] = 9.5, 8.5  # row 0: best two swap: top-1 differs, the top-5 set is kept
    a[1, 4] = 20.0  # row 1: class 4 becomes best: top-1 differs, still in the top-5
    top1, top5 = topk_agreement(e, a, 5)
    assert top1 == 0.0 and top5 == pytest.approx(1.0)
    b = e.copy()
    b[1, 9] = 100.0  # row 1: class 9 (was last) enters the top-5, class 4 drops out
    top1, top5 = topk_agreement(e, b, 5)
    assert top1 == 0.5 and top5 == pytest.approx((1.0 + 0.8) / 2)
    assert classifier_like((4, 1000)) and classifier_like((1, 10))
    assert not classifier_like((1, 9)) and not classifier_like((1, 3, 224, 224))
    assert classifier_like((1, 7, 1000), "logits") and not classifier_like((1, 7, 64), "hidden")


def test_measure_counts_new_nan_inf_and_says_which_limit_broke() -> None:
    e = np.linspace(-1, 1, 100, dtype=np.float32)
    a = e.copy()
    a[3], a[7], a[9] = np.inf, -np.inf, np.nan
    out = measure("y", e, a, LIMITS)
    assert (out.nan, out.inf) == (1, 2) and not out.passed
    assert out.failed == ["3 new NaN/Inf"]
    assert "1 NaN, 2 Inf" in out.line() and "FAIL" in out.line()
    same_inf = measure("y", np.array([np.inf, 1.0]), np.array([np.inf, 1.0]), LIMITS)
    assert same_inf.passed and same_inf.inf == 0  # an Inf the original has is not new
    noisy = measure("y", e, e + 0.05, LIMITS)  # rel L2 ~0.085, 0.025 of the range
    assert not noisy.passed
    assert noisy.failed == ["rel L2 > 0.01", "cosine < 0.9999", "max abs > 0.02 of range"]
    assert noisy.rel_l2 == pytest.approx(0.05 / np.sqrt(np.mean(e.astype(np.float64) ** 2)))


def test_a_good_conversion_with_near_zero_values_passes() -> None:
    """What made the old check fail a good ResNet: relative error on near-zero logits."""
    rng = np.random.default_rng(0)
    e = rng.standard_normal((2, 1000)).astype(np.float32)
    e[0, 0] = 1e-6
    a = e.astype(np.float16).astype(np.float32)
    a[0, 0] = 5e-4  # 500x relative error on one near-zero value
    out = measure("logits", e, a, LIMITS)
    assert out.passed, out.line()
    assert out.max_rel < 1e-2  # max rel skips values under 1e-3 of the largest one
    assert out.rel_l2 < 1e-3 and out.top1 == 1.0 and out.topk == 1.0 and out.k == 5
    assert "top-1 100%, top-5 100%" in out.line()
    strict = measure("logits", e, a, Thresholds(rtol=1e-2, atol=1e-7).resolved())
    assert strict.max_rel > 100  # with atol 1e-7 the near-zero value counts: 500x
    assert not strict.passed and strict.failed[-1].startswith("|a-e| >")


def test_topk_limit_and_shape_mismatch() -> None:
    e = np.arange(20, dtype=np.float32).reshape(1, 20)
    a = e.copy()
    a[0, 15:] = 0  # the whole top-5 replaced
    out = measure("cls", e, a, Thresholds(max_rel_l2=1, min_cosine=0, max_range_error=1))
    assert out.topk == 0.0 and out.failed == ["top-5 < 80%"]
    (bad,) = measure_all({"y": e}, {"y": e[:, :10]}, LIMITS)
    assert not bad.passed and "shape" in bad.note
    (missing,) = measure_all({"y": e}, {}, LIMITS)
    assert not missing.passed and missing.note == "missing"


def test_defaults_per_target_and_elementwise_only_when_given() -> None:
    assert Thresholds().resolved("float16").max_rel_l2 == DEFAULT_LIMITS["float16"][0]
    bf = Thresholds(min_cosine=0.5).resolved("bfloat16")
    assert bf.max_rel_l2 == DEFAULT_LIMITS["bfloat16"][0] and bf.min_cosine == 0.5
    assert "rel L2 <= 0.05" in bf.describe() and "|a-e|" not in bf.describe()
    assert "|a-e| <= 0.001 + 0.01*|e|" in Thresholds(rtol=0.01, atol=1e-3).describe()
    # compare_outputs (the element-wise API) judges element-wise only
    ref = {"y": np.array([1.0, 2.0, 0.0, 4.0], np.float32)}
    (ok,) = compare_outputs(ref, {"y": ref["y"] + 1e-4}, rtol=1e-2, atol=1e-3)
    assert ok.passed and ok.rel_l2 > 0
    (off,) = compare_outputs(ref, {"y": ref["y"] + 0.1}, rtol=1e-2, atol=1e-3)
    assert not off.passed and off.failed == ["|a-e| > 0.001 + 0.01*|e|"]
