"""The results database: plan, atomic trial commits, resume bookkeeping, export."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from casslab.core.errors import UsageError
from casslab.metrics.samples import (
    HostLoadSample,
    HostSample,
    NodeSample,
    SstableSample,
    TrialMetrics,
)
from casslab.store.db import TABLES, Store, StoreError, export, merged
from casslab.store.records import Results


def fake_summary(ops_s: float, runtime_s: float) -> dict[str, Any]:
    def pct(base: int) -> dict[str, Any]:
        return {"mean_us": base * 1.1, "p50_us": base, "p95_us": base * 2, "p99_us": base * 3,
                "p999_us": base * 4, "max_us": base * 5, "min_us": 1}

    return {"type": "summary", "workload": "ycsb-a", "ended_by": "completed",
            "elapsed_s": runtime_s, "ops": int(ops_s * runtime_s), "ops_s": ops_s, "errors": 0,
            "by_op": {"read": {"ops": 10, "ops_s": ops_s / 2, "errors": 0, "latency": pct(1000),
                               "service": pct(900)},
                      "update": {"ops": 10, "ops_s": ops_s / 2, "errors": 0,
                                 "latency": pct(2000), "service": pct(1800)}},
            # casslab-load's merge of both types' histograms (not derived from the above)
            "all": {"ops": 20, "ops_s": ops_s, "errors": 0, "latency": pct(1500),
                    "service": pct(1300),
                    "hist": {"latency": "HISTlat", "service": "HISTsvc"}}}


def fake_intervals(n: int, ops_s: float) -> list[dict[str, Any]]:
    return [{"type": "interval", "stage": "run", "recorded": True, "t_s": float(i + 1),
             "interval_s": 1.0, "ops": int(ops_s), "ops_s": ops_s, "errors": 0,
             "by_op": {"read": {"latency": {"p50_us": 1000, "p99_us": 3000}},
                       "update": {"latency": {"p50_us": 2000, "p99_us": 5000}}},
             "all": {"latency": {"p50_us": 1200, "p99_us": 4000},
                     "hist": {"latency": f"L{i}", "service": f"S{i}"}}}
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


# The same trials as a plan of four in another order (an older casslab's run order).
OLD_ORDER = [(1, 0, "nodes=1", {"nodes": 1}, 2, False, "rebuild"),
             (2, 1, "nodes=3", {"nodes": 3}, 1, True, "rebuild"),
             (3, 0, "nodes=1", {"nodes": 1}, 1, True, "rebuild"),
             (4, 1, "nodes=3", {"nodes": 3}, 2, False, "none")]
NEW_ORDER = [(1, 0, "nodes=1", {"nodes": 1}, 1, True, "rebuild"),
             (2, 0, "nodes=1", {"nodes": 1}, 2, False, "none"),
             (3, 1, "nodes=3", {"nodes": 3}, 1, True, "rebuild"),
             (4, 1, "nodes=3", {"nodes": 3}, 2, False, "none")]


def test_a_plan_in_the_old_order_is_renumbered_and_keeps_its_done_trials(
        tmp_path: Path) -> None:
    store, cid = open_store(tmp_path)
    old = store.ensure_plan(cid, OLD_ORDER)
    done_id = old[1][0]  # nodes=1 #2, kept
    store.mark_running(done_id, {"nodes": 1}, "rebuild")
    store.commit_trial(done_id, summary=fake_summary(500, 2.0), intervals=[],
                       metrics=fake_metrics(1), command=["casslab-load"])
    new = store.ensure_plan(cid, NEW_ORDER)
    assert new[2] == (done_id, "done")  # the same trial, now at its new place
    assert [new[s][1] for s in (1, 3, 4)] == ["planned"] * 3
    rows = store.conn.execute("SELECT t.seq, c.idx, t.trial_no, t.warmup, t.reset FROM trials "
                              "t JOIN cells c ON c.id = t.cell_id ORDER BY t.seq").fetchall()
    # planned trials take the new plan's reset, the done one keeps the one it ran after
    assert [tuple(r) for r in rows] == [(1, 0, 1, 1, "rebuild"), (2, 0, 2, 0, "rebuild"),
                                        (3, 1, 1, 1, "rebuild"), (4, 1, 2, 0, "none")]
    assert store.ensure_plan(cid, NEW_ORDER) == new  # and stays so


def test_a_plan_of_other_trials_is_replaced_until_one_ran_then_refused(
        tmp_path: Path) -> None:
    store, cid = open_store(tmp_path)
    store.ensure_plan(cid, OLD_ORDER)
    fewer = [*NEW_ORDER[:2], (3, 1, "nodes=3", {"nodes": 3}, 1, False, "rebuild")]
    status = store.ensure_plan(cid, fewer)  # nothing ran yet: the new plan replaces it
    assert sorted(status) == [1, 2, 3]
    store.mark_running(status[1][0], {"nodes": 1}, "rebuild")
    with pytest.raises(StoreError, match=r"^\S+ was planned with other trials than this "
                       r"casslab plans for the same spec \(nodes=3 #1 is not the same trial "
                       r"there\); run it into a new --results directory$"):
        store.ensure_plan(cid, NEW_ORDER)
    # refused without a change
    assert sorted(store.ensure_plan(cid, fewer)) == [1, 2, 3]


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
    results = Results(store)
    done = next(r for r in results.trials() if r.status == "done")
    assert done.runtime_s == 2.0 and done.ops_s == 500
    assert done.p99_ms == pytest.approx(4.5)  # the 'all' block's, not the worst type's 6
    assert done.mean_ms == pytest.approx(1.65)
    assert len(results.intervals(tid)) == 3
    assert len(results.node_metrics(tid)) == 3
    # recommitting a trial replaces its rows, never duplicates them
    store.commit_trial(tid, summary=fake_summary(400, 2.5), intervals=fake_intervals(2, 400),
                       metrics=fake_metrics(2), command=["casslab-load"])
    assert len(results.intervals(tid)) == 2
    assert len(results.node_metrics(tid)) == 2
    store.close()


def test_all_row_and_intervals_take_the_merged_histograms_percentiles(tmp_path: Path) -> None:
    """Reads of 1 ms, writes of 100 ms: casslab-load's 'all' block (the merged
    histograms, see StatsSet::all) gives the ALL row and each interval their percentiles;
    neither the mean of the types' p50s nor the worst type's p99."""
    store, cid = open_store(tmp_path)
    tid = store.ensure_plan(cid, PLAN)[2][0]
    store.commit_trial(tid, summary=fake_summary(500, 2.0), intervals=fake_intervals(3, 500),
                       metrics=fake_metrics(1), command=[])
    results = Results(store)
    by_op = {o.op: o for o in results.op_summaries(tid)}
    assert list(by_op) == ["read", "update", "ALL"]
    a = by_op["ALL"]
    assert (a.p50_ms, a.p99_ms, a.p999_ms, a.max_ms) == (1.5, 4.5, 6.0, 7.5)
    assert (a.service_p50_ms, a.service_p99_ms) == (1.3, 3.9)
    assert (a.latency_hist, a.service_hist, a.pct_source) == ("HISTlat", "HISTsvc",
                                                              "histogram")
    assert by_op["read"].p99_ms == 3.0  # per-operation rows stay
    ivs = results.intervals(tid)
    assert [(iv.p50_ms, iv.p99_ms) for iv in ivs] == [(1.2, 4.0)] * 3
    store.close()


def test_one_operation_type_is_its_own_all_and_several_need_the_block(
        tmp_path: Path) -> None:
    store, cid = open_store(tmp_path)
    status = store.ensure_plan(cid, PLAN)
    one = fake_summary(500, 2.0)
    del one["all"], one["by_op"]["update"]
    store.commit_trial(status[2][0], summary=one, intervals=[], metrics=fake_metrics(1),
                       command=[])
    all_row = Results(store).op_summaries(status[2][0])[-1]
    assert (all_row.op, all_row.p99_ms) == ("ALL", 3.0)
    two = fake_summary(500, 2.0)
    del two["all"]
    with pytest.raises(StoreError, match="2 operation types and no 'all' block"):
        store.commit_trial(status[3][0], summary=two, intervals=[], metrics=fake_metrics(1),
                           command=[])
    assert Results(store).op_summaries(status[3][0]) == []  # nothing half-written
    store.close()


def test_kept_trials_and_trial_order(tmp_path: Path) -> None:
    store, cid = open_store(tmp_path)
    status = store.ensure_plan(cid, PLAN)
    for seq in (1, 2):
        store.commit_trial(status[seq][0], summary=fake_summary(100.0 * seq, 2.0),
                           intervals=[], metrics=fake_metrics(1), command=[])
    store.mark_ended(status[3][0], "failed", "boom")
    results = Results(store)
    assert [t.seq for t in results.kept_trials()] == [2]  # seq 1 is a warm-up
    order = results.trial_order("ops_s")
    assert [(p.seq, p.warmup, p.value) for p in order] == [(1, True, 100.0), (2, False, 200.0)]
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
    with pytest.raises(UsageError, match="valid formats"):
        export(tmp_path, "xlsx")


def test_a_results_path_that_is_missing_or_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "r").write_text("not a dir")
    with pytest.raises(UsageError, match="is a file"):
        Store(tmp_path / "r")
    with pytest.raises(UsageError, match="no such directory"):
        Store(tmp_path / "none", create=False)
    assert not (tmp_path / "none").exists()


def test_a_corrupt_database_is_a_failure_not_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "results.db").write_bytes(b"garbage" * 50)
    with pytest.raises(StoreError, match="not a results database") as exc:
        Store(tmp_path, create=False)
    assert not isinstance(exc.value, UsageError)


def test_a_page_damaged_after_the_open_is_a_store_error_naming_the_file(
        tmp_path: Path) -> None:
    store, cid = open_store(tmp_path)
    store.ensure_plan(cid, PLAN)
    store.close()
    db = tmp_path / "res" / "results.db"
    raw = sqlite3.connect(db)  # rows far past the pages the open reads
    raw.execute("CREATE TABLE filler (x BLOB)")
    raw.executemany("INSERT INTO filler VALUES (?)", [(b"y" * 3000,)] * 200)
    raw.commit()
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    reader = Store(tmp_path / "res", create=False)
    data = bytearray(db.read_bytes())
    data[len(data) // 2:] = b"\xff" * (len(data) - len(data) // 2)
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=f"^{db}: .*malformed") as exc:
        reader.conn.execute("SELECT count(*), sum(length(x)) FROM filler").fetchall()
    assert not isinstance(exc.value, sqlite3.DatabaseError)
    reader.close()


def test_the_only_type_that_ran_is_all_when_no_merged_block_came() -> None:
    ran = {"ops": 5, "latency": {"p50_us": 100}}
    idle = {"ops": 0, "latency": {"p50_us": 0}}
    assert merged({"read": idle, "update": ran}, None, "summary") is ran
    with pytest.raises(StoreError, match="2 operation types and no 'all' block"):
        merged({"read": ran, "update": dict(ran)}, None, "summary")


def test_a_trials_tuner_audit_is_stored_with_it_and_replaced_on_recommit(
        tmp_path: Path) -> None:
    store, cid = open_store(tmp_path)
    status = store.ensure_plan(cid, PLAN)
    tid, other = status[2][0], status[1][0]
    audit = [{"ts": 1.5, "iteration": 1, "table": "iot.sensor_data", "action": "change",
              "target": {"compaction_window_size": "3"}, "applied": True},
             {"ts": 2.5, "iteration": 2, "action": "error", "reason": "timeout"}]
    store.mark_running(tid, {"nodes": 1, "tuner": "seed003"}, "none")
    store.commit_trial(tid, summary=fake_summary(500, 2.0), intervals=[],
                       metrics=fake_metrics(1), command=["casslab-load"], audit=audit)
    store.mark_running(other, {"nodes": 1}, "none")
    store.commit_trial(other, summary=fake_summary(500, 2.0), intervals=[],
                       metrics=fake_metrics(1), command=["casslab-load"])
    results = Results(store)
    assert results.tuner_audit(tid) == audit
    assert results.tuner_audit(other) == []
    row = store.conn.execute("SELECT ts, action, tbl FROM tuner_audit WHERE trial_id=? "
                             "AND n=0", (tid,)).fetchone()
    assert tuple(row) == (1.5, "change", "iot.sensor_data")
    store.commit_trial(tid, summary=fake_summary(500, 2.0), intervals=[],
                       metrics=fake_metrics(1), command=["casslab-load"], audit=audit[1:])
    assert results.tuner_audit(tid) == audit[1:]
    store.close()


def test_each_load_clients_summary_is_kept_beside_the_merged_one(tmp_path: Path) -> None:
    store, cid = open_store(tmp_path)
    tid = store.ensure_plan(cid, PLAN)[2][0]
    store.mark_running(tid, {"nodes": 1}, "none")
    merged = {**fake_summary(900, 2.0),
              "clients": [fake_summary(500, 2.0), fake_summary(400, 2.0)]}
    store.commit_trial(tid, summary=merged, intervals=[], metrics=fake_metrics(1),
                       command=["casslab-load"])
    rows = store.conn.execute("SELECT client, ops_s FROM client_summaries WHERE trial_id=? "
                              "AND op='ALL' ORDER BY client", (tid,)).fetchall()
    assert [tuple(r) for r in rows] == [(1, 500.0), (2, 400.0)]
    # Committed again by one client (a rerun): no client rows are left from before.
    store.commit_trial(tid, summary=fake_summary(500, 2.0), intervals=[],
                       metrics=fake_metrics(1), command=["casslab-load"])
    assert store.conn.execute("SELECT COUNT(*) FROM client_summaries").fetchone()[0] == 0
    store.close()


def test_each_real_hosts_samples_are_kept_and_replaced_on_recommit(tmp_path: Path) -> None:
    store, cid = open_store(tmp_path)
    tid = store.ensure_plan(cid, PLAN)[2][0]
    store.mark_running(tid, {"nodes": 1}, "none")
    metrics = fake_metrics(1)
    metrics.hosts += [HostLoadSample(1.0, "pi1", 30.0, 5.0, 0.5, 0.0, 120.0, 80.0, 60.0, 1.5),
                      HostLoadSample(1.0, "pi2", 20.0, 4.0, 0.0, 0.0, 90.0, None, None, 0.7)]
    store.commit_trial(tid, summary=fake_summary(500, 2.0), intervals=[], metrics=metrics,
                       command=["casslab-load"])
    rows = store.conn.execute("SELECT host, cpu_user_pct, net_rx_kb_s, load1 FROM host_load "
                              "WHERE trial_id=? ORDER BY host", (tid,)).fetchall()
    assert [tuple(r) for r in rows] == [("pi1", 30.0, 80.0, 1.5), ("pi2", 20.0, None, 0.7)]
    store.commit_trial(tid, summary=fake_summary(500, 2.0), intervals=[],
                       metrics=fake_metrics(1), command=["casslab-load"])
    assert store.conn.execute("SELECT COUNT(*) FROM host_load").fetchone()[0] == 0
    store.close()
