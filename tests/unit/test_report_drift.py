"""The report's drift table (with its warning when the drift is larger than the smallest
effect a finding looks for) and its list of trials that never settled."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from casslab.analysis.campaign import analyze, labeller
from casslab.analysis.findings import judge
from casslab.experiment.reference import Finding, Reference
from casslab.report.html import (
    Until,
    render_blocks,
    render_drift,
    render_unsettled,
    unsettled,
    until_verdicts,
)
from casslab.store.records import TrialRow

FACTORS: list[dict[str, Any]] = [{"name": "net", "levels": ["eth", "wifi"]}]


def trial(i: int, net: str, runtime: float, steady: str | None = None,
          rnd: int | None = None) -> TrialRow:
    params = {"net": net}
    return TrialRow(
        trial_id=i, seq=i, trial_no=i, warmup=False, status="done", error=None,
        started_at=None, ended_at=None, ended_by=None, cell=f"net={net}",
        cell_idx=int(net == "wifi"), params=params, cell_params=params, runtime_s=runtime,
        ops=100, ops_s=100 / runtime, errors=0, mean_ms=1.0, p50_ms=1.0, p95_ms=1.0,
        p99_ms=1.0, p999_ms=1.0, max_ms=1.0, pct_source="histogram", steady_class=steady,
        round=rnd)


def test_a_drift_larger_than_the_findings_effect_is_warned_about() -> None:
    # the demo's case: every trial 3 % faster than the last, Wi-Fi 5 % slower
    rows = [trial(i + 1, net, (1.05 if net == "wifi" else 1.0) * 4.0 * 0.97 ** i)
            for i, net in enumerate(["eth", "wifi"] * 12)]
    a = analyze(rows, FACTORS, "runtime_s")
    ref = Reference(findings=(Finding("Wi-Fi is slower", "runtime_s", "net", "eth", "wifi",
                                      "ratio", ratio=1.05),))
    html = render_drift([a], judge(ref, [a]))
    assert "<h2 id='drift'>" in html and "Mann-Kendall" in html
    assert "! Drift." in html and "more than the smallest effect a finding looks for (5.0 %)" \
        in html
    assert "-3.0" in html or "-2.9" in html or "-3.1" in html  # % per trial


def test_no_findings_no_warning_but_the_table_is_there() -> None:
    rng = np.random.default_rng(2)
    rows = [trial(i + 1, net, 4.0 * (1 + 0.01 * rng.standard_normal()))
            for i, net in enumerate(["eth", "wifi"] * 8)]
    html = render_drift([analyze(rows, FACTORS, "runtime_s")], [])
    assert "run time (s)" in html and "! Drift." not in html


def test_trials_that_never_settled_are_listed_stored_class_first() -> None:
    rising = [float(v) for v in 1000 + 5.0 * np.arange(120)]
    flat = [float(v) for v in 1000 + np.random.default_rng(1).normal(0, 10, 60)]
    rows = [trial(1, "eth", 1.0, "still warming"), trial(2, "eth", 1.0, "steady"),
            trial(3, "wifi", 1.0), trial(4, "wifi", 1.0), trial(5, "wifi", 1.0)]
    never = unsettled(rows, {3: rising, 4: flat, 5: rising[:20]})
    assert [(u.row.trial_id, u.klass, u.source) for u in never] == [
        (1, "still warming", "stored"), (3, "still warming", "report")]
    html = render_unsettled(never, labeller(FACTORS))
    assert "2 kept trials never settled" in html and "MSER-5" in html
    assert render_unsettled([], labeller(FACTORS)) == ""


def test_the_stored_spec_says_whether_rounds_ran_until_verdicts() -> None:
    assert until_verdicts("design:\n  until: verdicts\n  trials: {min: 3, max: 30}\n") == \
        Until(True, 30)
    assert until_verdicts("design:\n  until: verdicts\n  trials: {min: 3, max: 30}\n"
                          "  detect: 20%\n") == Until(True, 30, 0.2)
    assert until_verdicts("design:\n  trials: 5\n") == Until(False, None)
    assert until_verdicts(": bad: [") == Until(False, None)


def test_an_interleaved_campaign_gets_its_within_round_table() -> None:
    # 10 rounds, Wi-Fi 5 % slower within every round, the machine 4 % faster per round
    rows = [trial(2 * r + j + 1, net, (1.05 if net == "wifi" else 1.0) * 4.0 * 0.96 ** r,
                  rnd=r + 1)
            for r in range(10) for j, net in enumerate(["eth", "wifi"] if r % 2 else
                                                        ["wifi", "eth"])]
    a = analyze(rows, FACTORS, "runtime_s")
    assert a.blocks is not None and len(a.blocks.rounds) == 10
    (pair,) = a.blocks.pairs
    assert pair.pct[0] == pytest.approx(5.0)
    html = render_blocks(a)
    assert "Within rounds (interleaved design)" in html and "+5.0 % [+5.0, +5.0]" in html
    assert "RCB ANOVA (log)" in html
    assert analyze([trial(1, "eth", 1.0), trial(2, "wifi", 1.0)], FACTORS,
                   "runtime_s").blocks is None
