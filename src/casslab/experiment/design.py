"""Full factorial design, trial order, warm-up trials and the reset before each trial.

Pure functions of the spec: the same spec always gives the same plan, which is what
lets a killed campaign resume by skipping the trials the database marks done.

Run order. Trials run in blocks: the cells that share a lab (lab factors: nodes,
profile, runtime, set.*) and a schema (schema factors: workload, records, rf,
compaction). A block starts with the reset its lab or schema change needs (rebuild or
recreate), then its warm-up trials, then its kept trials, so every kept trial runs on
caches, JIT and data warmed by the same schema on the same lab. Blocks of one lab run
together (the lab is built once per lab configuration).
- `design.reset: none`: each cell of a block has `warmup_trials` warm-ups, all at the
  start of the block; then the block's kept trials.
- `design.reset` truncate, recreate or rebuild: that reset also wipes the warm state,
  so it comes before each kept trial's own `warmup_trials` warm-ups (of the same cell),
  never between a warm-up and its kept trial: a cell then has
  `trials * (warmup_trials + 1)` trials, and each kept trial with its warm-ups is a
  block of its own (its reset starts it), so they shuffle across the schema levels of
  their lab (a drift of the machine then cannot pass for one level's effect).
- `design.lab_warmup_trials: N`: N more warm-ups once per lab, right after it is
  built, of the cell that runs first on it (before its own reset and warm-ups), so
  the first kept trials of a campaign do not run on a cold node.
- `design.labs: keep`: the plan still says "rebuild" where a lab factor changes (the
  runner resumes a kept lab there and recreates its keyspace instead), and a lab's
  lab_warmup_trials come only after its first build: the JVM they warm is kept.
  `keep-data`: a resumed lab whose last trial had the same schema as this one keeps
  its keyspace and data (`keep_data`); warm-ups still come where the design puts them
  (`warmup_trials: 0` with `warmup_rounds` warms each cell once, after its lab's build).
- `design.labs: per-round` (interleaved): the first trial of every round is a rebuild
  (a fresh lab, then its lab_warmup_trials), so each round's cells share one build and
  no two rounds do.
With `design.order: random` (`randomize: true`) the order of labs, of blocks within a
lab and of warm-ups and kept trials within a block is shuffled with `design.seed`; with
`blocked` (the default) cells run in factor order (first factor slowest), grouped by lab.

`design.order: interleaved` runs in rounds (casslab.experiment.rounds): round r holds
the r-th kept trial of every cell, in a counterbalanced order; a block's warm-ups come
when the round enters it after a reset (once, at the start, when the campaign has one
lab and one schema); with a design.reset, or the tuner on, each kept trial is its own
unit as above. With `until: verdicts` the plan holds `trials.max` rounds and the runner
stops after any round from `trials.min` on (casslab.experiment.sequential).
`design.warmup_rounds: N` puts N whole rounds of warm-ups before round 1's trials (every
cell once, in round 1's order, part of round 1 and nothing kept): every lab is built and
every cell has run under load before the first kept trial, where lab_warmup_trials warm
only the cell that comes first on each lab (seed 004's mixed run of 2026-11-28: the first
lab's node still ramping from 2,000 to 4,400 operations/s through its warm-ups and first
kept trial).
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from casslab.experiment.factors.parsers import TUNER_OFF
from casslab.experiment.factors.registry import kinds_that
from casslab.experiment.rounds import arrange
from casslab.experiment.spec import RESETS, CampaignSpec, Factor, is_relative

# Factor kinds by what a change of level costs (the registry declares it): a rebuild of
# the lab, or a reload (the keyspace recreated, its data loaded again). A tuner level is
# a reload: the tuner ALTERs the tables it watches, so a change of level, and every kept
# trial with the tuner on, starts from a recreated keyspace.
LAB_KINDS = kinds_that("rebuild")
SCHEMA_KINDS = kinds_that("reload")


@dataclass(frozen=True)
class PlanCell:
    """A cell of the design: its number and its levels by factor name (the stored form;
    `CampaignSpec.cell` reads them into a typed casslab.experiment.factors.cell.Cell)."""

    index: int
    params: dict[str, Any]

    @property
    def key(self) -> str:
        return cell_key(self.params)


@dataclass(frozen=True)
class PlannedTrial:
    """One trial: `seq` is its place in the run order, `trial_no` its number in the cell,
    `block` the number (from 1) of the lab-and-schema block it runs in, `why` what the
    reset before it is for ("" when there is none)."""

    seq: int
    cell: PlanCell
    trial_no: int
    warmup: bool
    reset: str  # what a run from the start does before this trial
    block: int = 1
    why: str = ""
    round: int = 0  # interleaved designs: the round (from 1); 0 in other designs
    # design.labs: keep: this "rebuild" goes back to a lab built before, which the
    # runner resumes (its keyspace recreated) instead of building it again
    resume: bool = False
    # design.labs: keep-data: that resumed lab holds this cell's schema, so its keyspace
    # and data are kept (the runner still recreates them when it cannot vouch for them)
    keep_data: bool = False


def cell_key(params: dict[str, Any]) -> str:
    """A stable, readable key: `nodes=3,workload=ycsb-a` (in factor order)."""
    if not params:
        return "all"
    return ",".join(f"{k}={_fmt(v)}" for k, v in params.items())


def _fmt(v: Any) -> str:
    return json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else str(v)


def cells(factors: tuple[Factor, ...]) -> list[PlanCell]:
    """Every combination of levels, first factor varying slowest."""
    names = [f.name for f in factors]
    combos = itertools.product(*(f.levels for f in factors))
    return [PlanCell(i, dict(zip(names, combo, strict=True)))
            for i, combo in enumerate(combos)]


def kind_key(params: dict[str, Any], factors: tuple[Factor, ...], kinds: tuple[str, ...]) -> str:
    """The part of a cell's parameters that belongs to factors of the given kinds."""
    by_name = {f.name: f for f in factors}
    return cell_key({k: v for k, v in params.items() if by_name[k].kind in kinds})


def block_key(params: dict[str, Any], factors: tuple[Factor, ...]) -> tuple[str, str]:
    """(lab, schema) levels: cells with the same key can share one block."""
    return (kind_key(params, factors, LAB_KINDS), kind_key(params, factors, SCHEMA_KINDS))


def holds_schema(held: dict[str, Any] | None, params: dict[str, Any],
                 factors: tuple[Factor, ...]) -> bool:
    """Whether a kept lab that last ran the cell `held` (None: unknown) has the keyspace
    and data `params` needs (the same schema levels), so a resume may keep them
    (design.labs: keep-data; the plan and the runner ask the same question)."""
    return held is not None and block_key(held, factors)[1] == block_key(params, factors)[1]


def reset_needed(prev: dict[str, Any] | None, params: dict[str, Any],
                 factors: tuple[Factor, ...], between_trials: str) -> str:
    """The reset before a trial with `params` when the lab last ran `prev` (None: no lab).

    A change of a lab factor rebuilds the lab, of a schema factor (workload, records,
    rf, compaction, tuner) recreates the keyspace; otherwise `between_trials` (the spec's
    `design.reset` where the plan puts one, "none" elsewhere).
    Network and workload-option changes need no reset (network is applied live), nor
    do `limits` factors (profile CPU and disk fields, written on the running nodes'
    cgroups); `profile.memory_mib` and `profile.heap_mib` are lab factors (the JVM must
    start again with a new cgroup limit and -Xmx).
    """
    if prev is None or kind_key(prev, factors, LAB_KINDS) != kind_key(params, factors, LAB_KINDS):
        return "rebuild"
    if kind_key(prev, factors, SCHEMA_KINDS) != kind_key(params, factors, SCHEMA_KINDS):
        return stronger("recreate", between_trials)
    return between_trials


def stronger(a: str, b: str) -> str:
    """The stronger of two resets (a rebuild also recreates and truncates)."""
    return max(a, b, key=RESETS.index)


def reset_reason(prev: dict[str, Any] | None, params: dict[str, Any],
                 factors: tuple[Factor, ...], between_trials: str) -> str:
    """Why `reset_needed` asks for its reset: the factors that changed, or design.reset."""
    if prev is None:
        return "first trial: no lab yet"
    for kinds, what in ((LAB_KINDS, "lab"), (SCHEMA_KINDS, "schema")):
        changed = [f"{f.name} {_fmt(prev[f.name])} -> {_fmt(params[f.name])}"
                   for f in factors if f.kind in kinds and prev[f.name] != params[f.name]]
        if changed:
            return f"{what} changed: " + ", ".join(changed)
    if between_trials == "none":
        return ""
    return f"design.reset: {between_trials} (before each kept trial's warm-ups)"


# A run unit: a cell and how many warm-ups of that cell run before its kept trial
# (warm-ups of a block's start are units with kept=False).
@dataclass(frozen=True)
class _Unit:
    cell: PlanCell
    warmups: int
    kept: bool
    round: int = 0


def _block_units(block: list[PlanCell], spec: CampaignSpec, rng: random.Random | None
                 ) -> list[_Unit]:
    """One block's trials as units, in run order, when there is no design.reset: every
    cell's warm-ups first, then the kept trials."""
    d = spec.design
    if rng is None:  # cell by cell, as spec order always ran
        return [u for c in block for u in (_Unit(c, d.warmup_trials, False),
                                           *(_Unit(c, 0, True) for _ in range(d.trials)))]
    warm = [_Unit(c, 1, False) for c in block for _ in range(d.warmup_trials)]
    kept = [_Unit(c, 0, True) for c in block for _ in range(d.trials)]
    rng.shuffle(warm)
    rng.shuffle(kept)
    return warm + kept


def _tuned(spec: CampaignSpec, cell: PlanCell) -> bool:
    """The cell runs the tuner beside its load (a level of a `tuner` kind factor)."""
    return any(f.kind == "tuner" and cell.params[f.name] != TUNER_OFF for f in spec.factors)


def _run_blocks(spec: CampaignSpec, rng: random.Random | None) -> list[list[_Unit]]:
    """Every block's units, blocks in run order (see the module docstring).

    With a design.reset, and in a block whose tuner is on (a tuned table is not the
    next trial's starting point), every kept trial is its own unit: the reset, its
    warm-ups, then the trial.
    """
    d = spec.design
    if d.interleaved:
        return _round_units(spec)
    out: list[list[_Unit]] = []
    by_lab: dict[str, list[_Unit]] = {}
    for b in _blocks(spec, rng):
        if d.reset == "none" and not _tuned(spec, b[0]):
            out.append(_block_units(b, spec, rng))
            continue
        if d.reset == "none":  # a tuned block: one unit per kept trial, in place
            units = [_Unit(c, d.warmup_trials, True) for c in b for _ in range(d.trials)]
            if rng is not None:
                rng.shuffle(units)
            out.extend([u] for u in units)
            continue
        lab = kind_key(b[0].params, spec.factors, LAB_KINDS)
        by_lab.setdefault(lab, []).extend(_Unit(c, d.warmup_trials, True)
                                          for c in b for _ in range(d.trials))
    for units in by_lab.values():  # blocks of one lab together: a dict keeps their order
        if rng is not None:
            rng.shuffle(units)
        out.extend([u] for u in units)
    return out


def _round_units(spec: CampaignSpec) -> list[list[_Unit]]:
    """An interleaved design's units, one list per round (see the module docstring)."""
    d = spec.design
    labs: dict[str, dict[str, list[PlanCell]]] = {}
    for c in cells(spec.factors):
        lab, schema = block_key(c.params, spec.factors)
        labs.setdefault(lab, {}).setdefault(schema, []).append(c)
    groups = [list(blocks.values()) for blocks in labs.values()]
    out: list[list[_Unit]] = []
    prev: tuple[str, str] | None = None
    for r, run in enumerate(arrange(groups, d.trials_max, d.seed), start=1):
        units: list[_Unit] = []
        if r == 1 and d.warmup_rounds:  # whole rounds of warm-ups, in round 1's order
            units.extend(_Unit(c, 1, False, r) for _ in range(d.warmup_rounds) for c in run)
            prev = block_key(run[-1].params, spec.factors)
        for c in run:
            if d.reset != "none" or _tuned(spec, c):  # each kept trial: reset, warm-ups, trial
                units.append(_Unit(c, d.warmup_trials, True, r))
                prev = None
                continue
            key = block_key(c.params, spec.factors)
            if key != prev and d.warmup_trials:  # entering a block after its reset
                block = next(b for lab in groups for b in lab
                             if block_key(b[0].params, spec.factors) == key)
                members = [x for x in run if x in block]
                units.extend(_Unit(x, d.warmup_trials, False, r) for x in members)
            prev = key
            units.append(_Unit(c, 0, True, r))
        out.append(units)
    return out


def _blocks(spec: CampaignSpec, rng: random.Random | None) -> list[list[PlanCell]]:
    """Cells grouped into blocks, blocks of one lab together, in run order."""
    labs: dict[str, dict[str, list[PlanCell]]] = {}
    for c in cells(spec.factors):
        lab, schema = block_key(c.params, spec.factors)
        labs.setdefault(lab, {}).setdefault(schema, []).append(c)
    if rng is None:
        # Spec order grouped by lab: a schema level that comes back after another one
        # is a new block (it is recreated), exactly as the cells come.
        out: list[list[PlanCell]] = []
        for group in labs.values():
            for c in sorted((c for b in group.values() for c in b), key=lambda c: c.index):
                if out and block_key(out[-1][0].params, spec.factors) == \
                        block_key(c.params, spec.factors):
                    out[-1].append(c)
                else:
                    out.append([c])
        return out
    lab_order = list(labs.values())
    rng.shuffle(lab_order)
    ordered = []
    for group in lab_order:
        blocks = list(group.values())
        rng.shuffle(blocks)
        ordered.extend(blocks)
    return ordered


def plan(spec: CampaignSpec) -> list[PlannedTrial]:
    """The whole campaign in run order (see the module docstring): every trial with its
    block, warm-up flag, and the reset before it and why."""
    rng = random.Random(spec.design.seed) if spec.design.randomize else None
    between = spec.design.reset
    counts: Counter[int] = Counter()
    out: list[PlannedTrial] = []
    prev: dict[str, Any] | None = None
    block = 0  # a block starts at each reset (a rebuild, recreate or design.reset)
    built: set[str] = set()  # design.labs: keep: the labs built so far
    held: dict[str, dict[str, Any]] = {}  # design.labs: keep-data: lab -> its last cell
    last_round: int | None = None
    for units in _run_blocks(spec, rng):
        for unit in units:
            params = unit.cell.params
            lab = block_key(params, spec.factors)[0]
            fresh = (spec.design.per_round_labs and last_round is not None
                     and unit.round != last_round)
            if fresh:  # design.labs: per-round: this round's lab is a new build
                prev = None
            last_round = unit.round
            rebuild = reset_needed(prev, params, spec.factors, "none") == "rebuild"
            resume = rebuild and spec.design.keep_labs and lab in built
            if rebuild:
                built.add(lab)
            if spec.design.lab_warmup_trials and rebuild and not resume:
                for i in range(spec.design.lab_warmup_trials):
                    counts[unit.cell.index] += 1
                    reset, why = "none", ""
                    if i == 0:  # only the build itself has a reason to state
                        reset = "rebuild"
                        cause = (_fresh_reason(unit.round) if fresh else
                                 reset_reason(prev, params, spec.factors, "none"))
                        why = cause + "; then design.lab_warmup_trials"
                    block += reset != "none"
                    out.append(PlannedTrial(len(out) + 1, unit.cell, counts[unit.cell.index],
                                            True, reset, block, why, unit.round))
                    prev = params
            # design.reset comes before a kept trial's own warm-ups, never inside a unit
            unit_reset = between if unit.kept and between != "none" else "none"
            tuned = unit.kept and _tuned(spec, unit.cell)  # such a unit is a block of its own
            if tuned:
                unit_reset = stronger(unit_reset, "recreate")
            for i in range(unit.warmups + unit.kept):
                params = unit.cell.params
                first = i == 0
                reset = reset_needed(prev, params, spec.factors, unit_reset if first else "none")
                why = reset_reason(prev, params, spec.factors,
                                   unit_reset if first else "none") if reset != "none" else ""
                if fresh and first and prev is None:
                    why = _fresh_reason(unit.round)
                if tuned and first and why.startswith("design.reset"):
                    why = (f"tuner on: {reset} before each kept trial's warm-ups (the tuner "
                           "ALTERs the tables)")
                counts[unit.cell.index] += 1
                warm = i < unit.warmups
                block += reset != "none"
                resumed = resume and reset == "rebuild"
                # a design.reset or the tuner's recreate still wipes the data
                keep = (resumed and spec.design.keep_data and unit_reset == "none"
                        and holds_schema(held.get(lab), params, spec.factors))
                if keep:
                    why += "; design.labs: keep-data: the kept lab is resumed with its data"
                elif resumed:
                    why += "; design.labs: keep: the kept lab is resumed and its keyspace " \
                        "recreated"
                out.append(PlannedTrial(len(out) + 1, unit.cell, counts[unit.cell.index], warm,
                                        reset, max(block, 1), why, unit.round, resumed, keep))
                prev = params
                held[lab] = params
    return out


def _fresh_reason(round_no: int | None) -> str:
    return f"design.labs: per-round: a fresh lab for round {round_no}"


def reset_before(t: PlannedTrial, current: dict[str, Any] | None,
                 factors: tuple[Factor, ...]) -> str:
    """The reset to do before `t` when the lab is set up for `current` (None: no lab):
    the planned one, or a stronger one when the lab is not where the plan left it (a
    resumed campaign skipped trials, or a failed setup left the lab unknown)."""
    return stronger(t.reset, reset_needed(current, t.cell.params, factors, "none"))


def rewarm_needed(t: PlannedTrial, reset: str, warmup_trials: int) -> bool:
    """Whether a kept trial must be warmed up again, unrecorded: only when a reset the
    plan did not put there comes right before it (the plan never does that)."""
    return not t.warmup and warmup_trials > 0 and reset != "none"


@dataclass(frozen=True)
class PlanSummary:
    blocks: int
    warmups: int
    kept: int
    resets: dict[str, int]  # reset kind -> how many, in RESETS order, "none" left out
    rounds: int = 0  # interleaved designs
    # resets a round after the first needs (a round's rebuilds are the cost of
    # interleaving lab factors): kind -> how many
    round_resets: dict[str, int] | None = None

    def line(self) -> str:
        resets = ", ".join(f"{n} {k}" for k, n in self.resets.items()) or "none"
        out = (f"{self.blocks} blocks, {self.warmups} warm-ups, {self.kept} kept trials; "
               f"resets: {resets}")
        if self.rounds:
            per = ", ".join(f"{n} {k}" for k, n in (self.round_resets or {}).items()) or "none"
            out += (f"; {self.rounds} rounds of {self.kept // self.rounds} kept trials, "
                    f"each round after the first: {per}")
        return out


def summarize_plan(trials: list[PlannedTrial]) -> PlanSummary:
    """Counts of a plan: blocks, warm-ups, kept trials and resets by kind; with rounds,
    the resets of a later round (round 2: the first round also builds the first lab)."""
    kinds = (*RESETS, RESUME, RESUME_DATA)
    by_kind = Counter(reset_kind(t) for t in trials)
    rounds = max((t.round for t in trials), default=0)
    per: dict[str, int] | None = None
    if rounds:
        later = Counter(reset_kind(t) for t in trials if t.round == min(2, rounds))
        per = {k: later[k] for k in kinds if k != "none" and later[k]}
    return PlanSummary(len({t.block for t in trials}), sum(t.warmup for t in trials),
                       sum(not t.warmup for t in trials),
                       {k: by_kind[k] for k in kinds if k != "none" and by_kind[k]},
                       rounds, per)


RESUME = "resume"  # design.labs: keep: a kept lab resumed (its keyspace recreated)
RESUME_DATA = "resume with data"  # design.labs: keep-data: resumed, its data kept


def reset_kind(t: PlannedTrial) -> str:
    """The reset before `t` as a plan shows it: a kept lab's return is a resume."""
    if t.resume:
        return RESUME_DATA if t.keep_data else RESUME
    return t.reset


def search_key(params: dict[str, Any], factors: tuple[Factor, ...]) -> str:
    """Cells that share a peak: the same levels of every non-relative factor."""
    rel = {f.name for f in factors if f.relative}
    return cell_key({k: v for k, v in params.items() if k not in rel})


def needs_search(params: dict[str, Any]) -> bool:
    return any(is_relative(v) for v in params.values())
