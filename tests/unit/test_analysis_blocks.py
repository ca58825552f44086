"""Block analysis of interleaved rounds: verdicts from within-round differences cancel
a drift that pooled trials in random order cannot (synthetic campaigns with a known
linear drift and a known effect, seeded)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.blocks import BlockTrial, block_analysis, paired_effect
from casslab.analysis.effects import paired_log_effect, welch_log_effect

EFFECT = math.log(1.05)  # `to` 5 % slower than `from`
DRIFT = -0.6  # log drift over the campaign: the last trial ~45 % faster than the first
NOISE = 0.03  # log sd of one trial (~3 % CV)
ROUNDS = 20


def campaign(order: str, seed: int) -> list[tuple[str, int, int, float]]:
    """(cell, round, run position, value) for 2 cells x ROUNDS trials; interleaved runs
    each round's pair back to back, counterbalanced (AB, BA, AB, ...); random shuffles
    all 2 x ROUNDS trials."""
    rng = np.random.default_rng(seed)
    slots = [(c, r) for r in range(ROUNDS) for c in (("A", "B") if r % 2 == 0 else ("B", "A"))]
    if order == "random":
        slots = [slots[i] for i in rng.permutation(len(slots))]
    n = len(slots)
    out = []
    for pos, (cell, r) in enumerate(slots):
        log_y = (EFFECT if cell == "B" else 0.0) + DRIFT * pos / (n - 1) + \
            NOISE * rng.standard_normal()
        out.append((cell, r, pos, 2.0 * math.exp(log_y)))
    return out


def recovered(low: float, high: float) -> bool:
    """The interval covers the true effect and excludes 0 (decisive)."""
    return low <= EFFECT <= high and low > 0


def test_interleaved_rounds_with_block_analysis_recover_the_effect_random_order_does_not(
        ) -> None:
    blocked, pooled, widths = [], [], []
    for seed in range(200):
        trials = [BlockTrial(c, r, v) for c, r, _, v in campaign("interleaved", seed)]
        pe = paired_effect(trials, "A", "B")
        blocked.append(recovered(pe.ci_low, pe.ci_high))
        shuffled = campaign("random", seed)
        pooled_e = welch_log_effect([v for c, *_, v in shuffled if c == "A"],
                                    [v for c, *_, v in shuffled if c == "B"])
        pooled.append(recovered(pooled_e.low, pooled_e.high))
        widths.append((pooled_e.high - pooled_e.low) / (pe.ci_high - pe.ci_low))
    # 95 % intervals: ~95 % of interleaved campaigns cover and all but a few exclude 0
    assert sum(blocked) / 200 >= 0.88
    # the drift swamps the pooled comparison: its interval is several times wider and
    # rarely decisive
    assert sum(pooled) / 200 <= 0.35
    assert float(np.median(widths)) > 3


def test_one_seeded_campaign_reads_the_same_way() -> None:
    trials = [BlockTrial(c, r, v) for c, r, _, v in campaign("interleaved", 1)]
    pe = paired_effect(trials, "A", "B")
    assert pe.n == ROUNDS and recovered(pe.ci_low, pe.ci_high) and pe.p < 0.01
    assert pe.ratio == pytest.approx(1.05, abs=0.02)
    shuffled = campaign("random", 1)
    e = welch_log_effect([v for c, *_, v in shuffled if c == "A"],
                         [v for c, *_, v in shuffled if c == "B"])
    assert not recovered(e.low, e.high)


def test_paired_effect_matches_scipys_paired_t_on_logs() -> None:
    rng = np.random.default_rng(5)
    a, b = np.exp(rng.normal(0, 0.1, 12)), np.exp(rng.normal(0.05, 0.1, 12))
    trials = [BlockTrial("a", i, float(v)) for i, v in enumerate(a)] + \
        [BlockTrial("b", i, float(v)) for i, v in enumerate(b)]
    pe = paired_effect(trials, "a", "b")
    ref = st.ttest_rel(np.log(b), np.log(a))
    assert pe.p == pytest.approx(ref.pvalue)
    e = paired_log_effect(pe.log_ratios)
    assert (e.low, e.high) == pytest.approx((pe.ci_low, pe.ci_high))


def test_incomplete_rounds_are_left_out() -> None:
    trials = [BlockTrial("a", 0, 1.0), BlockTrial("b", 0, 2.0), BlockTrial("a", 1, 1.0),
              BlockTrial("a", 2, 1.0), BlockTrial("b", 2, 4.0)]
    pe = paired_effect(trials, "a", "b")
    assert pe.rounds == [0, 2] and pe.log_ratios == pytest.approx([math.log(2), math.log(4)])


def test_rcb_anova_and_friedman_see_a_cell_effect_under_a_block_effect() -> None:
    rng = np.random.default_rng(9)
    trials = []
    for r in range(8):
        block = 3 * r  # huge differences between rounds
        for cell, eff in (("x", 0.0), ("y", 0.1), ("z", 0.2)):
            trials.append(BlockTrial(cell, r, math.exp(block + eff + 0.02 * rng.standard_normal())))
    ba = block_analysis(trials)
    assert ba.cells == ["x", "y", "z"] and len(ba.rounds) == 8
    assert ba.rcb.df == (2, 14) and ba.rcb.p < 1e-6 and ba.rcb.effect > 0.9
    assert ba.friedman.p < 0.001 and ba.friedman.effect == pytest.approx(1.0)
    assert [(p.low_cell, p.high_cell) for p in ba.pairs] == [("x", "y"), ("x", "z"), ("y", "z")]
    # the same data, rounds ignored: a one-way ANOVA sees nothing through the blocks
    logs = {c: [math.log(t.value) for t in trials if t.cell == c] for c in "xyz"}
    assert st.f_oneway(*logs.values()).pvalue > 0.5


def test_rcb_anova_matches_a_two_way_additive_model() -> None:
    import pandas as pd
    from statsmodels.formula.api import ols  # type: ignore[import-untyped]
    from statsmodels.stats.anova import anova_lm  # type: ignore[import-untyped]

    rng = np.random.default_rng(2)
    trials = [BlockTrial(c, r, float(np.exp(rng.normal(0.1 * i + 0.3 * r, 0.05))))
              for r in range(6) for i, c in enumerate("pqrs")]
    ba = block_analysis(trials)
    df = pd.DataFrame({"c": [t.cell for t in trials], "r": [str(t.round) for t in trials],
                       "y": [math.log(t.value) for t in trials]})
    table = anova_lm(ols("y ~ C(c) + C(r)", data=df).fit(), typ=2)
    assert ba.rcb.statistic == pytest.approx(table.loc["C(c)", "F"])
    assert ba.rcb.p == pytest.approx(table.loc["C(c)", "PR(>F)"])
