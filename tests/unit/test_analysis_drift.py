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


def test_residuals_are_logs_less_each_cells_mean_log() -> None:
    res = relative_residuals(["a", "a", "b", "b", "c"], [1.0, 4.0, 10.0, 40.0, 5.0])
    half = math.log(2)
    assert res[:4] == pytest.approx([-half, half, -half, half]) and math.isnan(res[4])


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
    # 1 % of the start per trial is 0.84 % of the current value on average
    assert d.pct_low < 0.84 < d.pct_high
    assert d.pct_per_trial == pytest.approx(0.84, abs=0.05)
    assert d.significant and d.trend.p < 1e-6 and 35 < d.total_pct < 42  # 1.39 / 1.0
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
    assert d.significant and 15 < d.total_pct < 21
    warning = drift_warning(d, 5.0, "runtime_s")
    assert warning.startswith("runtime_s: the kept trials drift +") and "interleaved" in warning
    assert drift_warning(d, 25.0) == ""
    assert "differences within rounds" in drift_warning(d, 5.0, interleaved=True)


def _grid_rows(drift_per_trial: float, seed: int) -> tuple[list[tuple[tuple[str, ...], float]],
                                                           list[float]]:
    """A 2 x 2 design, 6 trials per cell, run cell after cell in turns (round robin),
    each trial `drift_per_trial` (relative) slower than the one before."""
    from itertools import product

    rng = np.random.default_rng(seed)
    cells = list(product(("a1", "a2"), ("b1", "b2")))
    rows, order = [], []
    for i in range(24):
        lv = cells[i % 4]
        base = 1.0 + 0.2 * (lv[0] == "a2")
        rows.append((lv, base * (1 + drift_per_trial * i) + 0.01 * rng.standard_normal()))
        order.append(float(i))
    return rows, order


def test_independence_joins_the_anova_assumption_checks_and_fails_under_drift() -> None:
    from casslab.analysis.factorial import INDEPENDENCE, factorial_anova

    rows, order = _grid_rows(0.02, 1)
    fa = factorial_anova(["a", "b"], rows, order)
    check = next(c for c in fa.checks if c.assumption == INDEPENDENCE)
    assert not check.ok and check.p < 0.001 and check.test.startswith("Mann-Kendall")
    assert not fa.independent and not fa.assumptions_ok and "run order" in fa.method
    steady, order = _grid_rows(0.0, 1)
    ok = factorial_anova(["a", "b"], steady, order)
    assert ok.independent and "independent of run order" in ok.method
    # without a run order the check is not made (and not claimed)
    assert all(c.assumption != INDEPENDENCE for c in factorial_anova(["a", "b"], rows).checks)


def test_analyze_reports_the_drift_of_each_response_by_run_order() -> None:
    from casslab.analysis.campaign import analyze
    from casslab.store.records import TrialRow

    out = []
    for i in range(20):
        cell = "x" if i % 2 else "y"
        params = {"f": cell}
        v = (2.0 if cell == "x" else 3.0) * (1 - 0.02 * i)
        out.append(TrialRow(
            trial_id=i + 1, seq=i + 1, trial_no=i // 2, warmup=False, status="done",
            error=None, started_at=None, ended_at=None, ended_by=None, cell=cell,
            cell_idx=int(cell == "y"), params=params, cell_params=params, runtime_s=v,
            ops=100, ops_s=100 / v, errors=0, mean_ms=1.0, p50_ms=1.0, p95_ms=1.0,
            p99_ms=1.0, p999_ms=1.0, max_ms=1.0, pct_source="histogram"))
    a = analyze(out, [{"name": "f", "levels": ["x", "y"]}], "runtime_s")
    assert a.drift is not None and a.drift.n == 20 and a.drift.significant
    assert a.drift.pct_per_trial < -2 and -45 < a.drift.total_pct < -30
