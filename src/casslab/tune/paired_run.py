"""A paired comparison of compaction tuning on real labs: seed 003's four-stage IoT
scenario (casslab.tune.paired) run by two arms, e.g. static compaction vs the online
tuner, `reps` times.

Side by side (the default), the arms run at the same time on two 1-node labs, each node
and its load client pinned to its own core, and swap cores every repetition: both arms
see the same disturbances of the machine (builds, JIT, the other lab), which sequential
runs of tens of minutes cannot promise. Sequentially, they take turns on one lab.

Each stage is one casslab-load run of a one-stage stages file (its mix and write TTL), so
each has its own exact latency histogram; the table's default TTL is ALTERed at each
stage start, as the scenario's operators did. A `dynamic` arm runs a Tuner in a thread
every 10 s on count-delta rates (the five-minute rate would span several compressed
stages), at least 30 s between changes; `observe` runs it in dry run (the cost of
watching). Every arm's stage is a trial in the results store (cells: mode x stage) with
the metrics Sampler's node samples and the audit records its tuner wrote during it (the
results' tuner_audit, as for a campaign's `tuner` factor, whose TunerThread this is);
each tuner's whole audit log also lies beside the store in audit/.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from casslab.cassandra import catalog
from casslab.cassandra.compaction import class_name, cql_map
from casslab.cassandra.cql import NATIVE_PORT
from casslab.core.errors import CasslabError, UsageError
from casslab.lab import Lab, LabOptions
from casslab.load import LoadResult, LoadSpec, run_load
from casslab.metrics.sampler import NodeTarget, Sampler
from casslab.metrics.samples import TrialMetrics
from casslab.store.db import Store
from casslab.testbed import open_lab
from casslab.tune.audit import AuditLog
from casslab.tune.decide import Policy
from casslab.tune.factor import TunerThread
from casslab.tune.paired import (
    SCENARIO,
    Arm,
    StagePlan,
    StageResult,
    cell_index,
    cell_key,
    check_modes,
    digest_input,
    schedule,
    stage_plan,
    trial_seq,
)
from casslab.tune.rules import RulesTable

KEYSPACE = "iot_cmp"
TABLE = "sensor_data"
T = TypeVar("T")


class ComparisonError(CasslabError):
    """A paired comparison could not run an arm (lab, core pinning or tuner)."""


@dataclass(frozen=True)
class CompareOptions:
    """What a comparison runs. load_options: casslab-load options of every run (e.g.
    {"devices": 100, "in-flight": 16}); results: the results store directory (audit logs
    in its audit/); out: a JSON document rewritten after every repetition (None: none)."""

    results: Path
    home: Path
    cache: Path
    load_options: dict[str, Any] = field(default_factory=dict)
    reps: int = 1
    time_scale: float = 0.05
    stage_scale: float = 0.01
    modes: tuple[str, ...] = ("static", "dynamic")
    side_by_side: bool = True
    lab_name: str = "tunecmp"
    profile: str = "host"
    keep_lab: bool = False  # sequential only: the side-by-side labs always go
    warmup_s: int = 90
    out: Path | None = None
    tuner_interval_s: float = 10.0
    tuner_min_change_interval_s: float = 30.0
    sample_interval_s: float = 5.0


@dataclass(frozen=True)
class _Context:
    opts: CompareOptions
    rules: RulesTable
    plans: list[StagePlan]
    modes: tuple[str, str]
    head: dict[str, Any]
    sink: TrialSink
    say: Callable[[str], None]


def run_comparison(opts: CompareOptions, rules: RulesTable, *,
                   on_message: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the comparison; returns its document (head and every run's stage results).

    Raises UsageError (bad modes, reps or scales), StoreError (the results directory holds
    another comparison), lab and load errors; the labs are taken down in every case.
    """
    modes = check_modes(tuple(opts.modes))
    plans = stage_plan(opts.time_scale, opts.stage_scale)
    pairs = schedule(opts.reps, modes)
    head = comparison_head(opts, rules, modes)
    # Opens the store now, so another comparison's results fail before any lab starts.
    say = on_message or (lambda _m: None)
    sink = TrialSink(opts.results, head, modes, len(plans), say=say)
    ctx = _Context(opts, rules, plans, modes, head, sink, say)
    labs = [open_lab(f"{opts.lab_name}{i}" if opts.side_by_side else opts.lab_name,
                     home=opts.home, cache=opts.cache)
            for i in range(2 if opts.side_by_side else 1)]
    runs: list[dict[str, Any]] = []
    t0 = time.time()
    try:
        _bring_up(ctx, labs)
        _warm_up(ctx, labs)
        for pair in pairs:
            ctx.say(_pair_line(opts, pair))
            for arm, stages in zip(pair, _run_pair(ctx, labs, pair), strict=True):
                runs.append({"rep": arm.rep, "mode": arm.mode,
                             **({"core": arm.position} if opts.side_by_side else {}),
                             "stages": [asdict(s) for s in stages]})
            _write_doc(opts.out, _doc(ctx.head, runs, t0))
    finally:
        _take_down(opts, labs)
    return _doc(ctx.head, runs, t0)


def comparison_head(opts: CompareOptions, rules: RulesTable,
                    modes: tuple[str, str]) -> dict[str, Any]:
    """What a comparison was: written above its runs and as the store's campaign spec."""
    return {"scenario": [[s.ttl_h, s.read_share, s.minutes] for s in SCENARIO],
            "reps": opts.reps, "disk_excludes_snapshots": True,
            "disk_scope": "node's data directory (all keyspaces, auto_snapshot off)",
            "rules": rules.source,
            "time_scale": opts.time_scale, "stage_scale": opts.stage_scale,
            "profile": opts.profile, "load_options": opts.load_options,
            "modes": list(modes), **({"parallel": True} if opts.side_by_side else {}),
            "results": str(opts.results)}


def _doc(head: dict[str, Any], runs: list[dict[str, Any]], t0: float) -> dict[str, Any]:
    return {**head, "elapsed_s": round(time.time() - t0), "runs": runs}


def _write_doc(out: Path | None, doc: dict[str, Any]) -> None:
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1))


def _pair_line(opts: CompareOptions, pair: tuple[Arm, Arm]) -> str:
    a, b = pair
    if opts.side_by_side:
        return f"rep {a.rep}: {a.mode} on core 0, {b.mode} on core 1"
    return f"rep {a.rep}: {a.mode}, then {b.mode}"


# ---- labs ------------------------------------------------------------------------------


def _bring_up(ctx: _Context, labs: list[Lab]) -> None:
    """Fresh labs side by side, each node pinned to its core; sequentially, the lab as
    found when it runs. auto_snapshot off: the DROP KEYSPACE that starts every arm would
    otherwise leave the previous arm's data in the node's data directory."""
    options = LabOptions(nodes=1, profile=ctx.opts.profile, overrides=["auto_snapshot=false"])
    for core, lab in enumerate(labs):
        if ctx.opts.side_by_side and lab.exists():
            lab.down(wipe=True)
        if not lab.exists() or not lab.is_running():
            ctx.say(f"building lab {lab.name}")
            lab.up(options)
        if ctx.opts.side_by_side:
            _pin_nodes(lab, core)


def _take_down(opts: CompareOptions, labs: list[Lab]) -> None:
    for lab in labs:
        if lab.exists() and (opts.side_by_side or not opts.keep_lab):
            lab.down(wipe=True)


def _pin_nodes(lab: Lab, core: int) -> None:
    for n in lab.state().nodes:
        cmd = ["taskset", "-a", "-p", "-c", str(core), str(n.pid)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise ComparisonError(f"pinning node {n.name} (pid {n.pid}) to core {core}: "
                                  f"{done.stderr.strip() or done.returncode}")


def _core(ctx: _Context, arm: Arm) -> int | None:
    return arm.position if ctx.opts.side_by_side else None


def _client_prefix(lab: Lab, core: int | None) -> list[str]:
    """Runs the load client inside the lab, on `core` when given."""
    return [*lab.exec_prefix(), *(["taskset", "-c", str(core)] if core is not None else [])]


def _hosts(lab: Lab) -> list[str]:
    return [f"{n.address}:{NATIVE_PORT}" for n in lab.state().nodes]


def _load(lab: Lab, core: int | None, options: dict[str, Any]) -> LoadResult:
    return run_load(LoadSpec.of("iot", {"keyspace": KEYSPACE, **options}), hosts=_hosts(lab),
                    prefix=_client_prefix(lab, core))


# ---- running ---------------------------------------------------------------------------


def _side_by_side(jobs: list[Callable[[], T]]) -> list[T]:
    """Runs the callables in threads at once; their results in order, or the first error."""
    results: list[T | None] = [None] * len(jobs)
    errors: list[BaseException] = []

    def call(i: int) -> None:
        try:
            results[i] = jobs[i]()
        except BaseException as e:  # re-raised in the caller's thread below
            errors.append(e)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return [r for r in results if r is not None]


def _warm_up(ctx: _Context, labs: list[Lab]) -> None:
    """Unrecorded load: a fresh JVM runs its first minutes interpreted (without this the
    first run, rep 1 static, was a third slower than identical later ones)."""
    if ctx.opts.warmup_s <= 0:
        return
    ctx.say(f"warm-up {ctx.opts.warmup_s} s (not recorded)")
    options = {**ctx.opts.load_options, "drop": True, "duration": f"{ctx.opts.warmup_s}s"}
    _side_by_side([partial(_load, lab, core if ctx.opts.side_by_side else None, options)
                   for core, lab in enumerate(labs)])


def _run_pair(ctx: _Context, labs: list[Lab], pair: tuple[Arm, Arm]) -> list[list[StageResult]]:
    if ctx.opts.side_by_side:
        return _side_by_side([partial(_run_arm, ctx, labs[arm.position], arm)
                              for arm in pair])
    return [_run_arm(ctx, labs[0], arm) for arm in pair]


def _run_arm(ctx: _Context, lab: Lab, arm: Arm) -> list[StageResult]:
    """One pass of the scenario by one arm; its stages are recorded as they end."""
    core = _core(ctx, arm)
    first = ctx.plans[0]
    start = ctx.rules.choose("twcs", first.ttl_s, first.read_share).options
    _load(lab, core, {**ctx.opts.load_options, "drop": True, "ops": 1, "mix": "lesrow=1",
                      "table-ttl-s": first.ttl_s,
                      "compaction": cql_map({"class": class_name("twcs"),
                                             **start})})
    tuner = None if arm.mode == "static" else _tuner_thread(ctx, lab, arm)
    try:
        with lab.cql() as cql:
            results = []
            for plan in ctx.plans:
                cql.execute(f"ALTER TABLE {KEYSPACE}.{TABLE} WITH default_time_to_live = "
                            f"{plan.ttl_s}", timeout_s=60)
                result, metrics = _measure(ctx, lab, arm, plan)
                stage = stage_result(plan, result, metrics,
                                     catalog.table_compaction(cql, KEYSPACE, TABLE) or {},
                                     os.getloadavg()[0])
                ctx.sink.record(arm, plan, core, result, metrics,
                                audit=tuner.take() if tuner is not None else [])
                ctx.say(_stage_line(arm, core, stage))
                results.append(stage)
    finally:
        # Stopped in every case; its own failure is raised only when the stages ran
        # (else it would hide the stage's error).
        error = _tuner_error(arm, tuner.finish()) if tuner is not None else None
    if error is not None:
        raise error
    return results


def _measure(ctx: _Context, lab: Lab, arm: Arm, plan: StagePlan
             ) -> tuple[LoadResult, TrialMetrics]:
    # CQL metrics off: their queries would load the node beside the tuner's own, and the
    # comparison measures what the tuner costs and gains, nothing more.
    sampler = Sampler([NodeTarget(n.name, n.pid, n.address, Path(n.directory) / "data")
                       for n in lab.state().nodes], interval_s=ctx.opts.sample_interval_s)
    with tempfile.TemporaryDirectory(prefix="casslab-paired-") as tmp:
        stages_file = Path(tmp) / "stages.yaml"
        stages_file.write_text(json.dumps({"stages": [
            {"name": f"stage{plan.stage}", "duration": f"{plan.duration_s:g}s",
             "mix": plan.mix, "ttl_s": plan.ttl_s}]}))
        sampler.start()
        try:
            result = _load(lab, _core(ctx, arm), stage_options(ctx.opts.load_options,
                                                               stages_file, arm.rep, plan))
        finally:
            metrics = sampler.stop()
    return result, metrics


def stage_options(load_options: dict[str, Any], stages_file: Path, rep: int,
                  plan: StagePlan) -> dict[str, Any]:
    """casslab-load options of one stage: the comparison's, its stages file and a seed
    that differs per repetition and stage but not per arm (both arms send the same)."""
    return {**load_options, "stages": str(stages_file), "seed": rep * 10 + plan.stage}


def stage_result(plan: StagePlan, result: LoadResult, metrics: TrialMetrics,
                 compaction: dict[str, str], load_avg_1m: float) -> StageResult:
    s = result.summary
    # The merged histogram of every operation type, as the store's 'ALL' row (a p99 of
    # all operations; never a mean or max of per-type percentiles).
    overall = s.all_ops()
    if overall is None:
        raise UsageError("casslab-load printed no 'all' block: rebuild it (cargo build "
                         "--release)")
    mean_ms = overall.latency.mean_us / 1000
    p99_ms = overall.latency.p99_us / 1000
    return StageResult(plan.stage, plan.ttl_s, plan.read_share, round(s.elapsed_s, 1), s.ops,
                       round(s.ops_s, 1), round(mean_ms, 3), round(p99_ms, 3), s.errors,
                       round(disk_peak_mib(metrics), 1), compaction, round(load_avg_1m, 2))


def disk_peak_mib(metrics: TrialMetrics) -> float:
    """The largest total of the nodes' data directories at one sampling time (MiB)."""
    by_t: dict[float, float] = {}
    for s in metrics.nodes:
        if s.data_mib is not None:
            by_t[s.t_s] = by_t.get(s.t_s, 0.0) + s.data_mib
    return max(by_t.values(), default=0.0)


def _stage_line(arm: Arm, core: int | None, s: StageResult) -> str:
    where = "" if core is None else f" (core {core})"
    return (f"  {arm.mode:<7}{where} stage {s.stage}: {s.ops} ops ({s.ops_s:.0f}/s), mean "
            f"{s.mean_ms:.2f} ms, p99 {s.p99_ms:.2f} ms, disk peak {s.disk_peak_mib} MiB, "
            f"window {s.compaction_at_end.get('compaction_window_size')} min_threshold "
            f"{s.compaction_at_end.get('min_threshold')}")


def _tuner_thread(ctx: _Context, lab: Lab, arm: Arm) -> TunerThread:
    """The arm's tuner (dry run for `observe`), auditing to the results' audit/."""
    hosts = [n.address for n in lab.state().nodes]
    return TunerThread(hosts, lab.state().netns, KEYSPACE, ctx.rules,
                       audit=AuditLog(ctx.opts.results / "audit" / f"{arm.mode}{arm.rep}.jsonl"),
                       interval_s=ctx.opts.tuner_interval_s,
                       policy=Policy(min_interval_s=ctx.opts.tuner_min_change_interval_s),
                       dry_run=arm.mode == "observe", name=f"tuner-{arm.mode}")


def _tuner_error(arm: Arm, error: CasslabError | None) -> ComparisonError | None:
    """The arm's tuner failure as the comparison's error (that arm did not tune)."""
    if error is None:
        return None
    return ComparisonError(f"rep {arm.rep} {arm.mode}: tuner failed: {error}")


# ---- results store ---------------------------------------------------------------------


class TrialSink:
    """Every call on the results store is here. Creating one opens (or finds) the
    comparison's campaign (StoreError: the directory holds another's); record() writes
    one arm's stage as one trial. A lock orders the two arms' writers (each through its
    own connection: sqlite3 objects stay in their thread)."""

    _lock = threading.Lock()

    def __init__(self, results: Path, head: dict[str, Any], modes: tuple[str, str],
                 stages: int, *, say: Callable[[str], None] | None = None) -> None:
        self.results, self.modes, self.stages = results, modes, stages
        spec = json.dumps(digest_input(head), sort_keys=True)
        self.campaign: dict[str, Any] = {
            "name": f"paired {modes[0]} vs {modes[1]}", "spec_yaml": spec,
            "digest": hashlib.sha256(spec.encode()).hexdigest()[:16], "response": "ops_s",
            "factors": [{"name": "mode", "kind": "workload", "label": "mode",
                         "levels": list(modes)},
                        {"name": "stage", "kind": "workload", "label": "stage",
                         "levels": list(range(1, stages + 1))}]}
        # Given the digest, another comparison's directory is refused before anything in
        # it is written (an older database is not migrated first).
        with self._lock, Store(results, campaign=self.campaign["digest"]) as store:
            if store.migration is not None and say is not None:
                say(store.migration.note)
            store.open_campaign(**self.campaign)

    def record(self, arm: Arm, plan: StagePlan, core: int | None, result: LoadResult,
               metrics: TrialMetrics, *, audit: list[dict[str, Any]] | None = None) -> None:
        seq = trial_seq(arm, plan.stage, self.stages)
        cell = {"mode": arm.mode, "stage": plan.stage}
        params = {**cell, "rep": arm.rep, "core": core, "ttl_s": plan.ttl_s,
                  "read_share": plan.read_share, "duration_s": plan.duration_s}
        ok = result.summary.ended_by == "completed"
        with self._lock, Store(self.results, campaign=self.campaign["digest"]) as store:
            cid, _ = store.open_campaign(**self.campaign)
            ids = store.ensure_plan(cid, [(seq, cell_index(self.modes, arm.mode, plan.stage,
                                                           self.stages),
                                           cell_key(arm.mode, plan.stage), cell, arm.rep,
                                           False, "recreate")])
            store.mark_running(ids[seq][0], params, "recreate")
            store.commit_trial(ids[seq][0], summary=result.summary.raw,
                               intervals=result.intervals, metrics=metrics,
                               command=result.command, status="done" if ok else "failed",
                               error=None if ok else f"load ended by {result.summary.ended_by}",
                               audit=audit)
