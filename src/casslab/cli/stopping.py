"""The stopping rule of `design.until: verdicts`, built from casslab.analysis for the
runner (which may not import analysis; casslab.experiment.sequential takes it as a
callback).

After each round from `trials.min` on it reads the campaign's trials of the rounds so
far and asks the one verdict engine (casslab.analysis.findings.judge_rows, paired by
round and anytime-valid: Lai's t-mixture confidence sequence, tuned to trials.max,
valid when looked at after every round) for every finding's verdict; the campaign stops
once all are decisive (holds; direction holds, size differs; does not hold; smaller
than this lab can detect: within design.detect, the margin declared before the run,
or else within what the planned maximum of rounds detects). Every bound is fixed
before the data and the intervals are the sequence's running intersection, so a
verdict, once decisive, stays so.
"""

from __future__ import annotations

import math
from pathlib import Path

from casslab.analysis.findings import (
    BUDGET_SPENT,
    ROUNDS_SPENT,
    Verdict,
    all_decisive,
    judge_rows,
)
from casslab.analysis.responses import trial_values
from casslab.experiment.sequential import BY_BUDGET, BY_MAX, ShouldStop, StopDecision
from casslab.experiment.spec import CampaignSpec
from casslab.store.records import Results


def verdict_line(v: Verdict) -> str:
    """One finding: its claim, effect with interval and coverage, and verdict."""
    return f"{v.finding.claim}: {v.interval()}, {v.effect.n_low} rounds: {v.label}"


def round_verdicts(spec: CampaignSpec, results_dir: Path, completed: int, *,
                   spent: str = "") -> list[Verdict]:
    """Every finding's verdict from the trials of rounds 1..completed."""
    store, results = Results.open(results_dir)
    with store:
        campaign = results.campaign()
        rows = [r for r in results.trials() if r.round is not None and r.round <= completed]
        ids = [r.trial_id for r in rows if r.kept]
        responses = dict.fromkeys(f.response for f in spec.reference.findings)
        values = {name: trial_values(results, name, ids) for name in responses}
    factors = campaign.factors if campaign is not None else []
    return judge_rows(spec.reference, rows, factors, values, sequential=True,
                      planned_rounds=spec.design.trials_max, spent=spent,
                      margin=spec.design.detect)


def until_verdicts(spec: CampaignSpec, results_dir: Path) -> ShouldStop:
    """The rule the runner asks between rounds (see the module docstring)."""

    def rule(completed: int) -> StopDecision:
        verdicts = round_verdicts(spec, results_dir, completed)
        done = all_decisive(verdicts)
        return StopDecision(done, "every finding decisive" if done else "",
                            tuple(verdict_line(v) for v in verdicts))

    return rule


def spent_lines(spec: CampaignSpec, results_dir: Path, stopped_by: str, last_round: int,
                round_s: float) -> tuple[str, ...]:
    """The verdicts of a campaign that ran out of rounds or budget (`stopped_by`), each
    inconclusive one with the rounds that would decide it at the noise measured and
    what they would take at this run's median round time (`round_s`); () when the
    campaign stopped for another reason."""
    spent = {BY_MAX: ROUNDS_SPENT, BY_BUDGET: BUDGET_SPENT}.get(stopped_by)
    if spent is None or last_round < 1:
        return ()
    out = []
    for v in round_verdicts(spec, results_dir, last_round, spent=spent):
        line = verdict_line(v)
        if math.isfinite(v.decide_rounds) and round_s > 0:
            line += (f" (at this run's {round_s / 60:.1f} min a round: about "
                     f"{duration_text(v.decide_rounds * round_s)} in all)")
        out.append(line)
    return tuple(out)


def duration_text(seconds: float) -> str:
    """A planning duration, rounded: "40 min", "2.7 h"."""
    minutes = seconds / 60
    return f"{minutes:.0f} min" if minutes < 90 else f"{minutes / 60:.1f} h"
