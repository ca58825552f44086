"""The factorial ANOVA on R's ToothGrowth (Crampton 1947; C. I. Bliss, The Statistics of
Bioassay, 1952), whose two-way table with interaction is published in R's documentation
and countless textbooks: aov(len ~ supp * factor(dose)) gives
  supp      Df 1  Sum Sq  205.4  F  15.572  p 0.000231
  dose      Df 2  Sum Sq 2426.4  F  92.000  p < 2e-16
  supp:dose Df 2  Sum Sq  108.3  F   4.107  p 0.021860
  Residuals Df 54 Sum Sq  712.1
"""

from __future__ import annotations

import math

import pytest

from casslab.analysis.factorial import (
    factorial_anova,
    full_grid,
    replicated,
    simple_effects,
)

LEN = {
    ("VC", "0.5"): [4.2, 11.5, 7.3, 5.8, 6.4, 10, 11.2, 11.2, 5.2, 7],
    ("VC", "1"): [16.5, 16.5, 15.2, 17.3, 22.5, 17.3, 13.6, 14.5, 18.8, 15.5],
    ("VC", "2"): [23.6, 18.5, 33.9, 25.5, 26.4, 32.5, 26.7, 21.5, 23.3, 29.5],
    ("OJ", "0.5"): [15.2, 21.5, 17.6, 9.7, 14.5, 10, 8.2, 9.4, 16.5, 9.7],
    ("OJ", "1"): [19.7, 23.3, 23.6, 26.4, 20, 25.2, 25.8, 21.2, 14.5, 27.3],
    ("OJ", "2"): [25.5, 26.4, 22.4, 24.5, 24.8, 30.9, 26.4, 27.3, 29.4, 23],
}
ROWS = [(cell, float(v)) for cell, vs in LEN.items() for v in vs]


def test_toothgrowth_matches_the_published_two_way_table() -> None:
    res = factorial_anova(["supp", "dose"], ROWS)
    t = {x.name: x for x in res.terms}
    assert list(t) == ["supp", "dose", "supp x dose", "residual"]
    assert t["supp"].f == pytest.approx(15.572, abs=5e-4)
    assert t["dose"].f == pytest.approx(92.000, abs=5e-4)
    assert t["supp x dose"].f == pytest.approx(4.107, abs=5e-4)
    assert t["supp"].p == pytest.approx(0.000231, abs=5e-7)
    assert t["supp x dose"].p == pytest.approx(0.02186, abs=5e-6)
    assert t["dose"].p < 2e-16
    assert [x.df for x in res.terms] == [1, 2, 2, 54]
    assert t["supp"].ss == pytest.approx(205.35, abs=0.01)
    assert t["dose"].ss == pytest.approx(2426.43, abs=0.01)
    assert t["supp x dose"].ss == pytest.approx(108.32, abs=0.01)
    assert t["residual"].ss == pytest.approx(712.11, abs=0.01)
    assert t["supp x dose"].partial_eta2 == pytest.approx(108.319 / (108.319 + 712.106),
                                                          rel=1e-4)
    assert res.n == 60


def test_toothgrowth_assumption_checks_hold() -> None:
    res = factorial_anova(["supp", "dose"], ROWS)
    names = {c.assumption: c for c in res.checks}
    assert set(names) == {"normal residuals", "equal variances"}
    # published (R: shapiro.test on the aov residuals, car::leveneTest(len ~ supp * dose)):
    # W = 0.98499, p = 0.6694; F(5, 54) = 1.7086, p = 0.1484
    assert names["normal residuals"].statistic == pytest.approx(0.98499, abs=5e-5)
    assert names["normal residuals"].p == pytest.approx(0.6694, abs=5e-4)
    assert names["equal variances"].statistic == pytest.approx(1.7086, abs=5e-4)
    assert names["equal variances"].p == pytest.approx(0.1484, abs=5e-4)
    assert res.assumptions_ok and res.method.startswith("ANOVA")
    assert {x.name for x in res.rank_terms} == {"supp", "dose", "supp x dose", "residual"}


def test_a_failed_assumption_switches_to_ranks() -> None:
    rows = [(cell, v * (100.0 if cell == ("OJ", "2") else 1.0)) for cell, v in ROWS]
    rows += [(("VC", "1"), 5000.0)]
    res = factorial_anova(["supp", "dose"], rows)
    assert not res.assumptions_ok
    assert res.method.startswith("rank-transform")


def test_simple_effects_show_the_interaction() -> None:
    eff = {(e.factor, e.within): e for e in simple_effects(["supp", "dose"], ROWS)}
    # OJ beats VC at 0.5 and 1 mg but not at 2 mg: the interaction, seen level by level
    assert eff[("supp", "dose=0.5")].anova_p < 0.01
    assert eff[("supp", "dose=1")].anova_p < 0.01
    assert eff[("supp", "dose=2")].anova_p > 0.5
    assert eff[("dose", "supp=VC")].eta2 > 0.8
    assert len(eff) == 5


def test_without_replication_or_a_second_factor_it_refuses() -> None:
    one = [(cell, vs[0]) for cell, vs in LEN.items()]
    with pytest.raises(ValueError, match="residual"):
        factorial_anova(["supp", "dose"], [(c, float(v)) for c, v in one])
    with pytest.raises(ValueError, match=">= 2 factors"):
        factorial_anova(["supp"], [(("VC",), 1.0), (("OJ",), 2.0)])
    grid = full_grid(["supp", "dose"], [(c, float(v)) for c, v in one])
    assert not replicated(grid) and replicated(full_grid(["supp", "dose"], ROWS))


def test_constant_cells_give_infinite_f_and_no_checks() -> None:
    rows = [(("a", "x"), 1.0), (("a", "y"), 2.0), (("b", "x"), 3.0), (("b", "y"), 5.0)] * 2
    res = factorial_anova(["f", "g"], rows)
    t = {x.name: x for x in res.terms}
    assert t["residual"].ss == 0.0 and t["f"].f == math.inf and t["f x g"].p == 0.0
    assert res.checks == [] and "not checkable" in res.method
