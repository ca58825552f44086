"""Seed 003's four-stage scenario in compressed time, tuner off (static optimal start)
and on: operations, mean and p99 latency, and disk space peak per stage.

The scenario (C*DynaConf, section 4.1): TTL 1 h / 10 % reads for 150 min, 2 h / 30 %
for 200 min, 3 h / 3 % for 300 min, 1 h / 10 % for 150 min. Compressed here:
- TTLs and TWCS windows x TIME_SCALE (0.05: TTL 3 / 6 / 9 min; the rules are seed 003's
  Table 2 scaled alike, so stage 1 starts at its optimum: window 1 min, min_threshold 6);
- stages x STAGE_SCALE (0.01: 1.5 / 2 / 3 / 1.5 min).
Each stage is one casslab-load run of a one-stage stages file (its mix and write TTL),
so each stage has its own exact latency histogram; the table's default TTL is ALTERed
at each stage start, as the scenario's operators did. With the tuner on, a Tuner runs
in a thread every 10 s on count-delta rates (the five-minute rate would span several
compressed stages), minimum 30 s between changes of the table.

    .venv/bin/python scripts/tune_compare.py --reps 1 --out results/tune-compare.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from casslab.cassandra.cql import CqlClient
from casslab.core.errors import UsageError
from casslab.core.paths import default_cache, default_home
from casslab.lab import Lab, LabOptions
from casslab.load import LoadSpec, RunSummary, run_load
from casslab.metrics.sampler import du_mib
from casslab.testbed import open_lab
from casslab.tune.audit import AuditLog
from casslab.tune.compaction import cql_map
from casslab.tune.decide import Policy
from casslab.tune.learn import mix_for
from casslab.tune.loop import Tuner
from casslab.tune.observe import as_map
from casslab.tune.rules import RulesError, RulesTable, load_rules, seed003_rules

KS = "iot_cmp"
TABLE = "sensor_data"
# (TTL hours, read share, minutes) of seed 003's scenario.
SCENARIO = [(1, 0.10, 150), (2, 0.30, 200), (3, 0.03, 300), (1, 0.10, 150)]


@dataclass
class StageResult:
    stage: int
    ttl_s: int
    read_share: float
    duration_s: float
    ops: int
    ops_s: float
    mean_ms: float
    p99_ms: float
    errors: int
    disk_peak_mib: float
    compaction_at_end: dict[str, str]
    load_avg_1m: float  # of the machine at the stage's end: is anything else running?


def summary_stats(s: RunSummary) -> tuple[float, float]:
    """Ops-weighted mean latency and the worst p99 over operation types (ms), as the
    results store's 'ALL' row does."""
    live = [o for o in s.by_op if o.ops > 0]
    total = sum(o.ops for o in live) or 1
    mean = sum(o.latency.mean_us * o.ops for o in live) / total / 1000
    p99 = max((o.latency.p99_us for o in live), default=0) / 1000
    return mean, p99


def live_mib(keyspace_dir: Path) -> float:
    """Allocated MiB of a keyspace's table directories without their snapshots (DROP
    KEYSPACE leaves an auto-snapshot of the previous run behind)."""
    if not keyspace_dir.exists():
        return 0.0
    total = 0.0
    for table_dir in keyspace_dir.iterdir():
        for entry in table_dir.iterdir() if table_dir.is_dir() else []:
            if entry.name == "snapshots":
                continue
            if entry.is_dir():
                total += du_mib(entry) or 0.0
            else:
                try:
                    total += entry.stat().st_blocks * 512 / 2**20
                except OSError:
                    continue  # removed by a compaction meanwhile
    return total


class DiskSampler(threading.Thread):
    """Samples the keyspace's live data size (snapshots excluded) every `interval_s`."""

    def __init__(self, data_dirs: list[Path], interval_s: float = 5.0) -> None:
        super().__init__(daemon=True)
        self.dirs = data_dirs
        self.interval_s = interval_s
        self.stop = threading.Event()
        self.peak_mib = 0.0
        self.lock = threading.Lock()

    def take_peak(self) -> float:
        with self.lock:
            peak, self.peak_mib = self.peak_mib, 0.0
        return peak

    def run(self) -> None:
        while not self.stop.is_set():
            total = sum(live_mib(d) for d in self.dirs)
            with self.lock:
                self.peak_mib = max(self.peak_mib, total)
            self.stop.wait(self.interval_s)


def client_prefix(lab: Lab, cpu: int | None) -> list[str]:
    """Runs the load client inside the lab, on core `cpu` when given."""
    return [*lab.exec_prefix(), *(["taskset", "-c", str(cpu)] if cpu is not None else [])]


def pin_nodes(lab: Lab, cpu: int) -> None:
    for n in lab.state().nodes:
        subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(n.pid)], check=True,
                       capture_output=True)


def warm_up(lab: Lab, seconds: int, load_options: dict[str, Any],
            cpu: int | None = None) -> None:
    """Unrecorded load: a fresh JVM runs its first minutes interpreted (without this the
    first run, rep 1 static, was a third slower than identical later ones)."""
    run_load(LoadSpec.of("iot", {"keyspace": KS, "drop": True, "duration": f"{seconds}s",
                                 **load_options}),
             hosts=[f"{n.address}:9042" for n in lab.state().nodes],
             prefix=client_prefix(lab, cpu))


def run_scenario(lab: Lab, *, mode: str, rules: RulesTable, time_scale: float,
                 stage_scale: float, seed: int, audit: Path | None,
                 load_options: dict[str, Any], cpu: int | None = None) -> list[StageResult]:
    """One pass of the scenario; `mode` is static (no tuner), dynamic (tuner on) or
    observe (tuner in dry run)."""
    state = lab.state()
    hosts = [n.address for n in state.nodes]
    targets = [f"{h}:9042" for h in hosts]
    prefix = client_prefix(lab, cpu)
    ttl1 = int(SCENARIO[0][0] * 3600 * time_scale)
    start = rules.choose("twcs", ttl1, SCENARIO[0][1]).options
    static_map = {"class": "TimeWindowCompactionStrategy", **start}
    run_load(LoadSpec.of("iot", {"keyspace": KS, "drop": True, "ops": 1, "mix": "lesrow=1",
                                 "table-ttl-s": ttl1, "compaction": cql_map(static_map),
                                 **load_options}), hosts=targets, prefix=prefix)
    disk = DiskSampler([Path(n.directory) / "data" / KS for n in state.nodes])
    disk.start()
    stop = threading.Event()
    tuner_thread = None
    log = AuditLog(audit)
    if mode != "static":
        def tune() -> None:
            with CqlClient(hosts, netns=state.netns) as tcql:
                Tuner(tcql, hosts, KS, rules, policy=Policy(min_interval_s=30.0),
                      audit=log, rate_source="delta",
                      dry_run=mode == "observe").run(interval_s=10.0, stop=stop)
        tuner_thread = threading.Thread(target=tune, daemon=True)
        tuner_thread.start()
    results = []
    try:
        with lab.cql() as cql:
            for i, (hours, share, minutes) in enumerate(SCENARIO, 1):
                ttl = int(hours * 3600 * time_scale)
                duration_s = minutes * 60 * stage_scale
                cql.execute(f"ALTER TABLE {KS}.{TABLE} WITH default_time_to_live = {ttl}",
                            timeout_s=60)
                with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
                    json.dump({"stages": [{"name": f"stage{i}", "duration": f"{duration_s:g}s",
                                           "mix": mix_for(share), "ttl_s": ttl}]}, f)
                    stages_file = f.name
                s = run_load(LoadSpec.of("iot", {"keyspace": KS, "stages": stages_file,
                                                 "seed": seed * 10 + i, **load_options}),
                             hosts=targets, prefix=prefix).summary
                Path(stages_file).unlink()
                mean, p99 = summary_stats(s)
                comp = cql.execute("SELECT compaction FROM system_schema.tables WHERE "
                                   "keyspace_name = %s AND table_name = %s", [KS, TABLE]).rows
                results.append(StageResult(i, ttl, share, round(s.elapsed_s, 1), s.ops,
                                           round(s.ops_s, 1), round(mean, 3), round(p99, 3),
                                           s.errors, round(disk.take_peak(), 1),
                                           as_map(comp[0][0]), round(os.getloadavg()[0], 2)))
                core = "" if cpu is None else f" (core {cpu})"
                print(f"  {mode:<7}{core} stage {i}: {s.ops} ops "
                      f"({s.ops_s:.0f}/s), mean {mean:.2f} ms, p99 {p99:.2f} ms, disk peak "
                      f"{results[-1].disk_peak_mib} MiB, window "
                      f"{results[-1].compaction_at_end.get('compaction_window_size')} "
                      f"min_threshold {results[-1].compaction_at_end.get('min_threshold')}",
                      flush=True)
    finally:
        stop.set()
        if tuner_thread:
            tuner_thread.join(timeout=60)
        disk.stop.set()
        disk.join(timeout=10)
        log.close()
    return results


def compare(*, reps: int, time_scale: float, stage_scale: float, lab_name: str,
            keep_lab: bool, out: Path, profile: str,
            load_options: dict[str, Any], warmup_s: int = 90,
            rules: RulesTable | None = None) -> dict[str, Any]:
    """Build a 1-node lab, run static and dynamic `reps` times (alternating), take the lab
    down; returns (and writes to `out`) every stage result. `rules` default: seed 003's,
    scaled by `time_scale`."""
    rules = rules or seed003_rules(time_scale=time_scale)
    lab = open_lab(lab_name, home=default_home(), cache=default_cache())
    runs: list[dict[str, Any]] = []
    t0 = time.time()
    head = _head(reps, time_scale, stage_scale, profile, load_options, rules)
    if not lab.exists() or not lab.is_running():
        lab.up(LabOptions(nodes=1, profile=profile))
    try:
        if warmup_s > 0:
            print(f"warm-up {warmup_s} s (not recorded)", flush=True)
            warm_up(lab, warmup_s, load_options)
        for rep in range(1, reps + 1):
            for mode in (("static", "dynamic") if rep % 2 else ("dynamic", "static")):
                print(f"rep {rep} {mode}", flush=True)
                stages = run_scenario(
                    lab, mode=mode, rules=rules, time_scale=time_scale,
                    stage_scale=stage_scale, seed=rep, load_options=load_options,
                    audit=out.with_suffix(f".{mode}{rep}.audit.jsonl"))
                runs.append({"rep": rep, "mode": mode, "stages": [asdict(s) for s in stages]})
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(_doc(head, runs, t0), indent=1))
    finally:
        if not keep_lab:
            lab.down(wipe=True)
    return _doc(head, runs, t0)


def compare_parallel(*, reps: int, time_scale: float, stage_scale: float, lab_name: str,
                     out: Path, profile: str, load_options: dict[str, Any],
                     warmup_s: int = 90,
                     modes: tuple[str, str] = ("static", "dynamic"),
                     rules: RulesTable | None = None) -> dict[str, Any]:
    """Static and dynamic at the same time on two 1-node labs, each node and its client
    pinned to one core; the modes swap cores every repetition. Run side by side, both
    modes see the same disturbances of the machine (builds, JIT, the other lab), which
    sequential runs of tens of minutes cannot promise. Mode `observe` runs the tuner in
    dry-run (reads rates and decides every 10 s, never ALTERs): the cost of watching."""
    rules = rules or seed003_rules(time_scale=time_scale)
    labs = [open_lab(f"{lab_name}{i}", home=default_home(), cache=default_cache()) for i in (0, 1)]
    runs: list[dict[str, Any]] = []
    t0 = time.time()
    head = {**_head(reps, time_scale, stage_scale, profile, load_options, rules),
            "parallel": True}
    try:
        for cpu, lab in enumerate(labs):
            if lab.exists():
                lab.down(wipe=True)
            lab.up(LabOptions(nodes=1, profile=profile))
            pin_nodes(lab, cpu)
        if warmup_s > 0:
            print(f"warm-up {warmup_s} s on both labs (not recorded)", flush=True)
            _side_by_side([lambda cpu=cpu, lab=lab: warm_up(lab, warmup_s, load_options, cpu)
                           for cpu, lab in enumerate(labs)])
        for rep in range(1, reps + 1):
            pair = modes if rep % 2 else (modes[1], modes[0])
            print(f"rep {rep}: {pair[0]} on core 0, {pair[1]} on core 1", flush=True)
            results = _side_by_side([lambda cpu=cpu, mode=mode, rep=rep: run_scenario(
                labs[cpu], mode=mode, rules=rules, time_scale=time_scale,
                stage_scale=stage_scale, seed=rep, load_options=load_options, cpu=cpu,
                audit=out.with_suffix(f".{mode}{rep}.audit.jsonl"))
                for cpu, mode in enumerate(pair)])
            for cpu, (mode, stages) in enumerate(zip(pair, results, strict=True)):
                runs.append({"rep": rep, "mode": mode, "core": cpu,
                             "stages": [asdict(s) for s in stages]})
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(_doc(head, runs, t0), indent=1))
    finally:
        for lab in labs:
            if lab.exists():
                lab.down(wipe=True)
    return _doc(head, runs, t0)


def _side_by_side(jobs: list[Any]) -> list[Any]:
    """Runs the callables in threads at once; their results in order, or the first error."""
    results: list[Any] = [None] * len(jobs)
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
    return results


def _head(reps: int, time_scale: float, stage_scale: float, profile: str,
          load_options: dict[str, Any], rules: RulesTable) -> dict[str, Any]:
    """What a comparison was: written above its runs."""
    return {"scenario": SCENARIO, "reps": reps, "disk_excludes_snapshots": True,
            "rules": rules.source, "time_scale": time_scale, "stage_scale": stage_scale,
            "profile": profile, "load_options": load_options}


def _doc(head: dict[str, Any], runs: list[dict[str, Any]], t0: float) -> dict[str, Any]:
    return {**head, "elapsed_s": round(time.time() - t0), "runs": runs}


def table(doc: dict[str, Any]) -> list[str]:
    """Markdown rows: per stage and mode, median and range over repetitions."""
    lines = ["| stage | TTL / reads | mode | ops (median, min-max) | mean ms | p99 ms | "
             "disk peak MiB | ops vs static |",
             "|---|---|---|---|---|---|---|---|"]
    by: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for run in doc["runs"]:
        for s in run["stages"]:
            by.setdefault((s["stage"], run["mode"]), []).append(s)
    for stage in sorted({k[0] for k in by}):
        base = statistics.median(s["ops"] for s in by.get((stage, "static"), [{"ops": 0}]))
        for mode in ("static", "dynamic", "observe"):
            rows = by.get((stage, mode))
            if not rows:
                continue
            ops = [r["ops"] for r in rows]
            gain = (f"{(statistics.median(ops) / base - 1):+.1%}" if base and mode != "static"
                    else "")

            def med(key: str, rows: list[dict[str, Any]] = rows) -> str:
                vals = [r[key] for r in rows]
                return (f"{statistics.median(vals):g} ({min(vals):g}-{max(vals):g})"
                        if len(vals) > 1 else f"{vals[0]:g}")
            lines.append(f"| {stage} | {rows[0]['ttl_s']} s / {rows[0]['read_share']:.0%} | "
                         f"{mode} | {med('ops')} | {med('mean_ms')} | {med('p99_ms')} | "
                         f"{med('disk_peak_mib')} | {gain} |")
    return lines


def exit_on_sigterm() -> None:
    """SIGTERM ends a comparison as Ctrl-C does, through the finally blocks that take the
    labs down (the default action killed the script alone and left both labs running);
    the load clients then end by themselves once their node is gone (--unreachable-after)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def rules_arg(ap: argparse.ArgumentParser, path: Path | None, time_scale: float) -> RulesTable:
    """The --rules file, or seed 003's rules scaled by `time_scale`; a bad file ends the
    script with the rules error in one line."""
    try:
        return load_rules(path) if path else seed003_rules(time_scale=time_scale)
    except RulesError as e:
        ap.error(str(e))


def main() -> int:
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--time-scale", type=float, default=0.05)
    ap.add_argument("--stage-scale", type=float, default=0.01)
    ap.add_argument("--lab", default="tunecmp")
    ap.add_argument("--profile", default="host")
    ap.add_argument("--keep-lab", action="store_true")
    ap.add_argument("--devices", type=int, default=100)
    ap.add_argument("--in-flight", type=int, default=16)
    ap.add_argument("--out", type=Path, default=Path("results/tune-compare.json"))
    ap.add_argument("--warmup-s", type=int, default=90, help="unrecorded load first (JIT)")
    ap.add_argument("--parallel", action="store_true",
                    help="run static and dynamic at once on two 1-node labs, one core each")
    ap.add_argument("--modes", default="static,dynamic",
                    help="with --parallel: the two modes (static, dynamic, observe = dry run)")
    ap.add_argument("--rules", type=Path,
                    help="rules file for the tuner and the static start (e.g. from `casslab "
                         "tune learn`; its TTLs in the scenario's compressed seconds); "
                         "default: seed 003's, scaled by --time-scale")
    a = ap.parse_args()
    load_options = {"devices": a.devices, "in-flight": a.in_flight}
    try:  # by casslab-load's rules now, not after a lab is up
        LoadSpec.of("iot", load_options, where="")
    except UsageError as exc:
        ap.error(str(exc))
    modes = tuple(a.modes.split(","))
    if len(modes) != 2 or not set(modes) <= {"static", "dynamic", "observe"}:
        ap.error(f"--modes {a.modes!r}: give two of static, dynamic, observe")
    if not a.parallel and modes != ("static", "dynamic"):
        ap.error("--modes needs --parallel (the sequential comparison runs static and dynamic)")
    rules = rules_arg(ap, a.rules, a.time_scale)
    if a.parallel:
        doc = compare_parallel(reps=a.reps, time_scale=a.time_scale,
                               stage_scale=a.stage_scale, lab_name=a.lab, out=a.out,
                               profile=a.profile, load_options=load_options,
                               warmup_s=a.warmup_s, modes=(modes[0], modes[1]),
                               rules=rules)
    else:
        doc = compare(reps=a.reps, time_scale=a.time_scale, stage_scale=a.stage_scale,
                      lab_name=a.lab, keep_lab=a.keep_lab, out=a.out, profile=a.profile,
                      load_options=load_options, warmup_s=a.warmup_s, rules=rules)
    print("\n".join(table(doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
