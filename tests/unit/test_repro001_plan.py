"""scripts/repro001_plan.py's pure parts: seed 001's cases as plan specs, and their picks."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from casslab.plan.spec import parse_plan_spec

sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))

import repro001_plan


def test_each_case_is_a_valid_plan_spec_fed_by_the_campaign_not_the_thesis(
        tmp_path: Path) -> None:
    base = yaml.safe_load(repro001_plan.BASE.read_text())
    for case in repro001_plan.CASES:
        spec = repro001_plan.case_spec(base, case, tmp_path / "sweep")
        assert "throughput" not in spec  # the thesis' Tables 16-17 must not leak in
        assert spec["throughput_from"]["statistic"] == "peak"
        assert [t["min_ops_s"] for t in spec["tenants"]] == list(case.min_ops_s)
        assert {t["dataset_gb"] for t in spec["tenants"]} == {case.dataset_gb}
        parsed = parse_plan_spec(yaml.safe_dump(spec), base_dir=tmp_path)
        assert parsed.results is not None
        assert parsed.results.workloads == {"RW": "ycsb-a", "ycsb-b": "ycsb-b",
                                            "R": "ycsb-c"}


def test_case_4_has_the_larger_dataset_of_the_thesis() -> None:
    assert [c.dataset_gb for c in repro001_plan.CASES] == [0.5, 0.5, 0.5, 1.0]


def test_picks_name_each_tenants_type_and_nodes_or_why_there_is_no_plan() -> None:
    ok = {"milp": {"status": "optimal", "message": "", "tenants": [
        {"name": "A", "nodes": 14, "vm_type": "t2.micro"},
        {"name": "B", "nodes": 4, "vm_type": "t2.small"}]}}
    assert repro001_plan.picks(ok) == "A 14 t2.micro, B 4 t2.small"
    none = {"milp": {"status": "infeasible", "message": "tenant A: too slow", "tenants": []}}
    assert repro001_plan.picks(none) == "infeasible: tenant A: too slow"
