"""The lab's noise, estimated from trials: for `casslab calibrate` and `experiment
validate / plan --pilot` (what that noise lets a design detect is
casslab.analysis.power's).

Noise is sigma, the standard deviation of log(response) of one trial (for small values
about the coefficient of variation): from an A/A campaign's per-round log-ratios
(sd / sqrt(2): two trials per ratio, a drift hitting both cancels), or from any
campaign's within-cell spread (which includes drift between trials: conservative for
an interleaved design). The within-trial CV is that of a trial's per-interval
throughput.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


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


def cv_of(sigma: float) -> float:
    """A trial's CV from its log sd (log-normal; casslab.analysis.power.log_sd's
    inverse)."""
    return math.sqrt(math.expm1(sigma * sigma)) if math.isfinite(sigma) else math.nan


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
