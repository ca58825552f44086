"""casslab.results.open: a campaign's results as DataFrames, row for row the database's."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import casslab.results
from casslab.metrics.samples import NodeSample, TrialMetrics
from casslab.store.db import Store


def summary(ops_s: float) -> dict[str, Any]:
    def pct(base: int) -> dict[str, Any]:
        return {"mean_us": base * 1.1, "p50_us": base, "p95_us": base * 2, "p99_us": base * 3,
                "p999_us": base * 4, "max_us": base * 5, "min_us": 1}

    op = {"ops": 10, "ops_s": ops_s / 2, "errors": 0, "latency": pct(1000),
          "service": pct(900)}
    return {"type": "summary", "workload": "ycsb-a", "ended_by": "completed",
            "elapsed_s": 2.0, "ops": int(ops_s * 2), "ops_s": ops_s, "errors": 0,
            "by_op": {"read": op, "update": op},
            "all": {**op, "ops": 20, "ops_s": ops_s}}


def intervals(n: int) -> list[dict[str, Any]]:
    return [{"type": "interval", "stage": "run", "recorded": True, "t_s": float(i + 1),
             "interval_s": 1.0, "ops": 100, "ops_s": 100.0, "errors": 0,
             "all": {"latency": {"p50_us": 1200, "p99_us": 4000}}} for i in range(n)]


def metrics(n: int) -> TrialMetrics:
    m = TrialMetrics()
    for i in range(n):
        for node in ("node1", "node2"):
            m.nodes.append(NodeSample(i + 1.0, node, 50.0, 10.0, 0.0, 100.0, 700.0, 1.0))
    return m


def campaign(tmp_path: Path) -> Path:
    store = Store(tmp_path / "res")
    cid, _ = store.open_campaign(name="t", digest="abc", spec_yaml="x: 1",
                                 response="p99_ms, read.mean_ms",
                                 factors=[{"name": "nodes", "kind": "int", "label": "nodes",
                                           "levels": [1, 3]}])
    plan = [(1, 0, "nodes=1", {"nodes": 1}, 1, False, "none"),
            (2, 1, "nodes=3", {"nodes": 3}, 1, False, "none"),
            (3, 1, "nodes=3", {"nodes": 3}, 2, False, "none")]
    status = store.ensure_plan(cid, plan)
    for seq, (ops_s, n) in {1: (500.0, 3), 2: (900.0, 4)}.items():
        tid = status[seq][0]
        store.mark_running(tid, plan[seq - 1][3], "none")
        store.commit_trial(tid, summary=summary(ops_s), intervals=intervals(n),
                           metrics=metrics(n), command=["casslab-load"])
    store.close()
    return tmp_path / "res"


def count(db: Path, table: str) -> int:
    with sqlite3.connect(db / "results.db") as c:
        return int(c.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_frames_have_the_databases_rows(tmp_path: Path) -> None:
    res = campaign(tmp_path)
    r = casslab.results.open(res)
    assert len(r.trials) == count(res, "trials") == 3
    assert len(r.intervals) == count(res, "intervals") == 7
    assert len(r.nodes) == count(res, "node_metrics") == 14


def test_trials_have_a_column_per_factor_and_per_response(tmp_path: Path) -> None:
    r = casslab.results.open(campaign(tmp_path))
    assert r.factors == ["nodes"]
    assert r.responses == ["p99_ms", "read_mean_ms"]
    t = r.trials.set_index("seq")
    assert list(t["nodes"]) == [1, 3, 3]
    assert list(t["status"]) == ["done", "done", "planned"]
    assert list(t["ops_s"].iloc[:2]) == [500.0, 900.0]
    assert t.loc[1, "p99_ms"] == 3.0
    assert t.loc[2, "read_mean_ms"] == 1.1
    assert t.loc[1, "update_ops"] == 10
    assert t["kept"].tolist() == [True, True, False]
    assert set(r.intervals["trial_id"]) == set(t["trial_id"].iloc[:2])


def test_every_column_is_an_identifier_and_names_map_back(tmp_path: Path) -> None:
    r = casslab.results.open(campaign(tmp_path))
    for frame in (r.trials, r.intervals, r.nodes):
        assert all(c.isidentifier() for c in frame.columns), list(frame.columns)
    assert r.names["read_p99_ms"] == "read.p99_ms"
    assert r.names["read_kib_s"] == "read_kb_s"
    # query() and attribute access work on the renamed columns
    assert len(r.trials.query("read_p99_ms > 0")) == 2


def test_one_unit_spelling_kib_as_in_the_rest_of_casslab(tmp_path: Path) -> None:
    r = casslab.results.open(campaign(tmp_path))
    assert {"read_kib_s", "write_kib_s"} <= set(r.nodes.columns)
    columns = [c for f in (r.trials, r.intervals, r.nodes) for c in f.columns]
    assert not [c for c in columns if "_kb" in c]


def test_columns_have_typed_dtypes(tmp_path: Path) -> None:
    r = casslab.results.open(campaign(tmp_path))
    t, i, n = r.trials, r.intervals, r.nodes
    assert str(t["trial_id"].dtype) == "Int64" and str(t["ops"].dtype) == "Int64"
    assert str(t["warmup"].dtype) == "boolean" and str(t["kept"].dtype) == "boolean"
    assert str(t["status"].dtype) == "string" and str(t["cell"].dtype) == "string"
    assert str(t["p99_ms"].dtype) == "float64" and str(t["read_ops"].dtype) == "Int64"
    assert str(t["started_at"].dtype) == "datetime64[ns, UTC]"
    assert str(t["nodes"].dtype) == "Int64"  # a factor, inferred
    # the planned trial has no summary: missing, not 0, in a typed column
    assert t.set_index("seq")["ops"].isna().tolist() == [False, False, True]
    assert str(i["recorded"].dtype) == "boolean" and str(i["stage"].dtype) == "string"
    assert str(n["read_kib_s"].dtype) == "float64" and str(n["node"].dtype) == "string"


@pytest.mark.parametrize(("name", "column"), [
    ("read.p99_ms", "read_p99_ms"), ("option.table-ttl-s", "option_table_ttl_s"),
    ("network.scale.edge", "network_scale_edge"), ("class", "class_"), ("3x", "_3x")])
def test_identifier(name: str, column: str) -> None:
    assert casslab.results.identifier(name) == column
