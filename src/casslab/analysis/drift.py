"""Drift across a campaign: do the kept trials get faster or slower with run order?

Pure: (run order, cell, value) triples in, a Drift out.

- Residuals: each trial's log value less its cell's mean log, r = log y - mean_cell(log
  y), so cells of different size weigh alike and the drift reads in % (a trial 10 %
  above its cell's geometric mean has r = log 1.1).
- Trend test: Mann-Kendall (Mann 1945, Kendall 1975) on the residuals in run order:
  S = sum over pairs i < j of sign(r_j - r_i), its variance with the tie correction,
  z with continuity correction, two-sided normal p. Distribution-free: it asks whether
  later trials tend to be higher, not whether the trend is a line.
- Size: the least-squares slope b of r on the trial's position among the kept trials
  (0, 1, 2, ...), read as (exp(b) - 1) x 100 % per kept trial, with its 95 % Student-t
  CI (n - cells - 1 df: each cell's mean is estimated too). Over the campaign:
  (exp(b (n - 1)) - 1) x 100 %, compounded (a steady fall can never pass -100 %).
- Warning: when the drift over the campaign is larger than the smallest effect a
  finding looks for, a pooled comparison can be decided by the run order instead of the
  factor (an interleaved design cancels it; casslab.analysis.blocks).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st  # type: ignore[import-untyped]

ALPHA_DRIFT = 0.05


@dataclass(frozen=True)
class MannKendall:
    """Mann-Kendall trend test: S, its z (continuity-corrected), two-sided p, and
    Kendall's tau-a = S / (n (n - 1) / 2) (> 0: rising with order)."""

    n: int
    s: float
    z: float
    p: float
    tau: float


@dataclass(frozen=True)
class Drift:
    """Drift of one response's residuals (after cell means) against run order."""

    n: int  # kept trials with a value
    cells: int
    pct_per_trial: float  # slope of residual / cell mean on position, in %
    pct_low: float  # its 95 % CI (Student t, n - 2 df)
    pct_high: float
    trend: MannKendall

    @property
    def total_pct(self) -> float:
        """The fitted drift from the first kept trial to the last, in % (compounded)."""
        if self.n < 2 or math.isnan(self.pct_per_trial):
            return math.nan
        return 100 * math.expm1(math.log1p(self.pct_per_trial / 100) * (self.n - 1))

    @property
    def significant(self) -> bool:
        return not math.isnan(self.trend.p) and self.trend.p <= ALPHA_DRIFT

    def line(self) -> str:
        """One line for a CLI summary or a report cell."""
        if math.isnan(self.pct_per_trial):
            return f"drift: not measurable ({self.n} kept trials with a cell mate)"
        return (f"drift {self.pct_per_trial:+.2f} % per trial [{self.pct_low:+.2f}, "
                f"{self.pct_high:+.2f}] (95 % CI), {self.total_pct:+.1f} % over {self.n} "
                f"kept trials; Mann-Kendall p = {self.trend.p:.3g}")


def mann_kendall(values: Sequence[float]) -> MannKendall:
    """Mann-Kendall trend test of `values` in their order (NaN p for fewer than 3 values
    or no spread)."""
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    if n < 3 or float(np.ptp(x)) == 0.0:
        return MannKendall(n, math.nan, math.nan, math.nan, math.nan)
    diff = np.sign(x[None, :] - x[:, None])
    s = float(np.triu(diff, k=1).sum())
    _, counts = np.unique(x, return_counts=True)
    var = (n * (n - 1) * (2 * n + 5) - float((counts * (counts - 1) * (2 * counts + 5)).sum())
           ) / 18.0
    z = 0.0 if s == 0 else (s - math.copysign(1.0, s)) / math.sqrt(var)
    p = float(2 * st.norm.sf(abs(z)))
    return MannKendall(n, s, z, p, s / (n * (n - 1) / 2))


def relative_residuals(cells: Sequence[str], values: Sequence[float]) -> list[float]:
    """log y - mean log y of its cell; NaN for a value <= 0 and for a cell with fewer
    than 2 positive values (no residual to speak of)."""
    logs = [math.log(y) if y > 0 else math.nan for y in values]
    groups: dict[str, list[float]] = {}
    for c, v in zip(cells, logs, strict=True):
        if not math.isnan(v):
            groups.setdefault(c, []).append(v)
    means = {c: (sum(v) / len(v) if len(v) > 1 else math.nan) for c, v in groups.items()}
    return [v - means.get(c, math.nan) for c, v in zip(cells, logs, strict=True)]


def drift(order: Sequence[float], cells: Sequence[str], values: Sequence[float]) -> Drift:
    """The drift of `values` (one per kept trial, in any order) against `order` (run
    order: sequence number or start time), after removing each cell's mean."""
    idx = sorted(range(len(values)), key=lambda i: order[i])
    res = relative_residuals([cells[i] for i in idx], [values[i] for i in idx])
    pts = [(float(pos), r) for pos, r in enumerate(res) if not math.isnan(r)]
    n = len(pts)
    trend = mann_kendall([r for _, r in pts])
    ncells = len({cells[i] for i in idx})
    if n < 3:
        return Drift(n, ncells, math.nan, math.nan, math.nan, trend)
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    sxx = float(((x - x.mean()) ** 2).sum())
    b = float(((x - x.mean()) * (y - y.mean())).sum()) / sxx
    resid = y - y.mean() - b * (x - x.mean())
    # residuals after cell means lose one df per cell as well as the slope's
    df = max(n - ncells - 1, 1)
    se = math.sqrt(float((resid ** 2).sum()) / df / sxx)
    half = float(st.t.ppf(0.975, df)) * se
    return Drift(n, ncells, 100 * math.expm1(b), 100 * math.expm1(b - half),
                 100 * math.expm1(b + half), trend)


def drift_warning(d: Drift, smallest_effect_pct: float, response: str = "",
                  interleaved: bool = False) -> str:
    """A warning when the drift over the campaign (|total_pct|) is larger than the
    smallest effect a finding looks for (in %), else "". Only a significant trend
    warns: a non-significant slope is within the noise. `interleaved`: the campaign ran
    in rounds, so its verdicts (within rounds) are not at risk, only pooled tables."""
    if math.isnan(smallest_effect_pct) or math.isnan(d.total_pct) or not d.significant:
        return ""
    if abs(d.total_pct) <= abs(smallest_effect_pct):
        return ""
    what = f"{response}: " if response else ""
    return (f"{what}the kept trials drift {d.total_pct:+.1f} % over the campaign "
            f"({d.pct_per_trial:+.2f} % per trial, Mann-Kendall p = {d.trend.p:.3g}), more "
            f"than the smallest effect a finding looks for ({abs(smallest_effect_pct):.1f} "
            "%): a comparison of pooled trials may measure the run order, not the factor "
            + ("(the verdicts here come from differences within rounds, which it hits "
               "alike; read the within-round tables, not the pooled ones)" if interleaved
               else "(use design.order: interleaved)"))
