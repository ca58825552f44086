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

The cut is searched in the first half of the batches only (White's rule; a minimum
among the last few batches is MSER's known end effect: two or three batch means that
happen to agree give a tiny statistic), then what is left after the cut is checked:
- steady: no trend and no shift after the cut;
- still warming: a trend after the cut (Mann-Kendall p <= ALPHA_TREND on the batch
  means) that moves the series by more than MAX_DRIFT_PCT from first to last batch,
  and is still going the same way in the last half of the window (p <= 0.05);
- no steady state: no trend still going at the end, but the four quarters of what is
  left differ by more than MAX_DRIFT_PCT (one-way ANOVA p <= ALPHA_TREND on their
  batch means): shifts or a slow oscillation; also a series too short to tell
  (fewer than MIN_BATCHES batches).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st  # type: ignore[import-untyped]

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


def mser_cut(batches: Sequence[float], limit: int | None = None) -> int:
    """The MSER cut d (in batches): argmin over d in 0..limit (default k // 2) of the
    MSER statistic (the first minimum on ties, so the shortest warm-up)."""
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
    last = k // 2 if limit is None else min(limit, k - 2)
    return int(np.argmin(mser[:last + 1]))


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
    mean_after = float(x[start:].mean())
    where = f"MSER-5 cut at sample {start} ({d} of {k} batches)"
    end = mann_kendall(rest[rest.size // 2:].tolist())
    # the end's own test only where it can be significant (Mann-Kendall on fewer than 5
    # values never reaches p <= 0.05)
    still = end.n < 5 or (not math.isnan(end.p) and end.p <= 0.05 and end.s * tail.s > 0)
    moving = (not math.isnan(tail.p) and tail.p <= ALPHA_TREND and abs(drift) > MAX_DRIFT_PCT
              and still)
    if moving:
        return Steadiness(WARMING, start, n, mean_after, tail.p, drift,
                          f"{where}, then still moving one way: {drift:+.1f} % over the "
                          f"rest (Mann-Kendall p = {tail.p:.2g})")
    shift, p_shift = _quarters(rest)
    if p_shift <= ALPHA_TREND and shift > MAX_DRIFT_PCT:
        return Steadiness(NO_STEADY, start, n, mean_after, tail.p, drift,
                          f"{where}, then the quarters of the rest differ by up to "
                          f"{shift:.1f} % (ANOVA p = {p_shift:.2g}) without one direction: "
                          "shifts or oscillation")
    return Steadiness(STEADY, start, n, mean_after, tail.p, drift, f"settled: {where}")


def _quarters(z: np.ndarray) -> tuple[float, float]:
    """(largest quarter mean over the smallest - 1, in %; one-way ANOVA p) over the
    batch means cut into four consecutive quarters."""
    q = z.size // 4
    if q < 2:
        return math.nan, math.nan
    parts = [z[i * q:(i + 1) * q] for i in range(4)]
    means = [float(p.mean()) for p in parts]
    if min(means) <= 0:
        return math.nan, math.nan
    spread = 100 * (max(means) / min(means) - 1)
    if all(float(p.var()) == 0 for p in parts):
        return spread, (1.0 if spread == 0 else 0.0)
    return spread, float(st.f_oneway(*parts).pvalue)


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
