"""Per finding, the smallest effect a spec's planned trials can detect (for `experiment
validate` and `plan`), from design.noise_cv or a pilot's results directory
(`--pilot`, e.g. one `casslab calibrate` wrote); casslab.analysis.power computes it,
casslab.analysis.noisefloor estimates the noise."""

from __future__ import annotations

import math
from pathlib import Path

from casslab.analysis.effects import to_pct
from casslab.analysis.findings import size_looked_for
from casslab.analysis.noisefloor import Noise, cv_of, log_sd_within
from casslab.analysis.power import finding_power
from casslab.analysis.responses import trial_values
from casslab.core.errors import UsageError
from casslab.experiment.spec import CampaignSpec
from casslab.store.db import StoreError
from casslab.store.records import Results


def pilot_noise(directory: Path, response: str) -> Noise:
    """sigma of log(response) within the cells of a pilot's kept trials."""
    try:
        store, results = Results.open(directory)
    except StoreError as exc:
        raise UsageError(f"--pilot: {exc}") from None
    with store:
        kept = results.kept_trials()
        try:
            values = trial_values(results, response, [t.trial_id for t in kept])
        except ValueError as exc:
            raise UsageError(f"--pilot {directory}: {exc}") from None
    by_cell: dict[str, list[float]] = {}
    for t in kept:
        by_cell.setdefault(t.cell, []).append(values[t.trial_id])
    sigma, df = log_sd_within(by_cell)
    if not math.isfinite(sigma):
        raise UsageError(f"--pilot {directory}: no cell with 2 or more kept trials of "
                         f"{response}; run more trials (e.g. casslab calibrate)")
    return Noise(sigma, f"pilot {directory}, {response}, {df} df")


def spec_noise(spec: CampaignSpec) -> Noise | None:
    """design.noise_cv as sigma of log (a log-normal's: sqrt(log(1 + cv^2)))."""
    cv = spec.design.noise_cv
    if cv is None:
        return None
    return Noise(math.sqrt(math.log1p(cv * cv)), f"design.noise_cv {cv:g}")


def design_kind(spec: CampaignSpec) -> str:
    """casslab.analysis.power's design of a spec: sequential, interleaved or pooled."""
    d = spec.design
    if d.until == "verdicts":
        return "sequential"
    return "interleaved" if d.interleaved else "pooled"


def finding_lines(spec: CampaignSpec, pilot: Path | None) -> tuple[list[str], list[str]]:
    """(lines, warnings): per finding its smallest detectable effect at 90 % power
    (casslab.analysis.power, Bonferroni over the findings as the verdicts are) with the
    planned kept trials per cell (rounds), and the power module's warning when the plan
    can never decide it or cannot see the size it looks for. Empty without a noise
    estimate."""
    lines: list[str] = []
    warnings: list[str] = []
    kind = design_kind(spec)
    ref = spec.reference
    noises: dict[str, Noise | None] = {}
    for f in ref.findings:
        if f.response not in noises:
            noises[f.response] = pilot_noise(pilot, f.response) if pilot else spec_noise(spec)
        noise = noises[f.response]
        if noise is None:
            continue
        if f.difference:  # the noise is relative (a CV); a difference is in the unit
            lines.append(f"finding {f.claim!r}: a difference in {f.response}'s unit; its "
                         "detectable size needs the noise in that unit (the campaign's "
                         "report measures it)")
            continue
        size, _band = size_looked_for(ref, f)
        looks_for = (to_pct(size) if f.expect != "slope" and not f.pattern
                     and math.isfinite(size) else math.nan)
        fp = finding_power(f.claim, looks_for, cv_of(noise.sigma), spec.design.trials_max,
                           kind, alpha=ref.alpha, family=len(ref.findings),
                           max_rounds=spec.design.trials_max)
        lines.append(f"{fp.line()} ({kind}; noise sigma {noise.sigma:.3f}, {noise.source})")
        if fp.warning:
            warnings.append(fp.warning)
    return lines, warnings
