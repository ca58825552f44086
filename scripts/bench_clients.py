"""`make bench` (load clients part): 1 vs 2 vs 4 casslab-load clients against the same lab.

A 1-node lab (profile `host`) is pinned to core 0 and every client to core 1, so the
clients compete for one core as K load hosts would not: the point is the cost of
splitting one run into K processes (connections, merging), not more client CPU. Each
run is stress write for a fixed time with the same total concurrency (64 requests in
flight, split over the clients), run through casslab.load.multi as a campaign does (K=1
is run_load itself). Client CPU per op = user + system CPU seconds of every process the
run started (the clients, for K > 1 the schema step and `casslab-load merge`, from
wait4) / ops. Runs of K = 1, 2, 4 alternate, `--reps` rounds; the medians are set side
by side. Results replace the `clients` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmd import machine, today, write_section

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from casslab.core.paths import default_cache, default_home  # noqa: E402
from casslab.lab import LabOptions  # noqa: E402
from casslab.load import LoadSpec  # noqa: E402
from casslab.load.multi import local_places, run_clients  # noqa: E402
from casslab.testbed import open_lab  # noqa: E402

NAME = "benchclients"
IN_FLIGHT = 64
COUNTS = (1, 2, 4)


@dataclass
class Measure:
    clients: int
    ops: int
    ops_s: float
    cpu_s: float
    p99_ms: float

    @property
    def us_per_op(self) -> float:
        return self.cpu_s / self.ops * 1e6


def _children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(k: int, prefix: list[str], hosts: list[str], duration_s: float,
            work: Path) -> Measure:
    spec = LoadSpec.of("stress-write", {"duration": duration_s, "workers": 1,
                                        "in-flight": IN_FLIGHT // k, "records": 1_000_000})
    before = _children_cpu_s()
    result = run_clients(spec, hosts=hosts, places=local_places(k, prefix, work / "there"),
                         work_dir=work / f"k{k}")
    cpu = _children_cpu_s() - before
    overall = result.summary.all_ops()
    p99 = overall.latency.p99_us / 1000 if overall else float("nan")
    return Measure(k, result.summary.ops, result.summary.ops_s, cpu, p99)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup-s", type=float, default=30.0,
                    help="a first run (one client), not counted: the node warms up (JIT, "
                         "memtables), which would favour whichever K ran later")
    ap.add_argument("--duration-s", type=float, default=15.0)
    args = ap.parse_args()
    load_before = os.getloadavg()
    lab = open_lab(NAME, home=default_home(), cache=default_cache())
    lab.up(LabOptions(nodes=1, profile="host"))
    runs: list[Measure] = []
    try:
        for n in lab.state().nodes:
            subprocess.run(["taskset", "-a", "-p", "-c", "0", str(n.pid)], check=True,
                           capture_output=True)
        hosts = [f"{n.address}:9042" for n in lab.state().nodes]
        prefix = [*lab.exec_prefix(), "taskset", "-c", "1"]
        with tempfile.TemporaryDirectory(prefix="bench-clients-") as tmp:
            warm = measure(1, prefix, hosts, args.warmup_s, Path(tmp) / "warm")
            print(f"warm-up (not counted): {warm.ops_s:,.0f} ops/s", flush=True)
            for rep in range(args.reps):
                # Rotated each round: with 3 rounds every K runs first, second and third.
                for k in COUNTS[rep % len(COUNTS):] + COUNTS[:rep % len(COUNTS)]:
                    m = measure(k, prefix, hosts, args.duration_s, Path(tmp) / f"r{rep}")
                    print(f"rep {rep + 1} clients {k}: {m.ops_s:,.0f} ops/s, "
                          f"{m.us_per_op:.2f} us/op, p99 {m.p99_ms:.2f} ms", flush=True)
                    runs.append(m)
    finally:
        lab.down(wipe=True)
    load_after = os.getloadavg()
    write_section("clients", "Several load clients: 1 vs 2 vs 4 on one machine",
                  report(runs, args, load_before, load_after))


def report(runs: list[Measure], args: argparse.Namespace,
           load_before: tuple[float, float, float],
           load_after: tuple[float, float, float]) -> list[str]:
    med = {k: (statistics.median(m.ops_s for m in runs if m.clients == k),
               statistics.median(m.us_per_op for m in runs if m.clients == k),
               statistics.median(m.p99_ms for m in runs if m.clients == k)) for k in COUNTS}
    base_ops, base_cpu = med[1][0], med[1][1]
    lines = [
        f"Measured {today()} on {machine()}; load average (1, 5, 15 min) "
        f"{' '.join(f'{x:.2f}' for x in load_before)} before, "
        f"{' '.join(f'{x:.2f}' for x in load_after)} after (the machine is shared). One "
        "node (profile `host`, Cassandra 5.0.6) pinned to core 0, all clients pinned to "
        f"core 1; stress write for {args.duration_s:g} s per run, {IN_FLIGHT} requests in "
        f"flight in all (split over the clients); a {args.warmup_s:g} s warm-up run first "
        "(not counted), then K = 1, 2, 4 in an order that rotates each round, "
        f"{args.reps} rounds, medians. Client CPU per op = user + system CPU s of every "
        "process of the run (clients, schema step, merge; wait4) / ops. "
        "`scripts/bench_clients.py`.",
        "",
        "| clients | ops/s (median) | vs 1 client | client CPU per op (us) | vs 1 client "
        "| p99 (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for k in COUNTS:
        ops_s, cpu, p99 = med[k]
        lines.append(f"| {k} | {ops_s:,.0f} | {ops_s / base_ops:.2f}x | {cpu:.2f} | "
                     f"{cpu / base_cpu:.2f}x | {p99:.2f} |")
    rates = {k: [m.ops_s for m in runs if m.clients == k] for k in COUNTS}
    spread = ", ".join(f"K={k} {max(r) / min(r):.2f}x" for k, r in rates.items())
    lines += ["", f"Spread of ops/s between rounds of one K (max / min): {spread}. Where it is "
              "large next to the ratios above, the machine was busy with other work (load "
              "average) and the ratios are indicative only.", "", "Each run:", "",
              "| clients | ops | ops/s | CPU per op (us) | p99 (ms) |",
              "|---|---|---|---|---|"]
    lines += [f"| {m.clients} | {m.ops:,} | {m.ops_s:,.0f} | {m.us_per_op:.2f} | "
              f"{m.p99_ms:.2f} |" for m in runs]
    return lines


if __name__ == "__main__":
    main()
