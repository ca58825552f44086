"""`casslab plan`: the real command on the seed 001 example (table and --json), bad specs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))

from labtools import casslab

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "plan-seed001.yaml")


def test_plan_prints_tables_like_the_seed() -> None:
    res = casslab("plan", EXAMPLE, "--time-limit", "30s")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "milp: VM type and nodes per tenant" in out
    assert "milp: nodes per host (3 of 8 hosts on)" in out
    assert "heuristic: nodes per host" in out
    assert "server1" in out
    assert "milp: optimal (power): power 1198.5 W, 3 hosts on" in out
    assert "heuristic: feasible (power)" in out


def test_plan_json_cost_mode() -> None:
    res = casslab("plan", EXAMPLE, "--json", "--mode", "cost")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["mode"] == "cost" and data["hosts"] == 8 and data["tenants"] == 3
    milp = data["milp"]
    assert milp["status"] == "optimal"
    assert milp["cost_per_hour"] <= data["heuristic"]["cost_per_hour"] + 1e-9
    assert {t["name"] for t in milp["tenants"]} == {"A", "B", "C"}
    nodes = {t["name"]: t["nodes"] for t in milp["tenants"]}
    placed = {n: sum(h["nodes"].get(n, 0) for h in milp["placement"]) for n in nodes}
    assert placed == nodes
    assert len(data["models"]) == 9


def test_heuristic_only() -> None:
    res = casslab("plan", EXAMPLE, "--heuristic-only", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["milp"] is None and data["heuristic"]["status"] == "feasible"


def test_bad_spec_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    good = "rf: 3, dataset_gb: 0.5}       # YCSB A"
    text = Path(EXAMPLE).read_text()
    line = next(i for i, s in enumerate(text.splitlines(), 1) if good in s)
    bad.write_text(text.replace(good, "rf: many, dataset_gb: 0.5}  # YCSB A"))
    res = casslab("plan", str(bad))
    assert res.returncode == 2  # usage error (bad input); no plan exits 3, with output
    lines = res.stderr.strip().splitlines()
    assert lines == [f"error: {bad}:{line}: tenants[0].rf: 'many' is not an integer "
                     "(valid: >= 1 and <= 64)"], res.stderr
    res = casslab("plan", EXAMPLE, "--time-limit", "soon")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "error: --time-limit: 'soon' is not a duration (e.g. 10ms or 10s)"]


def test_infeasible_spec_exits_3_and_says_why(tmp_path: Path) -> None:
    spec = tmp_path / "big.yaml"
    spec.write_text(Path(EXAMPLE).read_text().replace("workload: RW, min_ops_s: 8000",
                                                      "workload: RW, min_ops_s: 900000"))
    res = casslab("plan", str(spec))
    assert res.returncode == 3
    assert "milp: infeasible: tenant A: minimum throughput 900000 ops/s" in res.stdout
