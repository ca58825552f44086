"""The results database's tables, their version, and the migration from older versions.

Only the store package knows these names; docs/results-schema.md describes them.
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 7

# How a summary or interval row's percentiles were computed (column pct_source).
FROM_HISTOGRAM = "histogram"  # percentiles of the row's own (for ALL: merged) histogram
V1_MEAN_MAX = "v1-mean-max"  # schema 1 ALL rows: ops-weighted mean p50, worst type's tail
V1_MAX = "v1-max"  # schema 1 intervals: the worst operation type's p50 and p99

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
  NOT NULL DEFAULT 0, ended_by TEXT, command TEXT, round INTEGER, steady_start_s REAL,
  steady_class TEXT, outside_cpu_pct REAL, steal_pct REAL,
  guard_reruns INTEGER NOT NULL DEFAULT 0, disturbed INTEGER NOT NULL DEFAULT 0,
  UNIQUE (campaign_id, seq));
CREATE TABLE IF NOT EXISTS summaries (
  trial_id INTEGER NOT NULL REFERENCES trials(id), op TEXT NOT NULL, runtime_s REAL NOT NULL,
  ops INTEGER NOT NULL, ops_s REAL NOT NULL, errors INTEGER NOT NULL, mean_ms REAL NOT NULL,
  p50_ms REAL NOT NULL, p95_ms REAL NOT NULL, p99_ms REAL NOT NULL, p999_ms REAL NOT NULL,
  max_ms REAL NOT NULL, service_p50_ms REAL NOT NULL, service_p99_ms REAL NOT NULL,
  pct_source TEXT NOT NULL DEFAULT 'histogram', latency_hist TEXT, service_hist TEXT,
  PRIMARY KEY (trial_id, op));
CREATE TABLE IF NOT EXISTS intervals (
  trial_id INTEGER NOT NULL REFERENCES trials(id), t_s REAL NOT NULL, stage TEXT,
  recorded INTEGER NOT NULL, ops INTEGER NOT NULL, ops_s REAL NOT NULL, errors INTEGER NOT NULL,
  p50_ms REAL, p99_ms REAL, interval_s REAL, pct_source TEXT NOT NULL DEFAULT 'histogram',
  latency_hist TEXT, service_hist TEXT);
CREATE TABLE IF NOT EXISTS node_metrics (
  trial_id INTEGER NOT NULL REFERENCES trials(id), t_s REAL NOT NULL, node TEXT NOT NULL,
  cpu_user_pct REAL, cpu_sys_pct REAL, read_kb_s REAL, write_kb_s REAL, rss_mib REAL,
  data_mib REAL, compactions_active INTEGER, compactions_pending INTEGER, cpu_credits REAL);
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
CREATE TABLE IF NOT EXISTS compactions (
  trial_id INTEGER NOT NULL REFERENCES trials(id), t_s REAL NOT NULL, node TEXT NOT NULL,
  completed INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS search_steps (
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id), group_key TEXT NOT NULL,
  step INTEGER NOT NULL, vary TEXT NOT NULL, level REAL NOT NULL, ops_s REAL NOT NULL,
  p99_ms REAL NOT NULL, trials INTEGER NOT NULL, stopped_by TEXT,
  PRIMARY KEY (campaign_id, group_key, step));
CREATE TABLE IF NOT EXISTS tuner_audit (
  trial_id INTEGER NOT NULL REFERENCES trials(id), n INTEGER NOT NULL, ts REAL,
  action TEXT, tbl TEXT, record_json TEXT NOT NULL, PRIMARY KEY (trial_id, n));
CREATE TABLE IF NOT EXISTS client_summaries (
  trial_id INTEGER NOT NULL REFERENCES trials(id), client INTEGER NOT NULL,
  op TEXT NOT NULL, runtime_s REAL NOT NULL,
  ops INTEGER NOT NULL, ops_s REAL NOT NULL, errors INTEGER NOT NULL, mean_ms REAL NOT NULL,
  p50_ms REAL NOT NULL, p95_ms REAL NOT NULL, p99_ms REAL NOT NULL, p999_ms REAL NOT NULL,
  max_ms REAL NOT NULL, service_p50_ms REAL NOT NULL, service_p99_ms REAL NOT NULL,
  pct_source TEXT NOT NULL DEFAULT 'histogram', latency_hist TEXT, service_hist TEXT,
  PRIMARY KEY (trial_id, client, op));
CREATE TABLE IF NOT EXISTS host_load (
  trial_id INTEGER NOT NULL REFERENCES trials(id), t_s REAL NOT NULL, host TEXT NOT NULL,
  cpu_user_pct REAL, cpu_sys_pct REAL, cpu_iowait_pct REAL, read_kb_s REAL,
  write_kb_s REAL, net_rx_kb_s REAL, net_tx_kb_s REAL, load1 REAL);
CREATE TABLE IF NOT EXISTS node_restarts (
  trial_id INTEGER NOT NULL REFERENCES trials(id), n INTEGER NOT NULL, node TEXT NOT NULL,
  cause TEXT NOT NULL, found TEXT NOT NULL, at REAL NOT NULL, duration_s REAL NOT NULL,
  ok INTEGER NOT NULL, error TEXT, PRIMARY KEY (trial_id, n));
CREATE INDEX IF NOT EXISTS intervals_trial ON intervals(trial_id);
CREATE INDEX IF NOT EXISTS node_metrics_trial ON node_metrics(trial_id);
CREATE INDEX IF NOT EXISTS host_metrics_trial ON host_metrics(trial_id);
"""

# Schema 1 -> 2: the encoded histograms and where each row's percentiles come from.
# Schema 1 had no histograms, so its ALL and interval percentiles stay as they were
# computed, labelled so that nobody mistakes them for percentiles of all operations.
_V1_TO_V2 = (
    "ALTER TABLE summaries ADD COLUMN pct_source TEXT NOT NULL DEFAULT 'histogram'",
    "ALTER TABLE summaries ADD COLUMN latency_hist TEXT",
    "ALTER TABLE summaries ADD COLUMN service_hist TEXT",
    f"UPDATE summaries SET pct_source = '{V1_MEAN_MAX}' WHERE op = 'ALL'",
    "ALTER TABLE intervals ADD COLUMN pct_source TEXT NOT NULL DEFAULT 'histogram'",
    "ALTER TABLE intervals ADD COLUMN latency_hist TEXT",
    "ALTER TABLE intervals ADD COLUMN service_hist TEXT",
    f"UPDATE intervals SET pct_source = '{V1_MAX}'",
)
# Schema 2 -> 3: the CPU credit balance of burstable nodes (NULL for every other node),
# and table tuner_audit (the audit log of a tuner run beside a trial), made by SCHEMA's
# CREATE TABLE IF NOT EXISTS; no existing row changes.
_V2_TO_V3 = ("ALTER TABLE node_metrics ADD COLUMN cpu_credits REAL",)
# Schema 3 -> 4: table client_summaries (each load client's own summary of a trial run by
# several clients; `summaries` holds their merge), made by SCHEMA's CREATE TABLE IF NOT
# EXISTS; no existing row changes.
# Schema 4 -> 5: table host_load (each real host of a hosts lab, sample by sample), made
# the same way.
# Schema 5 -> 6: table node_restarts (a node found dead before or after a trial, its cause
# and its restart; casslab.experiment.recovery), made the same way.
# Schema 6 -> 7: per trial, its round of an interleaved design, where its steady state
# began and its class (workload.warmup: until-steady), the CPU the machine used outside
# the lab and the steal time during it, and design.guard's reruns and flag. Older trials
# keep NULL (not measured) and 0 reruns.
_V6_TO_V7 = (("round", "INTEGER"), ("steady_start_s", "REAL"), ("steady_class", "TEXT"),
             ("outside_cpu_pct", "REAL"), ("steal_pct", "REAL"),
             ("guard_reruns", "INTEGER NOT NULL DEFAULT 0"),
             ("disturbed", "INTEGER NOT NULL DEFAULT 0"))


def _add_trial_columns(conn: sqlite3.Connection) -> None:
    """Schema 6 -> 7; a column already there (a database downgraded by hand) stays."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(trials)")}
    for name, decl in _V6_TO_V7:
        if name not in have:
            conn.execute(f"ALTER TABLE trials ADD COLUMN {name} {decl}")


def stored_version(conn: sqlite3.Connection) -> int | None:
    """The schema_version a database records (None: no meta table or no version)."""
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                            "name='meta'").fetchone()
    if not has_meta:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else None


def open_schema(conn: sqlite3.Connection) -> int:
    """Create the tables of a new database or migrate an older one to SCHEMA_VERSION, in
    one transaction; returns the version found (SCHEMA_VERSION for a new database).

    Raises ValueError for a database newer than this code."""
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        found = stored_version(conn)
        if found is not None and found > SCHEMA_VERSION:
            raise ValueError(f"schema_version {found}: this casslab reads up to "
                             f"{SCHEMA_VERSION}; use a newer casslab")
        if found == 1:
            # Databases written before intervals.interval_s existed (also schema 1).
            cols = {r[1] for r in conn.execute("PRAGMA table_info(intervals)")}
            if "interval_s" not in cols:
                conn.execute("ALTER TABLE intervals ADD COLUMN interval_s REAL")
            for statement in _V1_TO_V2:
                conn.execute(statement)
        if found in (1, 2):
            for statement in _V2_TO_V3:
                conn.execute(statement)
        if found is not None and found < 7:
            _add_trial_columns(conn)
        # executescript would commit the open transaction: one statement at a time.
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        if found != SCHEMA_VERSION:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                         (str(SCHEMA_VERSION),))
    return found if found is not None else SCHEMA_VERSION
