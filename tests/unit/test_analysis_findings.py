"""Verdicts of a study's findings on the lab's kept trials, each decided by its effect's
interval (holds / direction holds, size differs / does not hold / smaller than this lab
can detect / inconclusive), and its published numbers beside the lab's median and CI."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from casslab.analysis.campaign import Analysis, analyze
from casslab.analysis.effects import LOG_RATIO, PAIRED, SEQUENTIAL, Effect
from casslab.analysis.findings import (
    BUDGET_SPENT,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    ROUNDS_SPENT,
    SIZE_DIFFERS,
    UNDETECTABLE,
    Verdict,
    all_decisive,
    classify,
    compare_values,
    fit_slope,
    implied_ratio,
    judge,
    rounds_to_decide,
    spent_of,
)
from casslab.experiment.reference import Finding, Reference, RefValue
from casslab.store.records import TrialRow

FACTORS = [{"name": "nodes", "levels": [1, 3]}, {"name": "network", "levels": ["eth", "wifi"]}]


def rows(values: dict[tuple[int, str], list[float]]) -> list[TrialRow]:
    out: list[TrialRow] = []
    for ci, ((nodes, net), vals) in enumerate(values.items()):
        params: dict[str, Any] = {"nodes": nodes, "network": net}
        for v in vals:
            tid = len(out) + 1
            out.append(TrialRow(
                trial_id=tid, seq=tid, trial_no=tid, warmup=False, status="done", error=None,
                started_at=None, ended_at=None, ended_by=None, cell=f"{nodes},{net}",
                cell_idx=ci, params=params, cell_params=params, runtime_s=v, ops=100,
                ops_s=100 / v, errors=0, mean_ms=1.0, p50_ms=1.0, p95_ms=1.0, p99_ms=1.0,
                p999_ms=1.0, max_ms=1.0, pct_source="histogram"))
    return out


def analysis(values: dict[tuple[int, str], list[float]]) -> Analysis:
    return analyze(rows(values), FACTORS, "runtime_s")


# Wi-Fi clearly slower on 3 nodes, no difference on 1 node
LAB = {(1, "eth"): [2.0, 2.1, 1.9, 2.05], (1, "wifi"): [2.02, 1.95, 2.08, 1.97],
       (3, "eth"): [3.0, 3.1, 2.9, 3.05], (3, "wifi"): [5.0, 5.2, 4.9, 5.1]}


def finding(expect: str, where: dict[str, tuple[Any, ...]] | None = None,
            test: str = "welch") -> Finding:
    return Finding("claim", "runtime_s", "network", "eth", "wifi", expect, where or {}, test)


def test_a_significant_difference_the_expected_way_holds() -> None:
    (v,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}),)), [analysis(LAB)])
    assert v.verdict == HOLDS and v.label == HOLDS and v.decisive
    assert v.p < 0.001 and v.p_adj == v.p
    assert (v.n_low, v.n_high) == (4, 4) and v.ratio == pytest.approx(5.05 / 3.025)
    e = v.effect
    assert e.scale == LOG_RATIO and e.low > 0 and e.level == 0.95 and not e.anytime
    assert e.estimate == pytest.approx(math.log(5.05 / 3.025), abs=0.01)
    assert v.test == "Welch t on logs (pooled trials); 95 %, alpha 0.05"
    assert "excludes 0: higher" in v.why and v.interval().endswith("(95 % CI)")


def test_a_significant_difference_the_other_way_does_not_hold() -> None:
    (v,) = judge(Reference(findings=(finding("lower", {"nodes": (3,)}),)), [analysis(LAB)])
    assert v.verdict == FAILS and "other side: not lower" in v.why


def test_no_difference_found_is_a_failure_and_none_is_a_measured_bound() -> None:
    found, none = judge(Reference(findings=(finding("no difference", {"nodes": (3,)}),
                                            finding("no difference", {"nodes": (1,)}))),
                        [analysis(LAB)])
    assert found.verdict == FAILS and "a difference" in found.why
    # 1 node: Wi-Fi and Ethernet within ~2 % of each other, 4 trials a side
    assert none.verdict in (UNDETECTABLE, INCONCLUSIVE)
    assert none.test.endswith("95 % simultaneous over 2 findings (Bonferroni, each 97.5 %), "
                              "alpha 0.05")
    assert none.effect.level == pytest.approx(0.975) and 0 < none.bound < math.log(1.2)


def test_too_few_trials_is_inconclusive() -> None:
    few = {**LAB, (3, "wifi"): [5.0]}
    (v,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}),)), [analysis(few)])
    assert v.verdict == INCONCLUSIVE and math.isnan(v.p) and not v.decisive
    assert "too few kept trials (4 at `from`, 1 at `to`" in v.why
    (spent,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}),)),
                     [analysis(few)], spent=BUDGET_SPENT)
    assert spent.label == "inconclusive (budget spent)"
    (out_of_rounds,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}),)),
                             [analysis(few)], spent=ROUNDS_SPENT)
    assert out_of_rounds.label == "inconclusive (rounds spent)"


def test_a_campaign_that_reached_its_last_round_spent_rounds_not_budget() -> None:
    trials = rows({(1, "eth"): [1.0, 1.1, 1.2], (1, "wifi"): [2.0, 2.1, 2.2]})
    in_rounds = [replace(t, round=1 + i % 3) for i, t in enumerate(trials)]
    assert spent_of(in_rounds, planned_rounds=3) == ROUNDS_SPENT
    assert spent_of(in_rounds, planned_rounds=8) == BUDGET_SPENT
    unkept_fourth = [*in_rounds, replace(trials[0], trial_id=99, round=4, warmup=True)]
    assert spent_of(unkept_fourth, planned_rounds=4) == BUDGET_SPENT


def test_a_campaign_still_running_or_interrupted_has_spent_nothing_yet() -> None:
    trials = rows({(1, "eth"): [1.0, 1.1, 1.2], (1, "wifi"): [2.0, 2.1, 2.2]})
    in_rounds = [replace(t, round=1 + i % 3) for i, t in enumerate(trials)]
    for status in ("running", "interrupted"):
        under_way = [*in_rounds, replace(trials[0], trial_id=99, round=3, status=status)]
        assert spent_of(under_way, planned_rounds=8) == ""
    planned = [*in_rounds, replace(trials[0], trial_id=99, round=4, status="planned")]
    assert spent_of(planned, planned_rounds=8) == BUDGET_SPENT  # stopped by its rule


def test_the_runners_own_state_says_what_ran_out() -> None:
    trials = rows({(1, "eth"): [1.0, 1.1, 1.2], (1, "wifi"): [2.0, 2.1, 2.2]})
    in_rounds = [replace(t, round=1 + i % 3) for i, t in enumerate(trials)]
    # between two trials (a reload) no trial is running, but the runner still is
    assert spent_of(in_rounds, planned_rounds=8, run_state="running") == ""
    assert spent_of(in_rounds, planned_rounds=8, run_state="interrupted") == ""
    assert spent_of(in_rounds, planned_rounds=3, run_state="stopped: budget") == BUDGET_SPENT
    assert spent_of(in_rounds, planned_rounds=8,
                    run_state="stopped: max rounds") == ROUNDS_SPENT
    assert spent_of(in_rounds, planned_rounds=8, run_state="stopped: verdicts") == ""
    # older databases (no state): judged by the trials
    assert spent_of(in_rounds, planned_rounds=3, run_state=None) == ROUNDS_SPENT


def test_more_findings_widen_every_interval_bonferroni() -> None:
    lo, hi = [1.0, 1.2, 1.1], [1.27, 1.42, 1.32]  # Welch p on logs ~ 0.04 alone
    lab = {(1, "eth"): lo, (1, "wifi"): hi, (3, "eth"): lo, (3, "wifi"): hi}
    alone = judge(Reference(findings=(finding("higher", {"nodes": (1,)}),)), [analysis(lab)])
    assert alone[0].verdict == HOLDS and 0.01 < alone[0].p < 0.05
    both = judge(Reference(findings=(finding("higher", {"nodes": (1,)}),
                                     finding("higher", {"nodes": (3,)}))), [analysis(lab)])
    assert [v.p_adj for v in both] == pytest.approx([2 * alone[0].p] * 2)
    assert {v.verdict for v in both} == {INCONCLUSIVE}
    assert both[0].effect.low < 0 < alone[0].effect.low


def test_mann_whitney_findings_use_the_hodges_lehmann_interval() -> None:
    (v,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}, "mann-whitney"),)),
                 [analysis(LAB)])
    # four against four, all apart: the exact two-sided p is 2/70 ~ 0.029, and the
    # interval [smallest, largest difference] has coverage 1 - 2/70
    assert v.verdict == HOLDS and v.p == pytest.approx(2 / 70)
    assert v.effect.low == pytest.approx(math.log(4.9 / 3.1))
    assert v.effect.high == pytest.approx(math.log(5.2 / 2.9))
    assert v.test.startswith("Hodges-Lehmann")
    # three against three cannot reach 95 %: no interval, inconclusive
    few = {k: vals[:3] for k, vals in LAB.items()}
    (w,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}, "mann-whitney"),)),
                 [analysis(few)])
    assert w.verdict == INCONCLUSIVE and not w.effect.bounded


def ratio(r: float, where: dict[str, tuple[Any, ...]], tol: float = math.nan) -> Finding:
    return Finding("claim", "runtime_s", "network", "eth", "wifi", "ratio", where, ratio=r,
                   tolerance=tol)


def test_an_expected_ratio_holds_differs_in_size_fails_or_is_inconclusive() -> None:
    # on 3 nodes Wi-Fi / Ethernet is 5.05 / 3.025 = 1.67; on 1 node about 1
    near, far, other, flat = judge(Reference(findings=(
        ratio(1.65, {"nodes": (3,)}), ratio(1.2, {"nodes": (3,)}),
        ratio(0.5, {"nodes": (3,)}), ratio(1.01, {"nodes": (1,)}, 0.5))), [analysis(LAB)])
    assert near.verdict == HOLDS and "within the paper +65.0 %" in near.why
    assert near.band == pytest.approx((math.log(1.65 * 0.9), math.log(1.65 * 1.1)))
    assert far.verdict == SIZE_DIFFERS
    assert far.label.startswith("direction holds, size differs (lab +6") and \
        far.label.endswith("vs paper +20.0 %)")
    assert other.verdict == FAILS
    # 1.01 with a 50 % tolerance: the lab's ~1.0 lies inside, whatever its noise
    assert flat.verdict == HOLDS


def test_a_direction_finding_tests_the_size_the_reference_values_give() -> None:
    vals = (RefValue("runtime_s", {"nodes": 3, "network": "eth"}, 3.0, 3.0, "s", "T1"),
            RefValue("runtime_s", {"nodes": 3, "network": "wifi"}, 6.0, 6.0, "s", "T1"))
    f = finding("higher", {"nodes": (3,)})
    ref = Reference(values=vals, findings=(f,))
    assert implied_ratio(ref, f) == pytest.approx(2.0)
    (v,) = judge(ref, [analysis(LAB)])
    # the lab's Wi-Fi is 1.67x, the paper's 2x: the direction holds, the size differs
    assert v.verdict == SIZE_DIFFERS and v.paper == pytest.approx(math.log(2))
    assert "vs paper +100.0 %" in v.label


def test_a_claimed_direction_never_holds_with_an_interval_reaching_past_no_effect() -> None:
    # +4.5 % (003's whole-scenario gain): 10 % of the ratio is 0.94-1.15, which holds
    # no effect; 1 node's Wi-Fi is within ~2 % of Ethernet, which that band would
    # let "hold" the claimed gain
    vals = (RefValue("runtime_s", {"nodes": 1, "network": "eth"}, 100.0, 100.0, "s", "T"),
            RefValue("runtime_s", {"nodes": 1, "network": "wifi"}, 104.5, 104.5, "s", "T"))
    f = finding("higher", {"nodes": (1,)})
    (v,) = judge(Reference(values=vals, findings=(f,)), [analysis(LAB)])
    assert v.paper == pytest.approx(math.log(1.045))
    assert v.band[0] == 0.0 and v.band[1] == pytest.approx(math.log(1.045 * 1.1))
    assert v.effect.low < 0 < v.effect.high and v.verdict == INCONCLUSIVE, v.why
    # 3 nodes' Wi-Fi is x 1.67, far above the claimed +4.5 %: the size still differs
    big = tuple(replace(rv, at={**rv.at, "nodes": 3}) for rv in vals)
    (sized,) = judge(Reference(values=big, findings=(finding("higher", {"nodes": (3,)}),)),
                     [analysis(LAB)])
    assert sized.verdict == SIZE_DIFFERS and sized.band == (0.0, pytest.approx(
        math.log(1.045 * 1.1)))
    # a claimed fall: its band ends at no effect from above
    lower = Finding("claim", "runtime_s", "network", "wifi", "eth", "lower", {"nodes": (1,)})
    (down,) = judge(Reference(values=vals, findings=(lower,)), [analysis(LAB)])
    assert down.band[1] == 0.0 and down.verdict == INCONCLUSIVE


def effect(lo: float, hi: float, est: float | None = None) -> Effect:
    mid = (lo + hi) / 2 if est is None else est
    return Effect(LOG_RATIO, mid, lo, hi, 0.95, "test", True, 10, 10, 0.05, SEQUENTIAL)


@pytest.mark.parametrize(("expect", "lo", "hi", "band", "bound", "verdict"), [
    ("higher", 0.05, 0.15, None, 0.1, HOLDS),
    ("higher", -0.15, -0.05, None, 0.1, FAILS),
    ("lower", -0.15, -0.05, None, 0.1, HOLDS),
    ("higher", -0.04, 0.05, None, 0.06, UNDETECTABLE),
    ("higher", -0.04, 0.08, None, 0.06, INCONCLUSIVE),
    ("no difference", -0.04, 0.05, None, 0.06, UNDETECTABLE),
    ("no difference", 0.01, 0.05, None, 0.06, FAILS),
    ("ratio", 0.09, 0.11, (0.08, 0.12), 0.06, HOLDS),
    ("ratio", 0.2, 0.3, (0.08, 0.12), 0.06, SIZE_DIFFERS),
    ("ratio", -0.02, 0.02, (0.08, 0.12), 0.06, FAILS),
    ("ratio", 0.05, 0.1, (0.08, 0.12), 0.06, INCONCLUSIVE),
    ("ratio", float("-inf"), float("inf"), (0.08, 0.12), 0.06, INCONCLUSIVE),
    # a size below what the lab resolves (004's -2.3 % against a declared +-20 %): the
    # interval and the band within +- z
    ("ratio", -0.15, 0.10, (-0.025, -0.021), 0.18, UNDETECTABLE),
    ("ratio", -0.15, 0.10, (-0.025, -0.021), 0.12, INCONCLUSIVE),
    ("ratio", -0.05, 0.05, (0.08, 0.12), 0.2, FAILS),
])
def test_classify_reads_every_verdict_off_the_interval(
        expect: str, lo: float, hi: float, band: tuple[float, float] | None, bound: float,
        verdict: str) -> None:
    paper = (band[0] + band[1]) / 2 if band else math.nan
    got, why = classify(expect, effect(lo, hi, 0.0 if math.isinf(lo) else None), paper=paper,
                        band=band or (math.nan, math.nan), bound=bound)
    assert got == verdict, why


def test_interleaved_rounds_give_paired_and_sequential_verdicts() -> None:
    # 12 rounds of eth/wifi on 3 nodes; the machine drifts 8 % per round, Wi-Fi +10 %
    rng = np.random.default_rng(3)
    values: dict[tuple[int, str], list[float]] = {(3, "eth"): [], (3, "wifi"): []}
    for r in range(12):
        drift = 1 + 0.08 * r
        values[(3, "eth")].append(2.0 * drift * (1 + 0.01 * rng.standard_normal()))
        values[(3, "wifi")].append(2.2 * drift * (1 + 0.01 * rng.standard_normal()))
    rs = rows(values)
    a = analyze(rs, [{"name": "nodes", "levels": [3]},
                     {"name": "network", "levels": ["eth", "wifi"]}], "runtime_s")
    rounds = {r.trial_id: (r.trial_id - 1) % 12 for r in rs}
    f = finding("higher", {"nodes": (3,)})
    ref = Reference(findings=(f,))
    (pooled,) = judge(ref, [a])
    (paired,) = judge(ref, [a], rounds=rounds)
    (seq,) = judge(ref, [a], rounds=rounds, sequential=True, planned_rounds=12)
    # the drift swamps the pooled comparison: what it can detect is more than the 10 %
    assert pooled.verdict in (INCONCLUSIVE, UNDETECTABLE) and math.expm1(pooled.bound) > 0.1
    assert paired.verdict == HOLDS and paired.effect.kind == PAIRED and paired.n_low == 12
    assert paired.effect.pct()[0] == pytest.approx(10, abs=1.5)
    assert seq.verdict == HOLDS and seq.effect.anytime and math.isnan(seq.p)
    assert seq.interval().endswith("(95 % CI, anytime-valid)")
    assert seq.effect.high - seq.effect.low > paired.effect.high - paired.effect.low
    assert all_decisive([paired, seq])
    assert not all_decisive([judge(Reference(findings=(f,)), [a], rounds={})[0], seq])


def test_a_reference_value_sits_beside_the_median_of_its_cells() -> None:
    a = analysis(LAB)
    one = RefValue("runtime_s", {"nodes": 3, "network": "wifi"}, 2.5, 2500, "ms", "Table 3")
    pooled = RefValue("runtime_s", {"nodes": 1}, 4.0, 4.0, "s", "Fig. 2")
    gone = RefValue("runtime_s", {"nodes": 6}, 4.0, 4.0, "s", "Fig. 2")
    r1, r2, r3 = compare_values(Reference(values=(one, pooled, gone)), [a],
                                ["nodes", "network"])
    assert (r1.cells, r1.lab.n, r1.pooled) == (1, 4, ())
    assert r1.lab.median == pytest.approx(5.05) and r1.ratio == pytest.approx(5.05 / 2.5)
    assert r1.lab.ci_low <= r1.lab.median <= r1.lab.ci_high
    assert (r2.cells, r2.lab.n, r2.pooled) == (2, 8, ("network",))
    assert r2.ratio == pytest.approx(2.01 / 4.0)
    assert r3.lab.n == 0 and math.isnan(r3.ratio)


def slope(s: float, tol: float, where: dict[str, tuple[Any, ...]]) -> Finding:
    return Finding("claim", "runtime_s", "nodes", 1, 3, "slope", where, "ols", slope=s,
                   tolerance=tol)


def test_fit_slope_recovers_a_known_line_with_its_interval() -> None:
    pts = [(x, 2.0 + 0.5 * x + e) for x in (1.0, 2.0, 3.0, 4.0) for e in (-0.1, 0.1)]
    fit = fit_slope(pts, paper=0.5)
    assert fit.slope == pytest.approx(0.5)
    # se = sqrt(0.08 / 6 / 10) = 0.0365; t(0.975, 6) = 2.447
    assert fit.high - fit.slope == pytest.approx(2.447 * math.sqrt(0.08 / 6 / 10), rel=1e-3)
    assert fit.p == pytest.approx(1.0) and (fit.n, fit.levels) == (8, 4)
    assert math.isnan(fit_slope([(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)], 0.0).slope)


def test_an_expected_slope_holds_inside_its_tolerance_fails_outside_else_inconclusive(
        ) -> None:
    # Ethernet: 2.0 at 1 node, 3.025 at 3: slope ~ 0.51 per node, CI about +- 0.05
    near, far, wide, few = judge(Reference(findings=(
        slope(0.5, 0.15, {"network": ("eth",)}), slope(2.0, 0.2, {"network": ("eth",)}),
        slope(0.5, 0.02, {"network": ("eth",)}),
        Finding("c", "runtime_s", "nodes", 1, 1.5, "slope", {}, "ols", slope=1.0,
                tolerance=0.1))), [analysis(LAB)])
    assert near.verdict == HOLDS and near.fit is not None
    assert near.fit.slope == pytest.approx((3.0125 - 2.0125) / 2, abs=0.01)
    # four findings: each interval 98.75 % (Bonferroni)
    assert near.fit.coverage == pytest.approx(1 - 0.05 / 4) and near.effect.scale == "slope"
    assert "within the paper 0.5, band [0.35, 0.65]" in near.why
    # 0.51 against 2.0 +- 0.2: the same sign, much smaller
    assert far.verdict == SIZE_DIFFERS and far.fit is not None and far.fit.p < 0.001
    assert wide.verdict == INCONCLUSIVE and "overlaps the edge" in wide.why
    assert few.verdict == INCONCLUSIVE and "too few trials for a line" in few.why


def test_mann_whitney_smallest_p_is_two_over_the_arrangements() -> None:
    from casslab.analysis.findings import mann_whitney_min_p

    assert mann_whitney_min_p(3, 3) == pytest.approx(0.1)
    assert mann_whitney_min_p(5, 5) == pytest.approx(2 / 252)
    assert mann_whitney_min_p(0, 3) == 1.0


def _finding(test: str, expect: str = "higher") -> Finding:
    return Finding(claim="c", response="ops_s", factor="f", low="a", high="b", expect=expect,
                   test=test)


def test_a_plan_too_small_for_its_findings_is_warned_about() -> None:
    from casslab.analysis.findings import power_warnings

    def cells(n: int) -> list[tuple[dict[str, Any], int]]:
        return [({"f": "a"}, n), ({"f": "b"}, n)]

    mw = Reference(findings=(_finding("mann-whitney"),))
    assert "cannot reach p <= 0.05 (smallest possible p 0.1); it needs 4 trials per side" \
        in power_warnings(mw, cells(3))[0]
    assert power_warnings(mw, cells(4)) == []
    # Bonferroni over two findings halves what each may reach: 4 per side no longer do.
    two = Reference(findings=(_finding("mann-whitney"), _finding("mann-whitney", "lower")))
    assert len(power_warnings(two, cells(4))) == 2
    welch_ref = Reference(findings=(_finding("welch"),))
    assert "Welch's t needs 2 kept trials per side, the plan has 1 vs 1" in \
        power_warnings(welch_ref, cells(1))[0]
    assert power_warnings(welch_ref, cells(2)) == []


def _round_rows(values: list[tuple[dict[str, Any], int, float]]) -> list[TrialRow]:
    out = []
    for i, (params, rnd, v) in enumerate(values):
        cell = ",".join(f"{k}={x}" for k, x in params.items())
        out.append(TrialRow(
            trial_id=i + 1, seq=i + 1, trial_no=rnd, warmup=False, status="done", error=None,
            started_at=None, ended_at=None, ended_by=None, cell=cell, cell_idx=0,
            params=params, cell_params=params, runtime_s=1.0, ops=100, ops_s=100.0,
            errors=0, mean_ms=v, p50_ms=v, p95_ms=v, p99_ms=v, p999_ms=v, max_ms=v,
            pct_source="histogram", round=rnd))
    return out


def test_a_delay_slope_holds_and_an_a_a_pair_is_below_what_the_lab_detects() -> None:
    """The shape of the issue's integration test, synthetic: 2 ms of added delay against
    none (mean latency rises by 1 ms per ms), and two identical copies, in 20 rounds
    under a drift of 0.1 % per trial (8 % over the campaign); sequential (anytime-valid)
    intervals."""
    rng = np.random.default_rng(8)
    trials: list[tuple[dict[str, Any], int, float]] = []
    pos = 0
    for rnd in range(1, 21):
        cells = [{"delay": d, "copy": c} for d in (0, 2) for c in ("a", "b")]
        for params in (cells if rnd % 2 else cells[::-1]):
            drift = 1 + 0.001 * pos
            base = 1.5 + float(params["delay"])
            trials.append((params, rnd, base * drift * (1 + 0.01 * rng.standard_normal())))
            pos += 1
    rows_ = _round_rows(trials)
    factors = [{"name": "delay", "levels": [0, 2]}, {"name": "copy", "levels": ["a", "b"]}]
    delay = Finding("2 ms adds 2 ms", "mean_ms", "delay", 0, 2, "slope", {}, "ols",
                    slope=1.0, tolerance=0.1)
    aa = Finding("A/A", "mean_ms", "copy", "a", "b", "no difference")
    from casslab.analysis.findings import judge_rows, rounds_of

    assert rounds_of(rows_) is not None and len(set(rounds_of(rows_).values())) == 20
    v_delay, v_aa = judge_rows(Reference(findings=(delay, aa)), rows_, factors,
                               sequential=True, planned_rounds=20)
    assert v_delay.effect.kind == SEQUENTIAL and v_delay.effect.scale == "slope"
    assert v_delay.n_low == 20
    # a drift that scales every latency scales the 2 ms too (here by ~4 % on average):
    # within the paper's 1.0 +- 0.1
    assert v_delay.verdict == HOLDS, v_delay.why
    assert 0.9 < v_delay.effect.low < v_delay.effect.estimate < v_delay.effect.high < 1.1
    assert v_aa.verdict == UNDETECTABLE and v_aa.label.startswith(
        "smaller than this lab can detect (+-") and v_aa.label.endswith("%, measured)")
    assert v_aa.effect.anytime and v_aa.bound < math.log(1.05)


def test_the_engine_looked_at_every_round_of_null_campaigns_keeps_alpha() -> None:
    """2,000 null campaigns (no effect), each looked at after every round from 2 to 20
    through the engine itself (sequential effect, classify) and stopped at the first
    decisive verdict: a false one (holds / does not hold) at most alpha of the time;
    "smaller than this lab can detect" is true under the null and may come."""
    from casslab.analysis.effects import sequential_log_effect
    from casslab.analysis.power import detectable_log_effect
    from casslab.analysis.sequential import tune_c

    rng = np.random.default_rng(12)
    c = tune_c(20, 0.05)
    false, bounded = 0, 0
    for _ in range(2000):
        d = rng.normal(0.0, 0.03, 20)
        for n in range(2, 21):
            e = sequential_log_effect(d[:n].tolist(), 0.95, c)
            z = detectable_log_effect(e.kind, e.noise_sd, n, n, 0.95, c=c)
            verdict, _ = classify("higher", e, bound=z)
            if verdict in (HOLDS, FAILS):
                false += 1
                break
            if verdict == UNDETECTABLE:
                bounded += 1
                break
    assert false / 2000 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)
    assert bounded / 2000 > 0.5  # most null campaigns end with the measured bound


def test_medians_ratio_is_taken_cell_by_cell_not_from_pooled_medians() -> None:
    """Wi-Fi 6 % slower at each node count, but with fewer slow 3-node trials at
    Wi-Fi the pooled medians fall the other way: the ratio is the geometric mean of the
    matched cells' median ratios."""
    lab = {(1, "eth"): [1.0, 1.0, 1.0], (1, "wifi"): [1.06, 1.06, 1.06, 1.06, 1.06],
           (3, "eth"): [3.0, 3.0, 3.0, 3.0, 3.0], (3, "wifi"): [3.18, 3.18, 3.18]}
    (v,) = judge(Reference(findings=(finding("higher"),)), [analysis(lab)])
    assert v.median_high / v.median_low < 1  # pooled: 1.06 / 3.0
    assert v.ratio == pytest.approx(1.06)


def _standardised(n: int, mean: float, sd: float) -> np.ndarray:
    """n values with exactly this mean and sample sd."""
    z = np.random.default_rng(n).standard_normal(n)
    z = (z - z.mean()) / z.std(ddof=1)
    return mean + sd * z


def _sequential_rows(log_ratios: np.ndarray) -> tuple[list[TrialRow], dict[int, int]]:
    values: dict[tuple[int, str], list[float]] = {
        (3, "eth"): [2.0] * len(log_ratios),
        (3, "wifi"): [2.0 * math.exp(d) for d in log_ratios]}
    rs = rows(values)
    return rs, {r.trial_id: (r.trial_id - 1) % len(log_ratios) for r in rs}


def test_a_spent_inconclusive_verdict_says_how_many_rounds_would_decide_it() -> None:
    from casslab.analysis.sequential import t_mixture_cs

    # +5 % with 10 % of noise per round: 8 rounds decide nothing
    rs, rounds = _sequential_rows(_standardised(8, 0.05, 0.10))
    a = analyze(rs, [{"name": "nodes", "levels": [3]},
                     {"name": "network", "levels": ["eth", "wifi"]}], "runtime_s")
    ref = Reference(findings=(finding("higher", {"nodes": (3,)}),))
    # declared: "smaller" only within +-2 %, which the +5 % never is
    (open_,) = judge(ref, [a], rounds=rounds, sequential=True, planned_rounds=8,
                     margin=0.02)
    (spent,) = judge(ref, [a], rounds=rounds, sequential=True, planned_rounds=8,
                     spent=BUDGET_SPENT, margin=0.02)
    assert open_.verdict == spent.verdict == INCONCLUSIVE
    assert math.isnan(open_.decide_rounds) and open_.label == INCONCLUSIVE
    n = int(spent.decide_rounds)
    # what the 8 rounds resolve: half the interval's width, as a change in %
    half = (spent.effect.high - spent.effect.low) / 2
    resolved = f"{math.expm1(half) * 100:.1f} %"
    assert spent.effect.low < 0 < spent.effect.high and half > math.log(1.05)
    assert spent.label == (f"inconclusive (budget spent; an estimate within +-{resolved} "
                           f"could not be told from no effect; about {n} rounds in all would "
                           "decide it at the noise measured)")
    # The engine's own sequence on rounds with the same mean and noise: n rounds
    # exclude 0 (holds), n - 1 do not.
    alpha, c = 1 - spent.effect.level, spent.effect.c
    assert t_mixture_cs(_standardised(n, 0.05, 0.10), alpha, c).low > 0
    assert t_mixture_cs(_standardised(n - 1, 0.05, 0.10), alpha, c).low <= 0
    assert 8 < n < 200


def _spent_verdict_of_nothing() -> Verdict:
    """A direction-only finding judged on 8 rounds of no effect (10 % noise), its
    rounds spent, with a declared bound no interval lies within (+-1e-7 %)."""
    rs, rounds = _sequential_rows(_standardised(8, 0.0, 0.10))
    a = analyze(rs, [{"name": "nodes", "levels": [3]},
                     {"name": "network", "levels": ["eth", "wifi"]}], "runtime_s")
    (v,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}),)), [a],
                 rounds=rounds, sequential=True, planned_rounds=8, spent=ROUNDS_SPENT,
                 margin=1e-9)
    return v


def test_an_estimate_of_nothing_with_no_bound_is_never_projected_to_decide() -> None:
    v = _spent_verdict_of_nothing()
    # a direction-only finding on 0: only "smaller than this lab can detect" could
    # decide it, and no interval lies within a declared +-1e-7 %
    assert v.verdict == INCONCLUSIVE and math.isinf(v.decide_rounds)
    assert re.fullmatch(r"inconclusive \(rounds spent; an estimate within \+-[0-9.]+ % could "
                        r"not be told from no effect; not decided within 1000 rounds at "
                        r"the noise measured\)", v.label), v.label
    assert math.isnan(rounds_to_decide(replace(v, verdict=HOLDS)))


def test_a_spent_inconclusive_verdict_names_a_paper_size_its_interval_excludes() -> None:
    v = _spent_verdict_of_nothing()
    assert v.verdict == INCONCLUSIVE and math.isfinite(v.effect.high)
    above = replace(v, paper=v.effect.high + 0.01)
    pct = f"{math.expm1(above.paper) * 100:+.1f} %"
    assert f"; the paper's {pct} lies above the interval;" in above.label
    below = replace(v, paper=v.effect.low - 0.01)
    assert "lies below the interval" in below.label
    # a paper size inside the interval, none, or an open run: nothing said of it
    inside = replace(v, paper=v.effect.estimate)
    assert "the paper's" not in inside.label and "the paper's" not in v.label
    assert replace(above, spent="").label == INCONCLUSIVE


def test_a_projection_with_a_measured_bound_uses_what_the_projected_rounds_detect() -> None:
    """No design.detect: z is what the planned rounds detect at the noise measured, and
    past them what the projected rounds detect; a projection that kept the bound of the
    rounds run could call "smaller than this lab can detect" too early. The projected
    n is the first round count at which the engine's own sequence, at the same mean
    and noise, is decisive with the bound of n rounds."""
    from casslab.analysis.power import detectable_log_effect
    from casslab.analysis.sequential import t_mixture_cs

    rs, rounds = _sequential_rows(_standardised(8, 0.10, 0.10))
    a = analyze(rs, [{"name": "nodes", "levels": [3]},
                     {"name": "network", "levels": ["eth", "wifi"]}], "runtime_s")
    (v,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}),)), [a],
                 rounds=rounds, sequential=True, planned_rounds=8, spent=ROUNDS_SPENT)
    assert v.verdict == INCONCLUSIVE and v.bound_source == "measured"
    n = int(v.decide_rounds)
    alpha, c = 1 - v.effect.level, v.effect.c

    def decided_at(k: int) -> bool:
        cs = t_mixture_cs(_standardised(k, 0.10, 0.10), alpha, c)
        z = detectable_log_effect("sequential", 0.10, k, k, v.effect.level, c=c)
        return cs.low > 0 or (-z <= cs.low and cs.high <= z)

    assert decided_at(n) and not decided_at(n - 1)
