"""`make bench` (planner part): MILP and heuristic solve times on synthetic instances.

Instances: N tenants with seed 001's throughput tables (workloads RW, ycsb-b, R on
t2.micro/small/medium, 3- and 6-node points), minimum throughput drawn uniformly from
4,000-16,000 ops/s, rf 3, dataset 0.5-2 GB; H hosts in two kinds (half 16 cores / 64 GB /
500 W / k 0.7, half 8 cores / 32 GB / 300 W / k 0.6). Each size is generated from a fixed
seed and solved in power mode (and cost mode for the largest) with the default 60 s limit.
The results replace the plan section of BENCHMARKS.md, with the machine and date.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

import yaml
from benchmd import machine, today, write_section

from casslab.plan.heuristic import solve_heuristic
from casslab.plan.milp import solve_milp
from casslab.plan.model import build_models
from casslab.plan.problem import Plan, Problem, build_problem, evaluate
from casslab.plan.spec import parse_plan_spec

THROUGHPUT = {
    "RW": {"t2.micro": {3: 2795, 6: 7899}, "t2.small": {3: 6364, 6: 11239},
           "t2.medium": {3: 10336, 6: 19186}},
    "ycsb-b": {"t2.micro": {3: 3279, 6: 5251}, "t2.small": {3: 3437, 6: 8714},
               "t2.medium": {3: 3692, 6: 10894}},
    "R": {"t2.micro": {3: 3450, 6: 3886}, "t2.small": {3: 3544, 6: 8908},
          "t2.medium": {3: 3730, 6: 10900}},
}


def instance(tenants: int, hosts: int, seed: int, mode: str = "power") -> str:
    """A synthetic planner spec (YAML text)."""
    rnd = random.Random(seed)
    half = hosts // 2
    spec = {
        "name": f"bench-{tenants}x{hosts}", "mode": mode,
        "vm_types": {"t2.micro": {"cores": 1, "memory_gb": 1, "heap_gb": 0.5,
                                  "price_hour": 0.0116},
                     "t2.small": {"cores": 1, "memory_gb": 2, "heap_gb": 1, "price_hour": 0.023},
                     "t2.medium": {"cores": 2, "memory_gb": 4, "heap_gb": 2,
                                   "price_hour": 0.0464}},
        "hosts": [{"name": "big", "count": half, "cores": 16, "memory_gb": 64, "pmax_w": 500,
                   "idle_fraction": 0.7},
                  {"name": "small", "count": hosts - half, "cores": 8, "memory_gb": 32,
                   "pmax_w": 300, "idle_fraction": 0.6}],
        "tenants": [{"name": f"t{i + 1}", "workload": rnd.choice(list(THROUGHPUT)),
                     "min_ops_s": rnd.randrange(4000, 16001, 500), "rf": 3,
                     "dataset_gb": rnd.choice([0.5, 1.0, 2.0])} for i in range(tenants)],
        "throughput": THROUGHPUT,
    }
    return yaml.safe_dump(spec, sort_keys=False)


def run(tenants: int, hosts: int, seed: int, mode: str, limit_s: float
        ) -> tuple[Problem, Plan, float, Plan]:
    """The problem, the MILP plan, the MILP's CPU seconds (this process), the BFD plan."""
    spec = parse_plan_spec(instance(tenants, hosts, seed, mode), source="bench")
    problem = build_problem(spec, build_models(spec))
    cpu = time.process_time()
    milp = solve_milp(problem, time_limit_s=limit_s)
    cpu = time.process_time() - cpu
    return problem, milp, cpu, solve_heuristic(problem)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="3x8,10x16,20x32,40x64",
                        help="tenants x hosts, comma separated")
    parser.add_argument("--seeds", default="1,2,3", help="instances per size")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per MILP")
    parser.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = parser.parse_args()
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    started = time.monotonic()
    for (n, h) in sizes:
        modes = ("power", "cost") if (n, h) == sizes[-1] else ("power",)
        for mode in modes:
            for seed in seeds:
                p, milp, cpu_s, heur = run(n, h, seed, mode, args.time_limit)
                ev_m = evaluate(p, milp) if milp.has_plan else None
                ev_h = evaluate(p, heur) if heur.has_plan else None
                key = "power_w" if mode == "power" else "cost_per_hour"
                m_obj = ev_m[key] if ev_m else None
                h_obj = ev_h[key] if ev_h else None
                excess = (f"{(h_obj / m_obj - 1) * 100:+.1f} %" if m_obj and h_obj
                          else "-")
                gap = f"{(milp.gap or 0) * 100:.2g} %" if milp.has_plan else "-"
                rows.append((f"{n} x {h}", mode, seed, milp.status, f"{milp.solve_time_s:.2f}",
                             f"{cpu_s:.2f}", gap, _fmt(m_obj, mode),
                             ev_m["hosts_used"] if ev_m else "-",
                             f"{heur.solve_time_s * 1000:.1f}", _fmt(h_obj, mode),
                             ev_h["hosts_used"] if ev_h else "-", excess))
                print(" | ".join(str(x) for x in rows[-1]), flush=True)
    lines = [f"Measured {today()} on {machine()}; `scripts/bench_plan.py` (HiGHS through "
             f"scipy.optimize.milp, relative gap 1e-4, time limit {args.time_limit:g} s); "
             "synthetic instances from seed 001's throughput tables, rf 3, two host kinds "
             "(see the script). Other work shared the 2 cores during the run (load average "
             f"{os.getloadavg()[0]:.0f} at the end), so wall times are inflated; CPU time is "
             "what the solver itself used. "
             f"Whole run {time.monotonic() - started:.0f} s.", "",
             "| tenants x hosts | mode | seed | MILP status | MILP wall (s) | MILP CPU (s) | gap "
             "| MILP objective | hosts on | BFD time (ms) | BFD objective | BFD hosts on "
             "| BFD vs MILP |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    if not args.no_write:
        write_section("plan", "Capacity planner (`casslab plan`)", lines)
    return 0


def _fmt(v: float | None, mode: str) -> str:
    if v is None:
        return "-"
    return f"{v:.1f} W" if mode == "power" else f"{v:.4f} $/h"


if __name__ == "__main__":
    sys.exit(main())
