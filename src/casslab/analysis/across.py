"""Effects for findings that span two campaigns or two responses of one trial, which a
spec's `reference.findings` (one campaign, one response, levels of one factor) cannot
say: seed 002's "at CL 3 the edge delays matter more than the endpoint delays" compares
the slopes of two sweeps (two campaigns), "reads take longer than writes" two
responses. Pure: values in, an Effect out; casslab.analysis.findings gives the verdict
(`verdict_of`, the same rule as every other finding).

- slope difference: each campaign's least-squares line of the response on its swept
  factor (ordinary least squares over the kept trials), a - b with Welch's
  standard error sqrt(se_a^2 + se_b^2) and Welch-Satterthwaite df; the two fits are
  independent (different trials);
- response ratio: one log(a / b) per cell (the mean over the cell's trials, both
  responses measured in the same trials), Student t over the cells: the cells, not
  the trials, are the independent observations.

Both are fixed-n tests. When both campaigns ran in interleaved rounds they give one
value per round instead, paired by round number (round r of one campaign with round r
of the other: the campaigns' rounds are independent, so the per-round values are too):
- the per-round slope difference: each round's own least-squares slope of each campaign
  (every level of the swept factor once), a - b;
- the per-round response ratio: the mean log(a / b) over the round's trials of both
  campaigns;
and one interval over those values (`casslab.analysis.findings.per_round_effect`:
paired t, or, when a campaign added rounds until its own findings were decisive, Lai's
anytime-valid confidence sequence). The sequence is what makes the interval valid at a
number of rounds that the data chose: a fixed-n test on trials gathered under optional
stopping covers less than it says.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.effects import LINE, SLOPE, Effect, paired_log_effect, unbounded
from casslab.analysis.findings import per_round_effect
from casslab.analysis.power import POWER

# (round, x, y) of one trial
RoundPoint = tuple[int, float, float]


@dataclass(frozen=True)
class LineFit:
    """y = intercept + slope x by least squares, with the slope's standard error and
    the residual df (n - 2); NaN se with fewer than 3 points or one distinct x."""

    slope: float
    intercept: float
    se: float
    df: int
    n: int


def line_fit(points: Sequence[tuple[float, float]]) -> LineFit:
    n = len(points)
    xs = np.asarray([x for x, _ in points], dtype=float)
    ys = np.asarray([y for _, y in points], dtype=float)
    if n < 2 or len(set(xs.tolist())) < 2:
        return LineFit(math.nan, math.nan, math.nan, 0, n)
    sxx = float(((xs - xs.mean()) ** 2).sum())
    b = float(((xs - xs.mean()) * (ys - ys.mean())).sum()) / sxx
    a = float(ys.mean()) - b * float(xs.mean())
    if n < 3:
        return LineFit(b, a, math.nan, 0, n)
    resid = ys - a - b * xs
    return LineFit(b, a, math.sqrt(float(resid @ resid) / (n - 2) / sxx), n - 2, n)


def slope_difference_effect(a: LineFit, b: LineFit, level: float) -> tuple[Effect, float,
                                                                           float]:
    """(the interval of slope a - slope b at `level`, its two-sided p of no difference,
    the difference these fits detect with 90 % power)."""
    method = "difference of two least-squares slopes, Welch t (independent campaigns)"
    if math.isnan(a.se) or math.isnan(b.se):
        est = a.slope - b.slope
        return unbounded(SLOPE, level, method, False, a.n, b.n, est, LINE), math.nan, math.inf
    est = a.slope - b.slope
    var = a.se ** 2 + b.se ** 2
    if var == 0:
        return Effect(SLOPE, est, est, est, level, method, False, a.n, b.n, 0.0, LINE), (
            1.0 if est == 0 else 0.0), 0.0
    df = var ** 2 / (a.se ** 4 / a.df + b.se ** 4 / b.df)
    se = math.sqrt(var)
    half = float(st.t.ppf(0.5 + level / 2, df)) * se
    p = float(2 * st.t.sf(abs(est) / se, df))
    bound = (float(st.t.ppf(0.5 + level / 2, df)) + float(st.t.ppf(POWER, df))) * se
    return (Effect(SLOPE, est, est - half, est + half, level, method, False, a.n, b.n,
                   se, LINE), p, bound)


def cell_ratio_effect(log_ratios: Sequence[float], level: float) -> tuple[Effect, float]:
    """(the interval of the mean per-cell log(a / b) at `level`, its two-sided p)."""
    e = paired_log_effect(log_ratios, level)
    e = replace(e, method=f"one log-ratio per cell, Student t over the {len(log_ratios)} "
                "cells")
    n = len(log_ratios)
    if n < 2 or math.isnan(e.noise_sd):
        return e, math.nan
    if e.noise_sd == 0:
        return e, 1.0 if e.estimate == 0 else 0.0
    t = abs(e.estimate) / (e.noise_sd / math.sqrt(n))
    return e, float(2 * st.t.sf(t, n - 1))


def round_slopes(points: Sequence[RoundPoint]) -> dict[int, float]:
    """round -> the least-squares slope of y on x over that round's trials, for the
    rounds that have every x the points have (a round cut short, or missing a level,
    would fit a different line)."""
    levels = {x for _, x, _ in points}
    by_round: dict[int, list[tuple[float, float]]] = {}
    for r, x, y in points:
        by_round.setdefault(r, []).append((x, y))
    return {r: line_fit(pts).slope for r, pts in sorted(by_round.items())
            if {x for x, _ in pts} == levels and len(levels) >= 2}


def round_slope_difference_effect(a: Mapping[int, float], b: Mapping[int, float],
                                  level: float, *, sequential: bool,
                                  c: float | None) -> tuple[Effect, float]:
    """(the interval of the mean per-round slope a - b at `level`, its two-sided p: NaN
    for the sequence) over the rounds both campaigns completed."""
    d = [a[r] - b[r] for r in sorted(set(a) & set(b))]
    return per_round_effect(d, level, sequential=sequential, c=c, scale=SLOPE,
                            what="differences of the two campaigns' least-squares slopes "
                            "within each round (round r with round r)")


def round_log_ratios(pairs: Sequence[tuple[int, float, float]]) -> dict[int, float]:
    """round -> the mean log(a / b) over that round's trials ((round, a, b) per trial;
    trials with a value <= 0 left out)."""
    by_round: dict[int, list[float]] = {}
    for r, x, y in pairs:
        if x > 0 and y > 0:
            by_round.setdefault(r, []).append(math.log(x / y))
    return {r: sum(v) / len(v) for r, v in sorted(by_round.items())}


def round_ratio_effect(per_round: Mapping[int, float], level: float, *,
                       sequential: bool, c: float | None) -> tuple[Effect, float]:
    """(the interval of the mean per-round log(a / b) at `level`, its two-sided p)."""
    d = [per_round[r] for r in sorted(per_round)]
    return per_round_effect(d, level, sequential=sequential, c=c,
                            what="log-ratios (the mean over each round's trials)")
