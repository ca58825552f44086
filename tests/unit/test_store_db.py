"""The results database: plan, atomic trial commits, resume bookkeeping, export."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from casslab.metrics.samples import HostSample, NodeSample, SstableSample, TrialMetrics
from casslab.store.db import TABLES, Store, StoreError, export


def fake_summary(ops_s: float, runtime_s: float) -> dict[str, Any]:
    def pct(base: int) -> dict[str, Any]:
        return {"mean_us": base * 1.1, "p50_us": base, "p95_us": base * 2, "p99_us": base * 3,
                "p999_us": base * 4, "max_us": base * 5, "min_us": 1}

    return {"type": "summary", "workload": "ycsb-a", "ended_by": "completed",
            "elapsed_s": runtime_s, "ops": int(ops_s * runtime_s), "ops_s": ops_s, "errors": 0,
            "by_op": {"read": {"ops": 10, "ops_s": ops_s / 2, "errors": 0, "latency": pct(1000),
                               "service": pct(900)},
                      "update": {"ops": 10, "ops_s": ops_s / 2, "errors": 0,
                                 "latency": pct(2000), "service": pct(1800)}}}


def fake_intervals(n: int, ops_s: float) -> list[dict[str, Any]]:
    return [{"type": "interval", "stage": "run", "recorded": True, "t_s": float(i + 1),
             "interval_s": 1.0, "ops": int(ops_s), "ops_s": ops_s, "errors": 0,
             "by_op": {"read": {"latency": {"p50_us": 1000, "p99_us": 3000}}}}
            for i in range(n)]


def fake_metrics(n: int) -> TrialMetrics:
    m = TrialMetrics()
    for i in range(n):
        m.nodes.append(NodeSample(i + 1.0, "node1", 50.0 + i, 10.0, 0.0, 100.0 * i, 700.0,
                                  1.0 + i, 0, 0))
        m.host.append(HostSample(i + 1.0, 40.0, 10.0, 1.0, 0.0, 200.0))
        m.sstables.append(SstableSample(i + 1.0, "node1", "ycsb", "usertable", 1 + i // 2))
    return m


PLAN = [(1, 0, "nodes=1", {"nodes": 1}, 1, True, "rebuild"),
        (2, 0, "nodes=1", {"nodes": 1}, 2, False, "none"),
        (3, 1, "nodes=3", {"nodes": 3}, 1, True, "rebuild")]


def open_store(tmp_path: Path) -> tuple[Store, int]:
    store = Store(tmp_path / "res")
    cid, resumed = store.open_campaign(name="t", digest="abc", spec_yaml="x: 1",
                                       response="runtime_s", factors=[])
    assert not resumed
    return store, cid


def test_plan_commit_and_resume(tmp_path: Path) -> None:
    store, cid = open_store(tmp_path)
    status = store.ensure_plan(cid, PLAN)
    assert {s for _, s in status.values()} == {"planned"}
    tid = status[2][0]
    store.mark_running(tid, {"nodes": 1}, "none")
    store.commit_trial(tid, summary=fake_summary(500, 2.0), intervals=fake_intervals(3, 500),
                       metrics=fake_metrics(3), command=["casslab-load"])
    store.mark_running(status[1][0], {"nodes": 1}, "rebuild")  # killed mid-trial
    store.close()
    # WAL: another connection sees the committed trial at once
    raw = sqlite3.connect(tmp_path / "res" / "results.db")
    assert raw.execute("SELECT journal_mode FROM pragma_journal_mode").fetchone()[0] == "wal"
    raw.close()
    store = Store(tmp_path / "res")
    cid2, resumed = store.open_campaign(name="t", digest="abc", spec_yaml="x: 1",
                                        response="runtime_s", factors=[])
    assert (cid2, resumed) == (cid, True)
    status = store.ensure_plan(cid, PLAN)  # idempotent
    assert [status[s][1] for s in (1, 2, 3)] == ["running", "done", "planned"]
    rows = store.trials_with_summary()
    done = next(r for r in rows if r["status"] == "done")
    assert done["runtime_s"] == 2.0 and done["ops_s"] == 500
    assert done["p99_ms"] == pytest.approx(6.0)  # worst of read 3 ms, update 6 ms
    assert done["mean_ms"] == pytest.approx((1.1 + 2.2) / 2)
    assert len(store.query("SELECT * FROM intervals")) == 3
    assert len(store.query("SELECT * FROM node_metrics")) == 3
    # recommitting a trial replaces its rows, never duplicates them
    store.commit_trial(tid, summary=fake_summary(400, 2.5), intervals=fake_intervals(2, 400),
                       metrics=fake_metrics(2), command=["casslab-load"])
    assert len(store.query("SELECT * FROM intervals")) == 2
    store.close()


def test_other_spec_is_refused(tmp_path: Path) -> None:
    store, _ = open_store(tmp_path)
    with pytest.raises(StoreError, match="another spec"):
        store.open_campaign(name="t", digest="zzz", spec_yaml="", response="ops_s",
                            factors=[])
    store.close()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export(tmp_path: Path, fmt: str) -> None:
    store, cid = open_store(tmp_path)
    status = store.ensure_plan(cid, PLAN)
    store.commit_trial(status[2][0], summary=fake_summary(500, 2.0),
                       intervals=fake_intervals(3, 500), metrics=fake_metrics(3), command=[])
    store.close()
    paths = export(tmp_path / "res", fmt)
    assert [p.stem for p in paths] == list(TABLES)
    trials = paths[TABLES.index("trials")]
    if fmt == "csv":
        with trials.open() as f:
            assert len(list(csv.DictReader(f))) == 3
    else:
        assert pq.read_table(trials).num_rows == 3
        assert pq.read_table(paths[TABLES.index("node_metrics")]).num_rows == 3


def test_export_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results database"):
        export(tmp_path, "csv")
    with pytest.raises(StoreError, match="valid formats"):
        export(tmp_path, "xlsx")
