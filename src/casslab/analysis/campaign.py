"""A campaign's trials (rows of the results database) turned into statistics.

Pure: `analyze` takes the trials `Results.trials()` returns and the factor list, and
returns tables of numbers; nothing here touches a database or a lab. Only kept trials
(`TrialRow.kept`: done, not warm-ups) enter the statistics.
Designs with >= 2 varied factors and >= 2 trials in every cell get the factorial ANOVA
(interactions, assumption checks, simple effects); the one-way tests per factor are kept
for one-factor designs and for the pairwise tables and plots.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from casslab.analysis.blocks import BlockAnalysis, BlockTrial, block_analysis
from casslab.analysis.drift import Drift, drift
from casslab.analysis.factorial import Factorial, factorial_anova, full_grid, replicated
from casslab.analysis.intervals import BatchMeans, batch_means
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
from casslab.experiment.labels import auto_labels, level_of
from casslab.store.records import TrialRow
from casslab.store.responses import parse_response

UNITS = {"runtime_s": "s", "ops_s": "ops/s", "mean_ms": "ms", "p50_ms": "ms", "p95_ms": "ms",
         "p99_ms": "ms", "p999_ms": "ms"}
TITLES = {"runtime_s": "run time", "ops_s": "throughput", "mean_ms": "mean latency",
          "p50_ms": "median latency", "p95_ms": "p95 latency", "p99_ms": "p99 latency",
          "p999_ms": "p99.9 latency"}


def level_label(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


Labeller = Callable[[str, Any], str]


def labeller(factors: list[dict[str, Any]]) -> Labeller:
    """(factor name, level) -> the level's label: the factor's `labels` (the spec's,
    in level order) when it has them, else experiment.labels' automatic ones."""
    table = {f["name"]: (list(f["levels"]), list(f.get("labels") or auto_labels(f["levels"])))
             for f in factors}

    def label(name: str, value: Any) -> str:
        levels, labels = table.get(name, ([], []))
        return level_of(levels, labels, value) if levels else level_label(value)
    return label


def cell_label(params: Mapping[str, Any], label: Labeller) -> str:
    """A cell's short name: `network=edge=5/10/15,cl=ONE` (its key with level labels)."""
    return ",".join(f"{k}={label(k, v)}" for k, v in params.items()) or "all"


@dataclass(frozen=True)
class CellStats:
    key: str
    params: dict[str, Any]
    stats: Describe
    values: list[float]
    trial_ids: list[int]
    outliers: list[bool]
    as_run: str = ""  # relative levels resolved ("rate=780.5" for "rate=66%")
    # per trial: per-second throughput's mean with its batch-means SE (long trials)
    within: list[BatchMeans] = field(default_factory=list)
    label: str = ""  # the key with level labels (what tables print)


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
    factorial: Factorial | None = None
    factorial_note: str = ""  # why there is no factorial table, when there is none
    drift: Drift | None = None  # residuals after cell means against run order (seq)
    blocks: BlockAnalysis | None = None  # interleaved designs: rounds as blocks

    @property
    def title(self) -> str:
        return f"{TITLES.get(self.response, self.response)} ({self.unit})"


def kept(rows: list[TrialRow]) -> list[TrialRow]:
    return [r for r in rows if r.kept]


Value = Callable[[TrialRow], float]


def _value_of(response: str, values: Mapping[int, float] | None) -> Value:
    """A trial's response: from `values` (trial id -> value) when given, else the ALL
    row's column of that name."""
    if values is None:
        return lambda r: r.response(response)
    return lambda r: values.get(r.trial_id, math.nan)


def _unit(response: str) -> str:
    if response in UNITS:
        return UNITS[response]
    try:
        return parse_response(response).unit
    except ValueError:
        return ""


def analyze(rows: list[TrialRow], factors: list[dict[str, Any]], response: str, *,
            per_second: Mapping[int, list[float]] | None = None,
            values: Mapping[int, float] | None = None) -> Analysis:
    """Per-cell descriptives, per-factor tests and pairwise comparisons, the factorial
    ANOVA when the design allows it, scaling curves. `per_second`: trial id -> its
    per-second throughput samples, for the batch-means SE within each trial. `values`:
    trial id -> the response's value (casslab.analysis.responses.trial_values); without
    it the response is a column of the trial's ALL row."""
    value = _value_of(response, values)
    label = labeller(factors)
    # A kept trial without this response (no operation of that type, no samples in its
    # window) is left out of this response's statistics, and counted.
    good = [r for r in kept(rows) if not math.isnan(value(r))]
    counts = {"planned": len(rows), "kept": len(good), "no_value": len(kept(rows)) - len(good),
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
        vals = [value(r) for r in rs]
        rel = {k for k, v in rs[0].cell_params.items() if isinstance(v, str) and
               v.endswith("%")}
        as_run = ", ".join(f"{k}={level_label(rs[0].params.get(k))}" for k in sorted(rel))
        ids = [r.trial_id for r in rs]
        within = [batch_means(per_second[i]) for i in ids if per_second and per_second.get(i)]
        cells.append(CellStats(key, rs[0].cell_params, describe(vals), vals, ids,
                               outlier_mask(vals), as_run, within,
                               cell_label(rs[0].cell_params, label)))
    fstats = []
    for f in factors:
        name = f["name"]
        levels = [label(name, v) for v in f["levels"]]
        groups: dict[str, list[float]] = {lv: [] for lv in levels}
        for r in good:
            lv = label(name, r.cell_params.get(name))
            groups.setdefault(lv, []).append(value(r))
        present = {k: v for k, v in groups.items() if v}
        fstats.append(FactorStats(name, levels, groups, anova_oneway(list(present.values())),
                                  kruskal(list(present.values())), pairwise(present)))
    fac, note = factorial(good, factors, value, label)
    return Analysis(response, _unit(response), cells, fstats,
                    curves(good, factors, value, label), counts, fac, note,
                    drift([float(r.seq) for r in good], [r.cell for r in good],
                          [value(r) for r in good]),
                    rounds(good, [c.key for c in cells], value))


def rounds(good: list[TrialRow], cells: list[str], value: Value) -> BlockAnalysis | None:
    """The block analysis of an interleaved design's kept trials (rounds as blocks);
    None when the trials have no rounds or fewer than 2 cells."""
    trials = [BlockTrial(r.cell, r.round, value(r)) for r in good if r.round is not None]
    if not trials or len(cells) < 2:
        return None
    return block_analysis(trials, cells)


def factorial(good: list[TrialRow], factors: list[dict[str, Any]],
              value: Value, label: Labeller | None = None) -> tuple[Factorial | None, str]:
    """The factorial ANOVA over the varied factors, or None and the reason."""
    # An interrupted campaign may have run one level of a factor only: it varies in the
    # spec, not in the data, and a constant column leaves the ANOVA nothing to test.
    lab = label or labeller(factors)
    names = [f["name"] for f in factors if len(f["levels"]) > 1 and
             len({lab(f["name"], r.cell_params.get(f["name"])) for r in good}) > 1]
    if len(names) < 2:
        return None, "one varied factor: one-way tests"
    data = [(tuple(lab(n, r.cell_params.get(n)) for n in names), value(r))
            for r in good]
    if not replicated(full_grid(names, data)):
        return None, ("not every cell of the factor grid has >= 2 kept trials: no "
                      "interaction can be estimated, one-way tests (other factors pooled)")
    return factorial_anova(names, data, [float(r.seq) for r in good]), ""


def numeric_factor(f: dict[str, Any]) -> bool:
    return len(f["levels"]) > 1 and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in f["levels"])


def curves(good: list[TrialRow], factors: list[dict[str, Any]],
           value: Value, label: Labeller | None = None) -> list[Curve]:
    """For each numeric factor: one curve per combination of the other factors."""
    out = []
    lab = label or labeller(factors)
    names = [f["name"] for f in factors]
    for f in factors:
        if not numeric_factor(f):
            continue
        lines: dict[str, dict[float, list[float]]] = {}
        for r in good:
            p = r.cell_params
            by = ", ".join(f"{n}={lab(n, p.get(n))}" for n in names if n != f["name"])
            lines.setdefault(by, {}).setdefault(float(p[f["name"]]), []).append(value(r))
        for by, pts in lines.items():
            out.append(Curve(f["name"], by, scaling_curve(pts)))
    return out

