"""`casslab run ycsb -P/-p` runs YCSB's default of one client thread unless told."""

from __future__ import annotations

from pathlib import Path

from casslab.cli.run import with_ycsb_properties

REPO = Path(__file__).resolve().parents[2]
WORKLOADA = REPO / "workloads" / "workloada"
NONE = {"threads": None, "workers": None, "in-flight": None}


def test_without_threadcount_one_thread_runs_as_in_ycsb() -> None:
    _, options = with_ycsb_properties("ycsb", dict(NONE), [WORKLOADA], [])
    assert options["threads"] == 1


def test_threadcount_or_casslab_s_own_concurrency_wins_over_the_default() -> None:
    _, options = with_ycsb_properties("ycsb", dict(NONE), [WORKLOADA], ["threadcount=8"])
    assert options["threads"] == 8
    _, options = with_ycsb_properties("ycsb", {**NONE, "workers": 2}, [WORKLOADA], [])
    assert "threads" not in options and options["workers"] == 2
    _, options = with_ycsb_properties("ycsb", dict(NONE), [WORKLOADA], [],
                                       ["--in-flight", "4"])
    assert "threads" not in options


def test_a_built_in_workload_without_properties_keeps_casslab_s_concurrency() -> None:
    _, options = with_ycsb_properties("ycsb-a", dict(NONE), [], [])
    assert options.get("threads") is None
