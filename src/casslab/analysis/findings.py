"""A study's published numbers and findings (casslab.experiment.reference) against the
lab's kept trials. Pure: an Analysis per response in, rows for the report out.

Reference values: the lab's value is the median of the kept trials of every cell that
matches the value's `at` (one cell when `at` names every varied factor), with its 95 %
CI from order statistics (casslab.analysis.intervals, as in the cells table); the ratio
is lab / paper, the paper's value converted to the response's unit.

Findings: a two-sided test between the trials at level `to` and at level `from` (Welch's
t by default, Mann-Whitney U on request), Holm-corrected across all findings of the
campaign. Verdict at level alpha:
  holds          the difference is significant and has the expected sign
  does not hold  significant with the other sign, or any significant difference when
                 "no difference" was expected
  inconclusive   too few trials (Welch: < 2 per side) or p (Holm) above alpha; a
                 non-significant difference is no evidence that there is none, so "no
                 difference" is at best inconclusive
An expected ratio R (`to` / `from`) is tested on the logarithms with Welch's t twice:
against no difference (H0: ratio 1) and against the paper's ratio (H0: ratio R); both p
values join the Holm family. It does not hold when the lab's ratio differs significantly
from R, holds when it differs significantly from 1 on R's side (and not from R), and is
inconclusive otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from casslab.analysis.campaign import Analysis, CellStats, level_label
from casslab.analysis.stats import Describe, describe, holm, mann_whitney, welch
from casslab.experiment.reference import Finding, Reference, RefValue, level_number

HOLDS, FAILS, INCONCLUSIVE = "holds", "does not hold", "inconclusive"
TEST_NAMES = {"welch": "Welch t", "mann-whitney": "Mann-Whitney U",
              "ols": "least-squares slope"}
EFFECT_NAMES = {"welch": "Hedges g", "mann-whitney": "rank-biserial r", "ols": "slope"}


@dataclass(frozen=True)
class ValueRow:
    """One published number beside the lab's."""

    ref: RefValue
    lab: Describe  # of the matching cells' kept trials (n = 0: none ran)
    cells: int  # how many cells matched
    pooled: tuple[str, ...]  # varied factors `at` does not name (their levels pooled)

    @property
    def ratio(self) -> float:
        """lab median / paper value (both in the response's unit)."""
        if self.lab.n == 0 or self.ref.value == 0:
            return math.nan
        return self.lab.median / self.ref.value


@dataclass(frozen=True)
class Verdict:
    finding: Finding
    verdict: str  # HOLDS, FAILS or INCONCLUSIVE
    why: str  # one sentence: what decided it
    test: str  # "Welch t (two-sided), Holm over 3 findings, alpha 0.05"
    n_low: int
    n_high: int
    median_low: float
    median_high: float
    p: float  # the test's two-sided p
    p_holm: float  # what decided the verdict
    effect: float  # Hedges g or rank-biserial r, `to` minus `from`
    effect_name: str
    p_ratio: float = math.nan  # expect ratio: H0 ratio = R, Holm-corrected
    fit: SlopeFit | None = None  # expect slope: the lab's fitted slope

    @property
    def ratio(self) -> float:
        """median at `to` / median at `from`."""
        if math.isnan(self.median_low) or self.median_low == 0:
            return math.nan
        return self.median_high / self.median_low


@dataclass(frozen=True)
class SlopeFit:
    """The lab's least-squares slope of a response on a numeric factor: `slope` per unit
    of the factor, its confidence interval [low, high] of `coverage` (Student t, n - 2
    df), and `p`: two-sided, H0 slope = the paper's."""

    slope: float
    low: float
    high: float
    coverage: float
    n: int
    levels: int  # distinct factor levels the trials were at
    p: float


def fit_slope(points: Sequence[tuple[float, float]], paper: float,
              coverage: float = 0.95) -> SlopeFit:
    """Ordinary least squares of y on x over trial values (x, y); NaN fields when there
    are fewer than 3 points or 2 distinct x (no interval possible)."""
    from scipy import stats  # type: ignore[import-untyped]

    n = len(points)
    xs = [x for x, _ in points]
    if n < 3 or len(set(xs)) < 2:
        return SlopeFit(math.nan, math.nan, math.nan, coverage, n, len(set(xs)), math.nan)
    mx = sum(xs) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    resid = sum((y - my - b * (x - mx)) ** 2 for x, y in points)
    se = math.sqrt(resid / (n - 2) / sxx)
    half = float(stats.t.ppf(0.5 + coverage / 2, n - 2)) * se
    p = (float(2 * stats.t.sf(abs(b - paper) / se, n - 2)) if se > 0 else
         (1.0 if b == paper else 0.0))
    return SlopeFit(b, b - half, b + half, coverage, n, len(set(xs)), p)


def decide_slope(fit: SlopeFit, paper: float, tolerance: float) -> tuple[str, str]:
    """(verdict, why): holds when the interval lies within paper +- tolerance, does not
    hold when it lies wholly outside, else inconclusive."""
    lo, hi = paper - tolerance, paper + tolerance
    band = f"{paper:.4g} +- {tolerance:.4g}"
    if math.isnan(fit.slope):
        return INCONCLUSIVE, (f"too few trials for a line ({fit.n} trials at {fit.levels} "
                              "levels; the fit needs >= 3 trials at >= 2 levels)")
    ci = (f"slope {fit.slope:.4g} [{fit.low:.4g}, {fit.high:.4g}] ({fit.coverage:.0%} "
          "CI)")
    if lo <= fit.low and fit.high <= hi:
        return HOLDS, f"{ci} lies within the paper's {band}"
    if fit.high < lo or fit.low > hi:
        return FAILS, f"{ci} lies outside the paper's {band}"
    return INCONCLUSIVE, f"{ci} overlaps the edge of the paper's {band}"


def _slope_points(cells: Sequence[CellStats], f: Finding) -> list[tuple[float, float]]:
    lo, hi = level_number(f.low), level_number(f.high)
    out = []
    for cs in cells:
        if not _matches(cs.params, f.where) or f.factor not in cs.params:
            continue
        x = level_number(cs.params[f.factor])
        if lo <= x <= hi:
            out += [(x, v) for v in cs.values]
    return out


def _matches(params: Mapping[str, Any], levels: Mapping[str, Sequence[Any]]) -> bool:
    return all(level_label(params.get(name)) in {level_label(lv) for lv in allowed}
               for name, allowed in levels.items())


def _values(cells: Sequence[CellStats], levels: Mapping[str, Sequence[Any]]
            ) -> tuple[list[float], int]:
    matched = [cs for cs in cells if _matches(cs.params, levels)]
    return [v for cs in matched for v in cs.values], len(matched)


def compare_values(ref: Reference, analyses: Sequence[Analysis],
                   varied: Sequence[str]) -> list[ValueRow]:
    """Each published value beside the lab's median (and CI) of the matching trials.
    `varied`: the design's varied factors (those `at` leaves out are pooled)."""
    by_response = {a.response: a for a in analyses}
    out = []
    for rv in ref.values:
        a = by_response.get(rv.response)
        vals, n_cells = _values(a.cells if a else [], {k: [v] for k, v in rv.at.items()})
        pooled = tuple(n for n in varied if n not in rv.at)
        out.append(ValueRow(rv, describe(vals), n_cells, pooled))
    return out


def _side(cells: Sequence[CellStats], f: Finding, level: Any) -> list[float]:
    return _values(cells, {**f.where, f.factor: [level]})[0]


def _median(values: Sequence[float]) -> float:
    return describe(values).median if values else math.nan


def _logs(values: Sequence[float]) -> list[float] | None:
    return [math.log(v) for v in values] if all(v > 0 for v in values) else None


def _tests(f: Finding, lo: list[float], hi: list[float]
           ) -> tuple[tuple[float, float, float], float]:
    """The test of the difference and, for an expected ratio, the p value of H0: ratio R
    (both on logarithms, which need positive values: else NaN, inconclusive)."""
    if f.expect != "ratio":
        return (welch(hi, lo) if f.test == "welch" else mann_whitney(hi, lo)), math.nan
    llo, lhi = _logs(lo), _logs(hi)
    if llo is None or lhi is None:
        return (math.nan, math.nan, math.nan), math.nan
    shifted = [v - math.log(f.ratio) for v in lhi]
    return welch(lhi, llo), welch(shifted, llo)[1]


def judge(ref: Reference, analyses: Sequence[Analysis]) -> list[Verdict]:
    """Every finding's verdict, p values Holm-corrected across the findings (an expected
    ratio's second test included)."""
    by_response = {a.response: a for a in analyses}
    sides = []
    raw: list[float] = []
    for f in ref.findings:
        a = by_response.get(f.response)
        lo, hi = (_side(a.cells, f, f.low), _side(a.cells, f, f.high)) if a else ([], [])
        if f.expect == "slope":  # decided by its interval, outside the Holm family
            sides.append((lo, hi, (math.nan, math.nan, math.nan)))
            raw += [math.nan, math.nan]
            continue
        stat, p_ratio = _tests(f, lo, hi)
        sides.append((lo, hi, stat))
        raw += [stat[1], p_ratio]
    adjusted = holm(raw)
    m = sum(1 for p in raw if not math.isnan(p))
    out = []
    for i, (f, (lo, hi, stat)) in enumerate(zip(ref.findings, sides, strict=True)):
        if f.expect == "slope":
            a = by_response.get(f.response)
            out.append(slope_verdict(f, a.cells if a else [], lo, hi, 1 - ref.alpha))
            continue
        p_holm, p_ratio = adjusted[2 * i], adjusted[2 * i + 1]
        test = (f"{TEST_NAMES[f.test]} (two-sided{', on logs' if f.expect == 'ratio' else ''}"
                f"), Holm over {m} test{'s' if m != 1 else ''}, alpha {ref.alpha:g}")
        if f.expect == "ratio":
            verdict, why = decide_ratio(f.ratio, lo, hi, stat, p_holm, p_ratio, ref.alpha)
        else:
            verdict, why = decide(f.expect, lo, hi, stat, p_holm, ref.alpha, f.test)
        out.append(Verdict(f, verdict, why, test, len(lo), len(hi), _median(lo),
                           _median(hi), stat[1], p_holm, stat[2], EFFECT_NAMES[f.test],
                           p_ratio))
    return out


def slope_verdict(f: Finding, cells: Sequence[CellStats], lo: Sequence[float],
                  hi: Sequence[float], coverage: float) -> Verdict:
    """An expected slope's verdict from the lab's fitted slope and its interval."""
    fit = fit_slope(_slope_points(cells, f), f.slope, coverage)
    verdict, why = decide_slope(fit, f.slope, f.tolerance)
    test = (f"least-squares slope, {coverage:.0%} CI (Student t, n - 2 df); p: H0 slope = "
            "the paper's (not Holm-corrected: the interval decides)")
    return Verdict(f, verdict, why, test, len(lo), len(hi), _median(lo), _median(hi), fit.p,
                   math.nan, fit.slope, "slope", fit=fit)


def decide_ratio(ratio: float, lo: Sequence[float], hi: Sequence[float],
                 stat: tuple[float, float, float], p_holm: float, p_ratio: float,
                 alpha: float) -> tuple[str, str]:
    """(verdict, why) of an expected ratio `to` / `from` = `ratio`."""
    if len(lo) < 2 or len(hi) < 2:
        return INCONCLUSIVE, (f"too few kept trials ({len(lo)} at `from`, {len(hi)} at "
                              "`to`; the test needs >= 2 each)")
    if math.isnan(p_ratio) or math.isnan(p_holm):
        return INCONCLUSIVE, "no test possible (values <= 0 or without spread)"
    if p_ratio <= alpha:
        return FAILS, (f"the lab's ratio differs from {ratio:g} (p (Holm) = {p_ratio:.3g} "
                       f"<= {alpha:g})")
    side = "higher" if ratio > 1 else "lower"
    if p_holm <= alpha and (stat[0] > 0) == (ratio > 1):
        return HOLDS, (f"significantly {side} (p (Holm) = {p_holm:.3g}) and not different "
                       f"from {ratio:g} (p (Holm) = {p_ratio:.3g})")
    return INCONCLUSIVE, (f"not different from {ratio:g} (p (Holm) = {p_ratio:.3g}) but not "
                          f"significantly {side} either (p (Holm) = {p_holm:.3g})")


def _direction(hi: Sequence[float], lo: Sequence[float], stat: tuple[float, float, float],
               test: str) -> float:
    """> 0 when `to` is larger: the mean difference (Welch), r (Mann-Whitney)."""
    if test == "welch":
        return sum(hi) / len(hi) - sum(lo) / len(lo)
    return stat[2]


def decide(expect: str, lo: Sequence[float], hi: Sequence[float],
           stat: tuple[float, float, float], p_holm: float, alpha: float,
           test: str = "welch") -> tuple[str, str]:
    """(verdict, why) of one finding from its two samples and its test's result."""
    need = 2 if test == "welch" else 1
    if len(lo) < need or len(hi) < need:
        return INCONCLUSIVE, (f"too few kept trials ({len(lo)} at `from`, {len(hi)} at "
                              f"`to`; the test needs >= {need} each)")
    if math.isnan(p_holm):
        return INCONCLUSIVE, "no test possible (the trials have no spread)"
    if p_holm > alpha:
        return INCONCLUSIVE, f"p (Holm) = {p_holm:.3g} > alpha = {alpha:g}: no significant " \
                             "difference"
    sign = _direction(hi, lo, stat, test)
    went = "higher" if sign > 0 else "lower"
    if expect == "no difference":
        return FAILS, f"significant difference (p (Holm) = {p_holm:.3g}): `to` is {went}"
    if went == expect:
        return HOLDS, f"significantly {went} (p (Holm) = {p_holm:.3g} <= {alpha:g})"
    return FAILS, f"significantly {went}, not {expect} (p (Holm) = {p_holm:.3g})"


def mann_whitney_min_p(n1: int, n2: int) -> float:
    """The smallest two-sided p the exact Mann-Whitney U test can give with n1 and n2
    values (no ties): both tails' most extreme arrangement, 2 / C(n1 + n2, n1)."""
    if n1 < 1 or n2 < 1:
        return 1.0
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def power_warnings(ref: Reference, cells: Sequence[tuple[Mapping[str, Any], int]]
                   ) -> list[str]:
    """Findings the planned design cannot decide, whatever the lab measures: fewer than
    2 kept trials on a side of a Welch test, or a Mann-Whitney test whose smallest
    possible p, times the Holm family's size, exceeds alpha. `cells`: each cell's params
    and its number of kept trials."""
    tested = [f for f in ref.findings if f.expect != "slope"]
    family = sum(2 if f.expect == "ratio" else 1 for f in tested)
    out = []
    for f in tested:
        n_lo, n_hi = (sum(n for params, n in cells
                          if _matches(params, {**f.where, f.factor: [level]}))
                      for level in (f.low, f.high))
        name = f"finding {f.claim!r}"
        if f.test == "mann-whitney":
            p_min = mann_whitney_min_p(n_lo, n_hi)
            if p_min * family > ref.alpha:
                need = next(n for n in range(2, 1000)
                            if mann_whitney_min_p(n, n) * family <= ref.alpha)
                out.append(f"{name}: Mann-Whitney with {n_lo} vs {n_hi} kept trials cannot "
                           f"reach p <= {ref.alpha:g} (smallest possible p {p_min:.3g}"
                           + (f", x {family} for Holm" if family > 1 else "")
                           + f"); it needs {need} trials per side")
        elif min(n_lo, n_hi) < 2:
            out.append(f"{name}: Welch's t needs 2 kept trials per side, the plan has "
                       f"{n_lo} vs {n_hi}")
    return out
