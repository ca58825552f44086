"""Statistics of a campaign. Pure functions: lists of numbers in, dataclasses out.

Conventions (stated in the report):
- Descriptives per cell: n, median, quartiles (linear interpolation, numpy's default),
  mean, sample sd (ddof=1), 95 % CI of the median from order statistics with its exact
  binomial coverage, 95 % t CI of the mean (casslab.analysis.intervals).
- Outliers: values more than 3 sample sd from their cell's mean (seed 000's rule).
  They are flagged and drawn as dots, never silently removed.
- Per factor (one-factor designs; casslab.analysis.factorial for more): one-way ANOVA
  (effect size eta^2 = SS_between / SS_total) and Kruskal-Wallis H with tie correction
  (effect size epsilon^2 = H / (n - 1)), over the trials grouped by the factor's
  levels (other factors pooled).
- Pairs of levels: Welch's t test and Mann-Whitney U (two-sided), each family
  Holm-corrected; effect sizes Hedges' g and the rank-biserial correlation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.intervals import mean_ci, median_ci

OUTLIER_SD = 3.0


@dataclass(frozen=True)
class Describe:
    n: int
    median: float
    q1: float
    q3: float
    mean: float
    sd: float
    ci_low: float
    ci_high: float
    minimum: float
    maximum: float
    outliers: int
    ci_coverage: float = math.nan  # exact coverage the median's CI achieves
    ci_method: str = ""
    ci_warning: str = ""  # set when n is too small for the asked level
    mean_ci_low: float = math.nan
    mean_ci_high: float = math.nan


@dataclass(frozen=True)
class GroupTest:
    """A test over k groups: statistic, p value, effect size and its name."""

    test: str
    statistic: float
    df: tuple[float, ...]
    p: float
    effect: float
    effect_name: str
    k: int
    n: int


@dataclass(frozen=True)
class PairTest:
    a: str
    b: str
    test: str
    statistic: float
    p: float
    p_holm: float
    effect: float
    effect_name: str


def outlier_mask(values: Sequence[float], k: float = OUTLIER_SD) -> list[bool]:
    """True for values more than k sample sd from the mean (seed 000: k = 3)."""
    x = np.asarray(values, dtype=float)
    if x.size < 3:
        return [False] * int(x.size)
    sd = float(np.std(x, ddof=1))
    if sd == 0:
        return [False] * int(x.size)
    return [bool(v) for v in np.abs(x - x.mean()) > k * sd]


def describe(values: Sequence[float], level: float = 0.95) -> Describe:
    """n, median, quartiles, mean, sd, CIs of the median (order statistics, with the
    coverage achieved) and of the mean (t), outliers (3 sd)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        nan = math.nan
        return Describe(0, nan, nan, nan, nan, nan, nan, nan, nan, nan, 0)
    q1, med, q3 = (float(v) for v in np.percentile(x, [25, 50, 75]))
    sd = float(np.std(x, ddof=1)) if x.size > 1 else math.nan
    ci, mci = median_ci(x.tolist(), level), mean_ci(x.tolist(), level)
    return Describe(int(x.size), med, q1, q3, float(x.mean()), sd, ci.low, ci.high,
                    float(x.min()), float(x.max()), sum(outlier_mask(x.tolist())),
                    ci.coverage, ci.method, ci.warning, mci.low, mci.high)


def anova_oneway(groups: Sequence[Sequence[float]]) -> GroupTest:
    """One-way ANOVA F test with eta^2; computed here, checked against scipy's f_oneway."""
    gs = [np.asarray(g, dtype=float) for g in groups if len(g) > 0]
    k = len(gs)
    n = sum(g.size for g in gs)
    if k < 2 or n - k < 1:
        return GroupTest("ANOVA", math.nan, (k - 1, n - k), math.nan, math.nan, "eta^2", k, n)
    grand = np.concatenate(gs).mean()
    ssb = sum(g.size * (g.mean() - grand) ** 2 for g in gs)
    ssw = sum(((g - g.mean()) ** 2).sum() for g in gs)
    sst = ssb + ssw
    dfb, dfw = k - 1, n - k
    if ssw == 0:
        f = math.inf if ssb > 0 else math.nan
        p = 0.0 if ssb > 0 else math.nan
    else:
        f = (ssb / dfb) / (ssw / dfw)
        p = float(st.f.sf(f, dfb, dfw))
    eta2 = float(ssb / sst) if sst > 0 else math.nan
    return GroupTest("ANOVA", float(f), (dfb, dfw), p, eta2, "eta^2", k, n)


def kruskal(groups: Sequence[Sequence[float]]) -> GroupTest:
    """Kruskal-Wallis H with tie correction and epsilon^2 = H / (n - 1); computed here,
    checked against scipy's kruskal."""
    gs = [np.asarray(g, dtype=float) for g in groups if len(g) > 0]
    k = len(gs)
    allv = np.concatenate(gs) if gs else np.array([])
    n = int(allv.size)
    if k < 2 or n < 3:
        return GroupTest("Kruskal-Wallis", math.nan, (k - 1,), math.nan, math.nan,
                         "epsilon^2", k, n)
    ranks = st.rankdata(allv)
    h = 0.0
    start = 0
    for g in gs:
        r = ranks[start:start + g.size]
        h += r.sum() ** 2 / g.size
        start += g.size
    h = 12.0 / (n * (n + 1)) * h - 3 * (n + 1)
    _, counts = np.unique(allv, return_counts=True)
    ties = 1 - float((counts ** 3 - counts).sum()) / (n ** 3 - n)
    if ties == 0:
        return GroupTest("Kruskal-Wallis", math.nan, (k - 1,), math.nan, math.nan,
                         "epsilon^2", k, n)
    h /= ties
    p = float(st.chi2.sf(h, k - 1))
    return GroupTest("Kruskal-Wallis", float(h), (k - 1,), p, float(h / (n - 1)), "epsilon^2",
                     k, n)


def welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Welch's t, two-sided p and Hedges' g (computed here, checked against scipy)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size < 2 or y.size < 2:
        return (math.nan, math.nan, math.nan)
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    if vx + vy == 0:
        return (math.nan, math.nan, math.nan)
    t = (x.mean() - y.mean()) / math.sqrt(vx + vy)
    df = (vx + vy) ** 2 / (vx ** 2 / (x.size - 1) + vy ** 2 / (y.size - 1))
    p = float(2 * st.t.sf(abs(t), df))
    pooled = math.sqrt(((x.size - 1) * x.var(ddof=1) + (y.size - 1) * y.var(ddof=1))
                       / (x.size + y.size - 2))
    corr = 1 - 3 / (4 * (x.size + y.size) - 9)
    g = (x.mean() - y.mean()) / pooled * corr if pooled > 0 else math.nan
    return (float(t), p, float(g))


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Mann-Whitney U (scipy, two-sided, exact or asymptotic as scipy picks), p and the
    rank-biserial correlation r = 2 U / (n1 n2) - 1 (positive: a tends to be larger)."""
    if len(a) < 1 or len(b) < 1:
        return (math.nan, math.nan, math.nan)
    res = st.mannwhitneyu(a, b, alternative="two-sided")
    u = float(res.statistic)
    return (u, float(res.pvalue), 2 * u / (len(a) * len(b)) - 1)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p values (NaN stays NaN, order kept)."""
    idx = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    m = len(idx)
    out = [math.nan] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(sorted(idx, key=lambda i: pvalues[i])):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def pairwise(groups: Mapping[str, Sequence[float]]) -> list[PairTest]:
    """Every pair of levels with Welch and Mann-Whitney, each family Holm-corrected."""
    pairs = list(itertools.combinations(groups, 2))
    w = [welch(groups[a], groups[b]) for a, b in pairs]
    m = [mann_whitney(groups[a], groups[b]) for a, b in pairs]
    wh, mh = holm([r[1] for r in w]), holm([r[1] for r in m])
    out = []
    for (a, b), rw, rm, ph_w, ph_m in zip(pairs, w, m, wh, mh, strict=True):
        out.append(PairTest(a, b, "Welch t", rw[0], rw[1], ph_w, rw[2], "Hedges g"))
        out.append(PairTest(a, b, "Mann-Whitney U", rm[0], rm[1], ph_m, rm[2],
                            "rank-biserial r"))
    return out


def moving_average(values: Sequence[float], window: int = 5) -> list[float]:
    """Trailing moving mean over `window` points (seed 003 used period 5); the first
    window-1 points average what exists so far."""
    out = []
    acc = 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


@dataclass(frozen=True)
class CurvePoint:
    level: float
    median: float
    q1: float
    q3: float
    n: int
    relative: float  # median / median at the smallest level


def scaling_curve(points: Mapping[float, Sequence[float]]) -> list[CurvePoint]:
    """A response against a numeric factor: median and IQR per level, and each level's
    median relative to the smallest level's (1.0 = no change)."""
    out = []
    base = None
    for level in sorted(points):
        x = np.asarray(points[level], dtype=float)
        if x.size == 0:
            continue
        q1, med, q3 = (float(v) for v in np.percentile(x, [25, 50, 75]))
        base = med if base is None else base
        out.append(CurvePoint(level, med, q1, q3, int(x.size), med / base if base else math.nan))
    return out
