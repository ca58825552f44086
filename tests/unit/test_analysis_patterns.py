"""Pattern findings over three or more levels (a trend, an odd/even alternation), decided
by the one verdict engine: a known trend or zig-zag is recovered with its size, a
steady trend is no zig-zag, interleaved rounds cancel a drift, and on null campaigns
the engine claims a pattern no more often than its nominal rate."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from casslab.analysis.campaign import analyze
from casslab.analysis.findings import (
    FAILS,
    HOLDS,
    SIZE_DIFFERS,
    UNDETECTABLE,
    implied_growth,
    judge,
    judge_rows,
)
from casslab.analysis.patterns import fit_pattern
from casslab.experiment.reference import Finding, Reference, RefValue
from casslab.store.records import TrialRow

NODES = [1, 2, 3, 4, 5, 6]
FACTORS = [{"name": "nodes", "levels": NODES},
           {"name": "workload", "levels": ["ycsb-a", "ycsb-c"]}]


def campaign(mean: Any, rng: np.random.Generator, trials: int, cv: float = 0.05,
             drift: float = 0.0, interleaved: bool = False,
             workloads: tuple[str, ...] = ("ycsb-a",)) -> list[TrialRow]:
    """Trials of every (nodes, workload) cell: value = mean(nodes, workload) x lognormal
    noise x (1 + drift) ** (run order). Interleaved: each round is one trial of every
    cell (shuffled within the round); else all of a cell's trials run together."""
    cells = [(n, w) for w in workloads for n in NODES]
    order = ([(r, c) for r in range(trials) for c in rng.permutation(len(cells))]
             if interleaved else [(r, c) for c in range(len(cells)) for r in range(trials)])
    out: list[TrialRow] = []
    for seq, (r, ci) in enumerate(order, start=1):
        n, w = cells[ci]
        v = mean(n, w) * math.exp(rng.normal(0, cv)) * (1 + drift) ** seq
        params: dict[str, Any] = {"nodes": n, "workload": w}
        out.append(TrialRow(
            trial_id=seq, seq=seq, trial_no=r + 1, warmup=False, status="done", error=None,
            started_at=None, ended_at=None, ended_by=None, cell=f"{n},{w}", cell_idx=ci,
            params=params, cell_params=params, runtime_s=v, ops=100, ops_s=100 / v,
            errors=0, mean_ms=1.0, p50_ms=1.0, p95_ms=1.0, p99_ms=1.0, p999_ms=1.0,
            max_ms=1.0, pct_source="histogram", round=r + 1 if interleaved else None))
    return out


def trend(expect: str = "increasing", growth: float = math.nan,
          tolerance: float = math.nan) -> Finding:
    return Finding("grows", "runtime_s", "nodes", 1, 6, expect, {}, "ols",
                   tolerance=tolerance, growth=growth)


def zigzag(higher_at: str = "even") -> Finding:
    return Finding("odd beat even", "runtime_s", "nodes", 1, 6, "alternation", {}, "ols",
                   higher_at=higher_at)


def verdicts(rows: list[TrialRow], *findings: Finding,
             values: tuple[RefValue, ...] = ()) -> list[Any]:
    return judge_rows(Reference(findings=findings, values=values), rows, FACTORS)


def test_the_fit_recovers_a_known_trend_and_zigzag_exactly_without_noise() -> None:
    pts = [("g", float(n), 2.0 * 1.1 ** n * (1.2 if n % 2 == 0 else 1.0)) for n in NODES]
    pts += [("h", float(n), 7.0 * 1.1 ** n * (1.2 if n % 2 == 0 else 1.0)) for n in NODES]
    zig = fit_pattern(pts, "alternation", "even")
    assert zig.coef == pytest.approx(math.log(1.2))
    assert fit_pattern(pts, "alternation", "odd").coef == pytest.approx(-math.log(1.2))
    line = fit_pattern([(g, x, y) for g, x, y in pts if x % 2], "increasing")
    assert line.coef == pytest.approx(math.log(1.1))  # the groups' baselines do not enter


def test_a_known_trend_is_recovered_with_its_interval_and_size() -> None:
    rng = np.random.default_rng(1)
    rows = campaign(lambda n, w: 2.0 * 1.10 ** n, rng, trials=5)
    right, wrong, down = verdicts(rows, trend(growth=0.10, tolerance=0.5),
                                  trend(growth=0.30), trend("decreasing"))
    est, lo, hi = right.effect.pct()
    assert lo < 10.0 < hi and est == pytest.approx(10.0, abs=2.0)
    assert right.verdict == HOLDS  # the band: log(1.1) +- 50 %
    assert wrong.verdict == SIZE_DIFFERS and "paper +30.0 %" in wrong.label
    assert down.verdict == FAILS
    assert "3 findings (Bonferroni" in right.test


def test_the_size_a_trend_looks_for_is_implied_by_the_papers_values() -> None:
    # Table 3 of seed 000 (Abramova et al., workload A): 1, 3, 6 nodes
    vals = tuple(RefValue("runtime_s", {"nodes": n, "workload": "ycsb-a"}, v, v * 1000, "ms",
                          "Table 3") for n, v in ((1, 58.43), (3, 65.65), (6, 87.31)))
    g = implied_growth(Reference(values=vals), trend())
    # log-linear least squares: exp(slope of log value on nodes) - 1
    assert g == pytest.approx(math.expm1(np.polyfit([1, 3, 6], np.log([58.43, 65.65, 87.31]),
                                                    1)[0]))
    assert g == pytest.approx(0.0849, abs=5e-4)
    assert math.isnan(implied_growth(Reference(values=vals[:1]), trend()))


def test_an_alternation_is_recovered_and_a_steady_trend_is_no_alternation() -> None:
    rng = np.random.default_rng(2)
    zig = campaign(lambda n, w: 2.0 * 1.05 ** n * (1.15 if n % 2 == 0 else 1.0), rng, 5)
    even, odd = verdicts(zig, zigzag("even"), zigzag("odd"))
    assert even.verdict == HOLDS and even.effect.low > 0
    assert odd.verdict == FAILS
    steady = campaign(lambda n, w: 2.0 * 1.15 ** n, rng, 8)
    (v,) = verdicts(steady, zigzag())
    assert v.effect.low < 0 < v.effect.high and v.verdict == UNDETECTABLE
    assert "smaller than this lab can detect" in v.label


def test_workloads_with_different_baselines_share_one_trend() -> None:
    rng = np.random.default_rng(3)
    rows = campaign(lambda n, w: (2.0 if w == "ycsb-a" else 9.0) * 1.08 ** n, rng, 4,
                    workloads=("ycsb-a", "ycsb-c"))
    (v,) = verdicts(rows, trend(growth=0.08))
    assert v.effect.low < math.log(1.08) < v.effect.high
    assert v.effect.high - v.effect.low < 0.03  # baselines 4.5x apart add no noise


def test_interleaved_rounds_cancel_a_drift_that_a_blocked_order_mistakes_for_a_trend(
) -> None:
    rng = np.random.default_rng(4)
    flat = lambda n, w: 2.0  # noqa: E731  (no trend at all)
    blocked = campaign(flat, rng, 5, cv=0.02, drift=0.01)
    (b,) = verdicts(blocked, trend())
    assert b.verdict == HOLDS  # the drift, in cell order, looks like growth
    rounds = campaign(flat, rng, 5, cv=0.02, drift=0.01, interleaved=True)
    (r,) = verdicts(rounds, trend())
    assert r.effect.kind == "paired" and r.n_low == 5
    assert r.effect.low < 0 < r.effect.high and r.verdict != HOLDS


def test_too_few_trials_leave_a_pattern_inconclusive_saying_why() -> None:
    rows = campaign(lambda n, w: 2.0, np.random.default_rng(5), 1)
    (v,) = verdicts(rows[:2], trend())
    assert v.verdict == "inconclusive" and "too few kept trials for the fit" in v.why


@pytest.mark.parametrize("interleaved", [False, True])
def test_on_null_campaigns_a_pattern_is_claimed_at_most_at_the_nominal_rate(
        interleaved: bool) -> None:
    """400 campaigns with no trend and no zig-zag (3 trials or rounds per cell): the
    engine's claims of a pattern (holds, or its opposite) for two findings at alpha 0.05
    (Bonferroni) stay within the nominal rate, with 3 binomial sd of slack."""
    rng = np.random.default_rng(6)
    runs, claims = 400, 0
    for _ in range(runs):
        rows = campaign(lambda n, w: 2.0, rng, 3, cv=0.1, interleaved=interleaved)
        vs = verdicts(rows, trend(), zigzag())
        claims += any(v.verdict in (HOLDS, FAILS, SIZE_DIFFERS) for v in vs)
    rate = claims / runs
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


def test_judge_takes_the_pattern_over_the_levels_from_to_only() -> None:
    rng = np.random.default_rng(7)
    # grows over 1..3, flat after: the finding over 4..6 sees no trend
    rows = campaign(lambda n, w: 2.0 * 1.2 ** min(n, 3), rng, 5, cv=0.02)
    a = analyze(rows, FACTORS, "runtime_s")
    late = Finding("flat late", "runtime_s", "nodes", 4, 6, "increasing", {}, "ols")
    early = Finding("grows early", "runtime_s", "nodes", 1, 3, "increasing", {}, "ols",
                    growth=0.2)
    v_late, v_early = judge(Reference(findings=(late, early)), [a])
    assert v_late.effect.low < 0 < v_late.effect.high
    assert v_early.effect.low < math.log(1.2) < v_early.effect.high


def test_seed_000s_paper_specs_declare_its_patterns_with_table_3s_growth() -> None:
    from pathlib import Path

    from casslab.analysis.findings import size_looked_for
    from casslab.experiment.spec import load_spec

    root = Path(__file__).resolve().parents[2] / "examples" / "000-rpi-iot"
    links = load_spec(root / "links.yaml", scale="paper").reference
    zig = next(f for f in links.findings if f.expect == "alternation")
    assert zig.higher_at == "even" and zig.where["workload"] == ("ycsb-a", "ycsb-c", "ycsb-e")
    assert zig.where["network"] == ("wifi",)
    assert load_spec(root / "links.yaml").reference.absent == ()  # here: no pattern
    ram = load_spec(root / "ram.yaml", scale="paper").reference
    sizes = [math.expm1(size_looked_for(ram, f)[0]) for f in ram.findings if f.pattern]
    assert sizes == pytest.approx([0.0849, 0.0632, 0.1218], abs=5e-4)


def test_rounds_added_until_decisive_give_a_pattern_an_anytime_valid_interval() -> None:
    rng = np.random.default_rng(8)
    rows = campaign(lambda n, w: 2.0 * 1.05 ** n * (1.3 if n % 2 == 0 else 1.0), rng, 8,
                    cv=0.03, interleaved=True)
    fixed = judge_rows(Reference(findings=(zigzag(),)), rows, FACTORS)[0]
    (v,) = judge_rows(Reference(findings=(zigzag(),)), rows, FACTORS, sequential=True,
                      planned_rounds=20)
    assert v.effect.anytime and v.effect.kind == "sequential" and "anytime-valid" in v.interval()
    assert v.verdict == HOLDS and v.effect.low < math.log(1.3) < v.effect.high
    # the confidence sequence pays for looking after every round: wider than the fixed t
    assert v.effect.high - v.effect.low > fixed.effect.high - fixed.effect.low
