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
  looked at after every round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.sequential import t_mixture_cs

LOG_RATIO, SLOPE = "log-ratio", "slope"


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

    @property
    def coverage(self) -> str:
        """What the interval covers, as the verdict table prints it."""
        return f"{self.level:.0%} CI" + (", anytime-valid" if self.anytime else "")

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def pct(self) -> tuple[float, float, float]:
        """(estimate, low, high) as changes in % (log-ratio effects)."""
        return (to_pct(self.estimate), to_pct(self.low), to_pct(self.high))


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
              estimate: float = math.nan) -> Effect:
    return Effect(scale, estimate, -math.inf, math.inf, level, method, anytime, n_low, n_high)


def welch_log_effect(low: Sequence[float], high: Sequence[float],
                     level: float = 0.95) -> Effect:
    """Pooled: Welch's t interval of mean log(high) - mean log(low)."""
    method = "Welch t on logs (pooled trials)"
    lx, hx = _logs(low), _logs(high)
    if lx is None or hx is None or lx.size < 2 or hx.size < 2:
        return unbounded(LOG_RATIO, level, method, False, len(low), len(high))
    vx, vy = float(lx.var(ddof=1)) / lx.size, float(hx.var(ddof=1)) / hx.size
    est = float(hx.mean() - lx.mean())
    pooled = math.sqrt(((lx.size - 1) * lx.var(ddof=1) + (hx.size - 1) * hx.var(ddof=1))
                       / (lx.size + hx.size - 2))
    if vx + vy == 0:
        return Effect(LOG_RATIO, est, est, est, level, method, False, int(lx.size),
                      int(hx.size), 0.0)
    df = (vx + vy) ** 2 / (vx ** 2 / (lx.size - 1) + vy ** 2 / (hx.size - 1))
    half = float(st.t.ppf(0.5 + level / 2, df)) * math.sqrt(vx + vy)
    return Effect(LOG_RATIO, est, est - half, est + half, level, method, False,
                  int(lx.size), int(hx.size), pooled)


def paired_log_effect(log_ratios: Sequence[float], level: float = 0.95) -> Effect:
    """Paired, fixed number of rounds: Student t interval of the mean log-ratio."""
    method = "paired t on per-round log-ratios (interleaved rounds)"
    d = np.asarray(log_ratios, dtype=float)
    n = int(d.size)
    if n < 2:
        return unbounded(LOG_RATIO, level, method, False, n, n,
                         float(d[0]) if n else math.nan)
    m, sd = float(d.mean()), float(d.std(ddof=1))
    half = float(st.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return Effect(LOG_RATIO, m, m - half, m + half, level, method, False, n, n, sd)


def sequential_log_effect(log_ratios: Sequence[float], level: float = 0.95,
                          c: float | None = None) -> Effect:
    """Paired, rounds added until decisive: Lai's t-mixture confidence sequence."""
    cs = t_mixture_cs(log_ratios, 1 - level, c)
    d = np.asarray(log_ratios, dtype=float)
    sd = float(d.std(ddof=1)) if d.size > 1 else math.nan
    return Effect(LOG_RATIO, cs.mean, cs.low, cs.high, level,
                  f"{cs.method} on per-round log-ratios (c = {cs.c:.3g})", True, cs.n, cs.n,
                  sd)
