"""Effects of findings across two campaigns (two sweeps' slopes) or two responses (read
against write per cell): known differences are recovered inside their intervals, and
no difference gives an interval around 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from casslab.analysis.across import (
    cell_ratio_effect,
    line_fit,
    round_log_ratios,
    round_ratio_effect,
    round_slope_difference_effect,
    round_slopes,
    slope_difference_effect,
)
from casslab.analysis.effects import SEQUENTIAL, SLOPE
from casslab.analysis.findings import FAILS, HOLDS, family_level, verdict_of
from casslab.analysis.sequential import tune_c
from casslab.experiment.reference import Finding


def sweep(slope: float, rng: np.random.Generator, sd: float = 0.2) -> list[tuple[float,
                                                                                  float]]:
    return [(float(x), 20 + slope * x + rng.normal(0, sd)) for x in range(6) for _ in range(3)]


def test_line_fit_recovers_a_known_line_and_its_standard_error() -> None:
    fit = line_fit([(x, 2.0 + 0.5 * x + (0.1 if i >= 6 else -0.1))
                    for i, x in enumerate([0.0, 1, 2, 3, 4, 5] * 2)])
    assert fit.slope == pytest.approx(0.5) and fit.df == 10
    assert 0 < fit.se < 0.05
    assert math.isnan(line_fit([(1.0, 2.0), (1.0, 3.0), (1.0, 4.0)]).se)


def test_a_slope_difference_is_recovered_and_decided_by_the_engine() -> None:
    rng = np.random.default_rng(1)
    steep, flat = line_fit(sweep(2.0, rng)), line_fit(sweep(0.0, rng))
    level, family = family_level(0.05, 7, "findings across the two sweeps")
    effect, p, bound = slope_difference_effect(steep, flat, level)
    assert effect.scale == SLOPE and effect.low < 2.0 < effect.high and p < 1e-6
    assert 0 < bound < 0.5
    f = Finding("steeper", "update.mean_ms", "sweep", "b", "a", "higher")
    v = verdict_of(f, effect, p, 7, family)
    assert v.verdict == HOLDS and v.p_adj == pytest.approx(min(1.0, 7 * p))
    assert "simultaneous over 7 findings across the two sweeps" in v.test
    wrong = verdict_of(Finding("flatter", "update.mean_ms", "sweep", "b", "a", "lower"),
                       effect, p, 7, family)
    assert wrong.verdict == FAILS


def test_equal_slopes_give_an_interval_around_zero() -> None:
    rng = np.random.default_rng(2)
    effect, p, _ = slope_difference_effect(line_fit(sweep(1.0, rng)),
                                           line_fit(sweep(1.0, rng)), 0.99)
    assert effect.low < 0 < effect.high and p > 0.01


def test_the_read_write_ratio_is_one_log_ratio_per_cell() -> None:
    logs = [math.log(1.03) + d for d in (-0.004, 0.002, 0.001, 0.003, -0.002, 0.0)]
    effect, p = cell_ratio_effect(logs, 0.95)
    assert effect.n_low == 6 and "Student t over the 6 cells" in effect.method
    assert effect.low < math.log(1.03) < effect.high and p < 1e-4


def rounds_of_sweep(slope: float, rng: np.random.Generator, rounds: int, drift: float,
                    sd: float = 0.2) -> list[tuple[int, float, float]]:
    """(round, x, y): every round shifted as a whole by up to `drift` (the machine's
    load between rounds), a line of `slope` within it."""
    out = []
    for r in range(1, rounds + 1):
        shift = rng.uniform(-drift, drift)
        out += [(r, float(x), 20 + shift + slope * x + rng.normal(0, sd)) for x in range(6)]
    return out


def test_a_rounds_slope_leaves_out_rounds_that_miss_a_level() -> None:
    points = [(1, 0.0, 1.0), (1, 1.0, 3.0), (2, 0.0, 5.0), (2, 1.0, 6.0), (3, 0.0, 9.0)]
    assert round_slopes(points) == {1: pytest.approx(2.0), 2: pytest.approx(1.0)}


def test_per_round_slopes_cancel_a_shift_between_rounds_that_pooled_fits_cannot() -> None:
    rng = np.random.default_rng(3)
    a, b = rounds_of_sweep(2.0, rng, 12, 3.0), rounds_of_sweep(1.0, rng, 12, 3.0)
    paired, p = round_slope_difference_effect(round_slopes(a), round_slopes(b), 0.99,
                                              sequential=False, c=None)
    pooled, _, _ = slope_difference_effect(line_fit([(x, y) for _, x, y in a]),
                                           line_fit([(x, y) for _, x, y in b]), 0.99)
    assert paired.low < 1.0 < paired.high and p < 1e-6 and paired.n_low == 12
    assert paired.high - paired.low < (pooled.high - pooled.low) / 3
    assert paired.scale == SLOPE and "within each round" in paired.method


def test_the_sequence_over_rounds_is_wider_than_the_fixed_n_interval_and_says_so() -> None:
    rng = np.random.default_rng(4)
    a, b = round_slopes(rounds_of_sweep(2.0, rng, 12, 1.0)), round_slopes(
        rounds_of_sweep(1.0, rng, 12, 1.0))
    fixed, _ = round_slope_difference_effect(a, b, 0.99, sequential=False, c=None)
    seq, p = round_slope_difference_effect(a, b, 0.99, sequential=True,
                                           c=tune_c(16, 0.01))
    assert seq.kind == SEQUENTIAL and math.isnan(p) and "confidence sequence" in seq.method
    assert seq.high - seq.low > fixed.high - fixed.low  # the price of any-time validity
    assert seq.low < 1.0 < seq.high


def test_rounds_are_paired_by_number_and_only_rounds_both_completed_count() -> None:
    effect, _ = round_slope_difference_effect({1: 2.0, 2: 2.2, 3: 2.1, 4: 9.0},
                                              {1: 1.0, 2: 1.1, 3: 1.0}, 0.95,
                                              sequential=False, c=None)
    assert effect.n_low == 3 and effect.estimate == pytest.approx((1.0 + 1.1 + 1.1) / 3)


def test_a_rounds_read_write_ratio_is_the_mean_log_over_its_trials() -> None:
    per_round = round_log_ratios([(1, 2.0, 1.0), (1, 8.0, 4.0), (2, 3.0, 3.0),
                                  (2, 0.0, 1.0)])
    assert per_round == {1: pytest.approx(math.log(2)), 2: pytest.approx(0.0)}
    effect, p = round_ratio_effect({r: math.log(1.02) + d for r, d in
                                    enumerate((0.001, -0.002, 0.0, 0.002, -0.001), 1)},
                                   0.95, sequential=False, c=None)
    assert effect.low < math.log(1.02) < effect.high and p < 1e-4
    assert "mean over each round's trials" in effect.method
