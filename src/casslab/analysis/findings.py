"""A study's published numbers and findings (casslab.experiment.reference) against the
lab's kept trials. Pure: an Analysis per response in, rows for the report out. This is
the one verdict engine of casslab: every verdict (report, CLI, `design.until:
verdicts`) comes from `judge` and its `classify`.

Reference values: the lab's value is the median of the kept trials of every cell that
matches the value's `at` (one cell when `at` names every varied factor), with its 95 %
CI from order statistics (casslab.analysis.intervals, as in the cells table); the ratio
is lab / paper, the paper's value converted to the response's unit.

Findings are decided from an interval of the effect, never from a p value alone:
- the effect of `to` against `from` is the log-ratio e = log(to / from) (read as a
  change in %), or for `expect: slope` the least-squares slope on the factor, or for
  `scale: difference` to - from in the response's unit (the same intervals on the
  values; a response near 0 has no ratio worth the name);
- its interval (casslab.analysis.effects): pooled trials, Welch's t on logs (or, with
  `test: mann-whitney`, the Hodges-Lehmann shift of the logs with its exact
  distribution-free interval from the Mann-Whitney U distribution); interleaved rounds
  (trial -> round given), the paired t interval of the per-round log-ratios, or, when
  rounds are added until decisive (`sequential`), Lai's anytime-valid confidence
  sequence (casslab.analysis.sequential);
- simultaneous over the campaign's findings: each interval has coverage 1 - alpha / m
  (Bonferroni over the m findings), so all of them cover at once with 1 - alpha.
- for a pattern over >= 3 levels (`expect: increasing | decreasing | alternation`,
  casslab.analysis.patterns): the coefficient of a least-squares fit on the logs (the
  change per unit; the claimed parity's excess over the line), pooled (Student t) or
  one fit per round (paired t, or the confidence sequence);
The size a finding looks for: `expect: ratio` R (its tolerance, default 10 % of R),
`expect: slope` S +- tolerance, a trend's `growth` g per unit (or the one the
reference's values imply) as log(1 + g) within its tolerance (default 10 % of it), and
for `higher`/`lower` the ratio of the reference's
own values at `to` and `from` when it holds both (same other levels), else none; the
band of a `higher`/`lower` ends at no effect (a claimed change under about 11 % has a
10 %-of-the-ratio band that reaches past it), so "holds" always implies the direction.
The bound z of "smaller than this lab can detect", fixed before the data where the
design allows, so that more rounds can only make a verdict firmer:
- declared: a design that adds rounds until verdicts with `design.detect: D` (an
  equivalence margin set before the run): z = log(1 + D) for every finding whose
  effect is a ratio (symmetric on the log scale: -D / (1 + D) to +D);
- declared too: a `scale: difference` finding's own `detect` (in the response's unit),
  in any design;
- measured: else what the design detects with 90 % power at the noise it measured
  (casslab.analysis.power), with its planned maximum of rounds for a design that adds
  rounds (the effect is then below what the whole campaign could detect), with the
  trials it ran for a fixed design.
Rounds added until verdicts use the running intersection of the confidence sequence
(casslab.analysis.sequential.running_cs), which never widens: with a fixed z, a
verdict once decided stays decided. (Until 2026-11-28 z was the detectable effect of
the rounds run so far; it shrinks as fast as the interval, so a small true effect lost
its verdict as rounds were added.)
Verdicts (`classify`), each implied by "the interval covers the true effect", so
their error rate is that of the intervals:
  holds                          the interval lies within the paper's size band, or
                                 (no size) excludes 0 on the expected side
  direction holds, size differs  on the expected side of 0, but outside the size band
  does not hold                  on the other side of 0; outside the size band and not
                                 on the expected side; any difference for "no
                                 difference"
  smaller than this lab can detect   the whole interval within +- z (and no size band
                                 it contradicts; with a band, the band within +- z
                                 too): whatever the effect, it is below z
                                 (the label says whether z was declared or measured)
  inconclusive                   anything else ("(rounds spent)" or "(budget spent)"
                                 when no more trials will come: the campaign reached
                                 its maximum of rounds, or its time budget; with what
                                 it could resolve, half its interval's width: this
                                 machine cannot tell a smaller estimate from none in
                                 that run; then, for rounds added until decisive,
                                 `rounds_to_decide`: the rounds that would decide it
                                 if its estimate and per-round noise stayed as
                                 measured)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from casslab.analysis.campaign import Analysis, CellStats, analyze, level_label
from casslab.analysis.effects import (
    DIFFERENCE,
    LINE,
    LOG_RATIO,
    POOLED,
    RANK,
    SEQUENTIAL,
    SLOPE,
    Effect,
    hodges_lehmann_difference_effect,
    hodges_lehmann_effect,
    paired_log_effect,
    pct_text,
    sequential_log_effect,
    to_pct,
    welch_difference_effect,
    welch_log_effect,
)
from casslab.analysis.patterns import (
    PatternFit,
    Point,
    fit_pattern,
    in_span,
    reference_growth,
    round_coefficients,
)
from casslab.analysis.power import POWER, detectable_log_effect
from casslab.analysis.sequential import DEFAULT_ROUNDS, half_width_factor
from casslab.analysis.stats import Describe, describe, mann_whitney, welch
from casslab.experiment.reference import (
    ALTERNATION,
    Finding,
    Reference,
    RefValue,
    level_number,
)
from casslab.experiment.sequential import BY_BUDGET, BY_MAX, BY_VERDICTS
from casslab.store.db import INTERRUPTED, RUNNING, stopped_state
from casslab.store.records import TrialRow

HOLDS = "holds"
SIZE_DIFFERS = "direction holds, size differs"
FAILS = "does not hold"
UNDETECTABLE = "smaller than this lab can detect"
# Where the bound of an UNDETECTABLE verdict came from
MEASURED, DECLARED = "measured", "declared"
INCONCLUSIVE = "inconclusive"
DECISIVE = (HOLDS, SIZE_DIFFERS, FAILS, UNDETECTABLE)
# Why a finished campaign adds no more trials (an inconclusive verdict's label says which).
ROUNDS_SPENT = "rounds"
BUDGET_SPENT = "budget"
DEFAULT_RATIO_TOLERANCE = 0.10  # a ratio holds within 10 % of the paper's
TEST_NAMES = {"welch": "Welch t", "mann-whitney": "Mann-Whitney U",
              "ols": "least-squares fit"}


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
    verdict: str  # one of DECISIVE or INCONCLUSIVE
    why: str  # one sentence: what decided it
    test: str  # how the interval was made and its family
    n_low: int  # kept trials at `from` (complete rounds, for paired effects)
    n_high: int
    median_low: float
    median_high: float
    effect: Effect  # the interval that decided (log-ratio or slope scale)
    p: float = math.nan  # two-sided p of "no effect" (fixed-n methods; NaN sequential)
    p_adj: float = math.nan  # Bonferroni over the family
    paper: float = math.nan  # the size looked for, on the effect's scale (NaN: none)
    band: tuple[float, float] = (math.nan, math.nan)  # paper's size +- tolerance
    bound: float = math.nan  # z: the lab's detectable effect, on the effect's scale
    spent: str = ""  # why no more trials will come: ROUNDS_SPENT, BUDGET_SPENT; "": more may
    fit: SlopeFit | None = None  # expect slope: the lab's fitted slope
    bound_source: str = MEASURED  # MEASURED (the lab's power) or DECLARED (design.detect)
    cell_ratio: float = math.nan  # geometric mean of matched cells' median ratios
    cell_difference: float = math.nan  # scale difference: mean of matched cells' median
    # differences (to - from)
    decide_rounds: float = math.nan  # an inconclusive verdict whose rounds or budget
    # were spent: the rounds that would decide it at the estimate and noise measured
    # (`rounds_to_decide`; inf: not within PROJECTION_LIMIT; NaN: not projected)

    @property
    def ratio(self) -> float:
        """median at `to` / median at `from`, cell by cell: the geometric mean over the
        pairs of cells that share their other levels (`cell_median_ratio`); the ratio
        of the pooled medians when no pair is known."""
        if not math.isnan(self.cell_ratio):
            return self.cell_ratio
        if math.isnan(self.median_low) or self.median_low == 0:
            return math.nan
        return self.median_high / self.median_low

    def medians_text(self) -> str:
        """The cells' medians, to against from, cell by cell: "cell medians x 1.04", or
        for a difference finding "cell medians +0.13 KiB/s"; "" when unknown."""
        if self.effect.scale == DIFFERENCE:
            d = self.cell_difference
            return "" if math.isnan(d) else f"cell medians {d:+.4g} {self.effect.unit}".rstrip()
        return "" if math.isnan(self.ratio) or self.fit else f"cell medians x {self.ratio:.2f}"

    @property
    def decisive(self) -> bool:
        return self.verdict in DECISIVE

    @property
    def label(self) -> str:
        """The verdict as the table prints it."""
        if self.verdict == UNDETECTABLE:
            bound = _fmt_abs(self.bound, self.effect.scale, self.effect.unit)
            return f"{UNDETECTABLE} (+-{bound}, {self.bound_source})"
        if self.verdict == SIZE_DIFFERS:
            return (f"{SIZE_DIFFERS} (lab {size_text(self.effect.estimate, self.effect.scale)} "
                    f"vs paper {size_text(self.paper, self.effect.scale)})")
        if self.verdict == INCONCLUSIVE and self.spent:
            return (f"{INCONCLUSIVE} ({self.spent} spent{self._resolution()}"
                    f"{self._paper_outside()}{self._projection()})")
        return self.verdict

    def _resolution(self) -> str:
        """What the spent run could resolve: half its interval's width on the effect's
        scale (an estimate within it could not be told from no effect); "" while the
        interval is infinite."""
        e = self.effect
        half = (e.high - e.low) / 2
        if not math.isfinite(half):
            return ""
        return (f"; an estimate within +-{_fmt_abs(half, e.scale, e.unit)} could not be "
                "told from no effect")

    def _paper_outside(self) -> str:
        """Whether the spent run's interval excludes the size the paper reports: an
        inconclusive verdict can still rule out the study's own effect (a bound the
        reader needs more than the direction left open); "" when it does not, or when
        there is no paper size or no finite interval."""
        e, paper = self.effect, self.paper
        if not (math.isfinite(paper) and math.isfinite(e.low) and math.isfinite(e.high)):
            return ""
        if e.low <= paper <= e.high:
            return ""
        side = "above" if paper > e.high else "below"
        return f"; the paper's {size_text(paper, e.scale)} lies {side} the interval"

    def _projection(self) -> str:
        n = self.decide_rounds
        if math.isnan(n):
            return ""
        if math.isinf(n):
            return f"; not decided within {PROJECTION_LIMIT} rounds at the noise measured"
        return f"; about {int(n)} rounds in all would decide it at the noise measured"

    def interval(self) -> str:
        """The effect with its interval and coverage: "+12.0 % [+8.1, +16.0] (95 % CI,
        anytime-valid)"."""
        e = self.effect
        if e.scale == LOG_RATIO:
            est, lo, hi = e.pct()
            body = f"{est:+.1f} % [{lo:+.1f}, {hi:+.1f}]"
        elif e.scale == DIFFERENCE:
            body = (f"{e.estimate:+.4g} [{e.low:+.4g}, {e.high:+.4g}]"
                    + (f" {e.unit}" if e.unit else ""))
        else:
            body = f"{e.estimate:.4g} [{e.low:.4g}, {e.high:.4g}]"
        return f"{body} ({e.coverage})"


def size_text(v: float, scale: str) -> str:
    """A size on an effect's scale as text: a change in % for a log-ratio, else the
    value (a slope); "-" for none."""
    if math.isnan(v):
        return "-"
    if scale == DIFFERENCE:
        return f"{v:+.4g}"
    return f"{to_pct(v):+.1f} %" if scale == LOG_RATIO else f"{v:.4g}"


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


def ratio_band(ratio: float, tolerance: float) -> tuple[float, float]:
    """The log-scale band of ratios within `tolerance` (a fraction) of `ratio`."""
    return (math.log(ratio) + math.log1p(-min(tolerance, 0.999)), math.log(ratio) +
            math.log1p(tolerance))


def implied_ratio(ref: Reference, f: Finding) -> float:
    """The ratio `to` / `from` the reference's own values give for a finding: the
    geometric mean over pairs of values at `to` and `from` with the same other levels
    (within the finding's `where`); NaN when it holds no such pair."""
    def side(level: Any) -> dict[tuple[tuple[str, str], ...], float]:
        out = {}
        for rv in ref.values:
            if rv.response != f.response or f.factor not in rv.at or rv.value <= 0:
                continue
            if level_label(rv.at[f.factor]) != level_label(level):
                continue
            rest = {k: v for k, v in rv.at.items() if k != f.factor}
            if not _matches(rest, {k: w for k, w in f.where.items() if k in rest}):
                continue
            out[tuple(sorted((k, level_label(v)) for k, v in rest.items()))] = rv.value
        return out
    lo, hi = side(f.low), side(f.high)
    logs = [math.log(hi[k] / lo[k]) for k in lo if k in hi]
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


def size_looked_for(ref: Reference, f: Finding) -> tuple[float, tuple[float, float]]:
    """(the paper's effect, its band) on the finding's effect scale: log R and R within
    its tolerance (default 10 %) for a ratio, expected or implied by the reference's
    values; the slope +- tolerance for a slope; (NaN, (NaN, NaN)) for a direction only."""
    nan = math.nan
    if f.expect == "slope":
        return f.slope, (f.slope - f.tolerance, f.slope + f.tolerance)
    if f.pattern:
        return growth_band(ref, f)
    if f.difference:  # a direction, or an equivalence band in the response's unit
        if f.expect == "no difference" and not math.isnan(f.tolerance):
            return 0.0, (-f.tolerance, f.tolerance)
        return nan, (nan, nan)
    if f.expect == "no difference":
        if math.isnan(f.tolerance):
            return nan, (nan, nan)
        return 0.0, ratio_band(1.0, f.tolerance)  # the equivalence margin around 1
    r = f.ratio if f.expect == "ratio" else implied_ratio(ref, f)
    if math.isnan(r) or r <= 0:
        return nan, (nan, nan)
    if f.expect in ("higher", "lower") and (r > 1) != (f.expect == "higher"):
        return nan, (nan, nan)  # the values contradict the claim: test the claim
    tol = f.tolerance if not math.isnan(f.tolerance) else DEFAULT_RATIO_TOLERANCE
    lo, hi = ratio_band(r, tol)
    # A band that reaches no effect (001's +8.1 % for workload C: 0.97-1.19 at 10 % of
    # the ratio) would let "holds" stand for an interval around 0 or past it: a
    # direction's band ends at no effect.
    if f.expect == "higher":
        lo = max(lo, 0.0)
    elif f.expect == "lower":
        hi = min(hi, 0.0)
    return math.log(r), (lo, hi)


def implied_growth(ref: Reference, f: Finding) -> float:
    """The per-unit change (a fraction) the reference's own values give for a trend
    finding: the log-linear fit through its values on the finding's response at levels
    of the factor within [from, to] (and `where`), one intercept per set of other
    levels; NaN when they do not span two levels."""
    points: list[Point] = []
    for rv in ref.values:
        if rv.response != f.response or f.factor not in rv.at or rv.value <= 0:
            continue
        if not in_span(rv.at[f.factor], f.low, f.high):
            continue
        rest = {k: v for k, v in rv.at.items() if k != f.factor}
        if not _matches(rest, {k: w for k, w in f.where.items() if k in rest}):
            continue
        points.append((_pair_key(rv.at, f.factor), level_number(rv.at[f.factor]),
                       rv.value))
    return reference_growth(points)


def growth_band(ref: Reference, f: Finding) -> tuple[float, tuple[float, float]]:
    """A trend's size on the log scale, log(1 + growth) per unit, with its band
    (`tolerance`, a fraction of it, default 10 %): the finding's `growth`, else the one
    the reference's values imply; none for an alternation, or values that contradict
    the claimed direction (the claim is tested then)."""
    nan = math.nan
    if f.expect == ALTERNATION:
        return nan, (nan, nan)
    g = f.growth if not math.isnan(f.growth) else implied_growth(ref, f)
    if math.isnan(g) or g <= -1 or g == 0 or (g > 0) != (f.expect == "increasing"):
        return nan, (nan, nan)
    b = math.log1p(g)
    tol = f.tolerance if not math.isnan(f.tolerance) else DEFAULT_RATIO_TOLERANCE
    lo, hi = sorted((b * (1 - tol), b * (1 + tol)))
    return b, (lo, hi)


FIXED_BOUND = "the smallest effect this lab detects with these trials (90 % power)"


def classify(expect: str, effect: Effect, *, paper: float = math.nan,
             band: tuple[float, float] = (math.nan, math.nan), bound: float = math.nan,
             bound_what: str = FIXED_BOUND) -> tuple[str, str]:
    """(verdict, why) from the effect's interval: the one rule every verdict follows
    (see the module's doc). `paper`/`band`: the size looked for and its tolerance band
    on the effect's scale (NaN: a direction only); `bound`: z, the bound of "smaller
    than this lab can detect" on that scale (NaN: unknown), `bound_what` what it is."""
    lo, hi, sc = effect.low, effect.high, effect.scale
    if math.isnan(lo) or math.isnan(hi) or not effect.bounded:
        return INCONCLUSIVE, (f"no finite interval yet ({effect.n_low} at `from`, "
                              f"{effect.n_high} at `to`: too few for {effect.coverage})")
    ci = (f"{size_text(effect.estimate, sc)} [{size_text(lo, sc)}, {size_text(hi, sc)}]"
          + (f" {effect.unit}" if effect.unit else ""))
    z = _fmt_abs(bound, sc, effect.unit)  # the bound as the sentences print it
    sign = {"higher": 1.0, "lower": -1.0}.get(expect, 0.0)
    if expect in ("ratio", "slope") and not math.isnan(paper):
        sign = math.copysign(1.0, paper) if paper != 0 else 0.0
    right_side = (sign > 0 and lo > 0) or (sign < 0 and hi < 0)
    wrong_side = (sign > 0 and hi < 0) or (sign < 0 and lo > 0)
    if not math.isnan(band[0]):
        paper_s = (f"paper {size_text(paper, sc)}, band [{size_text(band[0], sc)}, "
                   f"{size_text(band[1], sc)}]") if expect != "no difference" else (
            f"equivalence band [{size_text(band[0], sc)}, {size_text(band[1], sc)}]")
        if band[0] <= lo and hi <= band[1]:
            return HOLDS, f"lab {ci} lies within the {paper_s}"
        if hi < band[0] or lo > band[1]:
            if right_side:
                return SIZE_DIFFERS, f"lab {ci}: the expected direction, outside the {paper_s}"
            return FAILS, f"lab {ci} lies outside the {paper_s}" + (
                ", on the other side of 0" if wrong_side else "")
        if right_side:
            return INCONCLUSIVE, (f"lab {ci}: the expected direction, but the interval "
                                  f"overlaps the edge of the {paper_s}")
        if _within(bound, lo, hi) and _within(bound, *band):
            return UNDETECTABLE, (f"lab {ci} overlaps the {paper_s}, and both lie within "
                                  f"+-{z}, {bound_what}: the size looked "
                                  "for is below what this lab resolves")
        return INCONCLUSIVE, f"lab {ci} overlaps the {paper_s} and 0 or its edge"
    if expect == "no difference" and (lo > 0 or hi < 0):
        return FAILS, f"lab {ci} excludes 0: a difference"
    if right_side:
        return HOLDS, f"lab {ci} excludes 0: {expect}"
    if wrong_side:
        return FAILS, f"lab {ci} excludes 0 on the other side: not {expect}"
    if _within(bound, lo, hi):
        return UNDETECTABLE, f"lab {ci} lies within +-{z}, {bound_what}"
    return INCONCLUSIVE, f"lab {ci} includes 0" + (
        f" and reaches past +-{z} ({bound_what})"
        if not math.isnan(bound) and math.isfinite(bound) else "")


def _within(bound: float, lo: float, hi: float) -> bool:
    """Whether [lo, hi] lies within +- a finite bound."""
    return math.isfinite(bound) and -bound <= lo and hi <= bound


def _fmt_abs(v: float, scale: str, unit: str = "") -> str:
    """|v| on its scale: a change in % for a log-ratio, else the value (with the
    effect's unit, a difference's)."""
    if scale == LOG_RATIO:
        return f"{to_pct(abs(v)):.1f} %"
    return f"{abs(v):.4g}" + (f" {unit}" if unit else "")


def _pair_key(params: Mapping[str, Any], factor: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, level_label(v)) for k, v in params.items() if k != factor))


def _round_sides(cells: Sequence[CellStats], f: Finding, rounds: Mapping[int, int]
                 ) -> dict[int, list[tuple[float, float]]]:
    """round -> (value at `from`, value at `to`) for every pair of cells at the two
    levels that share their other levels (and match `where`)."""
    out: dict[int, list[tuple[float, float]]] = {}
    for cl, ch in _cell_pairs(cells, f):
        lo = {rounds[t]: v for t, v in zip(cl.trial_ids, cl.values, strict=True)
              if t in rounds}
        hi = {rounds[t]: v for t, v in zip(ch.trial_ids, ch.values, strict=True)
              if t in rounds}
        for r in sorted(set(lo) & set(hi)):
            out.setdefault(r, []).append((lo[r], hi[r]))
    return dict(sorted(out.items()))


def _cell_pairs(cells: Sequence[CellStats], f: Finding
                ) -> list[tuple[CellStats, CellStats]]:
    """(cell at `from`, cell at `to`) for every pair that shares its other levels (and
    matches `where`)."""
    lows = [cs for cs in cells if _matches(cs.params, {**f.where, f.factor: [f.low]})]
    highs = [cs for cs in cells if _matches(cs.params, {**f.where, f.factor: [f.high]})]
    return [(cl, ch) for cl in lows for ch in highs
            if _pair_key(cl.params, f.factor) == _pair_key(ch.params, f.factor)]


def cell_median_ratio(cells: Sequence[CellStats], f: Finding) -> float:
    """The geometric mean over the pairs of cells at `to` and `from` that share their
    other levels (and match `where`) of median(to) / median(from). Pooled medians mislead
    when the pooled factors have effects of their own: 004's read latency pooled over
    150 and 450 threads gave x 0.91 while every cell had LXC 6 % slower."""
    logs = []
    for cl, ch in _cell_pairs(cells, f):
        lo, hi = _median(cl.values), _median(ch.values)
        if lo > 0 and hi > 0:
            logs.append(math.log(hi / lo))
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


def cell_median_difference(cells: Sequence[CellStats], f: Finding) -> float:
    """The mean over the pairs of cells at `to` and `from` that share their other levels
    (and match `where`) of median(to) - median(from): a difference finding's descriptive
    counterpart of cell_median_ratio."""
    diffs = [_median(ch.values) - _median(cl.values) for cl, ch in _cell_pairs(cells, f)
             if cl.values and ch.values]
    return sum(diffs) / len(diffs) if diffs else math.nan


def paired_differences(cells: Sequence[CellStats], f: Finding,
                       rounds: Mapping[int, int]) -> list[float]:
    """One value per complete round: to - from, averaged over the pairs of cells at `to`
    and `from` that share their other levels (and match `where`)."""
    return [sum(hi - lo for lo, hi in pairs) / len(pairs)
            for pairs in _round_sides(cells, f, rounds).values()]


def paired_log_ratios(cells: Sequence[CellStats], f: Finding,
                      rounds: Mapping[int, int]) -> list[float]:
    """One value per complete round: log(to / from), averaged over the pairs of cells
    at `to` and `from` that share their other levels (and match `where`). One value
    per round keeps the rounds, not the cells, the independent observations the
    intervals need."""
    out = []
    for pairs in _round_sides(cells, f, rounds).values():
        logs = [math.log(hi / lo) for lo, hi in pairs if lo > 0 and hi > 0]
        if logs:
            out.append(sum(logs) / len(logs))
    return out


def paired_slopes(cells: Sequence[CellStats], f: Finding,
                  rounds: Mapping[int, int]) -> list[float]:
    """One value per complete round: (to - from) / (to level - from level), averaged
    over the matching pairs of cells (a slope from the two end levels, within rounds)."""
    run = level_number(f.high) - level_number(f.low)
    return [sum((hi - lo) / run for lo, hi in pairs) / len(pairs)
            for pairs in _round_sides(cells, f, rounds).values()]


def finding_effect(f: Finding, cells: Sequence[CellStats], level: float, *,
                   rounds: Mapping[int, int] | None = None, sequential: bool = False,
                   c: float | None = None, unit: str = "") -> tuple[Effect, float]:
    """(the effect's interval at `level`, the two-sided p of no effect) for a
    difference finding: paired per round when `rounds` (trial id -> round) is given,
    else pooled (Welch on logs, or Hodges-Lehmann for `test: mann-whitney`); on the
    values themselves for `scale: difference` (`unit`: the response's)."""
    if f.difference:
        return _difference_effect(f, cells, level, rounds=rounds, sequential=sequential,
                                  c=c, unit=unit)
    if rounds is not None:
        return per_round_effect(paired_log_ratios(cells, f, rounds), level,
                                sequential=sequential, c=c)
    lo, hi = _side(cells, f, f.low), _side(cells, f, f.high)
    if f.test == "mann-whitney":
        return hodges_lehmann_effect(lo, hi, level), mann_whitney(hi, lo)[1]
    e = welch_log_effect(lo, hi, level)
    llo, lhi = _logs(lo), _logs(hi)
    return e, (welch(lhi, llo)[1] if llo is not None and lhi is not None else math.nan)


def _difference_effect(f: Finding, cells: Sequence[CellStats], level: float, *,
                       rounds: Mapping[int, int] | None, sequential: bool, c: float | None,
                       unit: str) -> tuple[Effect, float]:
    """finding_effect for `scale: difference`: the same intervals on to - from."""
    if rounds is not None:
        return per_round_effect(paired_differences(cells, f, rounds), level,
                                sequential=sequential, c=c, scale=DIFFERENCE, unit=unit,
                                what="differences (to - from)")
    lo, hi = _side(cells, f, f.low), _side(cells, f, f.high)
    if f.test == "mann-whitney":
        return hodges_lehmann_difference_effect(lo, hi, level, unit), mann_whitney(hi, lo)[1]
    return welch_difference_effect(lo, hi, level, unit), welch(hi, lo)[1]


def per_round_effect(d: Sequence[float], level: float, *, sequential: bool,
                     c: float | None, scale: str = LOG_RATIO, unit: str = "",
                     what: str = "") -> tuple[Effect, float]:
    """(the interval of the mean of one value per round on `scale`, its two-sided p of
    0): the paired t interval, or with rounds added until decisive Lai's confidence
    sequence (p NaN). `what` names the per-round values in the method (default:
    log-ratios). Every within-rounds effect of the engine comes from here."""
    pe = sequential_log_effect(d, level, c) if sequential else paired_log_effect(d, level)
    e = replace(pe, scale=scale, unit=unit,
                method=pe.method.replace("log-ratios", what) if what else pe.method)
    return e, (math.nan if sequential else _t_p(e.estimate, e.noise_sd, e.n_low))


def _pattern_direction(f: Finding) -> str:
    """The side of 0 a pattern's coefficient is claimed on: up for increasing and for
    an alternation (its coefficient is the claimed parity's excess), down for
    decreasing."""
    return "lower" if f.expect == "decreasing" else "higher"


def classify_expect(f: Finding) -> str:
    """The `expect` argument `classify` takes for `f`: a pattern's side of 0, else the
    finding's own."""
    return _pattern_direction(f) if f.pattern else f.expect


def _pattern_cells(cells: Sequence[CellStats], f: Finding) -> list[CellStats]:
    return [cs for cs in cells if _matches(cs.params, f.where) and f.factor in cs.params
            and in_span(cs.params[f.factor], f.low, f.high)]


def _pattern_levels(cells: Sequence[CellStats], f: Finding) -> set[float]:
    return {level_number(cs.params[f.factor]) for cs in _pattern_cells(cells, f)}


def pattern_effect(f: Finding, cells: Sequence[CellStats], level: float, *,
                   rounds: Mapping[int, int] | None = None, sequential: bool = False,
                   c: float | None = None) -> tuple[Effect, float, float]:
    """(the effect's interval at `level`, the two-sided p of no pattern, the pooled
    fit's detectable effect: NaN within rounds, where `bound_of` gives it from the
    effect) for a trend or an alternation (casslab.analysis.patterns):
    within each complete round when `rounds` is given (paired t, or the anytime-valid
    sequence), else one fit over the pooled kept trials (Student t, n - p df). The
    effect is on the log scale: per unit of the factor (trend), or the claimed levels'
    excess over the line (alternation)."""
    matched = _pattern_cells(cells, f)
    what = ("the claimed parity's excess over the line, log y = a + b x + d [x "
            f"{f.higher_at}]" if f.expect == ALTERNATION else
            f"slope of log {f.response} per unit of {f.factor}")
    if rounds is not None:
        per_cell = [(_pair_key(cs.params, f.factor), level_number(cs.params[f.factor]),
                     {rounds[t]: v for t, v in zip(cs.trial_ids, cs.values, strict=True)
                      if t in rounds}) for cs in matched]
        d = round_coefficients(per_cell, f.expect, f.higher_at)
        effect, p = per_round_effect(d, level, sequential=sequential, c=c,
                                     what=f"least-squares fits ({what})")
        return effect, p, math.nan
    points: list[Point] = [(_pair_key(cs.params, f.factor),
                            level_number(cs.params[f.factor]), v)
                           for cs in matched for v in cs.values]
    fit: PatternFit = fit_pattern(points, f.expect, f.higher_at)
    low, high = fit.interval(level)
    sd = fit.se * math.sqrt(fit.n) if not math.isnan(fit.se) else math.nan
    effect = Effect(LOG_RATIO, fit.coef, low, high, level,
                    f"least-squares fit on logs of the pooled trials ({what}), Student t "
                    f"({fit.df} df)", False, fit.n, fit.n, sd, LINE)
    return effect, fit.p(), fit.detectable(level, POWER)


def _t_p(mean: float, sd: float, n: int) -> float:
    from scipy import stats

    if n < 2 or math.isnan(sd):
        return math.nan
    if sd == 0:
        return 1.0 if mean == 0 else 0.0
    return float(2 * stats.t.sf(abs(mean) / (sd / math.sqrt(n)), n - 1))


def _logs(values: Sequence[float]) -> list[float] | None:
    return [math.log(v) for v in values] if all(v > 0 for v in values) else None


def family_level(alpha: float, m: int, what: str = "findings") -> tuple[float, str]:
    """(each interval's coverage, the family as the verdict table names it): Bonferroni
    over the m findings decided together, so all their intervals cover at once with
    1 - alpha."""
    level = 1 - alpha / m
    text = (f"{pct_text(1 - alpha)} simultaneous over {m} {what} (Bonferroni, each "
            f"{pct_text(level)})" if m > 1 else pct_text(level)) + f", alpha {alpha:g}"
    return level, text


def verdict_of(f: Finding, effect: Effect, p: float, m: int, family: str, *,
               medians: tuple[float, float] = (math.nan, math.nan),
               paper: float = math.nan,
               band: tuple[float, float] = (math.nan, math.nan),
               bound: float = math.nan, bound_what: str = FIXED_BOUND) -> Verdict:
    """A finding's verdict from an effect made elsewhere (findings across campaigns or
    responses, casslab.analysis.across), by the same rule (`classify`) and in a family
    of m (its Bonferroni p beside the p). `f.expect`: higher or lower (the side of 0
    the effect is claimed on), or ratio with `paper`/`band` giving the size."""
    verdict, why = classify(f.expect, effect, paper=paper, band=band, bound=bound,
                            bound_what=bound_what)
    return Verdict(f, verdict, why, f"{effect.method}; {family}", effect.n_low,
                   effect.n_high, medians[0], medians[1], effect, p,
                   min(1.0, p * m) if not math.isnan(p) else math.nan, paper, band, bound)


@dataclass(frozen=True)
class Bound:
    """z, the bound of a "smaller than this lab can detect" verdict (module doc)."""

    value: float  # on the effect's scale
    source: str  # MEASURED or DECLARED
    what: str  # how the verdict's sentence names it


def bound_of(f: Finding, effect: Effect, *, margin: float | None = None,
             planned_rounds: int | None = None) -> Bound:
    """z for `f`: the declared margin (design.detect, a fraction) for a ratio effect of
    a design that adds rounds; else the lab's detectable effect at the measured noise,
    with the planned maximum of rounds for such a design (`planned_rounds`), with the
    trials run for a fixed one."""
    if margin is not None and effect.scale == LOG_RATIO and not f.pattern:
        return Bound(math.log1p(margin), DECLARED,
                     "the margin declared before the run (design.detect)")
    if effect.scale == DIFFERENCE and not math.isnan(f.detect):
        return Bound(f.detect, DECLARED, "the difference declared before the run (the "
                     "finding's detect)")
    n_low, n_high, what = effect.n_low, effect.n_high, FIXED_BOUND
    if effect.kind == SEQUENTIAL and planned_rounds:
        n_low = n_high = max(planned_rounds, effect.n_low)
        what = (f"the smallest effect this lab detects with its {n_low} planned rounds "
                "(90 % power)")
    if effect.kind == LINE:
        return Bound(math.nan, MEASURED, what)
    return Bound(detectable_log_effect(effect.kind, effect.noise_sd, n_low, n_high,
                                       effect.level, c=effect.c), MEASURED, what)


def judge(ref: Reference, analyses: Sequence[Analysis], *,
          rounds: Mapping[int, int] | None = None, sequential: bool = False,
          planned_rounds: int | None = None, spent: str = "",
          margin: float | None = None) -> list[Verdict]:
    """Every finding's verdict from its effect's interval, simultaneous over the
    findings (Bonferroni). `rounds`: trial id -> round of an interleaved design (paired
    effects); `sequential`: rounds are added until decisive (anytime-valid intervals,
    the sequence tuned for `planned_rounds`); `spent`: why no more trials will come
    (ROUNDS_SPENT or BUDGET_SPENT; an inconclusive verdict says so); `margin`: the
    design's declared detect (a fraction), the bound of "smaller than this lab can
    detect" for ratio effects of a sequential design."""
    from casslab.analysis.sequential import tune_c

    by_response = {a.response: a for a in analyses}
    m = max(len(ref.findings), 1)
    level, family = family_level(ref.alpha, m)
    c = tune_c(planned_rounds or DEFAULT_ROUNDS, ref.alpha / m) if sequential else None
    declared = margin if sequential else None  # design.detect is for until: verdicts
    out = []
    for f in ref.findings:
        a = by_response.get(f.response)
        cells = a.cells if a else []
        lo, hi = _side(cells, f, f.low), _side(cells, f, f.high)
        paper, band = size_looked_for(ref, f)
        fit = None
        if f.pattern:
            effect, p, fixed = pattern_effect(f, cells, level, rounds=rounds,
                                              sequential=sequential, c=c)
            z = (Bound(fixed, MEASURED, FIXED_BOUND) if effect.kind == LINE else
                 bound_of(f, effect, margin=declared, planned_rounds=planned_rounds))
            verdict, why = classify(classify_expect(f), effect, paper=paper, band=band,
                                    bound=z.value, bound_what=z.what)
            if not effect.bounded and effect.kind == LINE:
                why = (f"too few kept trials for the fit ({effect.n_low} trials; it needs "
                       f"more than one per level at {len(_pattern_levels(cells, f))} levels)")
        elif f.expect == "slope" and rounds is not None:
            effect, p = per_round_effect(paired_slopes(cells, f, rounds), level,
                                         sequential=sequential, c=c, scale=SLOPE,
                                         what="slopes (to - from) / (to level - from level)")
            z = bound_of(f, effect, margin=declared, planned_rounds=planned_rounds)
            verdict, why = classify(classify_expect(f), effect, paper=paper, band=band,
                                    bound=z.value, bound_what=z.what)
        elif f.expect == "slope":
            fit = fit_slope(_slope_points(cells, f), f.slope, level)
            effect = Effect(SLOPE, fit.slope, fit.low, fit.high, level,
                            "least-squares slope, Student t (n - 2 df)", False, fit.n, fit.n,
                            kind=LINE)
            p, z = fit.p, bound_of(f, effect)
            verdict, why = classify(classify_expect(f), effect, paper=paper, band=band)
            if math.isnan(fit.slope):
                why = (f"too few trials for a line ({fit.n} trials at {fit.levels} levels; "
                       "the fit needs >= 3 trials at >= 2 levels)")
        else:
            effect, p = finding_effect(f, cells, level, rounds=rounds, sequential=sequential,
                                       c=c, unit=a.unit if a else "")
            z = bound_of(f, effect, margin=declared, planned_rounds=planned_rounds)
            verdict, why = classify(classify_expect(f), effect, paper=paper, band=band,
                                    bound=z.value, bound_what=z.what)
            if effect.kind in (POOLED, RANK) and not effect.bounded:
                need = 2 if effect.kind == POOLED else "enough"
                why = (f"too few kept trials ({len(lo)} at `from`, {len(hi)} at `to`; the "
                       f"interval needs {need} each)" if min(len(lo), len(hi)) < 2 or
                       effect.kind == RANK else why)
        p_adj = (math.nan if fit is not None or math.isnan(p) else min(1.0, p * m))
        n_low, n_high = (len(lo), len(hi)) if fit is not None else (effect.n_low,
                                                                   effect.n_high)
        out.append(Verdict(f, verdict, why, f"{effect.method}; {family}", n_low, n_high,
                           _median(lo), _median(hi), effect, p, p_adj, paper, band,
                           z.value, spent, fit, z.source,
                           math.nan if f.pattern or f.difference else
                           cell_median_ratio(cells, f),
                           cell_median_difference(cells, f) if f.difference else math.nan))
        out[-1] = spent_verdict(out[-1], spent)
    return out


PROJECTION_LIMIT = 1000  # rounds: past this, a projection says only "not within"


def spent_verdict(v: Verdict, spent: str) -> Verdict:
    """`v` once no more rounds will come (`spent`: what ran out; "" when more may):
    an inconclusive verdict says so, with the rounds that would decide it
    (`rounds_to_decide`); any other is returned as it is."""
    if v.verdict != INCONCLUSIVE or not spent:
        return v
    return replace(v, spent=spent, decide_rounds=rounds_to_decide(v))


def rounds_to_decide(v: Verdict, limit: int = PROJECTION_LIMIT) -> float:
    """For an inconclusive verdict of rounds added until decisive: the smallest number
    of rounds (more than it ran) at which its confidence sequence (same coverage, same
    c), centred on the estimate measured and as wide as the per-round noise measured
    makes it, would be decisive by `classify` with the same size band and bound. A
    projection, not a promise: it assumes the estimate and the noise stay as measured;
    a new campaign planned for that many rounds tunes its c to them and is a little
    narrower by then. A declared bound stays; a measured one is what n rounds detect
    once n passes the planned rounds it was computed for (`bound_of`), so "smaller than
    this lab can detect" is not projected from a bound more rounds would shrink.
    inf: not within `limit` rounds (an estimate on a band's edge never decides); NaN:
    nothing to project (decisive, not sequential, no noise measured)."""
    e = v.effect
    if (v.decisive or e.kind != SEQUENTIAL or not e.noise_sd > 0
            or not math.isfinite(e.estimate) or not e.c > 0):
        return math.nan
    alpha = 1 - e.level
    expect = classify_expect(v.finding)
    for n in range(max(e.n_low + 1, 2), limit + 1):
        h = half_width_factor(n, alpha, e.c) * math.sqrt(n - 1) * e.noise_sd
        if not math.isfinite(h):
            continue
        at_n = replace(e, low=e.estimate - h, high=e.estimate + h, n_low=n, n_high=n)
        if classify(expect, at_n, paper=v.paper, band=v.band,
                    bound=_bound_at(v, at_n))[0] in DECISIVE:
            return float(n)
    return math.inf


def _bound_at(v: Verdict, at_n: Effect) -> float:
    """z for the projected effect `at_n`: the verdict's own when declared; when
    measured, the smaller of it (the detectable effect at max(planned, run) rounds) and
    what at_n's rounds detect (`bound_of`), which is the detectable effect at
    max(planned, n) as the detectable effect falls with n."""
    if v.bound_source != MEASURED or not math.isfinite(v.bound):
        return v.bound
    return min(v.bound, bound_of(v.finding, at_n).value)


# What a campaign's run state says ran out: nothing while it runs or may resume, nor
# when its rule found every finding decisive.
SPENT_BY_STATE = {RUNNING: "", INTERRUPTED: "", stopped_state(BY_VERDICTS): "",
                  stopped_state(BY_BUDGET): BUDGET_SPENT, stopped_state(BY_MAX): ROUNDS_SPENT}


def spent_of(rows: Sequence[TrialRow], planned_rounds: int | None,
             run_state: str | None = None) -> str:
    """What ended a finished `until: verdicts` campaign, for its inconclusive verdicts:
    ROUNDS_SPENT when its last round reached the planned maximum, else BUDGET_SPENT
    (a campaign that stopped because every finding was decisive has none to label); ""
    while a trial is still running or was interrupted: the campaign is under way or
    will resume, so more rounds may come. `run_state`: the runner's own word (the
    results database's meta run_state, SPENT_BY_STATE; None in older databases, which
    are judged by their trials)."""
    if run_state in SPENT_BY_STATE:
        return SPENT_BY_STATE[run_state]
    if any(r.status in (RUNNING, INTERRUPTED) for r in rows):
        return ""
    last = max((r.round for r in rows if r.kept and r.round is not None), default=0)
    return ROUNDS_SPENT if planned_rounds and last >= planned_rounds else BUDGET_SPENT


def rounds_of(rows: Sequence[TrialRow]) -> dict[int, int] | None:
    """trial id -> round for the kept trials of an interleaved design; None when the
    campaign has no rounds (its trials are compared pooled)."""
    rounds = {r.trial_id: r.round for r in rows if r.kept and r.round is not None}
    return rounds or None


def judge_rows(ref: Reference, rows: Sequence[TrialRow], factors: list[dict[str, Any]],
               values: Mapping[str, Mapping[int, float]] | None = None, *,
               sequential: bool = False, planned_rounds: int | None = None,
               spent: str = "", margin: float | None = None) -> list[Verdict]:
    """`judge` straight from a campaign's trials (the stopping rule of `until:
    verdicts`, the demo, the CLI): one Analysis per response the findings name (`values`:
    response -> trial id -> value, else the trial's ALL row), paired by round when the
    trials have rounds."""
    responses = list(dict.fromkeys(f.response for f in ref.findings))
    analyses = [analyze(list(rows), factors, name,
                        values=values.get(name) if values is not None else None)
                for name in responses]
    return judge(ref, analyses, rounds=rounds_of(rows), sequential=sequential,
                 planned_rounds=planned_rounds, spent=spent, margin=margin)


def all_decisive(verdicts: Sequence[Verdict]) -> bool:
    """`design.until: verdicts`: stop adding rounds once this is True. Every bound is
    fixed before the data (declared, or at the planned rounds: `bound_of`), so a
    decisive verdict would stay decisive with more rounds."""
    return all(v.decisive for v in verdicts)


def smallest_effect_pct(verdicts: Sequence[Verdict], response: str) -> float:
    """The smallest effect (in %) the findings on `response` look for: the paper's
    sizes, else (direction-only findings) the lab's detectable effect; NaN if none."""
    sizes = []
    for v in verdicts:
        if v.finding.response != response or v.effect.scale != LOG_RATIO:
            continue
        size = v.paper if not math.isnan(v.paper) else v.bound
        if not math.isnan(size) and math.isfinite(size):
            sizes.append(abs(to_pct(abs(size))))
    return min(sizes) if sizes else math.nan


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
    tested = [f for f in ref.findings if f.expect != "slope" and not f.pattern]
    family = len(ref.findings)
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
