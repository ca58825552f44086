"""The until: verdicts rule on a synthetic interleaved campaign in a real results
database: not decisive while the anytime-valid intervals are wide, decisive once a
known effect holds and an A/A pair is smaller than the lab can detect."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import pytest

from casslab.cli.stopping import round_verdicts, until_verdicts
from casslab.experiment.design import plan
from casslab.experiment.spec import parse_spec
from casslab.metrics.samples import TrialMetrics
from casslab.store.db import Store

SPEC = """\
workload: ycsb-c
factors:
  - {name: network.client.delay_ms, levels: [0, 2]}
  - {name: copy, levels: [A, B]}
design: {order: interleaved, trials: {min: 3, max: 12}, until: verdicts}
reference:
  findings:
    - {claim: delay is slower, response: runtime_s, factor: network.client.delay_ms,
       expect: higher}
    - {claim: copies alike, response: runtime_s, factor: copy, expect: no difference}
"""


def _pct(us: float) -> dict[str, float]:
    return {k: us for k in ("mean_us", "p50_us", "p95_us", "p99_us", "p999_us", "max_us")}


def campaign(directory: Path, noise: float) -> None:
    """Every planned trial done: runtime 1 s (+50 % with the delay), a drift of +5 % a
    trial, log-normal noise of sd `noise`."""
    spec = parse_spec(SPEC)
    trials = plan(spec)
    rng = random.Random(3)
    with Store(directory) as store:
        cid, _ = store.open_campaign(
            name="s", digest="d", spec_yaml=SPEC, response="runtime_s",
            factors=[{"name": f.name, "kind": f.kind, "label": f.name,
                      "levels": list(f.levels)} for f in spec.factors])
        status = store.ensure_plan(cid, [(t.seq, t.cell.index, t.cell.key, t.cell.params,
                                          t.trial_no, t.warmup, t.reset) for t in trials])
        store.set_rounds(cid, {t.seq: t.round for t in trials})
        for t in trials:
            tid = status[t.seq][0]
            slow = 1.5 if t.cell.params["network.client.delay_ms"] else 1.0
            runtime = slow * (1 + 0.05 * t.seq) * math.exp(rng.gauss(0, noise))
            store.mark_running(tid, t.cell.params, "none")
            store.commit_trial(tid, summary={
                "elapsed_s": runtime, "ops": 100, "ops_s": 100 / runtime, "errors": 0,
                "ended_by": "completed", "by_op": {"read": {
                    "ops": 100, "ops_s": 100 / runtime, "errors": 0,
                    "latency": _pct(1000), "service": _pct(900)}}},
                intervals=[], metrics=TrialMetrics(), command=[])


def test_quiet_campaign_becomes_decisive_with_holds_and_undetectable(tmp_path: Path) -> None:
    campaign(tmp_path, noise=0.01)
    spec = parse_spec(SPEC)
    early = until_verdicts(spec, tmp_path)(1)
    assert not early.stop  # one round: no finite anytime-valid interval
    # the A/A pair's bound is what all 12 planned rounds detect: the copies' drift of
    # +5 % a trial (one apart in a round) needs most of them
    assert not until_verdicts(spec, tmp_path)(8).stop
    later = until_verdicts(spec, tmp_path)(12)
    assert later.stop, later.lines
    delay, aa = round_verdicts(spec, tmp_path, 12)
    assert delay.verdict == "holds"
    assert delay.effect.pct()[0] == pytest.approx(50.0, abs=3.0)  # drift cancelled
    assert aa.verdict == "smaller than this lab can detect" and "+-" in aa.label


def test_noisy_campaign_keeps_going(tmp_path: Path) -> None:
    campaign(tmp_path, noise=0.6)
    decision = until_verdicts(parse_spec(SPEC), tmp_path)(4)
    assert not decision.stop and len(decision.lines) == 2


def test_noise_estimates_from_trials() -> None:
    from casslab.analysis.noisefloor import cv_of, log_sd_within, paired_sigma, within_trial_cv
    from casslab.analysis.power import log_sd

    sd, df = log_sd_within({"a": [1.0, math.e], "b": [2.0]})
    assert df == 1 and sd == pytest.approx(math.sqrt(0.5))
    assert paired_sigma([0.1, -0.1]) == pytest.approx(0.1)
    assert cv_of(log_sd(0.07)) == pytest.approx(0.07)
    assert within_trial_cv([9.0, 11.0]) == pytest.approx(math.sqrt(2) / 10)


def test_detect_is_the_declared_bound_of_an_undetectable_verdict(tmp_path: Path) -> None:
    """design.detect: "smaller than this lab can detect" means within +- detect, declared
    before the run; without it, within what the planned 12 rounds detect (measured)."""
    campaign(tmp_path, noise=0.05)
    measured = parse_spec(SPEC)
    first = next(n for n in range(3, 13) if until_verdicts(measured, tmp_path)(n).stop)
    _, aa = round_verdicts(measured, tmp_path, first)
    assert aa.verdict == "smaller than this lab can detect" and aa.label.endswith("measured)")
    assert "12 planned rounds" in aa.why
    bound_pct = (math.exp(aa.bound) - 1) * 100
    tight = parse_spec(SPEC.replace("until: verdicts}",
                                    f"until: verdicts, detect: {bound_pct / 3:.1f}%}}"))
    assert tight.design.detect == pytest.approx(bound_pct / 300, abs=1e-3)
    assert not until_verdicts(tight, tmp_path)(first).stop, "its interval is wider than detect"
    _, tight_aa = round_verdicts(tight, tmp_path, first)
    assert tight_aa.verdict == "inconclusive" and "design.detect" in tight_aa.why
    wide = parse_spec(SPEC.replace("until: verdicts}", "until: verdicts, detect: 60%}"))
    _, wide_aa = round_verdicts(wide, tmp_path, first)
    assert wide_aa.verdict == "smaller than this lab can detect"
    assert wide_aa.label == "smaller than this lab can detect (+-60.0 %, declared)"
    assert wide_aa.bound == pytest.approx(math.log(1.6))


def test_a_decided_verdict_stays_decided_as_rounds_are_added(tmp_path: Path) -> None:
    """Fixed bounds and the running intersection: once a round's verdicts are decisive,
    every later round's are too, and no interval widens."""
    campaign(tmp_path, noise=0.05)
    spec = parse_spec(SPEC.replace("until: verdicts}", "until: verdicts, detect: 10%}"))
    by_round = [round_verdicts(spec, tmp_path, n) for n in range(2, 13)]
    for earlier, later in itertools.pairwise(by_round):
        for a, b in zip(earlier, later, strict=True):
            assert b.effect.low >= a.effect.low - 1e-12 and b.effect.high <= a.effect.high + 1e-12
            if a.decisive:
                assert b.verdict == a.verdict, (a.why, b.why)
    assert all(v.decisive for v in by_round[-1])


def test_detect_needs_until_verdicts() -> None:
    from casslab.experiment.spec import SpecError

    with pytest.raises(SpecError, match=r"design.detect: is for `until: verdicts`"):
        parse_spec(SPEC.replace("trials: {min: 3, max: 12}, until: verdicts",
                                "trials: 3, detect: 10%"))


def test_a_campaign_out_of_budget_ends_with_what_would_decide_each_open_finding(
        tmp_path: Path) -> None:
    """Stopped by its budget after 4 rounds (every interval still infinite): each
    finding's line says the budget was spent, how many rounds would decide it at the
    noise measured, and what they take at the run's pace; a campaign that stopped by
    itself ends with the rule's own lines."""
    from casslab.cli.stopping import spent_lines
    from casslab.experiment.sequential import BY_BUDGET, BY_MAX, BY_VERDICTS

    campaign(tmp_path, noise=0.01)
    spec = parse_spec(SPEC.replace("until: verdicts}", "until: verdicts, detect: 10%}"))
    lines = spent_lines(spec, tmp_path, BY_BUDGET, 4, 120.0)
    assert len(lines) == 2
    for line in lines:
        # 4 rounds leave the sequence infinite: no resolution to state, only rounds
        assert "[-inf, +inf]" in line and "could not be told" not in line
        n = int(line.split("(budget spent; about ")[1].split(" rounds in all")[0])
        assert 4 < n <= 12  # the quiet copies decide by the planned 12 rounds
        assert line.endswith(f"would decide it at the noise measured) (at this run's 2.0 "
                             f"min a round: about {2 * n} min in all)"), line
        assert ", 4 rounds: " in line
    assert "(rounds spent; about" in spent_lines(spec, tmp_path, BY_MAX, 4, 120.0)[0]
    assert spent_lines(spec, tmp_path, BY_VERDICTS, 12, 120.0) == ()
