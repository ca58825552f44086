"""Power before running: the smallest effect a plan detects (90 % power) for pooled,
interleaved and sequential designs, checked by simulation, and the findings a plan can
never decide."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.effects import PAIRED, SEQUENTIAL, from_pct
from casslab.analysis.power import (
    detectable_log_effect,
    detectable_pct,
    finding_power,
    log_sd,
)
from casslab.analysis.sequential import t_mixture_cs, tune_c


def test_pooled_detectable_effect_is_the_textbook_formula() -> None:
    d = detectable_pct(0.05, 10, "pooled")
    sd = log_sd(0.05)
    want = (st.t.ppf(0.975, 18) + st.t.ppf(0.9, 18)) * sd * math.sqrt(2 / 10)
    assert d == pytest.approx(100 * math.expm1(want))
    assert 7 < d < 9


def test_more_rounds_detect_smaller_effects_and_optional_stopping_costs_width() -> None:
    paired = [detectable_pct(0.05, n, "interleaved") for n in (5, 10, 20)]
    seq = [detectable_pct(0.05, n, "sequential") for n in (10, 20)]
    assert paired[0] > paired[1] > paired[2]
    assert seq[0] > paired[1] and seq[1] > paired[2] and seq[0] > seq[1]


def test_the_detectable_paired_effect_is_found_90_percent_of_the_time() -> None:
    rng = np.random.default_rng(0)
    n, sd = 10, 0.05
    d = detectable_log_effect(PAIRED, sd, n, n)
    x = rng.normal(d, sd, (4000, n))
    m, s = x.mean(axis=1), x.std(axis=1, ddof=1)
    low = m - st.t.ppf(0.975, n - 1) * s / math.sqrt(n)
    assert 0.87 < float((low > 0).mean()) < 0.93


def test_the_detectable_sequential_effect_is_found_about_90_percent_of_the_time() -> None:
    rng = np.random.default_rng(1)
    n, sd = 15, 0.05
    c = tune_c(n)
    d = detectable_log_effect(SEQUENTIAL, sd, n, n, c=c)
    found = [t_mixture_cs(rng.normal(d, sd, n).tolist(), 0.05, c).low > 0 for _ in range(1500)]
    assert 0.82 < sum(found) / 1500 < 0.97


def test_a_plan_that_can_never_decide_says_so_and_one_that_cannot_see_the_size_too() -> None:
    never = finding_power("wifi slower", 10.0, 0.05, 3, "sequential", max_rounds=20)
    assert math.isinf(never.detectable_pct) and "can never give a finite" in never.warning
    assert "it needs" in never.warning and "never (too few trials)" in never.line()
    small = finding_power("tiny", 1.0, 0.05, 10, "interleaved")
    assert "more than the 1.0 % the finding looks for" in small.warning
    fine = finding_power("big", 30.0, 0.05, 10, "interleaved")
    assert fine.warning == "" and "looks for +30.0 %" in fine.line()
    assert finding_power("dir", math.nan, 0.05, 10, "pooled").warning == ""


def test_bonferroni_over_more_findings_needs_larger_effects() -> None:
    assert detectable_pct(0.05, 10, "pooled", family=4) > detectable_pct(0.05, 10, "pooled")
    assert from_pct(detectable_pct(0.05, 10)) == pytest.approx(
        detectable_log_effect(PAIRED, math.sqrt(2) * log_sd(0.05), 10, 10))
