"""Steady state inside a trial by MSER-5: where a per-second series settles, and whether
it is steady, still warming, or never steady."""

from __future__ import annotations

import numpy as np
import pytest

from casslab.analysis.steady import (
    NO_STEADY,
    STEADY,
    WARMING,
    batch_means,
    mser_cut,
    steady_start,
    steady_state,
)

T = np.arange(180)


def noisy(series: np.ndarray, seed: int = 0, sd: float = 20.0) -> list[float]:
    return (series + np.random.default_rng(seed).normal(0, sd, series.size)).tolist()


def test_a_series_warming_up_then_flat_is_steady_from_about_where_it_flattens() -> None:
    warm = noisy(1000 * (1 - 0.5 * np.exp(-T / 12)))  # within 1 sd of 1000 by ~t = 40
    s = steady_state(warm)
    assert s.klass == STEADY and s.settled
    assert 15 <= s.start <= 60 and s.start % 5 == 0
    assert s.mean_after == pytest.approx(1000, abs=10)


def test_a_flat_series_is_steady_from_the_start() -> None:
    s = steady_state(noisy(np.full(180, 1000.0), seed=1))
    assert s.klass == STEADY and s.start <= 10


def test_a_series_still_rising_at_the_end_is_still_warming() -> None:
    s = steady_state(noisy(1000 + 3.0 * T, seed=2))
    assert s.klass == WARMING and not s.settled and s.drift_pct > 10


def test_a_short_series_still_rising_is_still_warming() -> None:
    assert steady_state([1000.0 + 5 * i for i in range(60)]).klass == WARMING


def test_a_series_that_jumps_and_falls_back_has_no_steady_state() -> None:
    s = steady_state(noisy(np.where((T >= 60) & (T < 120), 1300.0, 1000.0), seed=3))
    assert s.klass == NO_STEADY and "quarters" in s.why


def test_a_fast_oscillation_around_a_level_is_steady() -> None:
    s = steady_state(noisy(1000 + 100 * np.sin(T / 2), seed=3))
    assert s.klass == STEADY


def test_steady_series_are_called_steady_nearly_always() -> None:
    calls = [steady_state(noisy(np.full(180, 1000.0), seed=s)).klass for s in range(100)]
    assert calls.count(STEADY) >= 95


def test_too_short_a_series_cannot_be_called_steady() -> None:
    s = steady_state([1.0] * 20)
    assert s.klass == NO_STEADY and "too short" in s.why


def test_mser_cut_drops_the_biased_start() -> None:
    z = [0.0, 0.0, 10.0, 10.1, 9.9, 10.0, 10.05, 9.95]
    assert mser_cut(z) == 2
    assert batch_means(list(range(12)), 5).tolist() == [2.0, 7.0]


def test_several_series_settle_where_the_last_does_and_take_the_worst_class() -> None:
    fast = noisy(np.full(180, 1000.0), seed=4)
    slow = noisy(1000 * (1 - 0.5 * np.exp(-T / 12)), seed=5)
    both = steady_start([fast, slow])
    assert both.klass == STEADY and both.start == steady_state(slow).start
    assert steady_start([fast, noisy(1000 + 3.0 * T, seed=6)]).klass == WARMING
