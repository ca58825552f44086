"""`expect: no difference` with a `tolerance` is an equivalence test: the one verdict
rule (analysis.findings.classify) holds it when the whole interval of the ratio lies
within 1 +- tolerance, fails it when the interval lies outside, and leaves it
inconclusive when the interval straddles the margin."""

from __future__ import annotations

import math

import pytest

from casslab.analysis.effects import LOG_RATIO, Effect
from casslab.analysis.findings import FAILS, HOLDS, INCONCLUSIVE, classify, ratio_band


def _effect(lo_pct: float, hi_pct: float) -> Effect:
    lo, hi = math.log1p(lo_pct / 100), math.log1p(hi_pct / 100)
    return Effect(scale=LOG_RATIO, estimate=(lo + hi) / 2, low=lo, high=hi, level=0.95,
                  method="paired t", anytime=False, n_low=10, n_high=10)


@pytest.mark.parametrize(("lo", "hi", "verdict"), [
    (-4.0, 6.0, HOLDS),  # within +-10 %
    (12.0, 30.0, FAILS),  # all of it beyond +10 %
    (-25.0, -11.0, FAILS),
    (-3.0, 15.0, INCONCLUSIVE),  # straddles the margin
])
def test_no_difference_within_a_tolerance_is_an_equivalence_test(
        lo: float, hi: float, verdict: str) -> None:
    got, why = classify("no difference", _effect(lo, hi), paper=0.0,
                        band=ratio_band(1.0, 0.10))
    assert got == verdict, why
    assert "equivalence band" in why


def test_without_a_tolerance_a_small_but_clear_difference_fails() -> None:
    got, _ = classify("no difference", _effect(2.0, 6.0))
    assert got == FAILS
