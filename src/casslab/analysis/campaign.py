"""A campaign's trials (rows of the results database) turned into statistics.

Pure: `analyze` takes the trials `Results.trials()` returns and the factor list, and
returns tables of numbers; nothing here touches a database or a lab. Only kept trials
(`TrialRow.kept`: done, not warm-ups) enter the statistics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from casslab.analysis.stats import (
    CurvePoint,
    Describe,
    GroupTest,
    PairTest,
    anova_oneway,
    describe,
    kruskal,
    outlier_mask,
    pairwise,
    scaling_curve,
)
from casslab.store.results import TrialRow

UNITS = {"runtime_s": "s", "ops_s": "ops/s", "mean_ms": "ms", "p50_ms": "ms", "p95_ms": "ms",
         "p99_ms": "ms", "p999_ms": "ms"}
TITLES = {"runtime_s": "run time", "ops_s": "throughput", "mean_ms": "mean latency",
          "p50_ms": "median latency", "p95_ms": "p95 latency", "p99_ms": "p99 latency",
          "p999_ms": "p99.9 latency"}


def level_label(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class CellStats:
    key: str
    params: dict[str, Any]
    stats: Describe
    values: list[float]
    trial_ids: list[int]
    outliers: list[bool]
    as_run: str = ""  # relative levels resolved ("rate=780.5" for "rate=66%")


@dataclass(frozen=True)
class FactorStats:
    name: str
    levels: list[str]
    groups: dict[str, list[float]]
    anova: GroupTest
    kruskal: GroupTest
    pairs: list[PairTest]


@dataclass(frozen=True)
class Curve:
    factor: str
    by: str  # the other factors' levels this line holds fixed ("" = none)
    points: list[CurvePoint]


@dataclass
class Analysis:
    response: str
    unit: str
    cells: list[CellStats]
    factors: list[FactorStats]
    curves: list[Curve]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return f"{TITLES.get(self.response, self.response)} ({self.unit})"


def analyze(rows: list[TrialRow], factors: list[dict[str, Any]], response: str, *,
            seed: int = 1, n_boot: int = 2000) -> Analysis:
    """Per-cell descriptives, per-factor tests and pairwise comparisons, scaling curves."""
    good = [r for r in rows if r.kept]
    counts = {"planned": len(rows), "kept": len(good),
              "warmup": sum(1 for r in rows if r.warmup and r.status == "done"),
              "failed": sum(1 for r in rows if r.status == "failed"),
              "pending": sum(1 for r in rows if r.status in ("planned", "running",
                                                             "interrupted"))}
    by_cell: dict[str, list[TrialRow]] = {}
    order: dict[str, int] = {}
    for r in good:
        by_cell.setdefault(r.cell, []).append(r)
        order[r.cell] = r.cell_idx
    cells = []
    for key in sorted(by_cell, key=lambda k: order[k]):
        rs = by_cell[key]
        vals = [r.response(response) for r in rs]
        rel = {k for k, v in rs[0].cell_params.items() if isinstance(v, str) and
               v.endswith("%")}
        as_run = ", ".join(f"{k}={level_label(rs[0].params.get(k))}" for k in sorted(rel))
        cells.append(CellStats(key, rs[0].cell_params, describe(vals, seed=seed, n_boot=n_boot),
                               vals, [r.trial_id for r in rs], outlier_mask(vals), as_run))
    fstats = []
    for f in factors:
        name = f["name"]
        levels = [level_label(v) for v in f["levels"]]
        groups: dict[str, list[float]] = {lv: [] for lv in levels}
        for r in good:
            lv = level_label(r.cell_params.get(name))
            groups.setdefault(lv, []).append(r.response(response))
        present = {k: v for k, v in groups.items() if v}
        fstats.append(FactorStats(name, levels, groups, anova_oneway(list(present.values())),
                                  kruskal(list(present.values())), pairwise(present)))
    return Analysis(response, UNITS.get(response, ""), cells, fstats,
                    curves(good, factors, response), counts)


def numeric_factor(f: dict[str, Any]) -> bool:
    return len(f["levels"]) > 1 and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in f["levels"])


def curves(good: list[TrialRow], factors: list[dict[str, Any]],
           response: str) -> list[Curve]:
    """For each numeric factor: one curve per combination of the other factors."""
    out = []
    names = [f["name"] for f in factors]
    for f in factors:
        if not numeric_factor(f):
            continue
        lines: dict[str, dict[float, list[float]]] = {}
        for r in good:
            p = r.cell_params
            by = ", ".join(f"{n}={level_label(p.get(n))}" for n in names if n != f["name"])
            lines.setdefault(by, {}).setdefault(float(p[f["name"]]), []).append(
                r.response(response))
        for by, pts in lines.items():
            out.append(Curve(f["name"], by, scaling_curve(pts)))
    return out


def representative(cell: CellStats) -> int | None:
    """The trial closest to its cell's median (seed 003 plotted such a run)."""
    if not cell.values or math.isnan(cell.stats.median):
        return None
    i = min(range(len(cell.values)), key=lambda j: abs(cell.values[j] - cell.stats.median))
    return cell.trial_ids[i]
