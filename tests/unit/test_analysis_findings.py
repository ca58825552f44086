"""Verdicts of a study's findings on the lab's kept trials (holds / does not hold /
inconclusive, each with the test and the Holm p value that decided it) and its published
numbers beside the lab's median and CI."""

from __future__ import annotations

import math
from typing import Any

import pytest

from casslab.analysis.campaign import Analysis, analyze
from casslab.analysis.findings import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    compare_values,
    decide,
    fit_slope,
    judge,
)
from casslab.experiment.reference import Finding, Reference, RefValue
from casslab.store.results import TrialRow

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
    assert v.verdict == HOLDS and v.p_holm < 0.001 and v.p == v.p_holm
    assert (v.n_low, v.n_high) == (4, 4) and v.ratio == pytest.approx(5.05 / 3.025)
    assert v.effect > 0 and v.effect_name == "Hedges g"
    assert v.test == "Welch t (two-sided), Holm over 1 test, alpha 0.05"
    assert "significantly higher" in v.why


def test_a_significant_difference_the_other_way_does_not_hold() -> None:
    (v,) = judge(Reference(findings=(finding("lower", {"nodes": (3,)}),)), [analysis(LAB)])
    assert v.verdict == FAILS and "significantly higher, not lower" in v.why


def test_no_difference_expected_but_found_does_not_hold_and_none_found_is_inconclusive(
        ) -> None:
    found, none = judge(Reference(findings=(finding("no difference", {"nodes": (3,)}),
                                            finding("no difference", {"nodes": (1,)}))),
                        [analysis(LAB)])
    assert found.verdict == FAILS and "significant difference" in found.why
    assert none.verdict == INCONCLUSIVE and "> alpha = 0.05" in none.why
    assert none.test.endswith("Holm over 2 tests, alpha 0.05")


def test_too_few_trials_is_inconclusive() -> None:
    few = {**LAB, (3, "wifi"): [5.0]}
    (v,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}),)), [analysis(few)])
    assert v.verdict == INCONCLUSIVE and math.isnan(v.p)
    assert "too few kept trials (4 at `from`, 1 at `to`" in v.why


def test_holm_across_findings_can_turn_a_significant_p_inconclusive() -> None:
    lo, hi = [1.0, 1.2, 1.1], [1.25, 1.4, 1.3]  # Welch p ~ 0.04 alone
    lab = {(1, "eth"): lo, (1, "wifi"): hi, (3, "eth"): lo, (3, "wifi"): hi}
    alone = judge(Reference(findings=(finding("higher", {"nodes": (1,)}),)), [analysis(lab)])
    assert alone[0].verdict == HOLDS and 0.01 < alone[0].p < 0.05
    both = judge(Reference(findings=(finding("higher", {"nodes": (1,)}),
                                     finding("higher", {"nodes": (3,)}))), [analysis(lab)])
    # Holm: the smaller of two equal p values is doubled, the larger kept at that
    assert [v.p_holm for v in both] == pytest.approx([2 * alone[0].p] * 2)
    assert {v.verdict for v in both} == {INCONCLUSIVE}


def test_mann_whitney_uses_the_rank_biserial_sign() -> None:
    (v,) = judge(Reference(findings=(finding("higher", {"nodes": (3,)}, "mann-whitney"),)),
                 [analysis(LAB)])
    # four against four, all apart: the exact two-sided p is 2/70 ~ 0.029
    assert v.verdict == HOLDS and v.p == pytest.approx(2 / 70)
    assert v.effect == 1.0 and v.effect_name == "rank-biserial r"


def ratio(r: float, where: dict[str, tuple[Any, ...]]) -> Finding:
    return Finding("claim", "runtime_s", "network", "eth", "wifi", "ratio", where, ratio=r)


def test_an_expected_ratio_holds_fails_or_is_inconclusive() -> None:
    # on 3 nodes Wi-Fi / Ethernet is 5.05 / 3.025 = 1.67; on 1 node about 1
    near, far, flat = judge(Reference(findings=(
        ratio(1.65, {"nodes": (3,)}), ratio(1.2, {"nodes": (3,)}),
        ratio(1.01, {"nodes": (1,)}))), [analysis(LAB)])
    assert near.verdict == HOLDS and near.p_ratio > 0.05 and near.p_holm < 0.001
    assert far.verdict == FAILS and far.p_ratio < 0.001
    assert "differs from 1.2" in far.why
    assert flat.verdict == INCONCLUSIVE and "not significantly higher" in flat.why
    assert near.test == "Welch t (two-sided, on logs), Holm over 6 tests, alpha 0.05"


def test_decide_needs_the_p_value_under_alpha() -> None:
    stat = (3.0, 0.04, 1.5)
    assert decide("higher", [1, 2], [3, 4], stat, 0.04, 0.05)[0] == HOLDS
    assert decide("higher", [1, 2], [3, 4], stat, 0.04, 0.01)[0] == INCONCLUSIVE


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
    assert near.fit.coverage == pytest.approx(0.95) and near.effect_name == "slope"
    assert "lies within the paper's 0.5 +- 0.15" in near.why
    assert far.verdict == FAILS and far.fit is not None and far.fit.p < 0.001
    assert "outside" in far.why
    assert wide.verdict == INCONCLUSIVE and "overlaps the edge" in wide.why
    assert few.verdict == INCONCLUSIVE and "too few trials for a line" in few.why


def test_slope_findings_stay_out_of_the_holm_family() -> None:
    diff, _ = judge(Reference(findings=(finding("higher", {"nodes": (3,)}),
                                        slope(0.5, 0.1, {}))), [analysis(LAB)])
    assert diff.test == "Welch t (two-sided), Holm over 1 test, alpha 0.05"


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
    # Holm over two tests halves what each may reach: 4 per side no longer do.
    two = Reference(findings=(_finding("mann-whitney"), _finding("mann-whitney", "lower")))
    assert len(power_warnings(two, cells(4))) == 2
    welch_ref = Reference(findings=(_finding("welch"),))
    assert "Welch's t needs 2 kept trials per side, the plan has 1 vs 1" in \
        power_warnings(welch_ref, cells(1))[0]
    assert power_warnings(welch_ref, cells(2)) == []
