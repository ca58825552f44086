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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.analysis.effects import LINE, SLOPE, Effect, paired_log_effect, unbounded
from casslab.analysis.power import POWER


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
