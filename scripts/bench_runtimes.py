"""`make bench` (runtimes part): process vs netns vs lxc, side by side in one run.

For each runtime, a 2-node lab (profile `--profile`, `host` by default) is brought up
and timed to ready (every node UN and answering CQL), then loaded with ycsb-a at RF 2
and run for `--ops` operations at the same client settings for every runtime; the
results are throughput, p50/p99 latency (from the intended start) and the nodes' CPU
per operation. The runtimes take turns within each repetition (process, netns, lxc,
process, ...), so a change of machine load hits all of them alike. The results
replace the runtimes section of BENCHMARKS.md, with the machine, date and load.

CPU per operation: user + system time of the nodes' JVMs (/proc/<pid>/stat, every
thread) during the run phase, over its operations; each JVM is alone in its cgroup
(on lxc: the container's init), so this is what the cgroup's cpuacct usage counts. The
kernel's work for the veth, bridge and router is charged to whichever task it
interrupts, so part of the network path's cost may land on the client or elsewhere.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchmd import machine, today, write_section

from casslab.core.paths import default_cache, default_home
from casslab.lab import Lab, LabOptions
from casslab.load.runner import LoadSpec, run_load
from casslab.testbed import open_lab

RUNTIMES = ("process", "netns", "lxc")
CQL_PORT = 9042
TICK_S = 1 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Trial:
    runtime: str
    ready_s: float
    ops_s: float
    p50_ms: float
    p99_ms: float
    cpu_us_per_op: float


def node_cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of these processes so far (all their threads)."""
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) * TICK_S  # utime, stime
    return total


def trial(runtime: str, args: argparse.Namespace) -> Trial:
    lab: Lab = open_lab(f"bench-rt-{runtime}", home=default_home(), cache=default_cache())
    if lab.exists():
        lab.down(wipe=True)
    started = time.monotonic()
    lab.up(LabOptions(nodes=2, runtime=runtime, profile=args.profile), lambda _: None)
    ready_s = time.monotonic() - started
    try:
        state = lab.state()
        hosts = [f"{n.address}:{CQL_PORT}" for n in state.nodes]
        client = {"records": args.records, "rf": 2, "workers": args.workers,
                  "in-flight": args.in_flight, "seed": 1}
        run_load(LoadSpec.of("ycsb-a", {**client, "phase": "load"}), hosts=hosts,
                 prefix=lab.exec_prefix())
        pids = [n.pid for n in state.nodes]
        cpu_before = node_cpu_s(pids)
        result = run_load(LoadSpec.of("ycsb-a", {**client, "phase": "run", "ops": args.ops}),
                          hosts=hosts, prefix=lab.exec_prefix())
        cpu_s = node_cpu_s(pids) - cpu_before
    finally:
        lab.down(wipe=True)
    s = result.summary
    overall = s.all_ops()
    if overall is None or s.ops == 0:
        raise SystemExit(f"{runtime}: the run phase recorded no operation")
    return Trial(runtime, ready_s, s.ops_s, overall.latency.p50_us / 1e3,
                 overall.latency.p99_us / 1e3, cpu_s / s.ops * 1e6)


METRICS = (("ready_s", "start-up to ready"), ("ops_s", "throughput"), ("p50_ms", "p50"),
           ("p99_ms", "p99"), ("cpu_us_per_op", "node CPU per op"))


def ratios(trials: list[Trial], base: str) -> dict[str, dict[str, list[float]]]:
    """runtime -> metric -> its value over `base`'s in the same repetition, one per
    repetition: the runtimes took turns, so a ratio compares them under one load."""
    out: dict[str, dict[str, list[float]]] = {}
    per_rep = len({t.runtime for t in trials})
    for start in range(0, len(trials), per_rep):
        rep = trials[start:start + per_rep]
        ref = next((t for t in rep if t.runtime == base), None)
        if ref is None:
            continue
        for t in rep:
            for attr, _ in METRICS:
                out.setdefault(t.runtime, {}).setdefault(attr, []).append(
                    getattr(t, attr) / getattr(ref, attr))
    return out


def table(trials: list[Trial], base: str) -> list[str]:
    """Medians of the per-repetition ratios to `base`, with their range."""
    lines = ["| runtime | " + " | ".join(f"{label} (x {base})" for _, label in METRICS)
             + " | runs |", "|---|" + "---:|" * len(METRICS) + "---:|"]
    by_rt = ratios(trials, base)
    for rt in RUNTIMES:
        if rt not in by_rt:
            continue
        if rt == base:
            lines.append(f"| {rt} | " + " | ".join("1 (reference)" for _ in METRICS)
                         + f" | {len(by_rt[rt]['ops_s'])} |")
            continue
        cells = []
        for attr, _ in METRICS:
            vals = by_rt[rt][attr]
            cells.append(f"{statistics.median(vals):.2f}" + (
                f" ({min(vals):.2f}-{max(vals):.2f})" if len(vals) > 1 else ""))
        lines.append(f"| {rt} | " + " | ".join(cells) + f" | {len(by_rt[rt]['ops_s'])} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--runtimes", default=",".join(RUNTIMES))
    ap.add_argument("--profile", default="host")
    ap.add_argument("--records", type=int, default=20_000)
    ap.add_argument("--ops", type=int, default=50_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--in-flight", type=int, default=16)
    ap.add_argument("--no-write", action="store_true", help="Print only, leave BENCHMARKS.md.")
    ap.add_argument("--note", default="The machine was shared with other jobs while this ran",
                    help="What else ran on the machine (goes into BENCHMARKS.md).")
    args = ap.parse_args()
    runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()]
    unknown = [r for r in runtimes if r not in RUNTIMES]
    if unknown or args.reps < 1:
        print(f"error: --runtimes: unknown {', '.join(unknown)} (valid: {', '.join(RUNTIMES)})"
              if unknown else "error: --reps must be >= 1", file=sys.stderr)
        return 2
    loads = [os.getloadavg()[0]]
    trials: list[Trial] = []
    for rep in range(args.reps):
        for rt in runtimes:
            loads.append(os.getloadavg()[0])
            t = trial(rt, args)
            trials.append(t)
            print(f"rep {rep + 1} {rt}: ready {t.ready_s:.1f} s, {t.ops_s:,.0f} ops/s, "
                  f"p50 {t.p50_ms:.2f} ms, p99 {t.p99_ms:.2f} ms, node CPU "
                  f"{t.cpu_us_per_op:.0f} µs/op", flush=True)
    loads.append(os.getloadavg()[0])
    base = "process" if "process" in runtimes else runtimes[0]
    lines = [f"Measured {today()} on {machine()}; Cassandra 5.0.6, 2 nodes, profile "
             f"`{args.profile}`, RF 2; ycsb-a, {args.records:,} records loaded, then "
             f"{args.ops:,} operations with {args.workers} workers x {args.in_flight} in flight "
             f"(`scripts/bench_runtimes.py`); {args.reps} repetition(s), runtimes taking turns. "
             f"1-minute load average {loads[0]:.1f} at the start, {loads[-1]:.1f} at the end, "
             f"{min(loads):.1f} to {max(loads):.1f} at the trials' starts "
             f"({args.note}).",
             "", *table(trials, base), "",
             f"Each cell: a runtime's value over the `{base}` lab's in the same repetition, "
             "median over the repetitions (range in brackets); below 1 is faster or cheaper "
             "for start-up, latency and CPU, slower for throughput. Absolute values are left "
             "out: the machine's other load inflated them by an amount that changed from "
             "trial to trial, which the ratios of neighbouring trials mostly cancel. "
             "Start-up: `lab up` to every node UN and answering CQL (lxc: root filesystem "
             "already cached). Node CPU per op: user + system time of the nodes' JVMs in the "
             "run phase over its operations (the kernel's veth, bridge and routing work is "
             "partly charged elsewhere)."]
    print("\n".join(lines))
    if not args.no_write:
        write_section("runtimes", "Node runtimes: process vs netns vs lxc", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
