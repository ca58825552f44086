"""The results database: SQLite in WAL mode, one file per campaign directory.

Every finished trial is written in ONE transaction (its summary, interval series and
metrics, and status 'done'), so a campaign killed at any moment keeps exactly the
trials that finished. The schema is documented in docs/results-schema.md.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from casslab import __version__
from casslab.core.errors import CasslabError
from casslab.metrics.samples import TrialMetrics

DB_NAME = "results.db"
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS campaigns (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, spec_digest TEXT NOT NULL, spec_yaml TEXT NOT NULL,
  response TEXT NOT NULL, factors_json TEXT NOT NULL, created_at REAL NOT NULL,
  casslab_version TEXT NOT NULL, host TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
  id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
  idx INTEGER NOT NULL, key TEXT NOT NULL, params_json TEXT NOT NULL,
  UNIQUE (campaign_id, idx));
CREATE TABLE IF NOT EXISTS trials (
  id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
  cell_id INTEGER NOT NULL REFERENCES cells(id), seq INTEGER NOT NULL,
  trial_no INTEGER NOT NULL, warmup INTEGER NOT NULL, status TEXT NOT NULL,
  reset TEXT, params_json TEXT, started_at REAL, ended_at REAL, error TEXT, attempts INTEGER
  NOT NULL DEFAULT 0, ended_by TEXT, command TEXT, UNIQUE (campaign_id, seq));
CREATE TABLE IF NOT EXISTS summaries (
  trial_id INTEGER NOT NULL REFERENCES trials(id), op TEXT NOT NULL, runtime_s REAL NOT NULL,
  ops INTEGER NOT NULL, ops_s REAL NOT NULL, errors INTEGER NOT NULL, mean_ms REAL NOT NULL,
  p50_ms REAL NOT NULL, p95_ms REAL NOT NULL, p99_ms REAL NOT NULL, p999_ms REAL NOT NULL,
  max_ms REAL NOT NULL, service_p50_ms REAL NOT NULL, service_p99_ms REAL NOT NULL,
  PRIMARY KEY (trial_id, op));
CREATE TABLE IF NOT EXISTS intervals (
  trial_id INTEGER NOT NULL REFERENCES trials(id), t_s REAL NOT NULL, stage TEXT,
  recorded INTEGER NOT NULL, ops INTEGER NOT NULL, ops_s REAL NOT NULL, errors INTEGER NOT NULL,
  p50_ms REAL, p99_ms REAL, interval_s REAL);
CREATE TABLE IF NOT EXISTS node_metrics (
  trial_id INTEGER NOT NULL REFERENCES trials(id), t_s REAL NOT NULL, node TEXT NOT NULL,
  cpu_user_pct REAL, cpu_sys_pct REAL, read_kb_s REAL, write_kb_s REAL, rss_mib REAL,
  data_mib REAL, compactions_active INTEGER, compactions_pending INTEGER);
CREATE TABLE IF NOT EXISTS host_metrics (
  trial_id INTEGER NOT NULL REFERENCES trials(id), t_s REAL NOT NULL, cpu_user_pct REAL,
  cpu_sys_pct REAL, cpu_iowait_pct REAL, read_kb_s REAL, write_kb_s REAL);
CREATE TABLE IF NOT EXISTS sstables (
  trial_id INTEGER NOT NULL REFERENCES trials(id), t_s REAL NOT NULL, node TEXT NOT NULL,
  keyspace TEXT NOT NULL, tbl TEXT NOT NULL, sstables INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS table_metrics (
  trial_id INTEGER NOT NULL REFERENCES trials(id), t_s REAL NOT NULL, node TEXT NOT NULL,
  keyspace TEXT NOT NULL, tbl TEXT NOT NULL, kind TEXT NOT NULL, count INTEGER,
  per_second REAL, p50_ms REAL, p99_ms REAL);
CREATE TABLE IF NOT EXISTS search_steps (
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id), group_key TEXT NOT NULL,
  step INTEGER NOT NULL, vary TEXT NOT NULL, level REAL NOT NULL, ops_s REAL NOT NULL,
  p99_ms REAL NOT NULL, trials INTEGER NOT NULL, stopped_by TEXT,
  PRIMARY KEY (campaign_id, group_key, step));
CREATE INDEX IF NOT EXISTS intervals_trial ON intervals(trial_id);
CREATE INDEX IF NOT EXISTS node_metrics_trial ON node_metrics(trial_id);
CREATE INDEX IF NOT EXISTS host_metrics_trial ON host_metrics(trial_id);
"""

# Tables exported by `experiment export`, in that order.
TABLES = ("campaigns", "cells", "trials", "summaries", "intervals", "node_metrics",
          "host_metrics", "sstables", "table_metrics", "search_steps")


class StoreError(CasslabError):
    """The results database cannot be used for this request."""


class Store:
    """The results database of one campaign directory."""

    def __init__(self, directory: Path, *, create: bool = True) -> None:
        self.directory = directory
        self.path = directory / DB_NAME
        if not self.path.exists() and not create:
            raise StoreError(f"no results database in {directory} (expected {self.path})")
        directory.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        try:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise StoreError(f"{self.path}: not a results database ({exc})") from None
        # Databases written before intervals.interval_s existed (same schema version).
        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(intervals)")}
        if "interval_s" not in cols:
            self.conn.execute("ALTER TABLE intervals ADD COLUMN interval_s REAL")
        self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                          (str(SCHEMA_VERSION),))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ---- campaign and plan ------------------------------------------------------------

    def campaign_id(self) -> int | None:
        row = self.conn.execute("SELECT id FROM campaigns ORDER BY id LIMIT 1").fetchone()
        return int(row["id"]) if row else None

    def open_campaign(self, *, name: str, digest: str, spec_yaml: str, response: str,
                      factors: list[dict[str, Any]]) -> tuple[int, bool]:
        """The campaign's id and whether it already existed (a resume).

        Raises StoreError when the directory holds another spec's results.
        """
        row = self.conn.execute("SELECT id, name, spec_digest FROM campaigns").fetchone()
        if row:
            if row["spec_digest"] != digest:
                raise StoreError(
                    f"{self.directory} holds results of another spec (campaign '{row['name']}', "
                    f"digest {row['spec_digest']} != {digest}); use another --results "
                    "directory or restore the original spec")
            return int(row["id"]), True
        cur = self.conn.execute(
            "INSERT INTO campaigns (name, spec_digest, spec_yaml, response, factors_json, "
            "created_at, casslab_version, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (name, digest, spec_yaml, response, json.dumps(factors), time.time(), __version__,
             socket.gethostname()))
        return int(cur.lastrowid or 0), False

    def ensure_plan(self, campaign_id: int,
                    trials: Iterable[tuple[int, int, str, dict[str, Any], int, bool, str]]
                    ) -> dict[int, tuple[int, str]]:
        """Insert planned trials (seq, cell_idx, cell_key, params, trial_no, warmup, reset)
        that are not there yet; return seq -> (trial id, status)."""
        with self.conn:
            self.conn.execute("BEGIN")
            for seq, idx, key, params, no, warm, reset in trials:
                self.conn.execute("INSERT OR IGNORE INTO cells (campaign_id, idx, key, "
                                  "params_json) VALUES (?, ?, ?, ?)",
                                  (campaign_id, idx, key, json.dumps(params)))
                cell = self.conn.execute("SELECT id FROM cells WHERE campaign_id=? AND idx=?",
                                         (campaign_id, idx)).fetchone()["id"]
                self.conn.execute(
                    "INSERT OR IGNORE INTO trials (campaign_id, cell_id, seq, trial_no, warmup, "
                    "status, reset) VALUES (?, ?, ?, ?, ?, 'planned', ?)",
                    (campaign_id, cell, seq, no, int(warm), reset))
        rows = self.conn.execute("SELECT seq, id, status FROM trials WHERE campaign_id=?",
                                 (campaign_id,)).fetchall()
        return {int(r["seq"]): (int(r["id"]), str(r["status"])) for r in rows}

    # ---- trials -----------------------------------------------------------------------

    def mark_running(self, trial_id: int, params: dict[str, Any], reset: str) -> None:
        self.conn.execute("UPDATE trials SET status='running', started_at=?, params_json=?, "
                          "reset=?, attempts=attempts+1, error=NULL WHERE id=?",
                          (time.time(), json.dumps(params), reset, trial_id))

    def mark_ended(self, trial_id: int, status: str, error: str | None) -> None:
        """A trial that did not finish (failed or interrupted): no results kept."""
        self.conn.execute("UPDATE trials SET status=?, ended_at=?, error=? WHERE id=?",
                          (status, time.time(), error, trial_id))

    def commit_trial(self, trial_id: int, *, summary: dict[str, Any],
                     intervals: list[dict[str, Any]], metrics: TrialMetrics,
                     command: list[str], status: str = "done",
                     error: str | None = None) -> None:
        """Write a finished trial and its samples in one transaction."""
        with self.conn:
            self.conn.execute("BEGIN")
            self._clear(trial_id)
            self.conn.executemany(
                "INSERT INTO summaries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                summary_rows(trial_id, summary))
            self.conn.executemany(
                "INSERT INTO intervals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                interval_rows(trial_id, intervals))
            self.conn.executemany(
                "INSERT INTO node_metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(trial_id, *asdict(s).values()) for s in metrics.nodes])
            self.conn.executemany("INSERT INTO host_metrics VALUES (?, ?, ?, ?, ?, ?, ?)",
                                  [(trial_id, *asdict(s).values()) for s in metrics.host])
            self.conn.executemany("INSERT INTO sstables VALUES (?, ?, ?, ?, ?, ?)",
                                  [(trial_id, *asdict(s).values()) for s in metrics.sstables])
            self.conn.executemany(
                "INSERT INTO table_metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(trial_id, *asdict(s).values()) for s in metrics.tables])
            self.conn.execute(
                "UPDATE trials SET status=?, ended_at=?, error=?, ended_by=?, command=? "
                "WHERE id=?", (status, time.time(), error, summary.get("ended_by"),
                               " ".join(command), trial_id))

    def _clear(self, trial_id: int) -> None:
        for table in ("summaries", "intervals", "node_metrics", "host_metrics", "sstables",
                      "table_metrics"):
            self.conn.execute(f"DELETE FROM {table} WHERE trial_id=?", (trial_id,))

    # ---- search -----------------------------------------------------------------------

    def search_steps(self, campaign_id: int, group_key: str) -> list[sqlite3.Row]:
        return self.conn.execute("SELECT * FROM search_steps WHERE campaign_id=? AND "
                                 "group_key=? ORDER BY step", (campaign_id, group_key)).fetchall()

    def add_search_step(self, campaign_id: int, group_key: str, step: int, vary: str,
                        level: float, ops_s: float, p99_ms: float, trials: int,
                        stopped_by: str | None) -> None:
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.execute("INSERT OR REPLACE INTO search_steps VALUES (?, ?, ?, ?, ?, ?, ?, "
                              "?, ?)", (campaign_id, group_key, step, vary, level, ops_s, p99_ms,
                                        trials, stopped_by))

    # ---- reading ----------------------------------------------------------------------

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(sql, params).fetchall()]

    def trials_with_summary(self) -> list[dict[str, Any]]:
        """One dict per trial: its fields, `params` (dict) and the 'ALL' summary columns."""
        rows = self.query(
            "SELECT t.id AS trial_id, t.seq, t.trial_no, t.warmup, t.status, t.error, "
            "t.started_at, t.ended_at, t.ended_by, c.key AS cell, c.idx AS cell_idx, "
            "t.params_json, c.params_json AS cell_params_json, s.runtime_s, s.ops, s.ops_s, "
            "s.errors, s.mean_ms, s.p50_ms, "
            "s.p95_ms, s.p99_ms, s.p999_ms, s.max_ms FROM trials t JOIN cells c ON "
            "c.id = t.cell_id LEFT JOIN summaries s ON s.trial_id = t.id AND s.op = 'ALL' "
            "ORDER BY t.seq")
        for r in rows:
            r["params"] = json.loads(r.pop("params_json") or "{}")
            r["cell_params"] = json.loads(r.pop("cell_params_json") or "{}")
        return rows


def summary_rows(trial_id: int, s: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per operation type plus 'ALL' (ops-weighted means, worst percentiles)."""
    rows: list[tuple[Any, ...]] = []
    runtime = float(s["elapsed_s"])
    for name, o in s["by_op"].items():
        lat, svc = o["latency"], o["service"]
        rows.append((trial_id, name, runtime, int(o["ops"]), float(o["ops_s"]),
                     int(o["errors"]), lat["mean_us"] / 1000, lat["p50_us"] / 1000,
                     lat["p95_us"] / 1000, lat["p99_us"] / 1000, lat["p999_us"] / 1000,
                     lat["max_us"] / 1000, svc["p50_us"] / 1000, svc["p99_us"] / 1000))
    live = [r for r in rows if r[3] > 0] or rows
    total = sum(r[3] for r in live) or 1

    def weighted(i: int) -> float:
        return sum(r[i] * r[3] for r in live) / total if live and total else 0.0

    worst = [max((r[i] for r in live), default=0.0) for i in range(6, 14)]
    rows.append((trial_id, "ALL", runtime, int(s["ops"]), float(s["ops_s"]), int(s["errors"]),
                 weighted(6), weighted(7), *worst[2:6], weighted(12), worst[7]))
    return rows


def interval_rows(trial_id: int, intervals: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    out = []
    for iv in intervals:
        ops = iv.get("by_op", {}).values()
        p50 = max((o["latency"]["p50_us"] for o in ops), default=0) / 1000
        p99 = max((o["latency"]["p99_us"] for o in ops), default=0) / 1000
        out.append((trial_id, float(iv["t_s"]), iv.get("stage"), int(iv.get("recorded", True)),
                    int(iv["ops"]), float(iv["ops_s"]), int(iv["errors"]), p50, p99,
                    float(iv.get("interval_s", 0.0))))
    return out


def _require_pyarrow() -> None:
    """Parquet needs the optional `parquet` extra; say which, in one line."""
    try:
        import pyarrow  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        raise StoreError("--format parquet needs pyarrow: pip install 'casslab[parquet]' "
                         "(or use --format csv)") from None


def export(directory: Path, fmt: str, out_dir: Path | None = None) -> list[Path]:
    """Write every table as CSV or Parquet into `out_dir` (default DIR/export)."""
    import csv

    if fmt not in ("csv", "parquet"):
        raise StoreError(f"--format {fmt}: valid formats are csv, parquet")
    if fmt == "parquet":
        _require_pyarrow()
    dest = out_dir or directory / "export"
    written = []
    with Store(directory, create=False) as store:
        # Only once the database opened: a wrong directory leaves no export/ behind.
        dest.mkdir(parents=True, exist_ok=True)
        for table in TABLES:
            cur = store.conn.execute(f"SELECT * FROM {table}")
            cols = [d[0] for d in cur.description]
            rows = [tuple(r) for r in cur.fetchall()]
            path = dest / f"{table}.{fmt}"
            if fmt == "csv":
                with path.open("w", newline="") as f:
                    w = csv.writer(f)
                    w.writerow(cols)
                    w.writerows(rows)
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq  # type: ignore[import-untyped]

                data = {c: [r[i] for r in rows] for i, c in enumerate(cols)}
                pq.write_table(pa.table(data) if rows else pa.table(
                    {c: pa.array([], pa.string()) for c in cols}), path)
            written.append(path)
    return written
