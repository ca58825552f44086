"""Statistics of a factorial design: multi-way ANOVA with every interaction, its
assumption checks, a rank-based fallback, simple effects, effect sizes. Pure: rows in,
dataclasses out.

- Model: y ~ A * B * ... (every main effect and interaction), ordinary least squares
  (statsmodels), type II sums of squares (equal to type I and III when the design is
  balanced, and sensible when a failed trial unbalances it).
- Effect size per term: partial eta^2 = SS_term / (SS_term + SS_residual).
- Assumptions: Shapiro-Wilk on the residuals (normality), Brown-Forsythe (Levene on
  medians) across cells (equal variances), and, when the run order is known,
  Mann-Kendall of the residuals against it (independence: a machine that drifts makes
  trials run close together alike, casslab.analysis.drift), each at ALPHA_ASSUMPTION.
  When normality or equal variances fails, the same model on the ranks of y
  (rank-transform ANOVA, Conover & Iman 1981) is reported beside it and the rank table
  is the one to read; ranks do not cure a drift, so a failed independence check says
  neither table's p values can be trusted (an interleaved design can).
- Simple effects: each factor's one-way test within each combination of the other
  factors' levels, so an interaction shows as an effect that changes across them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as st  # type: ignore[import-untyped]
from statsmodels.formula.api import ols  # type: ignore[import-untyped]
from statsmodels.stats.anova import anova_lm  # type: ignore[import-untyped]

from casslab.analysis.drift import mann_kendall
from casslab.analysis.stats import anova_oneway, kruskal

ALPHA_ASSUMPTION = 0.05
INDEPENDENCE = "independent of run order"


@dataclass(frozen=True)
class Term:
    """One row of an ANOVA table (a main effect, an interaction or the residual)."""

    name: str  # "nodes", "nodes x workload", "residual"
    df: float
    ss: float
    f: float
    p: float
    partial_eta2: float


@dataclass(frozen=True)
class Check:
    """An assumption check: its test, statistic, p and whether the assumption holds."""

    assumption: str
    test: str
    statistic: float
    p: float
    ok: bool


@dataclass(frozen=True)
class SimpleEffect:
    """One factor's effect with the other factors held at fixed levels."""

    factor: str
    within: str  # "workload=ycsb-a"
    anova_f: float
    anova_p: float
    eta2: float
    kruskal_p: float
    epsilon2: float
    n: int


@dataclass(frozen=True)
class Factorial:
    factors: list[str]
    n: int
    terms: list[Term]  # on the values
    rank_terms: list[Term]  # the same model on ranks
    checks: list[Check]
    simple: list[SimpleEffect]

    @property
    def assumptions_ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def independent(self) -> bool:
        """False when the residuals trend with run order (True when not checked)."""
        return all(c.ok for c in self.checks if c.assumption == INDEPENDENCE)

    @property
    def method(self) -> str:
        if not self.checks:
            return "ANOVA (assumptions not checkable: no spread within cells)"
        if not self.independent:
            return ("neither table is reliable: the residuals trend with run order (a "
                    "drift; use design.order: interleaved)")
        if self.assumptions_ok:
            checked = ", independent of run order" if any(
                c.assumption == INDEPENDENCE for c in self.checks) else ""
            return f"ANOVA (normal residuals, equal variances{checked})"
        return "rank-transform ANOVA (an assumption failed)"


def replicated(cells: Mapping[tuple[str, ...], Sequence[float]]) -> bool:
    """True when every cell of the full grid has >= 2 values (needed for interactions)."""
    return bool(cells) and all(len(v) >= 2 for v in cells.values())


def factorial_anova(factors: Sequence[str], rows: Sequence[tuple[tuple[str, ...], float]],
                    order: Sequence[float] | None = None) -> Factorial:
    """Multi-way ANOVA with interactions on (levels, value) rows, one level per factor;
    `order`: each row's run order (sequence number), for the independence check.

    Raises ValueError when fewer than 2 factors are given or the residual has no degree
    of freedom (no replication).
    """
    if len(factors) < 2:
        raise ValueError(f"a factorial ANOVA needs >= 2 factors, got {list(factors)}")
    cols = [f"f{i}" for i in range(len(factors))]  # formula-safe names
    df = pd.DataFrame([dict(zip(cols, lv, strict=True), y=y) for lv, y in rows])
    terms, resid = _anova(df, cols, "y", factors)
    df["rank_y"] = st.rankdata(df["y"])
    rank_terms, _ = _anova(df, cols, "rank_y", factors)
    groups = [g["y"].to_numpy() for _, g in df.groupby(cols)]
    return Factorial(list(factors), len(df), terms, rank_terms,
                     _checks(resid, groups, order), simple_effects(factors, rows))


def _anova(df: pd.DataFrame, cols: list[str], y: str,
           names: Sequence[str]) -> tuple[list[Term], np.ndarray]:
    model = ols(f"{y} ~ " + " * ".join(f"C({c})" for c in cols), data=df).fit()
    if model.df_resid < 1:
        raise ValueError("no residual degrees of freedom: every cell needs >= 2 trials")
    table = anova_lm(model, typ=2)
    ss_res = float(table.loc["Residual", "sum_sq"])
    resid = np.asarray(model.resid, dtype=float)
    # Identical trials within every cell leave only rounding noise in the residual, which
    # would give F ~ 1e29 and a "normality" test of that noise: call it zero.
    exact = ss_res <= 1e-12 * float(table["sum_sq"].sum())
    if exact:
        ss_res, resid = 0.0, np.zeros_like(resid)
    out = []
    for label, r in table.iterrows():
        if label == "Residual":
            continue
        name = " x ".join(names[int(p[3:-1])] for p in str(label).split(":"))
        ss = float(r["sum_sq"])
        f, p = float(r["F"]), float(r["PR(>F)"])
        if exact:
            f, p = (math.inf, 0.0) if ss > 0 else (math.nan, math.nan)
        out.append(Term(name, float(r["df"]), ss, f, p,
                        ss / (ss + ss_res) if ss + ss_res > 0 else math.nan))
    out.append(Term("residual", float(model.df_resid), ss_res, math.nan, math.nan, math.nan))
    return out, resid


def _checks(resid: np.ndarray, groups: list[np.ndarray],
            order: Sequence[float] | None = None) -> list[Check]:
    out = []
    if resid.size >= 3 and float(np.ptp(resid)) > 0:
        w, p = st.shapiro(resid)
        out.append(Check("normal residuals", "Shapiro-Wilk W", float(w), float(p),
                         bool(p > ALPHA_ASSUMPTION)))
    spread = [g for g in groups if g.size >= 2]
    if len(spread) >= 2 and any(float(np.ptp(g)) > 0 for g in spread):
        stat, p = st.levene(*spread, center="median")
        out.append(Check("equal variances", "Brown-Forsythe", float(stat), float(p),
                         bool(p > ALPHA_ASSUMPTION)))
    if order is not None and resid.size >= 3 and float(np.ptp(resid)) > 0:
        ranked = [float(r) for _, r in sorted(zip(order, resid.tolist(), strict=True))]
        mk = mann_kendall(ranked)
        if not math.isnan(mk.p):
            out.append(Check(INDEPENDENCE, "Mann-Kendall z (residuals in run order)", mk.z,
                             mk.p, bool(mk.p > ALPHA_ASSUMPTION)))
    return out


def simple_effects(factors: Sequence[str], rows: Sequence[tuple[tuple[str, ...], float]]
                   ) -> list[SimpleEffect]:
    """Each factor's one-way ANOVA and Kruskal-Wallis within each combination of the
    other factors' levels (effect sizes eta^2 and epsilon^2)."""
    out = []
    for i, name in enumerate(factors):
        slices: dict[tuple[str, ...], dict[str, list[float]]] = {}
        for lv, y in rows:
            rest = lv[:i] + lv[i + 1:]
            slices.setdefault(rest, {}).setdefault(lv[i], []).append(y)
        others = [f for j, f in enumerate(factors) if j != i]
        for rest, groups in sorted(slices.items()):
            if len(groups) < 2:
                continue
            a, k = anova_oneway(list(groups.values())), kruskal(list(groups.values()))
            within = ", ".join(f"{f}={v}" for f, v in zip(others, rest, strict=True))
            out.append(SimpleEffect(name, within, a.statistic, a.p, a.effect, k.p, k.effect,
                                    a.n))
    return out


def full_grid(factors: Sequence[str], rows: Sequence[tuple[tuple[str, ...], float]]
              ) -> dict[tuple[str, ...], list[float]]:
    """Values per cell of the full grid of observed levels (empty list: a missing cell)."""
    levels = [sorted({lv[i] for lv, _ in rows}) for i in range(len(factors))]
    grid: dict[tuple[str, ...], list[float]] = {c: [] for c in itertools.product(*levels)}
    for lv, y in rows:
        grid[lv].append(y)
    return grid

