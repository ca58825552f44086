"""Per finding, the smallest effect a spec's planned trials can detect (for `experiment
validate` and `plan`), from design.noise_cv or a pilot's results directory
(`--pilot`, e.g. one `casslab calibrate` wrote); see casslab.analysis.noisefloor."""

from __future__ import annotations

import math
from pathlib import Path

from casslab.analysis.noisefloor import (
    INTERLEAVED,
    POOLED,
    SEQUENTIAL,
    Noise,
    detectable_pct,
    log_sd_within,
)
from casslab.analysis.responses import trial_values
from casslab.core.errors import UsageError
from casslab.experiment.reference import Finding
from casslab.experiment.spec import CampaignSpec
from casslab.store.db import StoreError
from casslab.store.results import Results


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


def _pairs(spec: CampaignSpec, f: Finding) -> int:
    """Cell pairs a finding averages per round: the other factors' levels it keeps."""
    n = 1
    for other in spec.factors:
        if other.name != f.factor:
            n *= len(f.where.get(other.name, other.levels))
    return n


def design_kind(spec: CampaignSpec) -> str:
    d = spec.design
    if d.until == "verdicts":
        return SEQUENTIAL
    return INTERLEAVED if d.interleaved else POOLED


def finding_lines(spec: CampaignSpec, pilot: Path | None) -> tuple[list[str], list[str]]:
    """(lines, warnings): per finding its smallest detectable effect; a warning for a
    finding that can never reach a verdict. Empty without a noise estimate."""
    lines: list[str] = []
    warnings: list[str] = []
    kind = design_kind(spec)
    n = spec.design.trials_max
    alpha = spec.reference.alpha
    noises: dict[str, Noise | None] = {}
    for f in spec.reference.findings:
        if f.response not in noises:
            noises[f.response] = pilot_noise(pilot, f.response) if pilot else spec_noise(spec)
        noise = noises[f.response]
        if noise is None:
            continue
        z = detectable_pct(noise.sigma, n, kind, alpha=alpha, pairs=_pairs(spec, f))
        what = f"{n} {'rounds' if kind != POOLED else 'trials a side'} ({kind})"
        if math.isinf(z):
            warnings.append(f"finding {f.claim!r} can never reach a verdict: {what} are too "
                            "few for a finite interval")
            continue
        lines.append(f"finding {f.claim!r}: smallest detectable effect +-{z:.1f} % with "
                     f"{what}, noise sigma {noise.sigma:.3f} ({noise.source})")
        tol = f.tolerance if f.expect in ("ratio", "no difference") else math.nan
        tol = 0.10 if f.expect in ("ratio", "no difference") and math.isnan(tol) else tol
        if math.isfinite(tol) and z >= 100 * tol:
            warnings.append(f"finding {f.claim!r} can never be shown to hold: its interval "
                            f"(+-{z:.1f} %) cannot fit inside its +-{100 * tol:g} % "
                            "tolerance (only a clear difference can decide it)")
    return lines, warnings
