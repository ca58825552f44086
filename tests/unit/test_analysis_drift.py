"""Drift of a campaign's kept trials against run order: Mann-Kendall on the residuals
after cell means, the slope in % per trial, and the warning when it is larger than the
smallest effect a finding looks for."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.drift import drift, drift_warning, mann_kendall, relative_residuals


def test_mann_kendall_matches_kendalls_tau_against_order_without_ties() -> None:
    x = np.random.default_rng(3).normal(size=30) + np.linspace(0, 1, 30)
    mk = mann_kendall(x.tolist())
    tau = st.kendalltau(np.arange(30), x, method="asymptotic")
    assert mk.tau == pytest.approx(tau.statistic)
    # scipy's z has no continuity correction (|S| - 1): our p is a little larger
    assert tau.pvalue < mk.p < tau.pvalue * 1.5


def test_mann_kendall_finds_no_trend_in_a_constant_or_short_series() -> None:
    assert math.isnan(mann_kendall([1.0, 1.0, 1.0, 1.0]).p)
    assert math.isnan(mann_kendall([1.0, 2.0]).p)


def test_residuals_are_relative_to_each_cells_mean() -> None:
    res = relative_residuals(["a", "a", "b", "b", "c"], [1.0, 3.0, 10.0, 30.0, 5.0])
    assert res[:4] == pytest.approx([-0.5, 0.5, -0.5, 0.5]) and math.isnan(res[4])


def test_a_linear_drift_is_measured_in_percent_per_trial_across_cells() -> None:
    rng = np.random.default_rng(7)
    n = 40
    cells = ["fast" if i % 2 else "slow" for i in range(n)]
    base = {"fast": 1.0, "slow": 4.0}
    # every trial 1 % slower than the one before, 0.5 % noise
    values = [base[c] * (1 + 0.01 * i) * (1 + 0.005 * rng.standard_normal())
              for i, c in enumerate(cells)]
    order = list(range(n))[::-1]  # given in reverse: drift() sorts by order
    d = drift([float(o) for o in order][::-1], cells, values)
    assert d.n == 40 and d.cells == 2
    assert d.pct_low < 0.837 < d.pct_high  # 1 % of the start is 0.837 % of the cell mean
    assert d.pct_per_trial == pytest.approx(0.837, abs=0.05)
    assert d.significant and d.trend.p < 1e-6 and d.total_pct > 25
    assert "% per trial" in d.line()


def test_noise_without_drift_is_called_a_drift_about_as_often_as_alpha_says() -> None:
    rng = np.random.default_rng(11)
    found = [drift([float(i) for i in range(30)], ["a", "b"] * 15,
                   (1 + 0.02 * rng.standard_normal(30)).tolist()).significant
             for _ in range(400)]
    assert sum(found) / 400 < 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400)


def test_a_drift_that_is_not_significant_does_not_warn() -> None:
    d = drift([0.0, 1.0, 2.0, 3.0], ["a"] * 4, [1.0, 1.3, 0.9, 1.2])
    assert not d.significant and drift_warning(d, 0.1) == ""


def test_a_drift_larger_than_the_smallest_effect_warns_and_a_smaller_one_does_not() -> None:
    values = [1.0 + 0.01 * i + 0.001 * (-1) ** i for i in range(20)]
    d = drift([float(i) for i in range(20)], ["a"] * 20, values)
    assert d.significant and 15 < d.total_pct < 20
    warning = drift_warning(d, 5.0, "runtime_s")
    assert warning.startswith("runtime_s: the kept trials drift +") and "interleaved" in warning
    assert drift_warning(d, 25.0) == ""
