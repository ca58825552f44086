"""The anytime-valid confidence sequence behind `design.until: verdicts`: looked at after
every round, it declares a difference where there is none at most alpha of the time
(10,000 simulated null campaigns), where a fixed-n t test looked at as often does not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.sequential import (
    false_decisive_rate,
    half_width_factor,
    min_rounds,
    running_cs,
    t_mixture_cs,
    t_mixture_log_m,
    tune_c,
)

CAMPAIGNS = 10_000
MAX_ROUNDS = 40


def mc_bound(alpha: float, n: int) -> float:
    """alpha plus 3 Monte Carlo standard errors of a rate estimated from n campaigns."""
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / n)


@pytest.mark.parametrize("alpha", [0.05, 0.10])
def test_null_campaigns_looked_at_every_round_give_at_most_alpha_false_verdicts(
        alpha: float) -> None:
    rate = false_decisive_rate(CAMPAIGNS, MAX_ROUNDS, alpha=alpha, seed=1)
    assert rate <= mc_bound(alpha, CAMPAIGNS)
    assert rate > 0  # the simulation can fail: it does cross sometimes


def test_heavier_tails_than_normal_keep_the_rate_too() -> None:
    assert false_decisive_rate(CAMPAIGNS, MAX_ROUNDS, alpha=0.05, seed=2, df=4) <= \
        mc_bound(0.05, CAMPAIGNS)


def test_a_fixed_n_t_test_looked_at_every_round_does_not_keep_alpha() -> None:
    """Why the sequence is needed: the same null campaigns, a 95 % t interval checked
    after every round from 2 on, are 'decisive' far more often than 5 %."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((CAMPAIGNS, MAX_ROUNDS))
    n = np.arange(1, MAX_ROUNDS + 1)
    mean = np.cumsum(x, axis=1) / n
    var = (np.cumsum(x * x, axis=1) - n * mean ** 2)[:, 1:] / (n[1:] - 1)
    t = np.abs(mean[:, 1:]) / np.sqrt(var / n[1:])
    rate = float((t > st.t.ppf(0.975, n[1:] - 1)).any(axis=1).mean())
    assert rate > 0.2


def test_the_interval_is_where_the_mixture_reaches_one_over_alpha() -> None:
    x = np.random.default_rng(4).normal(0.05, 0.03, 15)
    cs = t_mixture_cs(x.tolist(), 0.05)
    for mu in (cs.low, cs.high):
        s, v = np.array([(x - mu).sum()]), np.array([((x - mu) ** 2).sum()])
        assert float(t_mixture_log_m(s, v, 15, cs.c)[0]) == pytest.approx(math.log(20))
    inside = (x - cs.mean).sum(), ((x - cs.mean) ** 2).sum()
    assert float(t_mixture_log_m(np.array([inside[0]]), np.array([inside[1]]), 15, cs.c)[0]) \
        < math.log(20)
    # wider than the fixed-n t interval: the price of looking every round
    fixed = st.t.ppf(0.975, 14) * x.std(ddof=1) / math.sqrt(15)
    assert cs.high - cs.mean > fixed


def test_too_few_rounds_give_an_unbounded_interval() -> None:
    c = tune_c(20, 0.05)
    first = min_rounds(0.05, c)
    assert 3 <= first <= 8
    spread = [0.1, 0.2] * 10
    assert not t_mixture_cs(spread[:first - 1], 0.05, c).bounded
    assert t_mixture_cs(spread[:first], 0.05, c).bounded
    assert not t_mixture_cs([0.1], 0.05, c).bounded
    assert math.isinf(half_width_factor(1, 0.05, c))


def test_c_tuned_for_more_rounds_is_narrower_there() -> None:
    c10, c40 = tune_c(10), tune_c(40)
    assert half_width_factor(40, 0.05, c40) < half_width_factor(40, 0.05, c10)
    assert half_width_factor(10, 0.05, c10) < half_width_factor(10, 0.05, c40)


def test_a_larger_planned_maximum_delays_the_first_finite_round() -> None:
    from casslab.analysis.sequential import schedule

    short, long = schedule(10, 0.05 / 8), schedule(40, 0.05 / 8)
    assert short.first_finite < long.first_finite
    # the promise holds: no interval before first_finite, one at it (unit spread)
    for sch in (short, long):
        assert math.isinf(half_width_factor(sch.first_finite - 1, sch.alpha, sch.c))
        assert math.isfinite(half_width_factor(sch.first_finite, sch.alpha, sch.c))


def test_the_running_intersection_never_widens_and_is_the_intersection() -> None:
    x = np.random.default_rng(5).normal(0.02, 0.04, 25).tolist()
    c = tune_c(25, 0.05)
    prev = running_cs(x[:2], 0.05, c)
    for n in range(3, 26):
        cur = running_cs(x[:n], 0.05, c)
        assert cur.low >= prev.low - 1e-12 and cur.high <= prev.high + 1e-12
        each = [t_mixture_cs(x[:k], 0.05, c) for k in range(2, n + 1)]
        assert cur.low == pytest.approx(max(e.low for e in each))
        assert cur.high == pytest.approx(min(e.high for e in each))
        assert cur.mean == pytest.approx(float(np.mean(x[:n])))
        prev = cur
    assert prev.method.endswith("running intersection")


def test_the_running_intersection_covers_the_mean_at_every_round_at_least_1_minus_alpha(
        ) -> None:
    """2,000 campaigns of 30 rounds, true mean 0.01: the intersection misses it at some
    round at most alpha of the time (it misses only when some interval does)."""
    rng = np.random.default_rng(6)
    c = tune_c(30, 0.05)
    missed = 0
    for _ in range(2000):
        x = rng.normal(0.01, 0.03, 30).tolist()
        cs = running_cs(x, 0.05, c)  # the last intersection lies inside every earlier one
        missed += not cs.low <= 0.01 <= cs.high
    assert missed / 2000 <= mc_bound(0.05, 2000)


def test_an_empty_intersection_shows_the_last_interval_and_says_so() -> None:
    # a level shift no stationary model expects: early rounds near 0, late near 1
    x = [0.0, 0.001, -0.001, 0.0005, 0.0] * 3 + [1.0, 1.001, 0.999] * 10
    cs = running_cs(x, 0.05, tune_c(20, 0.05))
    last = t_mixture_cs(x, 0.05, tune_c(20, 0.05))
    assert (cs.low, cs.high) == (last.low, last.high)
    assert "running intersection empty" in cs.method
