"""The lab's noise and what it lets a campaign detect: for `casslab calibrate`, and for
`experiment validate / plan` (per finding, the smallest effect the planned trials can
detect, from design.noise_cv or a pilot's results).

Noise is sigma, the standard deviation of log(response) of one trial (for small values
about the coefficient of variation). A finding compares two sides; what it can detect
depends on how its interval is made (casslab.analysis.effects):
- interleaved, fixed rounds: a paired t interval of the per-round log-ratios, whose sd
  is sqrt(2) sigma / sqrt(k) (k: pairs of cells averaged per round); half-width
  t(n-1) sd / sqrt(n);
- interleaved with until: verdicts: Lai's t-mixture confidence sequence of the same
  log-ratios (anytime-valid), whose half-width at n rounds, for data of that sd, is
  half_width_factor(n) sqrt(n - 1) sd;
- blocked or random order: Welch's t interval of the difference of mean logs, n trials
  each side (k pairs pool to n k a side), half-width t(2 n k - 2) sigma sqrt(2 / (n k)).
The detectable effect printed is that half-width as a change in % (an effect of that
size is decided about half the time; twice it, nearly always). Drift between trials is
not in sigma when it is measured within rounds (calibrate's A/A pairs); a pilot's
within-cell spread includes it, which makes its numbers conservative for interleaved
designs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.sequential import half_width_factor, tune_c

INTERLEAVED, SEQUENTIAL, POOLED = "interleaved", "sequential", "pooled"


@dataclass(frozen=True)
class Noise:
    """sigma of log(response) of one trial, and where it came from."""

    sigma: float
    source: str  # "design.noise_cv", "pilot DIR (n trials)", ...


def log_sd_within(values_by_cell: Mapping[str, Sequence[float]]) -> tuple[float, int]:
    """Pooled within-cell sd of log(values) and its degrees of freedom (cells with >= 2
    positive values)."""
    ss, df = 0.0, 0
    for vals in values_by_cell.values():
        logs = [math.log(v) for v in vals if v > 0 and math.isfinite(v)]
        if len(logs) < 2:
            continue
        m = sum(logs) / len(logs)
        ss += sum((x - m) ** 2 for x in logs)
        df += len(logs) - 1
    return (math.sqrt(ss / df) if df else math.nan), df


def half_width(sigma: float, n: int, design: str, *, alpha: float = 0.05,
               pairs: int = 1, c: float | None = None) -> float:
    """Half-width on the log scale of a finding's interval after n rounds (see the module
    docstring); inf when n is too small for it."""
    if not math.isfinite(sigma) or n < 2:
        return math.inf
    if design == POOLED:
        each = n * pairs
        return float(st.t.ppf(1 - alpha / 2, 2 * each - 2)) * sigma * math.sqrt(2 / each)
    sd = math.sqrt(2) * sigma / math.sqrt(pairs)
    if design == SEQUENTIAL:
        cc = tune_c(n, alpha) if c is None else c
        return half_width_factor(n, alpha, cc) * math.sqrt(n - 1) * sd
    return float(st.t.ppf(1 - alpha / 2, n - 1)) * sd / math.sqrt(n)


def detectable_pct(sigma: float, n: int, design: str, *, alpha: float = 0.05,
                   pairs: int = 1, c: float | None = None) -> float:
    """half_width as a change in % (inf when nothing is detectable)."""
    h = half_width(sigma, n, design, alpha=alpha, pairs=pairs, c=c)
    return 100 * math.expm1(h) if math.isfinite(h) else math.inf


def within_trial_cv(per_interval: Sequence[float]) -> float:
    """CV of a trial's per-interval throughput (sd / mean, sample sd); NaN under 2."""
    xs = [x for x in per_interval if math.isfinite(x)]
    if len(xs) < 2:
        return math.nan
    m = sum(xs) / len(xs)
    if m <= 0:
        return math.nan
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) / m


def paired_sigma(log_ratios: Sequence[float]) -> float:
    """sigma of one trial from A/A per-round log-ratios: their sd / sqrt(2)."""
    xs = [x for x in log_ratios if math.isfinite(x)]
    if len(xs) < 2:
        return math.nan
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) / math.sqrt(2)
