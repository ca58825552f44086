"""Effects of findings across two campaigns (two sweeps' slopes) or two responses (read
against write per cell): known differences are recovered inside their intervals, and
no difference gives an interval around 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from casslab.analysis.across import cell_ratio_effect, line_fit, slope_difference_effect
from casslab.analysis.effects import SLOPE
from casslab.analysis.findings import FAILS, HOLDS, family_level, verdict_of
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
