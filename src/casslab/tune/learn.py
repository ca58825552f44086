"""`tune learn`: sweep TWCS window sizes (and, on request, UCS scaling parameters) x TTL x
read share with the campaign runner and turn the results into a rules table for this
hardware (with the measurements behind it): per (TTL, read share), the best TWCS setting
becomes a `twcs:` point and the best UCS setting a `ucs:` point.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from casslab.cassandra import compaction
from casslab.core.errors import UsageError
from casslab.experiment.factors.registry import COMPACTION, option_factor
from casslab.experiment.runner import CampaignRunner, Event
from casslab.experiment.spec import CampaignSpec, parse_spec
from casslab.load.options import IotOptions, Warmup
from casslab.store.records import Results, TrialRow
from casslab.tune.compaction import strategy_of
from casslab.tune.rules import RulePoint, RulesTable

# C*DynaConf's reads: devdat 40 %, lesrow 30 %, avgdat 30 % of the read operations.
READ_SPLIT = {"devdat": 0.4, "lesrow": 0.3, "avgdat": 0.3}
# One UCS scaling parameter: N, L<f> / T<f> (fan factor >= 2) or an integer W.
_UCS_SCALING = re.compile(r"N|[LT]([2-9]|[1-9]\d+)|-?\d+")
# The sweep's option factors (casslab-load's --table-ttl-s and --mix).
TTL_FACTOR = option_factor(IotOptions.flag("table_ttl_s"))
MIX_FACTOR = option_factor(IotOptions.flag("mix"))


@dataclass(frozen=True)
class LearnSpec:
    """The sweep. Small defaults: 2 x 2 x 2 cells of one 45 s trial, about 8 minutes."""

    windows_min: tuple[int, ...] = (1, 3)
    ttls_s: tuple[int, ...] = (120, 300)
    read_shares: tuple[float, ...] = (0.03, 0.30)
    min_thresholds: tuple[int, ...] = (4,)
    ucs_scaling: tuple[str, ...] = ()  # UCS scaling_parameters levels; () = TWCS only
    trials: int = 1
    duration_s: float = 45.0
    # Unrecorded load at each trial's start: the trial's table is new, and the first
    # trials of the campaign run on a cold JVM.
    warmup_s: float = 10.0
    devices: int = 100
    nodes: int = 1
    profile: str = "host"
    workload_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, values in (("windows", self.windows_min), ("TTLs", self.ttls_s),
                             ("read shares", self.read_shares),
                             ("min thresholds", self.min_thresholds)):
            if not values:
                raise UsageError(f"tune learn: give at least one of the {name}")
        # Named as `tune learn`'s options, with the value that is wrong (`not 0 <= s`
        # also refuses nan).
        bad = [w for w in self.windows_min if w < 1]
        if bad:
            raise UsageError(f"--windows: {bad[0]} is not a window size (valid: whole "
                             "minutes >= 1)")
        bad = [t for t in self.ttls_s if t < 1]
        if bad:
            raise UsageError(f"--ttls: {bad[0]} s is not a TTL (valid: whole seconds >= 1)")
        shares = [s for s in self.read_shares if not 0 <= s < 1]
        if shares:
            raise UsageError(f"--read-shares: {shares[0]:g} is not a read share (valid: a "
                             "fraction in [0, 1))")
        if not self.warmup_s >= 0:
            raise UsageError(f"--warmup: {self.warmup_s:g} s is not a duration >= 0 s")
        bad = [m for m in self.min_thresholds if m < 2]
        if bad:
            raise UsageError(f"--min-thresholds: {bad[0]} is not a min_threshold (valid: "
                             ">= 2)")
        if self.trials < 1:
            raise UsageError(f"--trials: {self.trials} is too few (valid: >= 1 per cell)")
        if self.nodes < 1:
            raise UsageError(f"--nodes: {self.nodes} is too few (valid: >= 1)")
        # Checked now by casslab-load's rules, not in every trial of the sweep.
        self.options()
        for sp in self.ucs_scaling:
            if not _UCS_SCALING.fullmatch(sp):
                raise UsageError(f"tune learn: UCS scaling parameter {sp!r} is not valid: give "
                                 "N, L<fan> or T<fan> with fan >= 2 (e.g. T4, L10), or an "
                                 "integer")


    def option_mapping(self) -> dict[str, Any]:
        """workload.options of the sweep: devices, the warm-up, then workload_options (in
        this order, so the spec's text and digest stay those of earlier sweeps)."""
        warmup = {IotOptions.flag("warmup"): Warmup(seconds=self.warmup_s).arg()}
        return {IotOptions.flag("devices"): self.devices,
                **(warmup if self.warmup_s > 0 else {}), **self.workload_options}

    def options(self) -> IotOptions:
        """The typed iot options of every trial; raises OptionError naming a bad one."""
        return IotOptions.from_mapping(self.option_mapping(), "tune learn workload_options")


def mix_for(read_share: float) -> str:
    """The iot mix for a read share: inserts, then C*DynaConf's split of the reads."""
    parts = {"insert": 1 - read_share, **{k: v * read_share for k, v in READ_SPLIT.items()}}
    return ",".join(f"{k}={v:.4f}" for k, v in parts.items() if v > 0)


def share_of(mix: str) -> float:
    """The read share of an iot mix string (inverse of mix_for)."""
    parts = {k: float(v) for k, v in (p.split("=") for p in mix.split(","))}
    total = sum(parts.values())
    return round((total - parts.get("insert", 0.0)) / total, 4) if total else 0.0


def twcs_map(window_min: int, min_threshold: int) -> str:
    return compaction.cql_map({"class": compaction.class_name("twcs"),
                               "compaction_window_size": str(window_min),
                               "compaction_window_unit": "MINUTES",
                               "min_threshold": str(min_threshold)})


def ucs_map(scaling: str) -> str:
    return compaction.cql_map({"class": compaction.class_name("ucs"),
                               "scaling_parameters": scaling})


def build_spec(ls: LearnSpec) -> CampaignSpec:
    """The campaign spec of the sweep (validated by the experiment spec parser)."""
    doc = {
        "name": "tune-learn",
        "description": "casslab tune learn: compaction x TTL x read share",
        "lab": {"nodes": ls.nodes, "profile": ls.profile},
        "workload": {"name": "iot", "options": ls.option_mapping()},
        "factors": [
            {"name": COMPACTION,
             "levels": [twcs_map(w, m) for w in ls.windows_min for m in ls.min_thresholds]
             + [ucs_map(sp) for sp in ls.ucs_scaling]},
            {"name": TTL_FACTOR, "levels": list(ls.ttls_s)},
            {"name": MIX_FACTOR, "levels": [mix_for(s) for s in ls.read_shares]},
        ],
        # Shuffled: in spec order every trial of one compaction setting would run in
        # one stretch of time, and a drift of the machine would look like its effect.
        "design": {"trials": ls.trials, "warmup_trials": 0, "reset": "recreate",
                   "randomize": True, "seed": 1},
        "stop": {"duration_s": ls.duration_s, "timeout_s": ls.duration_s * 3 + 60},
        "analysis": {"response": "ops_s"},
    }
    return parse_spec(yaml.safe_dump(doc, sort_keys=False), source="tune learn")


def _map_options(text: str) -> dict[str, str]:
    loaded = yaml.safe_load(text)
    return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}


def _alternative(opts: dict[str, str], trials: list[TrialRow],
                 peaks: dict[int, float]) -> dict[str, Any]:
    """One compaction setting of a cell: its options and what its trials measured."""
    if strategy_of(opts.get("class", "")) == "ucs":
        setting: dict[str, Any] = {"scaling_parameters": opts["scaling_parameters"]}
    else:
        setting = {"compaction_window_size": int(opts["compaction_window_size"]),
                   "compaction_window_unit": opts.get("compaction_window_unit", "MINUTES"),
                   "min_threshold": int(opts.get("min_threshold", 4))}
    ops = [t.response("ops_s") for t in trials]
    disk = [d for d in (peaks.get(t.trial_id) for t in trials) if d is not None]
    return {**setting,
            "ops_s": round(statistics.mean(ops), 1),
            "ops_s_sd": round(statistics.stdev(ops), 1) if len(ops) > 1 else None,
            "mean_ms": round(statistics.mean(t.response("mean_ms") for t in trials), 3),
            "p99_ms": round(statistics.mean(t.response("p99_ms") for t in trials), 3),
            "disk_peak_mib": round(max(disk), 1) if disk else None,
            "trials": len(trials)}


def _served_counts(results: Results) -> dict[int, tuple[int, int]]:
    """Per trial, the coordinator reads and writes its node metrics saw (count deltas of
    system_views coordinator_*_latency, summed over nodes and tables)."""
    return {tid: (k.get("read", 0), k.get("write", 0))
            for tid, k in results.coordinator_requests().items()}


def served_share(trials: list[TrialRow], served: dict[int, tuple[int, int]]) -> float | None:
    """The read share the nodes served in these trials, in the tuner's own terms: read and
    write requests counted at the coordinator. This is not the workload mix: on this lab
    the node counts ~1.4 read requests per iot read operation after a minute, more as
    partitions grow (paged reads of whole partitions, we think; not traced), so a 10 % mix
    is served as 14 % reads, and points labelled by the mix would be looked up wrongly."""
    reads = writes = 0
    for t in trials:
        r, w = served.get(t.trial_id, (0, 0))
        reads, writes = reads + r, writes + w
    return round(reads / (reads + writes), 4) if reads + writes else None


_MEASURED = ("ops_s", "ops_s_sd", "mean_ms", "p99_ms", "disk_peak_mib", "trials")


def rules_from_results(results: Path, *, interpolate: bool = False) -> RulesTable:
    """For each (TTL, read share) and strategy swept, the compaction that did the most
    operations per second (ties: lower mean latency), with every alternative's
    measurements."""
    store, repo = Results.open(results)
    with store:
        rows = repo.kept_trials()
        peaks = repo.peak_data_mib()
        served = _served_counts(repo)
    if not rows:
        raise UsageError(f"{results}: no finished trials to learn from")
    cells: dict[tuple[str, float, float], dict[str, list[TrialRow]]] = {}
    options: dict[str, dict[str, str]] = {}  # each compaction map parsed once
    # One served share per mix level (over every trial with that mix), so the points stay
    # on a grid (interpolation needs one) and each share rests on many trials.
    by_mix: dict[float, list[TrialRow]] = {}
    for r in rows:
        p = r.cell_params
        comp = str(p[COMPACTION])
        opts = options.setdefault(comp, _map_options(comp))
        key = (strategy_of(opts.get("class", "")),
               float(p[TTL_FACTOR]), share_of(str(p[MIX_FACTOR])))
        cells.setdefault(key, {}).setdefault(comp, []).append(r)
        by_mix.setdefault(key[2], []).append(r)
    seen_by_mix = {share: served_share(trials, served) for share, trials in by_mix.items()}
    points: dict[str, list[RulePoint]] = {"twcs": [], "ucs": []}
    for (strategy, ttl, share), by_comp in sorted(cells.items()):
        if strategy not in points:
            continue
        alts = [_alternative(options[comp], trials, peaks)
                for comp, trials in by_comp.items()]
        best = max(alts, key=lambda a: (float(a["ops_s"]), -float(a["mean_ms"])))
        seen = seen_by_mix[share]
        points[strategy].append(RulePoint(
            ttl, seen if seen is not None else share,
            {k: str(v) for k, v in best.items() if k not in _MEASURED},
            {"chosen_by": "max ops_s, then min mean_ms",
             "read_share": ("coordinator read/(read+write) requests counted by the node(s) "
                            "during the trials, as the tuner measures it"
                            if seen is not None else "the workload mix (no node counts)"),
             "mix_read_share": share, "best": best,
             "alternatives": sorted(alts, key=lambda a: [a[k] for k in sorted(a)
                                                         if k not in _MEASURED]),
             "results": str(results)}))
    every = [p for pts in points.values() for p in pts]
    ttls = [p.ttl_s for p in every]
    shares = [p.read_share for p in every]
    return RulesTable({k: tuple(v) for k, v in points.items()}, interpolate=interpolate,
                      scale_ttl_s=(max(ttls) - min(ttls)) or 3600.0,
                      scale_read_share=round(max(shares) - min(shares), 4) or 0.1,
                      source=f"casslab tune learn ({results})")


def default_results(ls: LearnSpec) -> Path:
    """results/tune-learn-<digest of the sweep's spec>: the same sweep resumes there and
    another gets its own (one fixed default made a second sweep with other levels refuse
    the first one's directory as another spec's results)."""
    return Path("results") / f"tune-learn-{build_spec(ls).digest[:8]}"


def learn(ls: LearnSpec, results: Path, *, home: Path, cache: Path, lab_name: str | None = None,
          on_event: Callable[[Event], None] | None = None) -> RulesTable:
    """Run the sweep (resumable: an existing results directory continues) and return the
    rules. The campaign's lab is taken down at the end, as the runner always does."""
    runner = CampaignRunner(build_spec(ls), results, home=home, cache=cache,
                            lab_name=lab_name or "tune-learn", on_event=on_event)
    runner.run()
    return rules_from_results(results)
