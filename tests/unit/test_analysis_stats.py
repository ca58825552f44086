"""Statistics against scipy (and hand-checked values) on known data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.stats import (
    anova_oneway,
    describe,
    holm,
    kruskal,
    mann_whitney,
    moving_average,
    outlier_mask,
    pairwise,
    scaling_curve,
    welch,
)

A = [12.1, 11.8, 12.5, 13.0, 12.2, 11.9, 12.7, 12.4]
B = [13.5, 13.9, 14.2, 13.1, 13.8, 14.5, 13.6]
C = [12.0, 12.9, 13.3, 12.6, 13.1, 12.8, 13.0, 12.5, 12.2]
TIES = [[1, 2, 2, 3, 3, 3], [2, 3, 4, 4, 5], [1, 1, 2, 5, 5, 5, 6]]


def test_describe_matches_numpy() -> None:
    d = describe(A)
    assert d.n == 8
    assert d.median == pytest.approx(float(np.median(A)))
    assert d.q1 == pytest.approx(float(np.percentile(A, 25)))
    assert d.q3 == pytest.approx(float(np.percentile(A, 75)))
    assert d.mean == pytest.approx(float(np.mean(A)))
    assert d.sd == pytest.approx(float(np.std(A, ddof=1)))
    assert d.ci_low <= d.median <= d.ci_high
    assert (d.minimum, d.maximum) == (min(A), max(A))


def test_describe_gives_order_statistic_and_t_intervals() -> None:
    d = describe(A)
    xs = sorted(A)
    # n = 8: [x_(1), x_(8)] is the only symmetric pair reaching 95 % (99.2 %)
    assert (d.ci_low, d.ci_high) == (xs[0], xs[-1])
    assert d.ci_coverage == pytest.approx(1 - 2 / 2 ** 8)
    assert d.ci_method == "order statistics (binomial)" and not d.ci_warning
    assert d.mean_ci_low < d.mean < d.mean_ci_high
    assert "too small" in describe([1.0, 2.0, 3.0]).ci_warning


def test_anova_equals_scipy() -> None:
    r = anova_oneway([A, B, C])
    ref = st.f_oneway(A, B, C)
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.p == pytest.approx(ref.pvalue)
    assert r.df == (2, 21)
    allv = np.concatenate([A, B, C])
    ssb = sum(len(g) * (np.mean(g) - allv.mean()) ** 2 for g in (A, B, C))
    assert r.effect == pytest.approx(ssb / ((allv - allv.mean()) ** 2).sum())


@pytest.mark.parametrize("groups", [[A, B, C], TIES, [A, B]])
def test_kruskal_equals_scipy(groups: list[list[float]]) -> None:
    r = kruskal(groups)
    ref = st.kruskal(*groups)
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.p == pytest.approx(ref.pvalue)
    n = sum(len(g) for g in groups)
    assert r.effect == pytest.approx(ref.statistic / (n - 1))


def test_welch_equals_scipy() -> None:
    t, p, g = welch(A, B)
    ref = st.ttest_ind(A, B, equal_var=False)
    assert t == pytest.approx(ref.statistic)
    assert p == pytest.approx(ref.pvalue)
    assert g < 0  # A is smaller


def test_mann_whitney_equals_scipy() -> None:
    u, p, r = mann_whitney(A, B)
    ref = st.mannwhitneyu(A, B, alternative="two-sided")
    assert u == pytest.approx(ref.statistic)
    assert p == pytest.approx(ref.pvalue)
    assert r == pytest.approx(2 * ref.statistic / (len(A) * len(B)) - 1)


def test_holm_known_values() -> None:
    # m = 4: sorted p 0.01, 0.02, 0.03, 0.04 -> 0.04, 0.06, 0.06, 0.06 (monotone)
    assert holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    out = holm([0.01, math.nan])
    assert out[0] == pytest.approx(0.01) and math.isnan(out[1])


def test_pairwise_is_holm_corrected_per_family() -> None:
    res = pairwise({"a": A, "b": B, "c": C})
    welchs = [r for r in res if r.test == "Welch t"]
    assert len(welchs) == 3 and len(res) == 6
    assert [r.p_holm for r in welchs] == pytest.approx(holm([r.p for r in welchs]))


def test_outlier_rule_is_three_sd() -> None:
    values = [10.0] * 20 + [10.5] * 5 + [30.0]
    mask = outlier_mask(values)
    assert mask[-1] and sum(mask) == 1
    assert outlier_mask([1.0, 2.0]) == [False, False]
    assert describe(values).outliers == 1


def test_moving_average_period_5() -> None:
    assert moving_average([5, 5, 5, 5, 5, 10], 5) == pytest.approx([5, 5, 5, 5, 5, 6])
    assert moving_average([1, 2, 3], 5) == pytest.approx([1, 1.5, 2])


def test_scaling_curve() -> None:
    pts = scaling_curve({3.0: [6, 8], 1.0: [10, 10, 12]})
    assert [p.level for p in pts] == [1.0, 3.0]
    assert pts[0].median == 10 and pts[1].median == 7
    assert pts[1].relative == pytest.approx(0.7)
