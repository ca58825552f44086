"""A response's value per trial: the window arithmetic against known answers, and
trial_values on a real results database with a warm-up stage and two nodes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

from casslab.analysis.responses import (
    aggregate,
    explain,
    profile_cores,
    trial_values,
    window_count,
    window_last,
    window_mean,
)
from casslab.metrics.samples import (
    CompactionSample,
    HostSample,
    NodeSample,
    SstableSample,
    TrialMetrics,
)
from casslab.store.db import Store
from casslab.store.records import Results


def test_window_mean_weights_each_span_by_its_overlap() -> None:
    samples = [(1.0, 10.0), (2.0, 20.0), (4.0, 40.0)]  # spans (0,1], (1,2], (2,4]
    assert window_mean(samples, None) == pytest.approx((10 + 20 + 2 * 40) / 4)
    # (0.5, 3]: half of the first span, all of the second, half of the third.
    assert window_mean(samples, (0.5, 3.0)) == pytest.approx((5 + 20 + 40) / 2.5)
    assert math.isnan(window_mean(samples, (5.0, 6.0)))


def test_window_last_is_the_state_at_the_window_end() -> None:
    samples = [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]
    assert window_last(samples, (0.0, 1.5)) == 2.0
    assert window_last(samples, None) == 3.0
    assert math.isnan(window_last(samples, (3.0, 4.0)))


def test_window_count_is_the_counter_difference_across_the_window() -> None:
    samples = [(1.0, 0.0), (2.0, 1.0), (3.0, 3.0), (4.0, 6.0)]
    assert window_count(samples, (2.0, 4.0)) == 5.0  # 6 at the end, 1 at the start
    assert window_count(samples, (0.5, 3.5)) == 3.0  # nothing before the start: from 0
    assert window_count(samples, None) == 6.0
    assert math.isnan(window_count(samples, (4.0, 9.0)))


def test_aggregate_mean_sum_or_one_node() -> None:
    per_node = {"node1": 10.0, "node2": 30.0, "node3": math.nan}
    assert aggregate(per_node, "mean") == 20.0
    assert aggregate(per_node, "sum") == 40.0
    assert aggregate(per_node, "node2") == 30.0
    assert math.isnan(aggregate(per_node, "node9"))


def _summary() -> dict[str, object]:
    def lat(mean_us: float) -> dict[str, float]:
        return {"mean_us": mean_us, "p50_us": mean_us, "p95_us": mean_us, "p99_us": mean_us,
                "p999_us": mean_us, "max_us": mean_us, "min_us": 1}

    return {"workload": "ycsb-a", "ended_by": "completed", "elapsed_s": 4.0, "ops": 400,
            "ops_s": 100.0, "errors": 0,
            "all": {"ops": 400, "ops_s": 100.0, "errors": 0, "latency": lat(2500),
                    "service": lat(1250)},
            "by_op": {"read": {"ops": 200, "ops_s": 50.0, "errors": 0, "latency": lat(2000),
                               "service": lat(1000)},
                      "update": {"ops": 200, "ops_s": 50.0, "errors": 0,
                                 "latency": lat(3000), "service": lat(1500)}}}


@pytest.fixture
def results(tmp_path: Path) -> Results:
    """One trial: 2 s of warm-up then 4 s recorded; node1's CPU rises 10 % per second,
    node2's stays at 100 %; node1's data grows 1 MiB per second."""
    store = Store(tmp_path)
    cid, _ = store.open_campaign(name="r", digest="d", spec_yaml="lab: {profile: rpi2}\n",
                                 response="node_cpu_pct", factors=[])
    status = store.ensure_plan(cid, [(1, 0, "", {}, 1, False, "none")])
    m = TrialMetrics()
    for i in range(1, 7):
        t = float(i)
        m.nodes.append(NodeSample(t, "node1", 10.0 * i, 0.0, 0.0, 100.0 * i, 500.0, float(i),
                                  cpu_credits=30.0 - i))
        m.nodes.append(NodeSample(t, "node2", 60.0, 40.0, 0.0, 50.0, 700.0, 2.0))
        m.host.append(HostSample(t, 50.0, 10.0, 0.0, 0.0, 10.0 * i))
        m.sstables.append(SstableSample(t, "node1", "ks", "a", i))
        m.sstables.append(SstableSample(t, "node1", "ks", "b", 1))
        m.compactions.append(CompactionSample(t, "node1", i // 2))
        m.compactions.append(CompactionSample(t, "node2", 0))
    intervals = [{"t_s": float(i), "stage": "warmup" if i <= 2 else "run",
                  "recorded": i > 2, "ops": 100, "ops_s": 100.0, "errors": 0,
                  "interval_s": 1.0, "by_op": {}} for i in range(1, 7)]
    store.commit_trial(status[1][0], summary=_summary(), intervals=intervals, metrics=m,
                       command=["casslab-load"])
    return Results(store)


def test_resources_are_computed_over_the_recorded_window(results: Results) -> None:
    assert results.recorded_window(1) == (2.0, 6.0)
    # node1 over (2, 6]: spans ending at 3..6 -> 30, 40, 50, 60; node2: 100.
    assert trial_values(results, "node_cpu_pct.node1", [1]) == {1: 45.0}
    assert trial_values(results, "node_cpu_pct", [1]) == {1: 72.5}
    assert trial_values(results, "node_cpu_pct.sum", [1]) == {1: 145.0}
    assert trial_values(results, "disk_write_kib_s.node1", [1]) == {1: 450.0}
    assert trial_values(results, "rss_mib.sum", [1]) == {1: 1200.0}
    assert trial_values(results, "data_mib.node1", [1]) == {1: 6.0}  # at the window's end
    # Its mean over the window: node1 3, 4, 5, 6 -> 4.5; node2 2.
    assert trial_values(results, "data_mib_avg.node1", [1]) == {1: 4.5}
    assert trial_values(results, "data_mib_avg.sum", [1]) == {1: 6.5}
    assert trial_values(results, "sstables.sum", [1]) == {1: 7.0}
    assert trial_values(results, "host_cpu_pct", [1]) == {1: 60.0}
    # node1 completed 1 compaction by t = 2 and 3 by t = 6: 2 in the window
    assert trial_values(results, "compactions_completed.sum", [1]) == {1: 2.0}
    assert trial_values(results, "host_disk_write_kib_s", [1]) == {1: 45.0}
    # A balance, like data_mib: node1's at the window's end; node2 is not burstable.
    assert trial_values(results, "node_cpu_credits", [1]) == {1: 24.0}
    assert math.isnan(trial_values(results, "node_cpu_credits.node2", [1])[1])


def test_cpu_of_the_profile_divides_by_its_cores(results: Results) -> None:
    cores = profile_cores("lab: {profile: rpi2}\n", results.trials())
    assert cores(1) == 0.6  # the Raspberry Pi 2 profile's quota
    got = trial_values(results, "node_cpu_profile_pct.node2", [1], cores=cores)
    assert got[1] == pytest.approx(100.0 / 0.6)


def test_cpu_of_the_profile_without_cores_given_takes_the_stored_campaigns_profiles(
        results: Results) -> None:
    """Every reader gets the same values: the stopping rule of an until-verdicts campaign
    passed no cores and divided by this machine's, the report by the profile's."""
    got = trial_values(results, "node_cpu_profile_pct.node2", [1])
    assert got[1] == pytest.approx(100.0 / 0.6)


def test_operation_responses_come_from_their_summary_row(results: Results) -> None:
    assert trial_values(results, "read.mean_ms", [1]) == {1: 2.0}
    assert trial_values(results, "update.service_p99_ms", [1]) == {1: 1.5}
    assert trial_values(results, "all.ops_s", [1]) == {1: 100.0}
    assert math.isnan(trial_values(results, "insert.mean_ms", [1])[1])


def _interval(t: float, stage: str, latencies_us: list[int], recorded: bool = True
              ) -> dict[str, object]:
    # Sized to its own values, as casslab-load's auto-resizing histograms encode.
    h = HdrHistogram(1, 2 * max(latencies_us), 3)
    for v in latencies_us:
        h.record_value(v)
    block = {"ops": len(latencies_us), "ops_s": float(len(latencies_us)), "errors": 1,
             "latency": {"mean_us": 0.0, "p50_us": 0, "p95_us": 0, "p99_us": 0,
                         "p999_us": 0, "max_us": 0},
             "hist": {"latency": h.encode().decode(), "service": None}}
    return {"t_s": t, "stage": stage, "recorded": recorded, "ops": len(latencies_us),
            "ops_s": float(len(latencies_us)), "errors": 1, "interval_s": 1.0,
            "by_op": {"insert": block}, "all": block}


def test_stage_responses_come_from_the_stages_intervals(tmp_path: Path) -> None:
    """stage1: 2 s, 100 ops at 1 ms; stage2: 2 s, 99 ops at 2 ms and one at 100 ms, so
    its p99 and max come only from merging both intervals' histograms."""
    store = Store(tmp_path)
    cid, _ = store.open_campaign(name="s", digest="d", spec_yaml="{}", response="ops_s",
                                 factors=[])
    status = store.ensure_plan(cid, [(1, 0, "", {}, 1, False, "none")])
    intervals = [_interval(1.0, "stage1", [1000] * 50, recorded=False),
                 _interval(2.0, "stage1", [1000] * 50, recorded=False),
                 _interval(3.0, "stage2", [2000] * 50),
                 _interval(4.0, "stage2", [2000] * 49 + [100_000])]
    store.commit_trial(status[1][0], summary=_summary(), intervals=intervals,
                       metrics=TrialMetrics(), command=["casslab-load"])
    results = Results(store)

    def value(name: str) -> float:
        return trial_values(results, name, [1])[1]

    assert value("stage.stage1.ops") == 100 and value("stage.stage1.errors") == 2
    assert value("stage.stage1.ops_s") == 50.0  # even a stage left out of the record
    assert value("stage.stage1.p99_ms") == pytest.approx(1.0, rel=1e-3)
    assert value("stage.stage2.ops_s") == 50.0
    assert value("stage.stage2.p50_ms") == pytest.approx(2.0, rel=1e-3)
    assert value("stage.stage2.p99_ms") == pytest.approx(2.0, rel=1e-3)
    assert value("stage.stage2.max_ms") == pytest.approx(100.0, rel=1e-3)
    assert value("stage.stage2.mean_ms") == pytest.approx((99 * 2 + 100) / 100, rel=1e-3)
    assert math.isnan(value("stage.stage3.ops_s"))  # no such stage


def test_every_response_is_explained() -> None:
    assert "histograms merged" in explain("stage.stage2.p99_ms")
    assert "total length of its intervals" in explain("stage.s.ops_s")
    assert "merged histograms" in explain("all.p99_ms")
    assert "warm-up excluded" in explain("node_cpu_pct") and "mean over the nodes" in \
        explain("node_cpu_pct")
    assert "sum over the nodes" in explain("disk_write_kib_s.sum")
    assert "the last sample" in explain("data_mib")
    assert "time-weighted mean" in explain("data_mib_avg")
