"""Effects with their intervals: what every verdict is decided from
(casslab.analysis.verdicts). Pure: values in, an Effect out.

An effect of level `to` against level `from` is read on the log scale, e = log(to /
from), so it is a ratio exp(e) or a change in %, (exp(e) - 1) x 100, and a drift that
slows everything by x % moves both sides alike. Three ways to get its interval:
- pooled (trials in any order): Welch's t interval of the difference of mean logs
  (Welch-Satterthwaite df), coverage nominal at fixed n;
- paired (interleaved rounds, fixed number): Student t interval of the mean per-round
  log-ratio (casslab.analysis.blocks);
- sequential (interleaved rounds, design.until: verdicts): Lai's t-mixture confidence
  sequence of the mean per-round log-ratio (casslab.analysis.sequential), valid when
  looked at after every round; the intersection of its intervals over the rounds so
  far, which covers as often and never widens.
A finding with `scale: difference` reads the effect as to - from in the response's unit
instead (the same three intervals on the values, or on per-round differences): for a
response near 0, where a ratio of two small counts bounds nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.sequential import running_cs

# DIFFERENCE: to - from in the response's unit, for responses near 0 where a ratio of two
# small counts bounds nothing (004's disk writes of a read load: one or two 4 KiB pages
# in a trial, a log-ratio interval of -33 % to +119 %)
LOG_RATIO, SLOPE, DIFFERENCE = "log-ratio", "slope", "difference"
# How an interval was made (casslab.analysis.power turns each into a detectable effect)
POOLED, RANK, PAIRED, SEQUENTIAL, LINE = "pooled", "rank", "paired", "sequential", "line"


@dataclass(frozen=True)
class Effect:
    """`to` against `from`: the estimate and its interval on `scale` (log-ratio: log(to
    / from); slope: response per unit of the factor)."""

    scale: str
    estimate: float
    low: float
    high: float
    level: float  # the interval's nominal coverage (0.95)
    method: str  # how the interval was made
    anytime: bool  # valid under optional stopping (a confidence sequence)
    n_low: int  # trials at `from` (rounds, for paired effects)
    n_high: int
    noise_sd: float = math.nan  # sd of one observation on `scale` (for power)
    kind: str = POOLED  # POOLED, RANK, PAIRED, SEQUENTIAL or LINE
    c: float = math.nan  # SEQUENTIAL: the confidence sequence's prior precision
    unit: str = ""  # DIFFERENCE: the response's unit

    @property
    def coverage(self) -> str:
        """What the interval covers, as the verdict table prints it."""
        return f"{pct_text(self.level)} CI" + (", anytime-valid" if self.anytime else "")

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def pct(self) -> tuple[float, float, float]:
        """(estimate, low, high) as changes in % (log-ratio effects)."""
        return (to_pct(self.estimate), to_pct(self.low), to_pct(self.high))


def pct_text(level: float) -> str:
    """0.95 -> "95 %", 0.975 -> "97.5 %"."""
    return f"{100 * level:.4g} %"


def to_pct(log_ratio: float) -> float:
    if math.isnan(log_ratio):
        return math.nan
    if math.isinf(log_ratio):
        return log_ratio
    return 100 * math.expm1(log_ratio)


def from_pct(pct: float) -> float:
    return math.log1p(pct / 100)


def _logs(values: Sequence[float]) -> np.ndarray | None:
    x = np.asarray(values, dtype=float)
    return np.log(x) if x.size and bool((x > 0).all()) else None


def unbounded(scale: str, level: float, method: str, anytime: bool, n_low: int, n_high: int,
              estimate: float = math.nan, kind: str = POOLED) -> Effect:
    return Effect(scale, estimate, -math.inf, math.inf, level, method, anytime, n_low, n_high,
                  kind=kind)


def welch_log_effect(low: Sequence[float], high: Sequence[float],
                     level: float = 0.95) -> Effect:
    """Pooled: Welch's t interval of mean log(high) - mean log(low)."""
    return _welch(_logs(low), _logs(high), len(low), len(high), level,
                  "Welch t on logs (pooled trials)", LOG_RATIO)


def welch_difference_effect(low: Sequence[float], high: Sequence[float],
                            level: float = 0.95, unit: str = "") -> Effect:
    """Pooled: Welch's t interval of mean(high) - mean(low), in the response's unit."""
    e = _welch(np.asarray(low, dtype=float), np.asarray(high, dtype=float), len(low),
               len(high), level, "Welch t on values (pooled trials)", DIFFERENCE)
    return replace(e, unit=unit)


def _welch(lx: np.ndarray | None, hx: np.ndarray | None, n_low: int, n_high: int,
           level: float, method: str, scale: str) -> Effect:
    if lx is None or hx is None or lx.size < 2 or hx.size < 2:
        return unbounded(scale, level, method, False, n_low, n_high)
    vx, vy = float(lx.var(ddof=1)) / lx.size, float(hx.var(ddof=1)) / hx.size
    est = float(hx.mean() - lx.mean())
    pooled = math.sqrt(((lx.size - 1) * lx.var(ddof=1) + (hx.size - 1) * hx.var(ddof=1))
                       / (lx.size + hx.size - 2))
    if vx + vy == 0:
        return Effect(scale, est, est, est, level, method, False, int(lx.size),
                      int(hx.size), 0.0)
    df = (vx + vy) ** 2 / (vx ** 2 / (lx.size - 1) + vy ** 2 / (hx.size - 1))
    half = float(st.t.ppf(0.5 + level / 2, df)) * math.sqrt(vx + vy)
    return Effect(scale, est, est - half, est + half, level, method, False,
                  int(lx.size), int(hx.size), pooled, POOLED)


def paired_log_effect(log_ratios: Sequence[float], level: float = 0.95) -> Effect:
    """Paired, fixed number of rounds: Student t interval of the mean log-ratio."""
    method = "paired t on per-round log-ratios (interleaved rounds)"
    d = np.asarray(log_ratios, dtype=float)
    n = int(d.size)
    if n < 2:
        return unbounded(LOG_RATIO, level, method, False, n, n,
                         float(d[0]) if n else math.nan, PAIRED)
    m, sd = float(d.mean()), float(d.std(ddof=1))
    half = float(st.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return Effect(LOG_RATIO, m, m - half, m + half, level, method, False, n, n, sd, PAIRED)


def sequential_log_effect(log_ratios: Sequence[float], level: float = 0.95,
                          c: float | None = None) -> Effect:
    """Paired, rounds added until decisive: Lai's t-mixture confidence sequence, the
    running intersection of its intervals over the rounds (in round order), so the
    interval never widens as rounds are added."""
    cs = running_cs(log_ratios, 1 - level, c)
    d = np.asarray(log_ratios, dtype=float)
    sd = float(d.std(ddof=1)) if d.size > 1 else math.nan
    return Effect(LOG_RATIO, cs.mean, cs.low, cs.high, level,
                  f"{cs.method} on per-round log-ratios (c = {cs.c:.3g})", True, cs.n, cs.n,
                  sd, SEQUENTIAL, cs.c)


def _u_cdf(n1: int, n2: int) -> np.ndarray:
    """P(U <= u), u = 0..n1 n2, of the Mann-Whitney U under H0 without ties, exactly:
    counts from f(m, n)(u) = f(m - 1, n)(u - n) + f(m, n - 1)(u)."""
    prev = [np.ones(1) for _ in range(n2 + 1)]
    for i in range(1, n1 + 1):
        cur = [np.ones(1)]
        for j in range(1, n2 + 1):
            a, b = prev[j], cur[j - 1]
            res = np.zeros(i * j + 1)
            res[j:j + a.size] += a
            res[:b.size] += b
            cur.append(res)
        prev = cur
    counts = prev[n2]
    cdf: np.ndarray = np.cumsum(counts) / counts.sum()
    return cdf


def hodges_lehmann_effect(low: Sequence[float], high: Sequence[float],
                          level: float = 0.95) -> Effect:
    """Pooled, rank-based: the Hodges-Lehmann shift of the logs (median of all
    differences log(high_j) - log(low_i)) with its distribution-free interval between
    two ordered differences, from the exact Mann-Whitney U distribution (normal
    approximation above 2,500 pairs). Unbounded when the samples are too small for the
    level (the same limit as the test's smallest p)."""
    return _hodges_lehmann(_logs(low), _logs(high), len(low), len(high), level,
                           "Hodges-Lehmann shift of logs, Mann-Whitney interval (pooled "
                           "trials)", LOG_RATIO)


def hodges_lehmann_difference_effect(low: Sequence[float], high: Sequence[float],
                                     level: float = 0.95, unit: str = "") -> Effect:
    """As hodges_lehmann_effect, on the values themselves (a shift in the response's
    unit)."""
    e = _hodges_lehmann(np.asarray(low, dtype=float), np.asarray(high, dtype=float),
                        len(low), len(high), level, "Hodges-Lehmann shift, Mann-Whitney "
                        "interval (pooled trials)", DIFFERENCE)
    return replace(e, unit=unit)


def _hodges_lehmann(lx: np.ndarray | None, hx: np.ndarray | None, n_low: int, n_high: int,
                    level: float, method: str, scale: str) -> Effect:
    if lx is None or hx is None or not lx.size or not hx.size:
        return unbounded(scale, level, method, False, n_low, n_high, kind=RANK)
    diffs = np.sort((hx[None, :] - lx[:, None]).ravel())
    n1, n2, big = int(lx.size), int(hx.size), int(diffs.size)
    est = float(np.median(diffs))
    tail = (1 - level) / 2
    if big <= 2500:
        cdf = _u_cdf(n1, n2)
        ok = np.nonzero(cdf <= tail)[0]  # u with P(U <= u) <= tail: k - 1 = u
        k = int(ok[-1]) + 1 if ok.size else 0
    else:
        k = math.floor(big / 2 - float(st.norm.ppf(1 - tail))
                       * math.sqrt(big * (n1 + n2 + 1) / 12))
    pooled = (math.sqrt(((n1 - 1) * lx.var(ddof=1) + (n2 - 1) * hx.var(ddof=1))
                        / (n1 + n2 - 2)) if n1 + n2 > 2 and n1 > 1 and n2 > 1 else math.nan)
    if k < 1:
        return Effect(scale, est, -math.inf, math.inf, level, method, False, n1, n2,
                      pooled, RANK)
    return Effect(scale, est, float(diffs[k - 1]), float(diffs[big - k]), level, method,
                  False, n1, n2, pooled, RANK)
