"""Throughput models: piecewise linear in nodes; fitted from a results database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from casslab.metrics.samples import TrialMetrics
from casslab.plan.model import (
    ModelError,
    PiecewiseLinear,
    build_models,
    dataset_nodes,
    fit_points,
)
from casslab.plan.problem import build_problem
from casslab.plan.spec import parse_plan_spec
from casslab.store.db import Store


def test_piecewise_linear_between_below_and_beyond_breakpoints() -> None:
    m = PiecewiseLinear(((3, 2795.0), (6, 7899.0)))
    assert m.ops_s(3) == 2795 and m.ops_s(6) == 7899
    assert m.ops_s(4) == pytest.approx(2795 + (7899 - 2795) / 3)
    assert m.ops_s(1) == pytest.approx(2795 / 3)  # through the origin below 3 nodes
    assert m.ops_s(8) == pytest.approx(7899 + 2 * (7899 - 2795) / 3)  # last slope goes on
    assert m.min_nodes(8000, 3, 20) == 7
    assert m.min_nodes(8000, 3, 6) is None
    assert m.best(6) == (7899.0, 6)


def test_falling_last_segment_is_flat_and_one_point_is_proportional() -> None:
    m = PiecewiseLinear(((1, 1000.0), (3, 2500.0), (6, 2000.0)))
    assert m.ops_s(9) == 2000.0
    assert m.best(12) == (2500.0, 3)
    assert PiecewiseLinear(((2, 900.0),)).ops_s(6) == pytest.approx(2700.0)
    with pytest.raises(ModelError):
        PiecewiseLinear(())


def test_dataset_nodes() -> None:
    assert dataset_nodes(3, 1.0, 0.5) == 6  # seed 001 case 4: 1 GB, rf 3, 0.5 GB heap
    assert dataset_nodes(3, 0.0, 0.5) == 1
    assert dataset_nodes(2, 1.0, 0.3) == 7


def test_fit_points_median_per_size() -> None:
    rows = [{"workload": "w", "vm_type": "v", "nodes": n, "ops_s": x}
            for n, x in [(1, 100.0), (1, 300.0), (1, 200.0), (3, 500.0), (3, 700.0)]]
    assert fit_points(rows) == {("w", "v"): ((1, 200.0), (3, 600.0))}
    assert fit_points(rows, "max") == {("w", "v"): ((1, 300.0), (3, 700.0))}


def test_fit_points_peak_is_the_best_cell_median_not_the_best_trial() -> None:
    # Two thread levels at one size: the sweep's peak is the cell whose MEDIAN is highest
    # (threads 20: 250), not the single best trial (threads 10's outlier 400).
    rows = [{"workload": "w", "vm_type": "v", "nodes": 1, "cell": c, "ops_s": x}
            for c, x in [("t10", 100.0), ("t10", 110.0), ("t10", 400.0),
                         ("t20", 240.0), ("t20", 250.0), ("t20", 260.0)]]
    assert fit_points(rows, "peak") == {("w", "v"): ((1, 250.0),)}
    assert fit_points(rows, "max") == {("w", "v"): ((1, 400.0),)}
    assert fit_points(rows) == {("w", "v"): ((1, 245.0),)}


def summary(ops_s: float) -> dict[str, Any]:
    lat = {"mean_us": 1000, "p50_us": 900, "p95_us": 2000, "p99_us": 3000, "p999_us": 4000,
           "max_us": 5000, "min_us": 1}
    return {"elapsed_s": 10.0, "ops": int(ops_s * 10), "ops_s": ops_s, "errors": 0,
            "ended_by": "completed",
            "by_op": {"read": {"ops": int(ops_s * 10), "ops_s": ops_s, "errors": 0,
                               "latency": lat, "service": lat}}}


def make_results(directory: Path) -> None:
    """A campaign over profile x nodes with workload ycsb-a, written with Store's API:
    3 trials per cell plus a warm-up (ignored) and a failed trial (ignored)."""
    measured = {("t2.micro", 1): [1000.0, 1100.0, 900.0], ("t2.micro", 3): [2500.0, 2700.0,
                                                                         2600.0],
                ("t2.small", 1): [1500.0, 1400.0, 1600.0], ("t2.small", 3): [4000.0, 4200.0,
                                                                         4100.0]}
    with Store(directory) as store:
        cid, _ = store.open_campaign(
            name="scaling", digest="d1",
            spec_yaml="lab: {nodes: 1, profile: t2.micro}\nworkload: {name: ycsb-a}\n",
            response="ops_s", factors=[{"name": "profile"}, {"name": "nodes"}])
        plan, seq = [], 0
        for idx, (prof, nodes) in enumerate(measured):
            key = f"profile={prof},nodes={nodes}"
            params = {"profile": prof, "nodes": nodes}
            for no in range(5):
                seq += 1
                plan.append((seq, idx, key, params, no + 1, no == 0, "none"))
        ids = store.ensure_plan(cid, plan)
        for s, _idx, _key, params, no, warm, _reset in plan:
            tid = ids[s][0]
            prof, nodes = params["profile"], params["nodes"]
            store.mark_running(tid, {**params, "seed": s}, "none")
            if warm:
                store.commit_trial(tid, summary=summary(99999.0), intervals=[],
                                   metrics=TrialMetrics(), command=["x"])
            elif no == 5:
                store.mark_ended(tid, "failed", "boom")
            else:
                store.commit_trial(tid, summary=summary(measured[(prof, nodes)][no - 2]),
                                   intervals=[], metrics=TrialMetrics(), command=["x"])


SPEC = """
vm_types:
  micro: {cores: 1, memory_gb: 1, heap_gb: 0.5}
  small: {cores: 1, memory_gb: 2, heap_gb: 1}
hosts: {count: 4, cores: 4, memory_gb: 8, pmax_w: 200, idle_fraction: 0.5}
tenants:
  - {name: A, workload: RW, min_ops_s: 3000, rf: 3}
throughput_from:
  results: res
  workloads: {RW: ycsb-a}
  vm_types: {micro: t2.micro, small: t2.small}
"""


def test_models_fitted_from_a_results_database(tmp_path: Path) -> None:
    make_results(tmp_path / "res")
    spec = parse_plan_spec(SPEC, base_dir=tmp_path)
    models = build_models(spec)
    # Medians of the three measured trials; warm-up (99999) and failed trials left out.
    assert models[("RW", "micro")].points == ((1, 1000.0), (3, 2600.0))
    assert models[("RW", "small")].points == ((1, 1500.0), (3, 4100.0))
    # 4 micro nodes: 2600 + 800 = 3400 >= 3000; small: 3 nodes (4100).
    p = build_problem(spec, models)
    assert {(spec.vm_types[c.vm].name, c.nodes) for c in p.candidates[0]} == {
        ("micro", 4), ("small", 3)}


def test_spec_models_override_fitted_ones_and_db_file_path(tmp_path: Path) -> None:
    make_results(tmp_path / "res")
    text = SPEC.replace("results: res", "results: res/results.db") + \
        "throughput:\n  RW: {micro: {3: 5000}}\n"
    models = build_models(parse_plan_spec(text, base_dir=tmp_path))
    assert models[("RW", "micro")].points == ((3, 5000.0),)
    assert models[("RW", "small")].points == ((1, 1500.0), (3, 4100.0))


def test_results_errors_are_named(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"throughput_from\.results: no results database"):
        build_models(parse_plan_spec(SPEC, base_dir=tmp_path))
    make_results(tmp_path / "res")
    bad = SPEC.replace("{RW: ycsb-a}", "{RW: ycsb-z}")
    with pytest.raises(ModelError, match=r"no measurements match .* ycsb-a/t2.micro"):
        build_models(parse_plan_spec(bad, base_dir=tmp_path))
