"""A trial cut at its steady start (`workload.warmup: until-steady`): its all-operations
summary responses come from the recorded intervals' histograms, not from the run's
summary row, which also covers the warm-up the cut left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hdrh.histogram import HdrHistogram

from casslab.analysis.responses import explain, trial_values
from casslab.metrics.samples import TrialMetrics
from casslab.store.db import Store
from casslab.store.records import Results


def _hist(latency_us: int, n: int) -> str:
    h = HdrHistogram(1, 60_000_000, 3)
    h.record_value(latency_us, n)
    return h.encode().decode()


def _block(latency_us: int, n: int) -> dict[str, Any]:
    pct = {k: latency_us for k in ("p50_us", "p95_us", "p99_us", "p999_us", "max_us")}
    return {"ops": n, "ops_s": float(n), "errors": 0, "latency": {**pct, "mean_us": latency_us},
            "service": {**pct, "mean_us": latency_us},
            "hist": {"latency": _hist(latency_us, n), "service": _hist(latency_us // 2, n)}}


def _interval(t_s: int, latency_us: int, n: int) -> dict[str, Any]:
    return {"type": "interval", "stage": "run", "recorded": True, "t_s": float(t_s),
            "interval_s": 1.0, "ops": n, "ops_s": float(n), "errors": 0,
            "by_op": {"write": _block(latency_us, n)}, "all": _block(latency_us, n)}


def _campaign(tmp_path: Path, *, cut: bool) -> tuple[Store, int]:
    """One trial: 3 s of warm-up at 20 ms and 100 ops/s, then 4 s steady at 2 ms and
    500 ops/s; the run's summary (what casslab-load reports) covers all 7 s."""
    store = Store(tmp_path)
    cid, _ = store.open_campaign(name="c", digest="d", spec_yaml="", response="p99_ms",
                                 factors=[])
    tid = store.ensure_plan(cid, [(1, 0, "all", {}, 1, False, "none")])[1][0]
    intervals = [_interval(t, 20_000, 100) for t in (1, 2, 3)] + \
        [_interval(t, 2_000, 500) for t in (4, 5, 6, 7)]
    if cut:  # what the runner stores after the until-steady cut at 3 s
        intervals = [{**iv, "recorded": iv["t_s"] > 3} for iv in intervals]
    run = {"type": "summary", "workload": "stress-write", "ended_by": "completed",
           "elapsed_s": 7.0, "ops": 2300, "ops_s": 2300 / 7, "errors": 0,
           "by_op": {"write": _block(20_000, 2300)}, "all": _block(20_000, 2300)}
    store.commit_trial(tid, summary=run, intervals=intervals, metrics=TrialMetrics(),
                       command=[])
    if cut:
        store.set_quality(tid, steady_start_s=3.0, steady_class="steady")
    return store, tid


def test_a_cut_trials_all_operations_figures_come_from_its_steady_window(
        tmp_path: Path) -> None:
    store, tid = _campaign(tmp_path, cut=True)
    with store:
        results = Results(store)
        got = {m: trial_values(results, m, [tid])[tid]
               for m in ("p99_ms", "ops_s", "runtime_s", "all.ops", "all.service_p99_ms")}
        # One operation's figures keep the run's (no per-operation interval histogram).
        write_p99 = trial_values(results, "write.p99_ms", [tid])[tid]
    assert got["p99_ms"] == pytest.approx(2.0, rel=1e-3)
    assert got["all.service_p99_ms"] == pytest.approx(1.0, rel=1e-3)
    assert got["ops_s"] == pytest.approx(500.0)
    assert (got["runtime_s"], got["all.ops"]) == (4.0, 2000.0)
    assert write_p99 == pytest.approx(20.0)


def test_an_uncut_trial_keeps_its_runs_summary(tmp_path: Path) -> None:
    store, tid = _campaign(tmp_path, cut=False)
    with store:
        results = Results(store)
        assert trial_values(results, "p99_ms", [tid])[tid] == pytest.approx(20.0)
        assert trial_values(results, "ops_s", [tid])[tid] == pytest.approx(2300 / 7)


def test_the_explanation_says_where_a_cut_trials_figures_come_from() -> None:
    assert "recorded intervals after it instead" in explain("p99_ms", cut_at_steady=True)
    assert "whole run even though each trial was cut" in explain("read.p99_ms", True)
    assert "recorded intervals after it" not in explain("read.p99_ms", True)


def test_a_campaign_without_until_steady_is_not_told_about_cut_trials() -> None:
    for name in ("p99_ms", "read.p99_ms"):
        assert "steady start" not in explain(name)
