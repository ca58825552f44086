"""Steady state inside a trial: has a per-interval series (throughput, p50 per second)
settled, and from which sample on? Pure: a list of numbers in, a Steadiness out.

Method: MSER-5, the Marginal Standard Error Rule on batches of 5 (K. P. White Jr.,
"An effective truncation heuristic for bias reduction in simulation output",
Simulation 69(6):323-334, 1997; W. Franklin and K. P. White Jr., "Stationarity tests
and MSER-5: exploring the intuition behind mean-squared-error-reduction in warm-up
period determination", Proc. Winter Simulation Conference 2008). The series is cut
into batch means of 5 samples, Z_1..Z_k; for each candidate cut d (batches dropped
from the start) MSER(d) = sum_{j>d} (Z_j - mean(Z_{d+1..k}))^2 / (k - d)^2, and the
cut is the d that minimises it: dropping more of the start lowers the error of the
mean only as long as what is dropped was biased (warming), and raises it once what is
dropped was steady (fewer samples). Chosen over a change-point library (ruptures'
PELT) because it needs no penalty to tune, is a few lines of numpy (no new
dependency), and answers exactly the question the recorded window asks: where to start
so the mean is least biased.

Classes:
- steady: the cut lies in the first half (Franklin & White's rule: a cut in the second
  half means the series never settled) and the batch means after it show no trend
  (Mann-Kendall p > ALPHA_TREND, or a trend smaller than MAX_DRIFT_PCT over the rest);
- still warming: a cut in the second half, or a trend after the cut, with the batch
  means moving one way (a significant Mann-Kendall trend over the whole series);
- no steady state: a cut in the second half without one monotone direction (shifts,
  oscillation), or too few samples (fewer than MIN_BATCHES batches) to tell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from casslab.analysis.drift import mann_kendall

BATCH = 5
MIN_BATCHES = 6
ALPHA_TREND = 0.01
# A trend after the cut smaller than this (first to last batch, % of their mean) is
# treated as steady: per-second samples are autocorrelated, so Mann-Kendall on long
# series finds tiny trends that do not matter to a trial's mean.
MAX_DRIFT_PCT = 5.0
STEADY, WARMING, NO_STEADY = "steady", "still warming", "no steady state"
METHOD = "MSER-5 (White 1997; Franklin & White 2008)"


@dataclass(frozen=True)
class Steadiness:
    """Where a series' steady state begins and its class."""

    klass: str  # STEADY, WARMING or NO_STEADY
    start: int  # index of the first steady sample (the cut); len(series) when none
    n: int  # samples in the series
    mean_after: float  # mean of the samples from `start` on (NaN when none)
    trend_p: float  # Mann-Kendall p of the batch means after the cut
    drift_pct: float  # fitted change over the kept batches, % of their mean
    why: str
    method: str = METHOD

    @property
    def settled(self) -> bool:
        return self.klass == STEADY


def batch_means(values: Sequence[float], size: int = BATCH) -> np.ndarray:
    """Means of consecutive batches of `size` samples (a short tail is dropped)."""
    x = np.asarray(values, dtype=float)
    k = x.size // size
    return x[:k * size].reshape(k, size).mean(axis=1) if k else np.array([])


def mser_cut(batches: Sequence[float]) -> int:
    """The MSER cut d (in batches): argmin over d in 0..k-2 of the MSER statistic
    (the first minimum on ties, so the shortest warm-up)."""
    z = np.asarray(batches, dtype=float)
    k = int(z.size)
    if k < 2:
        return 0
    # suffix sums give every candidate's mean and sum of squares in one pass
    rs = np.cumsum(z[::-1])[::-1]
    rs2 = np.cumsum((z * z)[::-1])[::-1]
    m = np.arange(k, 0, -1, dtype=float)  # k - d samples left for cut d
    ss = rs2 - rs * rs / m
    mser = ss / (m * m)
    return int(np.argmin(mser[:k - 1]))


def _drift_pct(z: np.ndarray) -> float:
    if z.size < 3 or z.mean() == 0:
        return math.nan
    x = np.arange(z.size, dtype=float)
    slope = float(np.polyfit(x, z, 1)[0])
    return 100 * slope * (z.size - 1) / float(abs(z.mean()))


def steady_state(values: Sequence[float], batch: int = BATCH) -> Steadiness:
    """Classify a per-interval series and find where its steady state begins."""
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    z = batch_means(values, batch)
    k = int(z.size)
    if k < MIN_BATCHES:
        return Steadiness(NO_STEADY, n, n, math.nan, math.nan, math.nan,
                          f"too short to tell: {n} samples, {k} batches of {batch} "
                          f"(needs >= {MIN_BATCHES})")
    d = mser_cut(z.tolist())
    start = d * batch
    rest = z[d:]
    tail = mann_kendall(rest.tolist())
    drift = _drift_pct(rest)
    whole = mann_kendall(z.tolist())
    mean_after = float(x[start:].mean())
    if d <= k // 2:
        trending = (not math.isnan(tail.p) and tail.p <= ALPHA_TREND
                    and abs(drift) > MAX_DRIFT_PCT)
        if not trending:
            return Steadiness(STEADY, start, n, mean_after, tail.p, drift,
                              f"settled from sample {start} (MSER-5 cut {d} of {k} batches)")
        return Steadiness(WARMING, start, n, mean_after, tail.p, drift,
                          f"still moving after the cut at sample {start}: {drift:+.1f} % "
                          f"over the rest (Mann-Kendall p = {tail.p:.2g})")
    if not math.isnan(whole.p) and whole.p <= ALPHA_TREND:
        return Steadiness(WARMING, n, n, math.nan, tail.p, _drift_pct(z),
                          f"MSER-5 cuts {d} of {k} batches (past half): the series moves "
                          f"one way throughout (Mann-Kendall p = {whole.p:.2g})")
    return Steadiness(NO_STEADY, n, n, math.nan, tail.p, _drift_pct(z),
                      f"MSER-5 cuts {d} of {k} batches (past half) without one direction: "
                      "shifts or oscillation")


def steady_start(series: Sequence[Sequence[float]], batch: int = BATCH) -> Steadiness:
    """Several series of one trial (throughput and p50 per second, same intervals):
    the steady state begins where the last of them settles; the class is the worst
    (no steady state > still warming > steady). The returned mean_after, trend_p and
    drift_pct are those of the series that decided."""
    if not series:
        raise ValueError("steady_start needs at least one series")
    results = [steady_state(s, batch) for s in series]
    rank = {STEADY: 0, WARMING: 1, NO_STEADY: 2}
    worst = max(results, key=lambda r: (rank[r.klass], r.start))
    return worst
