"""Seed 001's four placement cases, planned with the throughput a campaign measured.

The thesis fed its adaptation model (MILP) with its own peak throughputs (Tables 16-17)
and reported, per case, the VM type and nodes of each tenant (Tables 25-36; t2.micro for
every tenant in every case). This runs `casslab plan` on examples/plan-seed001.yaml with
its `throughput` table replaced by `throughput_from` the given results directory (the
thread sweep's best cell median per VM type: statistic `peak`), once per case and mode,
and prints the picks beside the thesis'.

Usage: .venv/bin/python scripts/repro001_plan.py RESULTS_DIR [--mode power|cost] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "examples" / "plan-seed001.yaml"
# Planner workload (the example's names) -> the campaign's workload.
WORKLOADS = {"RW": "ycsb-a", "ycsb-b": "ycsb-b", "R": "ycsb-c"}


@dataclass(frozen=True)
class Case:
    """One of the thesis' cases: minimum ops/s of tenants A, B, C, the dataset, and what
    the thesis' MILP chose (nodes of t2.micro per tenant, power in W)."""

    no: int
    min_ops_s: tuple[float, float, float]
    dataset_gb: float
    thesis_nodes: tuple[int, int, int]
    thesis_power_w: float
    source: str


CASES = (
    Case(1, (8000, 6000, 8000), 0.5, (14, 4, 3), 1247, "Tables 25-27"),
    Case(2, (8000, 8000, 10000), 0.5, (14, 5, 4), 1266, "Tables 28-30"),
    Case(3, (10000, 10000, 10000), 0.5, (17, 6, 4), 1653, "Tables 31-33"),
    # The text says B = 6000, Table 34 says 8000; the table is taken.
    Case(4, (8000, 8000, 8000), 1.0, (14, 6, 6), 1920, "Tables 34-36"),
)
THESIS_VM = "t2.micro"


def case_spec(base: dict[str, Any], case: Case, results: Path) -> dict[str, Any]:
    """The example plan spec for `case`, its throughput fitted from `results`."""
    spec = {k: v for k, v in base.items() if k != "throughput"}
    spec["name"] = f"seed001-case{case.no}-measured"
    tenants = [dict(t) for t in base["tenants"]]
    for tenant, need in zip(tenants, case.min_ops_s, strict=True):
        tenant["min_ops_s"] = need
        tenant["dataset_gb"] = case.dataset_gb
    spec["tenants"] = tenants
    spec["throughput_from"] = {"results": str(results.resolve()), "workloads": WORKLOADS,
                               "statistic": "peak"}
    return spec


def picks(plan: dict[str, Any]) -> str:
    """'A 14 t2.micro, B 4 t2.micro, ...' of a `casslab plan --json` answer (MILP)."""
    milp = plan["milp"]
    if milp["status"] not in ("optimal", "feasible"):
        return f"{milp['status']}: {milp['message']}"
    return ", ".join(f"{t['name']} {t['nodes']} {t['vm_type']}" for t in milp["tenants"])


def run_case(case: Case, results: Path, mode: str) -> dict[str, Any]:
    base = yaml.safe_load(BASE.read_text())
    casslab = str(Path(sys.executable).with_name("casslab"))
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(case_spec(base, case, results), f, sort_keys=False)
    try:
        out = subprocess.run([casslab, "plan", f.name, "--json", "--mode", mode],
                             capture_output=True, text=True, check=False)
    finally:
        Path(f.name).unlink()
    if out.returncode not in (0, 3):
        raise SystemExit(f"error: casslab plan (case {case.no}): {out.stderr.strip()}")
    answer: dict[str, Any] = json.loads(out.stdout)
    return answer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, help="results directory of 2-thread-sweep.yaml")
    ap.add_argument("--mode", default="power", choices=("power", "cost"))
    ap.add_argument("--json", action="store_true", help="print every plan as JSON")
    args = ap.parse_args()
    plans = []
    for case in CASES:
        plan = run_case(case, args.results, args.mode)
        plans.append(plan)
        if not args.json:
            thesis = ", ".join(f"{n} {c} {THESIS_VM}" for n, c in
                               zip("ABC", case.thesis_nodes, strict=True))
            milp = plan["milp"]
            power = f"{milp['power_w']:.1f} W" if milp.get("power_w") is not None else "-"
            print(f"case {case.no} ({'/'.join(f'{x:g}' for x in case.min_ops_s)}, "
                  f"{case.dataset_gb:g} GB): casslab {picks(plan)}; {power} | thesis "
                  f"{thesis}; {case.thesis_power_w:g} W ({case.source})")
    if args.json:
        print(json.dumps(plans, indent=1))
    else:
        models = {(m["workload"], m["vm_type"]): m["points"] for m in plans[0]["models"]}
        for (w, vm), pts in sorted(models.items()):
            print(f"model {w} {vm}: " + ", ".join(f"{n} nodes {x:.0f} ops/s" for n, x in pts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
