"""Patterns over three or more levels of a numeric factor: the effects the findings
`expect: increasing | decreasing` (a trend) and `expect: alternation` (a zig-zag) are
decided from (casslab.analysis.findings gives the verdict). Pure: values in, numbers out.

Both are least-squares fits on the log of the response, so an effect reads as a change
in % and a drift that slows every cell by x % moves no coefficient:
- trend: log y = a_g + b x; b is the change per unit of the factor (exp(b) - 1, in %);
- alternation: log y = a_g + b x + d [x has the claimed parity]; d is how far the
  claimed levels (e.g. even node counts) lie above the line through all levels, as a
  log-ratio. The linear term takes the trend out, so a steady growth is no zig-zag.
a_g is one intercept per group of cells that share their other levels (workload A, C,
E...), so groups with different baselines share one b (and d) without their baselines
entering it.

Intervals of the coefficient:
- pooled trials: Student t from the fit's residual variance, n - p df (ordinary least
  squares; assumes equal variance of the logs across cells);
- interleaved rounds: the same fit within each complete round (one value per cell),
  one coefficient per round; the engine takes the paired t interval (or the
  anytime-valid sequence) of those, as for a two-level finding.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st  # type: ignore[import-untyped]

from casslab.experiment.reference import ALTERNATION, level_number

# (group: the cell's other levels, x: the factor's level as a number, y: the response)
Point = tuple[Hashable, float, float]


@dataclass(frozen=True)
class PatternFit:
    """The coefficient of interest (the trend's b, the alternation's d) on the log
    scale, its standard error and residual df; NaN when the fit is not identified."""

    coef: float
    se: float
    df: int
    n: int  # points fitted
    levels: int  # distinct x

    def interval(self, level: float) -> tuple[float, float]:
        if math.isnan(self.se) or self.df < 1:
            return (-math.inf, math.inf)
        half = float(st.t.ppf(0.5 + level / 2, self.df)) * self.se
        return (self.coef - half, self.coef + half)

    def p(self) -> float:
        """Two-sided p of coefficient 0."""
        if math.isnan(self.se) or self.df < 1:
            return math.nan
        if self.se == 0:
            return 1.0 if self.coef == 0 else 0.0
        return float(2 * st.t.sf(abs(self.coef) / self.se, self.df))

    def detectable(self, level: float, power: float) -> float:
        """The smallest |coefficient| this fit detects with `power` at `level`."""
        if math.isnan(self.se) or self.df < 1:
            return math.inf
        return (float(st.t.ppf(0.5 + level / 2, self.df)) +
                float(st.t.ppf(power, self.df))) * self.se


def parity_of(x: float) -> str:
    return "even" if x % 2 == 0 else "odd"


def _columns(x: float, expect: str, higher_at: str) -> list[float]:
    if expect == ALTERNATION:
        return [x, 1.0 if parity_of(x) == higher_at else 0.0]
    return [x]


def fit_pattern(points: Sequence[Point], expect: str, higher_at: str = "") -> PatternFit:
    """Least squares of log y on the pattern's columns with one intercept per group.
    Points with y <= 0 have no log: the fit is NaN if any is present."""
    n = len(points)
    xs = {x for _, x, _ in points}
    nan = PatternFit(math.nan, math.nan, 0, n, len(xs))
    if not points or any(y <= 0 for _, _, y in points):
        return nan
    groups = list(dict.fromkeys(g for g, _, _ in points))
    rows = [[1.0 if g == h else 0.0 for h in groups] + _columns(x, expect, higher_at)
            for g, x, _ in points]
    a = np.asarray(rows, dtype=float)
    y = np.log(np.asarray([v for _, _, v in points], dtype=float))
    p = a.shape[1]
    if n < p or int(np.linalg.matrix_rank(a)) < p:
        return nan
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    df = n - p
    if df < 1:
        return PatternFit(float(coef[-1]), math.nan, 0, n, len(xs))
    resid = y - a @ coef
    s2 = float(resid @ resid) / df
    cov = s2 * np.linalg.inv(a.T @ a)
    return PatternFit(float(coef[-1]), math.sqrt(max(float(cov[-1, -1]), 0.0)), df, n,
                      len(xs))


def round_coefficients(cells: Sequence[tuple[Hashable, float, Mapping[int, float]]],
                       expect: str, higher_at: str = "") -> list[float]:
    """One coefficient per complete round: `cells` are (group, x, round -> value); a
    round enters when every cell has a value in it (so each round's fit has the same
    design) and the fit is identified."""
    if not cells:
        return []
    common = set.intersection(*(set(by_round) for _, _, by_round in cells))
    out = []
    for r in sorted(common):
        fit = fit_pattern([(g, x, by_round[r]) for g, x, by_round in cells], expect,
                          higher_at)
        if not math.isnan(fit.coef):
            out.append(fit.coef)
    return out


def reference_growth(points: Sequence[Point]) -> float:
    """The per-unit change (a fraction) a study's own values imply: the trend's fit
    through them, exp(b) - 1; NaN when they do not span two levels of a group."""
    fit = fit_pattern(points, "increasing")
    return math.expm1(fit.coef) if not math.isnan(fit.coef) else math.nan


def in_span(level: object, low: object, high: object) -> bool:
    """Whether a numeric level lies within [low, high] (the levels a pattern uses)."""
    try:
        x = level_number(level)
    except ValueError:
        return False
    return level_number(low) <= x <= level_number(high)
