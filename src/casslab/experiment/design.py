"""Full factorial design, trial order, warm-up trials and the reset before each trial.

Pure functions of the spec: the same spec always gives the same plan, which is what
lets a killed campaign resume by skipping the trials the database marks done.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from typing import Any

from casslab.experiment.beside import TUNER_FACTOR, TUNER_OFF
from casslab.experiment.spec import RESETS, CampaignSpec, Factor, is_relative


@dataclass(frozen=True)
class Cell:
    index: int
    params: dict[str, Any]

    @property
    def key(self) -> str:
        return cell_key(self.params)


@dataclass(frozen=True)
class PlannedTrial:
    """One trial: `seq` is its place in the run order, `trial_no` its number in the cell."""

    seq: int
    cell: Cell
    trial_no: int
    warmup: bool
    reset: str  # what a run from the start does before this trial


def cell_key(params: dict[str, Any]) -> str:
    """A stable, readable key: `nodes=3,workload=ycsb-a` (in factor order)."""
    if not params:
        return "all"
    return ",".join(f"{k}={_fmt(v)}" for k, v in params.items())


def _fmt(v: Any) -> str:
    return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else str(v)


def cells(factors: tuple[Factor, ...]) -> list[Cell]:
    """Every combination of levels, first factor varying slowest."""
    names = [f.name for f in factors]
    combos = itertools.product(*(f.levels for f in factors))
    return [Cell(i, dict(zip(names, combo, strict=True))) for i, combo in enumerate(combos)]


def kind_key(params: dict[str, Any], factors: tuple[Factor, ...], kinds: tuple[str, ...]) -> str:
    """The part of a cell's parameters that belongs to factors of the given kinds."""
    by_name = {f.name: f for f in factors}
    return cell_key({k: v for k, v in params.items() if by_name[k].kind in kinds})


def reset_needed(prev: dict[str, Any] | None, params: dict[str, Any],
                 factors: tuple[Factor, ...], between_trials: str) -> str:
    """The reset before a trial with `params` when the lab last ran `prev` (None: no lab).

    A change of a lab factor rebuilds the lab, of a schema factor (workload, records,
    rf, compaction) recreates the keyspace, as does a trial after one with the tuner on
    (it ALTERed the tables' compaction); otherwise the spec's `design.reset`.
    Network and workload-option changes need no reset (network is applied live).
    """
    if prev is None or kind_key(prev, factors, ("lab",)) != kind_key(params, factors, ("lab",)):
        return "rebuild"
    if (kind_key(prev, factors, ("schema",)) != kind_key(params, factors, ("schema",))
            or prev.get(TUNER_FACTOR, TUNER_OFF) != TUNER_OFF):
        return max("recreate", between_trials, key=RESETS.index)
    return between_trials


def plan(spec: CampaignSpec) -> list[PlannedTrial]:
    """The whole campaign in run order.

    Order: trials are (optionally) shuffled with `design.seed`, then grouped so cells
    that share a lab configuration (nodes, profile, cassandra.yaml settings) run
    together; the lab is then built once per group. Within a cell the first
    `warmup_trials` trials in run order are warm-ups (run, stored, left out of the
    analysis).
    """
    all_cells = cells(spec.factors)
    per_cell = spec.design.trials + spec.design.warmup_trials
    slots = [(c, r) for c in all_cells for r in range(per_cell)]
    if spec.design.randomize:
        random.Random(spec.design.seed).shuffle(slots)
    groups: dict[str, list[tuple[Cell, int]]] = {}
    for slot in slots:
        groups.setdefault(kind_key(slot[0].params, spec.factors, ("lab",)), []).append(slot)
    ordered = [s for g in groups.values() for s in g]
    counts: dict[int, int] = {}
    out: list[PlannedTrial] = []
    prev: dict[str, Any] | None = None
    for seq, (cell, _) in enumerate(ordered, start=1):
        counts[cell.index] = counts.get(cell.index, 0) + 1
        n = counts[cell.index]
        reset = reset_needed(prev, cell.params, spec.factors, spec.design.reset)
        out.append(PlannedTrial(seq, cell, n, n <= spec.design.warmup_trials, reset))
        prev = cell.params
    return out


def search_key(params: dict[str, Any], factors: tuple[Factor, ...]) -> str:
    """Cells that share a peak: the same levels of every non-relative factor."""
    rel = {f.name for f in factors if f.relative}
    return cell_key({k: v for k, v in params.items() if k not in rel})


def needs_search(params: dict[str, Any]) -> bool:
    return any(is_relative(v) for v in params.values())
