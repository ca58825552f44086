"""The stopping rule of `design.until: verdicts`, built from casslab.analysis for the
runner (which may not import analysis; casslab.experiment.sequential takes it as a
callback).

After each round from `trials.min` on it reads the campaign's kept trials, and for
every finding takes one paired difference per complete round (the `to` cell against the
`from` cell of the same round, averaged over the cells of the other factors that match
`where`): log(to / from) for higher / lower / no difference / ratio, (to - from) / (to
level - from level) for slope. Lai's t-mixture confidence sequence of their mean
(casslab.analysis.sequential, anytime-valid: it may be looked at after every round;
its c fixed from trials.max, never from the data) decides:
- higher / lower: decisive once the interval excludes 0 (either side);
- ratio R: once it lies inside log R +- log(1 + tol) or wholly outside it;
- slope S: once it lies inside S +- T or wholly outside it;
- no difference: once it excludes 0 or lies inside +- log(1 + tol);
with tol the finding's tolerance (default DEFAULT_TOL). The campaign stops when every
finding is decisive. The report's verdicts come from casslab.analysis alone; this rule
only says when there are enough rounds for them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casslab.analysis.responses import trial_values
from casslab.analysis.sequential import SequentialInterval, t_mixture_cs, tune_c
from casslab.experiment.reference import Finding
from casslab.experiment.sequential import ShouldStop, StopDecision
from casslab.experiment.spec import CampaignSpec
from casslab.store.results import Results, TrialRow

DEFAULT_TOL = 0.10  # a ratio or "no difference" within 10 % counts as the same size


@dataclass(frozen=True)
class FindingState:
    """Where one finding stands after some rounds."""

    claim: str
    decisive: bool
    interval: SequentialInterval
    scale: str  # "log-ratio" or "slope"
    why: str

    def line(self) -> str:
        return f"{self.claim}: {self.why}"


def _matches(params: Mapping[str, Any], where: Mapping[str, Sequence[Any]]) -> bool:
    return all(params.get(k) in levels for k, levels in where.items())


def round_differences(f: Finding, rows: Sequence[TrialRow],
                      values: Mapping[int, float]) -> list[float]:
    """One paired difference per round that has both sides (see the module docstring)."""
    slope = f.expect == "slope"
    by_round: dict[int, dict[str, list[tuple[dict[str, Any], float]]]] = {}
    for r in rows:
        v = values.get(r.trial_id, math.nan)
        if r.round is None or not math.isfinite(v) or not _matches(r.cell_params, f.where):
            continue
        level = r.cell_params.get(f.factor)
        side = "lo" if level == f.low else "hi" if level == f.high else ""
        if side:
            rest = {k: x for k, x in r.cell_params.items() if k != f.factor}
            by_round.setdefault(r.round, {}).setdefault(side, []).append((rest, v))
    out = []
    for rnd in sorted(by_round):
        diffs = []
        for rest, hi in by_round[rnd].get("hi", []):
            lo = next((v for rr, v in by_round[rnd].get("lo", []) if rr == rest), None)
            if lo is None:
                continue
            if slope:
                diffs.append((hi - lo) / (float(f.high) - float(f.low)))
            elif lo > 0 and hi > 0:
                diffs.append(math.log(hi / lo))
        if diffs:
            out.append(sum(diffs) / len(diffs))
    return out


def _pct(x: float) -> str:
    return f"{100 * math.expm1(x):+.1f} %"


def state(f: Finding, diffs: Sequence[float], alpha: float, c: float) -> FindingState:
    """The finding's confidence sequence after `diffs`, and whether it is decisive."""
    cs = t_mixture_cs(diffs, alpha, c)
    scale = "slope" if f.expect == "slope" else "log-ratio"
    if not cs.bounded:
        return FindingState(f.claim, False, cs, scale, f"{cs.n} rounds: interval not yet "
                            "finite")
    if scale == "slope":
        tol = f.tolerance if math.isfinite(f.tolerance) else DEFAULT_TOL * abs(f.slope)
        lo_b, hi_b = f.slope - tol, f.slope + tol
        shown = f"slope {cs.mean:.3g} [{cs.low:.3g}, {cs.high:.3g}]"
    else:
        tol = f.tolerance if math.isfinite(f.tolerance) else DEFAULT_TOL
        centre = math.log(f.ratio) if f.expect == "ratio" else 0.0
        lo_b, hi_b = centre - math.log1p(tol), centre + math.log1p(tol)
        shown = f"{_pct(cs.mean)} [{_pct(cs.low)}, {_pct(cs.high)}]"
    inside = lo_b <= cs.low and cs.high <= hi_b
    outside = cs.high < lo_b or cs.low > hi_b
    if f.expect in ("higher", "lower"):
        decisive = cs.excludes(0.0)
    elif f.expect == "no difference":
        decisive = cs.excludes(0.0) or inside
    else:
        decisive = inside or outside
    where = "decisive" if decisive else "not yet decisive"
    return FindingState(f.claim, decisive, cs, scale,
                        f"{shown} ({cs.coverage}, {cs.n} rounds): {where}")


def until_verdicts(spec: CampaignSpec, results_dir: Path) -> ShouldStop:
    """The rule the runner asks between rounds (see the module docstring)."""
    alpha = spec.reference.alpha
    c = tune_c(spec.design.trials_max, alpha)

    def rule(completed: int) -> StopDecision:
        states = finding_states(spec, results_dir, completed, alpha, c)
        done = all(s.decisive for s in states)
        return StopDecision(done, "every finding decisive" if done else "",
                            tuple(s.line() for s in states))

    return rule


def finding_states(spec: CampaignSpec, results_dir: Path, completed: int, alpha: float,
                   c: float) -> list[FindingState]:
    """Every finding's state from the kept trials of rounds 1..completed."""
    store, results = Results.open(results_dir)
    with store:
        rows = [r for r in results.kept_trials()
                if r.round is not None and r.round <= completed]
        ids = [r.trial_id for r in rows]
        values: dict[str, dict[int, float]] = {}
        out = []
        for f in spec.reference.findings:
            if f.response not in values:
                values[f.response] = trial_values(results, f.response, ids)
            out.append(state(f, round_differences(f, rows, values[f.response]), alpha, c))
    return out
