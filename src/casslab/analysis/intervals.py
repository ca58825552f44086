"""Confidence intervals that mean what they say. Pure: numbers in, dataclasses out.

- Median: distribution-free interval between two order statistics. The number of values
  below the true median is Binomial(n, 1/2), so [x_(j), x_(n+1-j)] covers it with
  probability 1 - 2 P(B <= j - 1), exactly, for any continuous distribution. That
  coverage is discrete: the interval printed is the narrowest symmetric one reaching the
  asked level, and the coverage it actually achieves is reported beside it. With n too
  small (n = 3: even [min, max] covers only 75 %) the widest interval is returned with a
  warning instead of pretending (a percentile bootstrap hides this).
- Mean: Student t interval, mean +- t_{n-1} sd / sqrt(n).
- Mean of an autocorrelated series (per-second throughput of one long trial): standard
  error by non-overlapping batch means, the method latte uses; per-second samples are
  serially correlated, so sd / sqrt(n) understates the error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st  # type: ignore[import-untyped]

# Below this many batches the batch means' own sd is too uncertain to report.
MIN_BATCHES = 4
# Lag-1 autocorrelation of batch means under which batches count as independent.
BATCH_ACF_MAX = 0.1


@dataclass(frozen=True)
class Interval:
    """A confidence interval, the method that made it and the coverage it achieves."""

    low: float
    high: float
    level: float  # the asked level (0.95)
    coverage: float  # what this interval achieves (exact for the median, nominal for t)
    method: str
    warning: str = ""  # set when the asked level cannot be reached with these data


@dataclass(frozen=True)
class BatchMeans:
    """Mean of a serially correlated series and its batch-means standard error."""

    mean: float
    se: float  # batch-means standard error of the mean
    naive_se: float  # sd / sqrt(n), as if samples were independent
    batch_size: int
    batches: int
    lag1: float  # lag-1 autocorrelation of the raw samples


def median_coverage(n: int, j: int) -> float:
    """Exact coverage of [x_(j), x_(n+1-j)] (1-based order statistics) for the median of a
    continuous distribution: P(j <= B <= n - j) with B ~ Binomial(n, 1/2)."""
    if n < 1 or j < 1 or 2 * j > n + 1:
        raise ValueError(f"order statistic j={j} must be in 1..{(n + 1) // 2} for n={n}")
    return float(1.0 - 2.0 * st.binom.cdf(j - 1, n, 0.5))


def median_ci(values: Sequence[float], level: float = 0.95) -> Interval:
    """Order-statistic (binomial) CI of the median: the narrowest symmetric pair of order
    statistics whose exact coverage is >= level. When even [min, max] falls short, it is
    returned with its coverage and a warning naming the n that would be needed."""
    x = np.sort(np.asarray(values, dtype=float))
    n = int(x.size)
    method = "order statistics (binomial)"
    if n == 0:
        return Interval(math.nan, math.nan, level, math.nan, method, "no values")
    if n == 1:
        return Interval(float(x[0]), float(x[0]), level, 0.0, method,
                        f"n = 1 cannot give a {level:.0%} interval; need n >= "
                        f"{min_n_for_median(level)}")
    best = 1
    for j in range(1, (n + 1) // 2 + 1):
        if median_coverage(n, j) >= level:
            best = j
        else:
            break
    cov = median_coverage(n, best)
    warning = ""
    if cov < level:
        warning = (f"n = {n} is too small for a {level:.0%} interval of the median: "
                   f"[min, max] covers {cov:.1%}; need n >= {min_n_for_median(level)}")
    return Interval(float(x[best - 1]), float(x[n - best]), level, cov, method, warning)


def min_n_for_median(level: float) -> int:
    """Smallest n whose [min, max] covers the median with probability >= level."""
    # 1 - 2^(1-n) >= level  <=>  n >= 1 + log2(1 / (1 - level))
    return max(2, math.ceil(1 + math.log2(1.0 / (1.0 - level)) - 1e-12))


def mean_ci(values: Sequence[float], level: float = 0.95) -> Interval:
    """Student t CI of the mean (nominal coverage, exact under normality)."""
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    method = "Student t"
    if n < 2:
        m = float(x[0]) if n else math.nan
        return Interval(m, m, level, math.nan, method, f"n = {n}: no interval of the mean")
    m = float(x.mean())
    half = float(st.t.ppf(0.5 + level / 2, n - 1)) * float(x.std(ddof=1)) / math.sqrt(n)
    return Interval(m - half, m + half, level, level, method)


def lag1_autocorrelation(values: Sequence[float]) -> float:
    """Lag-1 sample autocorrelation (NaN for fewer than 3 values or no spread)."""
    x = np.asarray(values, dtype=float)
    if x.size < 3:
        return math.nan
    d = x - x.mean()
    den = float((d * d).sum())
    return float((d[:-1] * d[1:]).sum() / den) if den > 0 else math.nan


def batch_means(values: Sequence[float]) -> BatchMeans:
    """Standard error of the mean of a serially correlated series by batch means.

    Batch size starts at 1 and doubles until the batch means' lag-1 autocorrelation is
    under BATCH_ACF_MAX or fewer than 2 * MIN_BATCHES batches would remain; the tail that
    does not fill a batch is left out of the error (not of the mean). Fewer than
    MIN_BATCHES samples give se = NaN.
    """
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    mean = float(x.mean()) if n else math.nan
    naive = float(x.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
    lag1 = lag1_autocorrelation(x.tolist())
    if n < MIN_BATCHES:
        return BatchMeans(mean, math.nan, naive, 1, n, lag1)
    size = 1
    while True:
        k = n // size
        means = x[:k * size].reshape(k, size).mean(axis=1)
        r = lag1_autocorrelation(means.tolist())
        if not (r > BATCH_ACF_MAX) or n // (2 * size) < MIN_BATCHES:
            break
        size *= 2
    se = float(means.std(ddof=1)) / math.sqrt(k)
    return BatchMeans(mean, se, naive, size, k, lag1)
