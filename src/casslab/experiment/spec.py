"""Experiment specs: YAML in, a validated `CampaignSpec` out.

Every error names the field (as a path like `factors[1].levels[0]`), the line of
the spec it comes from and what would be valid. Lines come from yaml.compose's
node marks, so they are exact even in flow style.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from casslab.cassandra import compaction
from casslab.core import specio
from casslab.core.specio import Doc as _Doc
from casslab.core.specio import Path_, fmt_path
from casslab.core.specio import V as _V
from casslab.core.units import parse_fraction
from casslab.experiment import linkscale, profilefactors, scales, tableopts
from casslab.experiment.beside import TUNER_FACTOR, tuner_level
from casslab.experiment.figures import DesignFactor, FigureDecl, figures_schema, parse_figures
from casslab.experiment.labels import parse_labels
from casslab.experiment.reference import Reference, parse_reference, reference_schema
from casslab.lab.state import DEFAULT_RUNTIME, DEFAULT_TIMEOUT_S, MAX_NODES, RUNTIME_NAMES
from casslab.load.multi import MAX_CLIENTS
from casslab.load.options import (
    CONSISTENCY_LEVELS,
    OptionError,
    canonical,
    family_of,
    options_class,
)
from casslab.load.runner import WORKLOADS
from casslab.net.profiles import BUILTIN_PROFILES as NET_PROFILES
from casslab.profiles import BUILTIN_PROFILES
from casslab.store.responses import parse_response, valid_forms

RESETS = ("none", "truncate", "recreate", "rebuild")
NETWORK_PARAMS = {"delay_ms": (0.0, 10_000.0), "jitter_ms": (0.0, 10_000.0),
                  "loss_pct": (0.0, 100.0), "rate_mbit": (0.001, 100_000.0)}
NETWORK_SCOPES = ("all", "client", "nodes")
# Workload options that take a concurrency or a rate and may be searched or be relative.
# `threads` is casslab-load's --threads: N closed-loop clients of one request each (YCSB's
# -threads, cassandra-stress's -rate threads=N), so seed 004's 450 and 150 are levels.
CONCURRENCY = ("in_flight", "workers", "threads")
SEARCHABLE = (*CONCURRENCY, "rate")
# A trial's stop rule: beyond these a value is a typo, not an experiment.
MAX_OPS = 10**12
MAX_TRIAL_S = 7 * 86_400.0
# A campaign above either bound is refused unless allowed (`--allow-large`): planning it
# materialises every trial, and its wall time is beyond any run this lab is meant for.
MAX_TRIALS = 20_000
MAX_WALL_S = 30 * 86_400.0
MAX_OPTION_CELLS = 10_000  # combinations of option levels checked together at validate

TOP_KEYS = ("name", "description", "lab", "workload", "factors", "design", "stop", "search",
            "metrics", "analysis", "report", "reference")
LAB_KEYS = ("nodes", "profile", "node_profiles", "runtime", "network", "set", "timeout_s",
            "backend", "inventory", "max_restarts")
BACKENDS = ("local", "hosts")
DEFAULT_MAX_RESTARTS = 3  # lab.max_restarts (casslab.experiment.recovery)
WORKLOAD_KEYS = ("name", "records", "prepare", "options", "ycsb", "clients", "warmup")
WARMUP_KEYS = ("until", "max_s")
WARMUP_MODES = ("until-steady",)
# workload.warmup's maximum when the spec gives none: half the trial's duration_s, at
# most this (a trial that has not settled by then is marked, not run longer).
DEFAULT_STEADY_MAX_S = 30.0
YCSB_KEYS = ("file", "props")
FACTOR_KEYS = ("name", "levels", "label", "labels")
DESIGN_KEYS = ("trials", "warmup_trials", "lab_warmup_trials", "randomize", "seed", "reset",
               "order", "until", "budget", "noise_cv", "guard")
ORDERS = ("random", "blocked", "interleaved")
UNTILS = ("trials", "verdicts")
TRIALS_RANGE_KEYS = ("min", "max")
GUARD_KEYS = ("max_outside_cpu_pct", "reruns")
MAX_DESIGN_TRIALS = 1000
MAX_GUARD_RERUNS = 10
STOP_KEYS = ("ops", "duration_s", "timeout_s")
SEARCH_KEYS = ("vary", "start", "multiply", "add", "max_steps", "stop_when", "trials", "ops",
               "duration_s")
STOP_WHEN_KEYS = ("throughput_drop_pct", "p99_ms")
METRICS_KEYS = ("interval_s", "cql")
ANALYSIS_KEYS = ("response", "responses", "bootstrap", "seed")
FACTOR_DOC = ("nodes, profile, profile.<memory_mib|heap_mib|cpu_cores|disk_read_mb_s|"
              "disk_write_mb_s>, runtime, set.<cassandra.yaml key>, network, "
              "network[.all|client|nodes|nodeA-nodeB].<delay_ms|jitter_ms|loss_pct|rate_mbit>, "
              "network.scale.<group of lab.network.groups>, "
              "workload, records, rf, compaction, cl, cl_read, cl_write, in_flight, workers, "
              "threads, rate, option.<casslab-load option>, tuner, copy (A/A: levels that "
              "change nothing), " + tableopts.FACTOR_DOC)
# An A/A factor: its levels are names of identical copies of every cell (casslab
# calibrate; an A/A pair beside real factors). Nothing is applied for it.
COPY_FACTOR = "copy"


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
    # absolute path here; see casslab.testbed.hostslab).
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

    def __post_init__(self) -> None:
        if self.trials_max == 0:
            object.__setattr__(self, "trials_max", self.trials)

    @property
    def interleaved(self) -> bool:
        return self.order == "interleaved"


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


def _op_names(workload: WorkloadSpec, factors: list[Factor]) -> tuple[str, ...] | None:
    """Operation types the campaign's workloads can run; None when one of them (a user
    profile) names its own."""
    names = [workload.name] + [str(lv) for f in factors if f.name == "workload"
                               for lv in f.levels]
    ops: dict[str, None] = {}
    for n in names:
        known = options_class(n).op_names
        if known is None:
            return None
        ops.update(dict.fromkeys(known))
    return tuple(ops)


def _responses(v: _V, analysis: dict[str, Any], default: str,
               ops: tuple[str, ...] | None) -> tuple[str, ...]:
    """`analysis.responses` (a list) or `analysis.response` (one name), each a valid
    response name whose operation type the workloads run."""
    if "response" in analysis and "responses" in analysis:
        raise v.doc.error(("analysis", "responses"), "give `responses` (a list) or "
                          "`response` (one name), not both")
    if "responses" in analysis:
        raw, path = analysis["responses"], ("analysis", "responses")
        if not isinstance(raw, list) or not raw:
            raise v.doc.error(path, f"{raw!r} must be a non-empty list of response names, "
                              "e.g. [read.mean_ms, node_cpu_pct]")
        paths: list[Path_] = [(*path, i) for i in range(len(raw))]
    else:
        raw, paths = [analysis.get("response", default)], [("analysis", "response")]
    out: list[str] = []
    for name, where in zip(raw, paths, strict=True):
        if not isinstance(name, str):
            raise v.doc.error(where, f"{name!r} is not a response name (valid: "
                              f"{valid_forms()})")
        try:
            r = parse_response(name)
        except ValueError as exc:
            raise v.doc.error(where, str(exc)) from None
        if r.kind == "summary" and r.op != "ALL" and ops is not None and r.op not in ops:
            raise v.doc.error(where, f"{name!r}: the workloads run no {r.op!r} operations "
                              f"(valid: all, {', '.join(ops)})")
        if name in out:
            raise v.doc.error(where, f"{name!r} is listed twice")
        out.append(name)
    return tuple(out)


def is_relative(value: Any) -> bool:
    return isinstance(value, str) and bool(re.fullmatch(r"\d+(\.\d+)?%", value.strip()))


def relative_fraction(value: str) -> float:
    return parse_fraction(value, "relative level", at_most=None)


# ---- YAML with line numbers: casslab.core.specio ------------------------------------------

def _doc(text: str, source: str) -> _Doc:
    return _Doc(text, source, error=SpecError,
                empty="the spec is empty (it needs at least `workload:`)")


# ---- the spec -----------------------------------------------------------------------------

def load_spec(path: Path, *, allow_large: bool = False, scale: str | None = None
              ) -> CampaignSpec:
    """Read and validate a spec file; raises SpecError (file:line: field: problem).

    allow_large: accept a campaign above MAX_TRIALS trials or MAX_WALL_S of wall time.
    scale: one of the spec's `scales:` or `smoke` (casslab.experiment.scales); None: as
    written.
    """
    text = specio.read_text(path, "spec", SpecError)
    return parse_spec(text, source=str(path), base_dir=path.parent, allow_large=allow_large,
                      scale=scale)


def scale_names(path: Path) -> list[str]:
    """The sizes a spec file offers (its `scales:` and `smoke`)."""
    return scales.names(_doc(specio.read_text(path, "spec", SpecError), str(path)))


def parse_spec(text: str, *, source: str = "spec", base_dir: Path | None = None,
               allow_large: bool = False, scale: str | None = None) -> CampaignSpec:
    """Validate spec text; raises SpecError naming the field, its line and what is valid."""
    doc = _doc(text, source)
    scales.apply(doc, scale)
    v = _V(doc)
    top = v.mapping(doc.root, (), TOP_KEYS)
    name = v.string(top.get("name", Path(source).stem if source != "spec" else "campaign"),
                    ("name",))
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
        raise doc.error(("name",), f"{name!r}: use letters, digits, '-', '_' or '.' (1-64)")
    if "workload" not in top:
        raise doc.error(("workload",), "is required (e.g. `workload: {name: ycsb-a}`)")
    lab = _lab(v, top.get("lab"), base_dir)
    workload = _workload(v, top["workload"], base_dir)
    search = _search(v, top.get("search"))
    factors = _factors(v, top.get("factors"), lab, search is not None, base_dir)
    stop = _stop(v, top.get("stop"), ("stop",), staged="stages" in workload.options)
    warmup = _warmup(v, top["workload"].get("warmup") if isinstance(top["workload"], dict)
                     else None, stop)
    workload = replace(workload, warmup=warmup)
    metrics = v.mapping(top.get("metrics"), ("metrics",), METRICS_KEYS)
    interval = v.number(metrics.get("interval_s", 1.0), ("metrics", "interval_s"), 0.1, 60.0)
    cql = v.boolean(metrics.get("cql", True), ("metrics", "cql"))
    analysis = v.mapping(top.get("analysis"), ("analysis",), ANALYSIS_KEYS)
    default_response = "runtime_s" if stop.ops and not stop.duration_s else "ops_s"
    responses = _responses(v, analysis, default_response, _op_names(workload, factors))
    boot = v.integer(analysis.get("bootstrap", 2000), ("analysis", "bootstrap"), 100, 100_000)
    _cross_checks(v, lab, factors, search)
    _check_table_factors(v, workload, factors)
    _check_load_options(v, workload, factors)
    linkscale.check_factors(v, lab.network, [f.name for f in factors])
    _check_network(v, lab, factors)
    design_factors = [DesignFactor(f.name, f.levels, f.labels) for f in factors]
    figures = parse_figures(v, top.get("report"), design_factors, responses)
    reference = parse_reference(v, top.get("reference"), design_factors, responses,
                                strict=scale is None)
    design = _design(v, top.get("design"), reference)
    aseed = v.integer(analysis.get("seed", design.seed), ("analysis", "seed"), 0)
    spec = CampaignSpec(name=name, description=str(top.get("description") or ""), lab=lab,
                        workload=workload, factors=tuple(factors), design=design, stop=stop,
                        search=search, metrics_interval_s=interval, metrics_cql=cql,
                        responses=responses, bootstrap=boot, analysis_seed=aseed, text=text,
                        scale=scale, figures=figures, reference=reference)
    if not allow_large:
        _check_size(doc, spec)
    return spec


@dataclass(frozen=True)
class CampaignSize:
    """What a campaign costs before it is planned: trials and an upper bound of wall time
    (each trial's duration_s, or its timeout_s guard when it stops by ops)."""

    cells: int
    trials: int
    wall_s: float


def estimate_size(spec: CampaignSpec) -> CampaignSize:
    """Count cells and trials without planning them (plain arithmetic, no lists)."""
    cells = math.prod(len(f.levels) for f in spec.factors)
    d = spec.design  # warm-ups come again after each design.reset (experiment/design.py)
    trials = cells * (d.trials_max * (d.warmup_trials + 1) if d.reset != "none"
                      else d.trials_max + d.warmup_trials)
    trials += d.lab_warmup_trials * math.prod(len(f.levels) for f in spec.factors
                                              if f.kind == "lab")
    wall = trials * _trial_bound_s(spec.stop)
    if spec.search is not None:
        steps = cells * spec.search.max_steps * spec.search.trials
        trials += steps
        wall += steps * _trial_bound_s(spec.search.stop)
    return CampaignSize(cells, trials, wall)


def _trial_bound_s(stop: StopRule) -> float:
    return stop.duration_s if stop.duration_s is not None else stop.timeout_s


def _check_size(doc: _Doc, spec: CampaignSpec) -> None:
    size = estimate_size(spec)
    if size.trials > MAX_TRIALS or size.wall_s > MAX_WALL_S:
        where = ("factors",) if spec.factors else ("design",)
        raise doc.error(where, f"the campaign is too large: {size.cells} cells, "
                        f"{size.trials} trials, up to {size.wall_s / 86_400:.1f} days (limits: "
                        f"{MAX_TRIALS} trials, {MAX_WALL_S / 86_400:g} days); use fewer "
                        "levels or trials, or pass --allow-large")


def _lab(v: _V, raw: Any, base_dir: Path | None) -> LabSpec:
    m = v.mapping(raw, ("lab",), LAB_KEYS)
    backend = v.choice(m.get("backend", "local"), ("lab", "backend"), list(BACKENDS), "backend")
    inventory, inventory_nodes = _inventory(v, m, backend, base_dir)
    nodes = v.integer(m.get("nodes", inventory_nodes or 1), ("lab", "nodes"), 1, MAX_NODES)
    if inventory_nodes is not None and nodes != inventory_nodes:
        raise v.doc.error(("lab", "nodes"), f"{nodes}: the inventory has {inventory_nodes} "
                          "nodes (with backend hosts, leave nodes out or give that count)")
    profile = v.choice(m.get("profile", "host"), ("lab", "profile"), list(BUILTIN_PROFILES),
                       "profile")
    network = m.get("network")
    if network is not None:
        network = _network_value(v, network, ("lab", "network"))
    overrides = m.get("set") or {}
    if not isinstance(overrides, dict):
        raise v.doc.error(("lab", "set"), "must be a mapping of cassandra.yaml keys to values "
                          "(e.g. {concurrent_writes: 16})")
    timeout = v.number(m.get("timeout_s", DEFAULT_TIMEOUT_S), ("lab", "timeout_s"), 10.0, 3600.0)
    runtime = v.choice(m.get("runtime", DEFAULT_RUNTIME), ("lab", "runtime"), list(RUNTIME_NAMES),
                       "runtime")
    per_node = profilefactors.node_profiles(v, m.get("node_profiles"), ("lab", "node_profiles"),
                                            MAX_NODES)
    if backend == "hosts":
        for key in ("profile", "runtime", "node_profiles"):
            if key in m:
                raise v.doc.error(("lab", key), "not with backend hosts: each node's profile "
                                  "is the inventory's casslab_profile and nodes run as "
                                  "processes (remove it)")
    max_restarts = v.integer(m.get("max_restarts", DEFAULT_MAX_RESTARTS),
                             ("lab", "max_restarts"), 0, 100)
    return LabSpec(nodes, profile, network, dict(overrides), timeout, runtime, per_node,
                   backend, inventory, max_restarts)


def _inventory(v: _V, m: dict[str, Any], backend: str,
               base_dir: Path | None) -> tuple[str | None, int | None]:
    """The inventory's absolute path and its node count (backend hosts), else Nones."""
    if backend != "hosts":
        if "inventory" in m:
            raise v.doc.error(("lab", "inventory"), "only with `backend: hosts`")
        return None, None
    if "inventory" not in m:
        raise v.doc.error(("lab", "inventory"), "is required with backend hosts (an Ansible "
                          "inventory, YAML or INI, e.g. inventory: hosts.yaml)")
    raw = Path(v.string(m["inventory"], ("lab", "inventory")))
    path = raw if raw.is_absolute() else (base_dir or Path.cwd()) / raw
    if not path.is_file():
        raise v.doc.error(("lab", "inventory"), f"{raw}: no such file")
    # Here only: reading an inventory imports ansible (its own parser), not cheap.
    from casslab.hosts import inventory as inv

    return str(path.resolve()), len(inv.load(path).nodes)

def _network_value(v: _V, value: Any, path: Path_) -> Any:
    profiles = ("none", *NET_PROFILES)
    if isinstance(value, str):
        return v.choice(value, path, profiles, "network profile")
    m = v.mapping(value, path, (*NETWORK_PARAMS, *NETWORK_SCOPES, "profile", "groups"))
    for key, val in m.items():
        if key == "groups":
            linkscale.check_groups(v, val, (*path, key))
        elif key == "profile":
            v.choice(val, (*path, key), profiles, "network profile")
        elif key in NETWORK_PARAMS:
            lo, hi = NETWORK_PARAMS[key]
            v.number(val, (*path, key), lo, hi)
        else:
            sub = v.mapping(val, (*path, key), tuple(NETWORK_PARAMS))
            for k2, val2 in sub.items():
                lo, hi = NETWORK_PARAMS[k2]
                v.number(val2, (*path, key, k2), lo, hi)
    return m


def _workload(v: _V, raw: Any, base_dir: Path | None) -> WorkloadSpec:
    if isinstance(raw, str):
        raw = {"name": raw}
    m = v.mapping(raw, ("workload",), WORKLOAD_KEYS)
    if "ycsb" in m:
        m = _ycsb_workload(v, m, base_dir)
    if "name" not in m:
        raise v.doc.error(("workload", "name"), f"is required (valid: {', '.join(WORKLOADS)}, "
                          "or a cassandra-stress user profile .yaml)")
    name = _workload_name(v, m["name"], ("workload", "name"), base_dir)
    records = v.integer(m.get("records", 1000), ("workload", "records"), 1)
    prepare = v.boolean(m.get("prepare", name != "stress-write"), ("workload", "prepare"))
    options = m.get("options") or {}
    if not isinstance(options, dict):
        raise v.doc.error(("workload", "options"), "must be a mapping of casslab-load options "
                          "(e.g. {in-flight: 8, field-length: 100})")
    for key in options:
        if key in ("hosts", "format", "phase", "drop", "client", "start-at"):
            raise v.doc.error(("workload", "options", key), "is set by the runner; remove it")
        if key in ("ops", "duration"):
            raise v.doc.error(("workload", "options", key), "belongs in `stop:` (ops, "
                              "duration_s) so every trial stops the same way")
    clients = v.integer(m.get("clients", 1), ("workload", "clients"), 1, MAX_CLIENTS)
    return WorkloadSpec(name, records, prepare, dict(options), clients)


def _ycsb_workload(v: _V, m: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """`workload: {ycsb: {file: workloads/workloada, props: {recordcount: 5000}}}` as the
    built-in name, records and options it maps to (casslab.load.ycsbprops); `name` may
    give the built-in the properties start from (ycsb-a..), `options` win over props."""
    from casslab.load.ycsbprops import PropertyError, from_sources

    y = v.mapping(m["ycsb"], ("workload", "ycsb"), YCSB_KEYS)
    base = m.get("name")
    if base is not None and (not isinstance(base, str) or not base.startswith("ycsb-")
                             or base not in WORKLOADS):
        raise v.doc.error(("workload", "name"), "with `ycsb:` must be a built-in YCSB "
                          "workload the properties start from (ycsb-a..ycsb-f, ycsb-i), or "
                          "left out")
    files: list[Path] = []
    if "file" in y:
        if not isinstance(y["file"], str):
            raise v.doc.error(("workload", "ycsb", "file"), "must be a YCSB workload file path")
        p = Path(y["file"])
        files.append(p if p.is_absolute() else (base_dir or Path.cwd()) / p)
    props = y.get("props") or {}
    if not isinstance(props, dict):
        raise v.doc.error(("workload", "ycsb", "props"), "must be a mapping of YCSB "
                          "properties (e.g. {recordcount: 100000, threadcount: 8})")
    try:
        resolved = from_sources(files, [], props, base=base, inline_where="props")
    except PropertyError as exc:
        key = next((k for k in props if str(exc).startswith(f"props.{k}: ")), None)
        if key is not None:
            raise v.doc.error(("workload", "ycsb", "props", key),
                              str(exc).removeprefix(f"props.{key}: ")) from None
        raise v.doc.error(("workload", "ycsb", "file" if files else "props"),
                          str(exc)) from None
    options = dict(resolved.options)
    for key in ("ops", "duration"):
        if key in options:
            raise v.doc.error(("workload", "ycsb"), f"operationcount/maxexecutiontime set "
                              f"{key}: a campaign stops trials with `stop:` (ops, duration_s)")
    records = options.pop("records", None)
    if records is not None and "records" in m:
        raise v.doc.error(("workload", "records"), "is set by the YCSB recordcount too; "
                          "give one")
    user_options = m.get("options") or {}
    merged = {**options, **user_options} if isinstance(user_options, dict) else user_options
    return {**m, "name": resolved.workload, "options": merged,
            **({"records": records} if records is not None else {})}


def _workload_name(v: _V, value: Any, path: Path_, base_dir: Path | None) -> str:
    if isinstance(value, str) and value.endswith((".yaml", ".yml")):
        p = Path(value) if Path(value).is_absolute() else (base_dir or Path.cwd()) / value
        if not p.exists():
            raise v.doc.error(path, f"user profile {value} does not exist (looked at {p})")
        return str(p.resolve())
    return v.choice(value, path, list(WORKLOADS), "workload (or a user profile .yaml)")


def _design(v: _V, raw: Any, reference: Reference) -> DesignSpec:
    m = v.mapping(raw, ("design",), DESIGN_KEYS)
    until = v.choice(m.get("until", "trials"), ("design", "until"), UNTILS, "design.until")
    lo, hi = _trials(v, m.get("trials", 3), until)
    warm = v.integer(m.get("warmup_trials", 0), ("design", "warmup_trials"), 0, 1000)
    order = _order(v, m)
    seed = v.integer(m.get("seed", 1), ("design", "seed"), 0)
    reset = v.choice(m.get("reset", "none"), ("design", "reset"), RESETS, "reset")
    lab_warm = v.integer(m.get("lab_warmup_trials", 0), ("design", "lab_warmup_trials"), 0, 100)
    if until == "verdicts":
        if order != "interleaved":
            raise v.doc.error(("design", "until"), "verdicts needs `order: interleaved` (it "
                              "adds whole rounds, one kept trial of every cell each)")
        if not reference.findings:
            raise v.doc.error(("design", "until"), "verdicts needs reference.findings (the "
                              "findings whose verdicts end the campaign); valid without "
                              "them: trials")
    budget = None
    if "budget" in m:
        if until != "verdicts":
            raise v.doc.error(("design", "budget"), "is for `until: verdicts` (a campaign of "
                              "fixed trials runs them all)")
        budget = _duration(v, m["budget"], ("design", "budget"))
    noise = None if "noise_cv" not in m else _cv(v, m["noise_cv"], ("design", "noise_cv"))
    guard = _guard(v, m.get("guard"))
    return DesignSpec(lo, warm, order == "random", seed, reset, lab_warm, order, hi, until,
                      budget, noise, guard)


def _trials(v: _V, raw: Any, until: str) -> tuple[int, int]:
    """design.trials: N, or {min: N, max: M} with `until: verdicts` (min >= 2: one round
    has no within-round spread to decide from)."""
    path: Path_ = ("design", "trials")
    if not isinstance(raw, dict):
        n = v.integer(raw, path, 1, MAX_DESIGN_TRIALS)
        if until == "verdicts":
            raise v.doc.error(path, f"{n}: with `until: verdicts` give a range, e.g. "
                              "{min: 3, max: 20}")
        return n, n
    m = v.mapping(raw, path, TRIALS_RANGE_KEYS)
    if until != "verdicts":
        raise v.doc.error(path, "a range {min, max} needs `design.until: verdicts` (else "
                          "give one number)")
    for key in TRIALS_RANGE_KEYS:
        if key not in m:
            raise v.doc.error((*path, key), "is required (e.g. trials: {min: 3, max: 20})")
    lo = v.integer(m["min"], (*path, "min"), 2, MAX_DESIGN_TRIALS)
    hi = v.integer(m["max"], (*path, "max"), lo, MAX_DESIGN_TRIALS)
    return lo, hi


def _order(v: _V, m: dict[str, Any]) -> str:
    """design.order, or the older `randomize` (true: random, false: blocked)."""
    rnd = v.boolean(m["randomize"], ("design", "randomize")) if "randomize" in m else None
    if "order" not in m:
        return "random" if rnd else "blocked"
    order = v.choice(m["order"], ("design", "order"), ORDERS, "order")
    if rnd is not None and rnd != (order == "random"):
        raise v.doc.error(("design", "randomize"), f"{str(rnd).lower()} contradicts "
                          f"`order: {order}`; remove randomize")
    return order


def _duration(v: _V, raw: Any, path: Path_) -> float:
    """A wall time: `5m`, `90s`, `1h` or a number of seconds, more than 0."""
    from casslab.core.errors import UsageError
    from casslab.core.units import parse_duration_s

    try:
        out = parse_duration_s(raw, "value", bare="s") if not isinstance(raw, bool) else -1.0
    except UsageError:
        out = -1.0
    if not out > 0 or not math.isfinite(out):
        raise v.doc.error(path, f"{raw!r} is not a wall time (valid: e.g. 5m, 90s, 1h, or "
                          "seconds > 0)")
    return out


def _cv(v: _V, raw: Any, path: Path_) -> float:
    """A coefficient of variation: a fraction in (0, 1) or a percentage `5%`."""
    if isinstance(raw, str) and raw.strip().endswith("%"):
        try:
            out = float(raw.strip()[:-1]) / 100
        except ValueError:
            out = math.nan
    elif isinstance(raw, int | float) and not isinstance(raw, bool):
        out = float(raw)
    else:
        out = math.nan
    if not 0 < out < 1:
        raise v.doc.error(path, f"{raw!r} is not a coefficient of variation (valid: a "
                          "fraction > 0 and < 1, e.g. 0.05, or a percentage, e.g. 5%)")
    return out


def _guard(v: _V, raw: Any) -> Guard | None:
    if raw is None:
        return None
    path: Path_ = ("design", "guard")
    m = v.mapping(raw, path, GUARD_KEYS)
    if "max_outside_cpu_pct" not in m:
        raise v.doc.error((*path, "max_outside_cpu_pct"), "is required (the CPU % of the "
                          "whole machine the world outside the lab may use, e.g. 10)")
    pct = v.number(m["max_outside_cpu_pct"], (*path, "max_outside_cpu_pct"), 0.0, 100.0,
                   lo_open=True)
    reruns = v.integer(m.get("reruns", 2), (*path, "reruns"), 0, MAX_GUARD_RERUNS)
    return Guard(pct, reruns)


def _warmup(v: _V, raw: Any, stop: StopRule) -> SteadyWarmup | None:
    """workload.warmup: `until-steady` or {until: until-steady, max_s: S}."""
    if raw is None:
        return None
    path: Path_ = ("workload", "warmup")
    m = {"until": raw} if isinstance(raw, str) else v.mapping(raw, path, WARMUP_KEYS)
    if "until" not in m:
        raise v.doc.error((*path, "until"), "is required (valid: until-steady)")
    v.choice(m["until"], (*path, "until") if not isinstance(raw, str) else path,
             WARMUP_MODES, "warm-up")
    default = DEFAULT_STEADY_MAX_S
    if stop.duration_s is not None:
        default = min(default, stop.duration_s / 2)
    max_s = (v.number(m["max_s"], (*path, "max_s"), 0.0, MAX_TRIAL_S, lo_open=True)
             if "max_s" in m else default)
    if stop.duration_s is not None and max_s >= stop.duration_s:
        raise v.doc.error((*path, "max_s") if "max_s" in m else path,
                          f"{max_s:g} s must be shorter than stop.duration_s "
                          f"{stop.duration_s:g} (the window must keep some of the trial)")
    if stop.duration_s is None and stop.ops is None:
        raise v.doc.error(path, "until-steady needs a stop rule with duration_s or ops")
    return SteadyWarmup(max_s)


def _stop(v: _V, raw: Any, path: Path_, *, staged: bool = False) -> StopRule:
    m = v.mapping(raw, path, STOP_KEYS)
    if staged:  # casslab-load refuses --ops and --duration beside --stages
        for key in ("ops", "duration_s"):
            if key in m:
                raise v.doc.error((*path, key), "a staged workload (workload.options.stages) "
                                  "ends with its stages file; give only timeout_s")
        return StopRule(None, None, v.number(m.get("timeout_s", 600.0), (*path, "timeout_s"),
                                             1.0, MAX_TRIAL_S))
    # The default of 1000 ops is for a spec without `stop:`; a written stop rule names
    # its own end, so `stop: {timeout_s: 60}` alone is an error, not 1000 ops.
    ops = m.get("ops", None if "duration_s" in m or raw is not None else 1000)
    ops_v = None if ops is None else v.integer(ops, (*path, "ops"), 1, MAX_OPS)
    dur = m.get("duration_s")
    dur_v = None if dur is None else v.number(dur, (*path, "duration_s"), 0.0, MAX_TRIAL_S,
                                              lo_open=True)
    if ops_v is None and dur_v is None:
        raise v.doc.error(path, "a stop rule needs ops or duration_s (or both); with "
                          "neither a trial never ends")
    timeout = v.number(m.get("timeout_s", 600.0), (*path, "timeout_s"), 1.0, MAX_TRIAL_S)
    if dur_v is not None and timeout <= dur_v:
        raise v.doc.error((*path, "timeout_s"), f"{timeout:g} must exceed duration_s "
                          f"{dur_v:g} (it is the wall-time guard of a trial)")
    return StopRule(ops_v, dur_v, timeout)


def _search(v: _V, raw: Any) -> SearchSpec | None:
    if raw is None:
        return None
    path: Path_ = ("search",)
    m = v.mapping(raw, path, SEARCH_KEYS)
    if "vary" not in m:
        raise v.doc.error((*path, "vary"), f"is required (valid: {', '.join(SEARCHABLE)})")
    vary = v.choice(m["vary"], (*path, "vary"), SEARCHABLE, "search parameter")
    start = v.number(m.get("start", 1), (*path, "start"), 0.0, lo_open=True)
    if "multiply" in m and "add" in m:
        raise v.doc.error((*path, "add"), "give either multiply or add, not both")
    mult = add = None
    if "add" in m:
        add = v.number(m["add"], (*path, "add"), 0.0, lo_open=True)
    else:
        mult = v.number(m.get("multiply", 2.0), (*path, "multiply"), 1.0, lo_open=True)
    steps = v.integer(m.get("max_steps", 8), (*path, "max_steps"), 2, 100)
    sw = v.mapping(m.get("stop_when"), (*path, "stop_when"), STOP_WHEN_KEYS)
    drop = v.number(sw.get("throughput_drop_pct", 5.0), (*path, "stop_when",
                                                         "throughput_drop_pct"), 0.0, 100.0)
    p99 = sw.get("p99_ms")
    p99_v = None if p99 is None else v.number(p99, (*path, "stop_when", "p99_ms"), 0.0,
                                              lo_open=True)
    trials = v.integer(m.get("trials", 1), (*path, "trials"), 1, 100)
    stop = _stop(v, {k: m[k] for k in ("ops", "duration_s") if k in m} or None, path)
    return SearchSpec(vary, start, mult, add, steps, drop, p99_v, trials, stop)


def factor_kind(name: str) -> str | None:
    """lab, limits, network, schema, tuner or workload; None for an unknown factor name."""
    if name in ("nodes", "profile", "runtime") or name.startswith("set."):
        return "lab"
    if name.startswith(profilefactors.PREFIX):
        return profilefactors.factor_kind(name)
    if linkscale.is_factor(name):
        return "network"
    if name == "network" or re.fullmatch(
            r"network(\.(all|client|nodes|node\d+-node\d+))?\.(delay_ms|jitter_ms|loss_pct|"
            r"rate_mbit)", name):
        return "network"
    if name in ("workload", "records", "rf", "compaction") or tableopts.is_table_factor(name):
        return "schema"
    if name in ("cl", "cl_read", "cl_write", *SEARCHABLE):
        return "workload"
    if re.fullmatch(r"option\.[a-z][a-z0-9-]*", name):
        return "workload"
    if name == TUNER_FACTOR:  # runs beside the load; the keyspace it altered is recreated
        return "tuner"
    if name == COPY_FACTOR:
        return "copy"
    return None


def _factors(v: _V, raw: Any, lab: LabSpec, has_search: bool,
             base_dir: Path | None) -> list[Factor]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise v.doc.error(("factors",), "must be a list of {name, levels} (e.g. "
                          "`- {name: nodes, levels: [1, 3]}`)")
    out: list[Factor] = []
    for i, item in enumerate(raw):
        path: Path_ = ("factors", i)
        m = v.mapping(item, path, FACTOR_KEYS)
        if "name" not in m:
            raise v.doc.error((*path, "name"), f"is required (valid: {FACTOR_DOC})")
        name = m["name"]
        kind = factor_kind(name) if isinstance(name, str) else None
        if kind is None:
            raise v.doc.error((*path, "name"), f"unknown factor {name!r} (valid: {FACTOR_DOC})")
        if kind == "schema" and tableopts.is_table_factor(name):
            try:
                tableopts.parse_name(name)
            except tableopts.TableOptionError as exc:
                raise v.doc.error((*path, "name"), str(exc)) from None
        if any(f.name == name for f in out):
            raise v.doc.error((*path, "name"), f"factor {name!r} is listed twice")
        levels = m.get("levels")
        if not isinstance(levels, list) or not levels:
            raise v.doc.error((*path, "levels"), "must be a non-empty list of levels")
        checked_l = []
        for j, lvl in enumerate(levels):
            lpath = (*path, "levels", j)
            try:
                checked_l.append(_level(v, name, lvl, lpath, has_search, base_dir))
            except SpecError as exc:  # say which factor the level belongs to
                where = fmt_path(lpath)
                raise SpecError(str(exc).replace(f" {where}: ", f" {where} (factor {name}): ",
                                                 1)) from None
        checked = tuple(checked_l)
        if len({repr(x) for x in checked}) != len(checked):
            raise v.doc.error((*path, "levels"), "has a level twice")
        label = str(m.get("label") or name)
        labels = parse_labels(v, m.get("labels"), (*path, "labels"), checked)
        out.append(Factor(name, kind, checked, label, labels))
    return out


def _level(v: _V, name: str, value: Any, path: Path_, has_search: bool,
           base_dir: Path | None) -> Any:
    if is_relative(value):
        if name not in SEARCHABLE:
            raise v.doc.error(path, f"{value!r}: levels relative to the peak are only for "
                              f"{', '.join(SEARCHABLE)}")
        if not has_search:
            raise v.doc.error(path, f"{value!r} is relative to the peak, but the spec has no "
                              "`search:` section to find it")
        if relative_fraction(value) <= 0:
            raise v.doc.error(path, f"{value!r} must be > 0%")
        return value.strip()
    if name == "nodes":
        return v.integer(value, path, 1, MAX_NODES)
    if name == "profile":
        return v.choice(value, path, list(BUILTIN_PROFILES), "profile")
    if name == "runtime":
        return v.choice(value, path, list(RUNTIME_NAMES), "runtime")
    if name in profilefactors.NAMES:
        return profilefactors.level(v, name, value, path)
    if name == "network":
        return _network_value(v, value, path)
    if linkscale.is_factor(name):
        return linkscale.level(v, value, path)
    if name.startswith("network."):
        param = name.rsplit(".", 1)[1]
        lo, hi = NETWORK_PARAMS[param]
        return v.number(value, path, lo, hi)
    if name == "workload":
        return _workload_name(v, value, path, base_dir)
    if name == "records":
        return v.integer(value, path, 1)
    if name == "rf":
        return v.integer(value, path, 1, MAX_NODES)
    if name == "compaction":
        ok = isinstance(value, str) and (value.startswith("{") or compaction.is_level(value))
        if not ok:
            raise v.doc.error(path, f"{value!r} is not a compaction (valid: "
                              f"{compaction.LEVEL_SYNTAX}, or a CQL map '{{...}}')")
        return value
    if tableopts.is_table_factor(name):
        try:
            return tableopts.check_level(name, value)
        except tableopts.TableOptionError as exc:
            raise v.doc.error(path, str(exc)) from None
    if name in ("cl", "cl_read", "cl_write"):
        # casslab-load's levels (no SERIAL: it cannot use them), spelled as it takes them.
        return v.choice(value.upper().replace("-", "_") if isinstance(value, str) else value,
                        path, list(CONSISTENCY_LEVELS), "consistency level")
    if name in CONCURRENCY:
        return v.integer(value, path, 1, 100_000)
    if name == "rate":
        return v.number(value, path, 0.0, lo_open=True)
    if name == COPY_FACTOR:
        if isinstance(value, dict | list | bool) or value is None:
            raise v.doc.error(path, f"{value!r}: a copy's level is a name (e.g. A, B)")
        return str(value)
    if name == TUNER_FACTOR:
        try:
            return tuner_level(value, base_dir)
        except ValueError as exc:
            raise v.doc.error(path, str(exc)) from None
    if isinstance(value, dict | list):
        raise v.doc.error(path, f"{value!r}: a casslab-load option takes a scalar")
    return value


def _cross_checks(v: _V, lab: LabSpec, factors: list[Factor], search: SearchSpec | None) -> None:
    names = [f.name for f in factors]
    node_levels = next((f.levels for f in factors if f.name == "nodes"), (lab.nodes,))
    for node in lab.node_profiles:
        if int(node.removeprefix("node")) > max(node_levels):
            raise v.doc.error(("lab", "node_profiles", node), f"{node!r} is not a node of the "
                              f"lab (valid: node1 ... node{max(node_levels)})")
    for i, f in enumerate(factors):
        if lab.backend == "hosts" and (f.name in ("nodes", "profile", "runtime")
                                       or f.name.startswith(profilefactors.PREFIX)):
            raise v.doc.error(("factors", i, "name"), f"{f.name}: not a factor with backend "
                              "hosts (the inventory fixes the nodes, their profiles and "
                              "runtime; valid there: set.*, network, schema and workload "
                              "factors)")
        if f.name == "rf":
            for j, rf in enumerate(f.levels):
                if rf > min(node_levels):
                    raise v.doc.error(("factors", i, "levels", j), f"rf {rf} exceeds the "
                                      f"smallest node count {min(node_levels)}")
        if f.name in ("cl_read", "cl_write") and "cl" in names:
            raise v.doc.error(("factors", i, "name"), f"{f.name} conflicts with factor cl "
                              "(which sets both)")
        if search and f.name == search.vary and not f.relative:
            raise v.doc.error(("factors", i, "name"), f"{f.name} is varied by `search:`; "
                              "as a factor its levels must be relative to the peak (e.g. "
                              "'100%', '66%')")
        if f.relative and search and f.name not in ("rate", search.vary):
            raise v.doc.error(("factors", i, "name"), f"relative levels of {f.name} need "
                              f"`search.vary: {f.name}` (or a rate factor)")


def _check_table_factors(v: _V, workload: WorkloadSpec, factors: list[Factor]) -> None:
    names = [f.name for f in factors]
    wls = next((f.levels for f in factors if f.name == "workload"), (workload.name,))
    problem = tableopts.check_factors(names, {str(w): family_of(str(w)) for w in wls},
                                      workload.prepare, [canonical(k) for k in workload.options])
    if problem:
        raise v.doc.error(("factors", names.index(problem[0]), "name"),
                          f"{problem[0]} {problem[1]}")


def _check_load_options(v: _V, workload: WorkloadSpec, factors: list[Factor]) -> None:
    """workload.options and every level of a factor that sets casslab-load options, by
    casslab-load's rules; two factors may not set the same option."""
    from casslab.experiment.loadopts import cell_options, factor_options

    names = next((f.levels for f in factors if f.name == "workload"), (workload.name,))
    for wl in names:
        also = "" if wl == workload.name else f" (with workload {wl})"
        try:
            cell_options(wl, workload.records, workload.options, {})
        except OptionError as exc:
            # The line of the option, or of workload.options for a rule between options.
            raise v.doc.error(("workload", "options", exc.key),
                              f"{exc.detail}{also}") from None
        owner: dict[str, str] = {}
        for i, f in enumerate(factors):
            for flag in factor_options(f.name, wl):
                if flag in owner:
                    raise v.doc.error(("factors", i, "name"), f"{f.name} sets casslab-load "
                                      f"option {flag}, as does factor {owner[flag]}; keep one")
                owner[flag] = f.name
            if not factor_options(f.name, wl):
                continue
            for j, level in enumerate(f.levels):
                try:
                    cell_options(wl, workload.records, workload.options, {f.name: level})
                except OptionError as exc:
                    raise v.doc.error(("factors", i, "levels", j), f"(factor {f.name}) "
                                      f"{exc.key}: {exc.detail}{also}") from None
        _check_option_cells(v, workload, factors, wl, also)


def _check_option_cells(v: _V, workload: WorkloadSpec, factors: list[Factor], wl: str,
                        also: str) -> None:
    """Rules between options (tls-cert needs tls-key, stages excludes ops) in every
    combination of the option factors' levels; beyond MAX_OPTION_CELLS combinations
    only the levels one by one were checked (a spec that large is checked in seconds
    anyway by its first trials)."""
    import itertools
    import math

    from casslab.experiment.loadopts import cell_options, factor_options

    setting = [f for f in factors if factor_options(f.name, wl)]
    if not setting or math.prod(len(f.levels) for f in setting) > MAX_OPTION_CELLS:
        return
    for levels in itertools.product(*(f.levels for f in setting)):
        params = {f.name: level for f, level in zip(setting, levels, strict=True)}
        try:
            cell_options(wl, workload.records, workload.options, params)
        except OptionError as exc:
            cell = ", ".join(f"{k}={val}" for k, val in params.items())
            raise v.doc.error(("factors",), f"in the cell {cell}: {exc.key}: "
                              f"{exc.detail}{also}") from None


def _check_network(v: _V, lab: LabSpec, factors: list[Factor]) -> None:
    """Every network level by casslab.net's own rules, for every node count it meets."""
    from casslab.experiment import network
    from casslab.net import NetSpec
    from casslab.net.errors import NetSpecError

    node_levels = next((f.levels for f in factors if f.name == "nodes"), (lab.nodes,))
    cases: list[tuple[Path_, dict[str, Any]]] = [(("lab", "network"), {})]
    cases += [(("factors", i, "levels", j), {f.name: level})
              for i, f in enumerate(factors) if f.kind == "network"
              for j, level in enumerate(f.levels)]
    for path, params in cases:
        for n in node_levels:
            wanted = network.wanted(lab.network, params, n)
            if wanted is None:
                continue
            try:
                NetSpec.from_mapping(wanted, "network").resolve(n)
            except NetSpecError as exc:
                nodes = f" (with {n} node{'s' if n > 1 else ''})" if len(node_levels) > 1 else ""
                raise v.doc.error(path, f"{exc}{nodes}") from None


# ---- JSON Schema (casslab schema experiment) ----------------------------------------------

def json_schema() -> specio.JsonSchema:
    """The spec format as JSON Schema for editors; `parse_spec` stays the authority (it
    also checks what a schema cannot say: cross-field rules, files, factor levels)."""
    obj, num, integer, enum = (specio.schema_object, specio.schema_number,
                               specio.schema_integer, specio.schema_enum)
    params = {k: num(lo, hi, description=k) for k, (lo, hi) in NETWORK_PARAMS.items()}
    network = {"oneOf": [{"type": "string", "description": "a link profile name or none"},
                         obj({**params, "profile": {"type": "string"},
                              "groups": {"type": "object", "description": "group -> link "
                                         "-> base delay_ms or fields (network.scale.GROUP)"},
                              **{s: obj(params) for s in NETWORK_SCOPES}})]}
    stop = {"ops": integer(1, MAX_OPS), "duration_s": num(0, MAX_TRIAL_S, lo_open=True),
            "timeout_s": num(1, MAX_TRIAL_S, description="wall-time guard of a trial")}
    response = {"type": "string", "description": valid_forms()}
    workload = obj({"name": {"type": "string", "description": ", ".join(WORKLOADS) +
                             ", or a cassandra-stress user profile .yaml"},
                    "records": integer(1), "prepare": {"type": "boolean"},
                    "clients": integer(1, MAX_CLIENTS),
                    "warmup": {"oneOf": [enum(WARMUP_MODES), obj(
                        {"until": enum(WARMUP_MODES),
                         "max_s": num(0, MAX_TRIAL_S, lo_open=True,
                                      description="latest start of the recorded window")},
                        required=("until",))],
                        "description": "until-steady: the recorded window starts once the "
                                       "per-interval series has settled"},
                    "options": {"type": "object", "description": "casslab-load options"},
                    "ycsb": obj({"file": {"type": "string", "description": "YCSB workload "
                                          "property file (e.g. workloads/workloada)"},
                                 "props": {"type": "object", "description": "YCSB "
                                           "properties over the file's"}})})
    return specio.schema_document("casslab experiment spec", obj({
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"},
        "description": {"type": "string"},
        "lab": obj({"nodes": integer(1, MAX_NODES), "profile": enum(list(BUILTIN_PROFILES)),
                    "runtime": enum(list(RUNTIME_NAMES)),
                    "node_profiles": specio.schema_map(enum(list(BUILTIN_PROFILES)),
                                                       "node name (node6) -> profile"),
                    "network": network, "set": {"type": "object",
                                                "description": "cassandra.yaml overrides"},
                    "timeout_s": num(10, 3600),
                    "max_restarts": integer(0, 100),
                    "backend": enum(list(BACKENDS)),
                    "inventory": {"type": "string",
                                  "description": "Ansible inventory (backend hosts)"}}),
        "workload": {"oneOf": [{"type": "string"}, workload]},
        "factors": {"type": "array", "items": obj(
            {"name": {"type": "string", "description": FACTOR_DOC},
             "levels": {"type": "array", "minItems": 1}, "label": {"type": "string"},
             "labels": {"type": ["array", "object"],
                        "description": "short label per level (list in level order, "
                                       "or level -> label)"}},
            required=("name", "levels"))},
        "design": obj({"trials": {"oneOf": [
                           integer(1, MAX_DESIGN_TRIALS),
                           obj({"min": integer(2, MAX_DESIGN_TRIALS),
                                "max": integer(2, MAX_DESIGN_TRIALS)},
                               required=TRIALS_RANGE_KEYS)],
                           "description": "kept trials per cell, or {min, max} rounds "
                                          "with until: verdicts"},
                       "warmup_trials": integer(0, 1000),
                       "lab_warmup_trials": integer(0, 100),
                       "randomize": {"type": "boolean",
                                     "description": "older spelling of order: random"},
                       "order": enum(ORDERS, "blocked: cells in factor order, grouped by "
                                     "lab; random: shuffled blocks and trials; "
                                     "interleaved: rounds of one trial per cell, "
                                     "counterbalanced (Williams)"),
                       "until": enum(UNTILS, "verdicts: add rounds until every finding "
                                     "is decisive (needs order: interleaved)"),
                       "budget": {"type": ["string", "number"],
                                  "description": "wall time after which no new round "
                                                 "starts, e.g. 5m (until: verdicts)"},
                       "noise_cv": {"type": ["string", "number"],
                                    "description": "a trial's coefficient of variation, "
                                                   "e.g. 0.05 or 5% (for power)"},
                       "seed": integer(0),
                       "reset": enum(RESETS),
                       "guard": obj({"max_outside_cpu_pct": num(0, 100, lo_open=True),
                                     "reruns": integer(0, MAX_GUARD_RERUNS)},
                                    required=("max_outside_cpu_pct",))}),
        "stop": obj(stop),
        "search": obj({"vary": enum(SEARCHABLE), "start": num(0, lo_open=True),
                       "multiply": num(1, lo_open=True), "add": num(0, lo_open=True),
                       "max_steps": integer(2, 100),
                       "stop_when": obj({"throughput_drop_pct": num(0, 100),
                                         "p99_ms": num(0, lo_open=True)}),
                       "trials": integer(1, 100), "ops": stop["ops"],
                       "duration_s": stop["duration_s"]}, required=("vary",)),
        "metrics": obj({"interval_s": num(0.1, 60), "cql": {"type": "boolean"}}),
        "analysis": obj({"response": response, "responses": {
                             "type": "array", "minItems": 1, "items": response},
                         "bootstrap": integer(100, 100_000),
                         "seed": integer(0)}),
        "scales": specio.schema_map(specio.schema_map(
            {}, "dotted spec path (factors by name, e.g. factors.nodes.levels) -> value"),
            "named sizes of this spec, e.g. paper (`--scale NAME`; `smoke` is built in)"),
        "report": figures_schema(),
        "reference": reference_schema(),
    }, required=("workload",)))
