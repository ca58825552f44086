"""Anytime-valid confidence sequences, for designs that add rounds until every finding
has a verdict (design.until: verdicts). Pure: numbers in, intervals out.

Looking at a fixed-n t interval after every round and stopping at the first decisive
one makes false verdicts far more likely than alpha (the p value dips under alpha by
chance sooner or later). A confidence sequence instead covers the true mean at every
round at once, P(for all n: mu in CS_n) >= 1 - alpha, so it may be checked after every
round and the campaign stopped whenever it is decisive.

Method: Lai's t-mixture confidence sequence for the mean of Gaussian data with unknown
variance (T. L. Lai, "On confidence sequences", Annals of Statistics 4(2):265-280,
1976; restated and analysed in H. Wang and A. Ramdas, "Anytime-valid t-tests and
confidence sequences for Gaussian means with unknown variance", Sequential Analysis,
2024, arXiv:2310.03722). For H0: mean = mu0, with S_n = sum (x_i - mu0) and V_n = sum
(x_i - mu0)^2, the Bayes factor of the scale-invariant data with a N(0, 1/c) prior on
the standardized effect (mu - mu0) / sigma and the right-Haar prior 1/sigma on sigma is

    M_n = sqrt(c / (n + c)) * (1 - S_n^2 / ((n + c) V_n)) ^ (-n / 2),

a nonnegative martingale with M_1 = 1 under H0 (for the filtration of the scale
invariant), so by Ville's inequality P(sup_n M_n >= 1 / alpha) <= alpha. The
confidence sequence is {mu0 : M_n(mu0) < 1 / alpha}; M_n grows with |mean - mu0|, so it
is an interval, mean +- D_n, with the closed form in `t_mixture_cs`. It is infinite
while too few rounds are in (n = 1 always; more rounds for smaller alpha).

The paired log-ratios of an interleaved design are the data (casslab.analysis.blocks):
under "no difference" with a counterbalanced order they are symmetric about 0, and
logs of run times are close to normal. c sets where the sequence is tightest; it must
be fixed before the data (`tune_c` from the planned rounds), never from them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

METHOD = "Lai (1976) t-mixture confidence sequence, anytime-valid"
DEFAULT_ROUNDS = 20  # where the sequence is tightest when the plan says nothing


@dataclass(frozen=True)
class SequentialInterval:
    """The confidence sequence's interval after n observations."""

    n: int
    mean: float
    low: float  # -inf / +inf while too few observations are in
    high: float
    alpha: float
    c: float
    method: str = METHOD

    @property
    def coverage(self) -> str:
        return f"{1 - self.alpha:.0%} CI, anytime-valid"

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def excludes(self, mu0: float) -> bool:
        return mu0 < self.low or mu0 > self.high


def log_threshold(n: int | np.ndarray, alpha: float, c: float) -> float | np.ndarray:
    """log K_n, K_n = sqrt((n + c) / c) / alpha: M_n >= 1 / alpha <=> the power term
    (1 - S^2 / ((n + c) V))^(-n/2) >= K_n."""
    return 0.5 * np.log((n + c) / c) + math.log(1.0 / alpha)


def half_width_factor(n: int, alpha: float, c: float) -> float:
    """D_n / sqrt(Q_n) where Q_n = sum (x_i - mean)^2 (inf while unbounded):
    D^2 = u (n + c) Q / (n (n - u (n + c))) with u = 1 - K_n^(-2/n)."""
    if n < 2:
        return math.inf
    u = -math.expm1(-2.0 / n * float(log_threshold(n, alpha, c)))
    den = n * (n - u * (n + c))
    if den <= 0:
        return math.inf
    return math.sqrt(u * (n + c) / den)


def t_mixture_cs(values: Sequence[float], alpha: float = 0.05,
                 c: float | None = None) -> SequentialInterval:
    """Lai's t-mixture confidence sequence for the mean of `values` after all of them
    (coverage 1 - alpha simultaneously over every prefix). `c`: the prior precision
    (default tune_c(DEFAULT_ROUNDS, alpha))."""
    cc = tune_c(DEFAULT_ROUNDS, alpha) if c is None else c
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    if n == 0:
        return SequentialInterval(0, math.nan, -math.inf, math.inf, alpha, cc)
    m = float(x.mean())
    q = float(((x - m) ** 2).sum())
    d = half_width_factor(n, alpha, cc) * math.sqrt(q)
    if math.isinf(d) or math.isnan(d):
        return SequentialInterval(n, m, -math.inf, math.inf, alpha, cc)
    return SequentialInterval(n, m, m - d, m + d, alpha, cc)


def running_cs(values: Sequence[float], alpha: float = 0.05,
               c: float | None = None) -> SequentialInterval:
    """The intersection of the sequence's intervals after every prefix 1..n of
    `values`. The sequence covers at every n at once, so the intersection covers with
    the same 1 - alpha; and it never widens, so a verdict read from it stays decided as
    rounds are added (the last interval alone may widen when a round brings noise).
    Empty only when an earlier interval missed the mean of a later one, which the model
    makes rare (at most alpha): then the last interval, with the method saying so."""
    last = t_mixture_cs(values, alpha, c)
    low, high = -math.inf, math.inf
    mean, q = 0.0, 0.0  # Welford's running mean and sum of squared deviations
    for k, x in enumerate(values, start=1):
        delta = x - mean
        mean += delta / k
        q += delta * (x - mean)
        d = half_width_factor(k, alpha, last.c) * math.sqrt(max(q, 0.0))
        if math.isfinite(d):
            low, high = max(low, mean - d), min(high, mean + d)
    if low > high:
        return replace(last, method=f"{METHOD} (running intersection empty: an earlier "
                       "round's interval excludes this one; the last interval shown)")
    return replace(last, low=low, high=high, method=f"{METHOD}, running intersection")


def t_mixture_log_m(s: np.ndarray, v: np.ndarray, n: np.ndarray | int, c: float
                    ) -> np.ndarray:
    """log M_n from running sums S_n = sum (x - mu0), V_n = sum (x - mu0)^2 (arrays, any
    shape; vectorised for simulations)."""
    frac = np.where(v > 0, s * s / ((n + c) * np.where(v > 0, v, 1.0)), 0.0)
    return 0.5 * np.log(c / (n + c)) - 0.5 * n * np.log1p(-frac)


def tune_c(rounds: int, alpha: float = 0.05) -> float:
    """The prior precision c that makes the sequence narrowest at `rounds` observations
    (a grid search over c in [1e-3, 1e3], log-spaced). Depends only on the plan."""
    grid = np.geomspace(1e-3, 1e3, 241)
    n = max(int(rounds), 2)
    widths = [half_width_factor(n, alpha, float(c)) for c in grid]
    return float(grid[int(np.argmin(widths))])


def min_rounds(alpha: float, c: float, limit: int = 10_000) -> int:
    """The fewest observations for which the sequence can be finite (whatever the data);
    `limit` + 1 when none up to `limit` can."""
    for n in range(2, limit + 1):
        if math.isfinite(half_width_factor(n, alpha, c)):
            return n
    return limit + 1


@dataclass(frozen=True)
class Schedule:
    """What an `until: verdicts` plan promises before any data: each finding's
    sequence is tuned (c) to the planned maximum of rounds, so it is narrowest there,
    and cannot be finite before `first_finite` rounds whatever the data."""

    rounds_max: int
    alpha: float  # each finding's (the family's alpha over its findings)
    c: float
    first_finite: int


def schedule(rounds_max: int, alpha: float) -> Schedule:
    c = tune_c(rounds_max, alpha)
    return Schedule(rounds_max, alpha, c, min_rounds(alpha, c))


def false_decisive_rate(campaigns: int, rounds: int, *, alpha: float = 0.05,
                        c: float | None = None, first_look: int = 2,
                        seed: int = 0, df: float = math.inf) -> float:
    """Share of simulated null campaigns (mean 0; Gaussian noise, or Student t with `df`
    degrees of freedom for heavier tails) whose confidence sequence excludes 0 at some
    look, looking after every round from `first_look` to `rounds`. Vectorised: one
    (campaigns x rounds) array."""
    cc = tune_c(rounds, alpha) if c is None else c
    rng = np.random.default_rng(seed)
    shape = (campaigns, rounds)
    x = rng.standard_normal(shape) if math.isinf(df) else rng.standard_t(df, shape)
    s, v = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
    n = np.arange(1, rounds + 1)[None, :]
    crossed = t_mixture_log_m(s, v, n, cc) >= math.log(1.0 / alpha)
    crossed[:, :first_look - 1] = False
    return float(crossed.any(axis=1).mean())
