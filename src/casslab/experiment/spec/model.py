"""The typed model of an experiment spec: what `parse_spec` returns, and its error."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from casslab.core import specio
from casslab.experiment.factors.cell import Cell, Defaults, cell_of
from casslab.experiment.figures import FigureDecl
from casslab.experiment.levels import is_relative
from casslab.experiment.reference import Reference
from casslab.lab.state import DEFAULT_RUNTIME, DEFAULT_TIMEOUT_S

DEFAULT_MAX_RESTARTS = 3  # lab.max_restarts (casslab.experiment.recovery)


class SpecError(specio.SpecError):
    """The spec is malformed; the message has file, line, field and what is valid."""


@dataclass(frozen=True)
class LabSpec:
    nodes: int = 1
    profile: str = "host"
    network: Any = None  # a link profile name or {param: value} / {scope: {param: value}}
    overrides: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S
    runtime: str = DEFAULT_RUNTIME
    # Nodes with a profile of their own: {"node6": "rpi3"} (see profilefactors).
    node_profiles: dict[str, str] = field(default_factory=dict)
    # Where the nodes run: `local` (this machine) or `hosts` (the Ansible inventory's, an
    # absolute path here; see casslab.testbed.hosts.lab).
    backend: str = "local"
    inventory: str | None = None
    # Restarts of a node that died mid-campaign, per run (casslab.experiment.recovery);
    # each waits at most timeout_s.
    max_restarts: int = DEFAULT_MAX_RESTARTS


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    records: int = 1000
    prepare: bool = True  # load `records` before the first trial and after every data reset
    options: dict[str, Any] = field(default_factory=dict)
    # casslab-load options of the load phase only, over `options` (e.g. a run at one
    # request in flight that loads its rows at 16)
    load_options: dict[str, Any] = field(default_factory=dict)
    # casslab-load processes per run (casslab.load.multi), results merged by absolute time.
    clients: int = 1
    warmup: SteadyWarmup | None = None  # workload.warmup: until-steady


@dataclass(frozen=True)
class SteadyWarmup:
    """`workload.warmup: until-steady`: a trial's recorded window starts where its
    per-interval series has settled, at most `max_s` seconds into the run (a trial not
    settled by then is stored as such, its window starting at max_s)."""

    max_s: float


@dataclass(frozen=True)
class Factor:
    """One factor: `kind` is lab, limits, network, schema, workload, tuner or copy (what
    it touches; limits: the profile's CPU and disk fields, applied on the running lab;
    copy: nothing, the levels are identical copies for an A/A comparison)."""

    name: str
    kind: str
    levels: tuple[Any, ...]
    label: str
    # per level, what the report prints (experiment.labels: declared or automatic)
    labels: tuple[str, ...] = ()

    @property
    def relative(self) -> bool:
        return any(is_relative(v) for v in self.levels)


@dataclass(frozen=True)
class Guard:
    """`design.guard`: a kept trial during which the machine outside the lab used more
    than `max_outside_cpu_pct` % of its CPU (all cores = 100 %) is flagged and run
    again, at most `reruns` times per trial."""

    max_outside_cpu_pct: float
    reruns: int = 2


@dataclass(frozen=True)
class DesignSpec:
    """`trials`: kept trials per cell (with `until: verdicts` the minimum of rounds,
    `trials_max` the maximum; otherwise both are the same)."""

    trials: int = 3
    warmup_trials: int = 0
    randomize: bool = False
    seed: int = 1
    reset: str = "none"  # between two trials of the same cell
    # Unrecorded trials once per lab, right after it is built: a fresh node warms up
    # (JIT, caches, memtable and commit log sizing) over minutes of load, which a
    # design.reset's per-trial warm-ups would pay again before every kept trial.
    lab_warmup_trials: int = 0
    order: str = "blocked"  # ORDERS; `randomize: true` is `random`
    trials_max: int = 0  # 0: `trials` (see __post_init__)
    until: str = "trials"  # UNTILS
    budget_s: float | None = None  # wall time after which no new round starts
    noise_cv: float | None = None  # a trial's coefficient of variation, for power
    guard: Guard | None = None
    # until: verdicts: a "smaller than this lab can detect" verdict of a ratio ends the
    # campaign only once its bound is within +- this fraction (None: at once)
    detect: float | None = None
    # `labs: keep`: each lab configuration is built once and kept, its nodes paused
    # (SIGSTOP) while another one runs; going back to it resumes it and recreates the
    # data instead of rebuilding; `keep-data`: as keep, but a lab resumed for the schema
    # it was paused with keeps its keyspace and data; `per-round`: a fresh lab for every
    # round of an interleaved design (see LABS in designblock)
    labs: str = "rebuild"
    # interleaved: whole rounds of warm-ups (every cell once, in round 1's order) before
    # round 1, so no kept round runs while the labs are still settling
    warmup_rounds: int = 0

    def __post_init__(self) -> None:
        if self.trials_max == 0:
            object.__setattr__(self, "trials_max", self.trials)

    @property
    def interleaved(self) -> bool:
        return self.order == "interleaved"

    @property
    def keep_labs(self) -> bool:
        return self.labs in ("keep", "keep-data")

    @property
    def per_round_labs(self) -> bool:
        """`labs: per-round`: every round of an interleaved design on a fresh lab."""
        return self.labs == "per-round"

    @property
    def keep_data(self) -> bool:
        """`labs: keep-data`: a kept lab resumed for the schema it held keeps its data."""
        return self.labs == "keep-data"


@dataclass(frozen=True)
class StopRule:
    ops: int | None = 1000
    duration_s: float | None = None
    timeout_s: float = 600.0


@dataclass(frozen=True)
class SearchSpec:
    """Raise `vary` step by step until throughput falls or p99 passes a bound."""

    vary: str
    start: float
    multiply: float | None
    add: float | None
    max_steps: int
    drop_pct: float
    p99_ms: float | None
    trials: int
    stop: StopRule


@dataclass(frozen=True)
class CampaignSpec:
    name: str
    description: str
    lab: LabSpec
    workload: WorkloadSpec
    factors: tuple[Factor, ...]
    design: DesignSpec
    stop: StopRule
    search: SearchSpec | None
    metrics_interval_s: float
    metrics_cql: bool
    responses: tuple[str, ...]  # casslab.store.responses names, at least one
    bootstrap: int
    analysis_seed: int
    text: str
    scale: str | None = None  # a `scales:` name or `smoke` (casslab.experiment.scales)
    figures: tuple[FigureDecl, ...] = ()  # report.figures; () = the design's defaults
    reference: Reference = field(default_factory=Reference)  # the study's numbers, findings

    @property
    def response(self) -> str:
        """The first response (the one campaigns analysed before there were several)."""
        return self.responses[0]

    @property
    def digest(self) -> str:
        """Hash of the spec's text and scale: a results directory belongs to one spec at
        one size."""
        size = f"\0scale={self.scale}" if self.scale else ""
        return hashlib.sha256((self.text + size).encode()).hexdigest()[:16]

    def factor(self, name: str) -> Factor:
        return next(f for f in self.factors if f.name == name)

    def cell(self, params: Mapping[str, Any]) -> Cell:
        """The typed cell of levels `params` (factor name -> level, as the plan has them)."""
        return cell_of(params, cell_defaults(self.lab, self.workload))


def cell_defaults(lab: LabSpec, workload: WorkloadSpec) -> Defaults:
    """What a cell of a spec with these sections has where no factor sets a level."""
    return Defaults(nodes=lab.nodes, profile=lab.profile, runtime=lab.runtime,
                    overrides=lab.overrides, node_profiles=lab.node_profiles,
                    network=lab.network, workload=workload.name, records=workload.records,
                    options=workload.options)
