"""Intervals against their definitions: the median CI's coverage against the binomial
formula (and a simulation), the t interval against scipy, batch means on AR(1) data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.intervals import (
    batch_means,
    lag1_autocorrelation,
    mean_ci,
    median_ci,
    median_coverage,
    min_n_for_median,
)


def binomial_coverage(n: int, j: int) -> float:
    """P(j <= B <= n - j), B ~ Binomial(n, 1/2), summed term by term."""
    return sum(math.comb(n, i) for i in range(j, n - j + 1)) / 2 ** n


@pytest.mark.parametrize("n", range(3, 31))
def test_median_ci_coverage_matches_the_binomial_formula(n: int) -> None:
    ci = median_ci(list(range(n)), 0.95)
    j = int(ci.low) + 1  # values are 0..n-1, so x_(j) = j - 1
    assert ci.high == n - j  # symmetric: x_(n + 1 - j)
    assert ci.coverage == pytest.approx(binomial_coverage(n, j), abs=1e-12)
    if n >= 6:
        assert ci.coverage >= 0.95 and not ci.warning
        # the narrowest: one order statistic further in falls below the level
        if 2 * (j + 1) <= n + 1:
            assert binomial_coverage(n, j + 1) < 0.95
    else:
        assert j == 1 and ci.coverage < 0.95 and "too small" in ci.warning


def test_median_ci_of_three_is_min_max_with_75_percent() -> None:
    ci = median_ci([5.0, 1.0, 3.0])
    assert (ci.low, ci.high) == (1.0, 5.0)
    assert ci.coverage == pytest.approx(0.75)
    assert "n >= 6" in ci.warning
    assert median_ci([1, 2, 3, 4, 5]).coverage == pytest.approx(0.9375)


def test_median_ci_coverage_holds_in_simulation() -> None:
    rng = np.random.default_rng(7)
    n, reps = 11, 4000
    hits = 0
    for _ in range(reps):
        ci = median_ci(rng.exponential(1.0, n).tolist())
        hits += ci.low <= math.log(2) <= ci.high
    expected = median_ci(list(range(n))).coverage
    assert abs(hits / reps - expected) < 3 * math.sqrt(expected * (1 - expected) / reps)


def test_median_coverage_rejects_a_bad_order_statistic() -> None:
    with pytest.raises(ValueError, match="j=3"):
        median_coverage(4, 3)
    assert min_n_for_median(0.95) == 6 and min_n_for_median(0.99) == 8


def test_mean_ci_is_student_t() -> None:
    x = [12.1, 11.8, 12.5, 13.0, 12.2, 11.9, 12.7, 12.4]
    ci = mean_ci(x, 0.95)
    lo, hi = st.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=st.sem(x))
    assert (ci.low, ci.high) == (pytest.approx(lo), pytest.approx(hi))
    assert ci.method == "Student t" and ci.coverage == 0.95
    assert mean_ci([3.0]).warning


def ar1(n: int, phi: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.normal(0, 1, n)
    x = np.empty(n)
    x[0] = e[0]
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x + 1000.0


def test_batch_means_corrects_for_autocorrelation() -> None:
    # AR(1) with phi = 0.8: the true SE of the mean is sqrt((1+phi)/(1-phi)) = 3x the naive
    x = ar1(4096, 0.8, 1)
    bm = batch_means(x.tolist())
    assert bm.lag1 == pytest.approx(0.8, abs=0.05)
    assert bm.batch_size > 1
    assert 2.0 < bm.se / bm.naive_se < 4.5
    assert bm.mean == pytest.approx(float(x.mean()))


def test_batch_means_of_independent_samples_is_the_naive_se() -> None:
    x = np.random.default_rng(2).normal(50, 5, 2000)
    bm = batch_means(x.tolist())
    assert bm.batch_size == 1 and bm.se == pytest.approx(bm.naive_se)
    assert math.isnan(batch_means([1.0, 2.0]).se)
    assert math.isnan(lag1_autocorrelation([1.0, 1.0, 1.0]))
