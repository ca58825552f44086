"""The results database: SQLite in WAL mode, one file per campaign directory.

Every finished trial is written in ONE transaction (its summary, interval series and
metrics, and status 'done'), so a campaign killed at any moment keeps exactly the
trials that finished. This module writes; records.py answers questions; schema.py holds
the tables and migrations (documented in docs/results-schema.md).
"""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from casslab import __version__
from casslab.core.errors import CasslabError, UsageError
from casslab.metrics.samples import TrialMetrics
from casslab.store.schema import FROM_HISTOGRAM, SCHEMA_VERSION, open_schema, stored_version

DB_NAME = "results.db"

# Tables exported by `experiment export`, in that order.
TABLES = ("campaigns", "cells", "trials", "summaries", "intervals", "node_metrics",
          "host_metrics", "sstables", "table_metrics", "compactions", "search_steps",
          "tuner_audit", "client_summaries", "host_load", "node_restarts")


# meta key: RUNNING while a runner has the campaign (also after a kill: it may resume),
# INTERRUPTED, COMPLETED (every planned trial ran) or `stopped_state(why)` (the
# sequential rule of `until: verdicts`: casslab.experiment.sequential's BY_* reasons).
RUN_STATE = "run_state"
RUNNING, INTERRUPTED, COMPLETED = "running", "interrupted", "completed"


def stopped_state(why: str) -> str:
    """The run state of a campaign its sequential rule ended (`why`: a BY_* reason)."""
    return f"stopped: {why}"


class StoreError(CasslabError):
    """The results database cannot be used for this request."""


class NoStoreError(StoreError, UsageError):
    """The directory the user named is not a results directory (missing, a file, no
    database): bad input, not a failure of the database."""


def _database_error(path: Path | str, exc: sqlite3.DatabaseError) -> StoreError:
    """sqlite's error as the store's: one line naming the file and what is wrong, so no
    caller above the store needs to know the database is SQLite."""
    what = str(exc) or type(exc).__name__
    if "not a database" in what or "malformed" in what:
        return StoreError(f"{path}: not a results database, or a damaged one ({what})")
    return StoreError(f"{path}: {what}")


@contextmanager
def _store_errors(path: Path | str) -> Iterator[None]:
    try:
        yield
    except sqlite3.DatabaseError as exc:
        raise _database_error(path, exc) from None


class _Cursor(sqlite3.Cursor):
    """A cursor whose every step raises StoreError instead of sqlite3.DatabaseError (a
    damaged page may surface only when its rows are fetched)."""

    path: Path | str = ""

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        with _store_errors(self.path):
            super().execute(sql, parameters)
        return self

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> _Cursor:
        with _store_errors(self.path):
            super().executemany(sql, seq_of_parameters)
        return self

    def fetchone(self) -> Any:
        with _store_errors(self.path):
            return super().fetchone()

    def fetchall(self) -> list[Any]:
        with _store_errors(self.path):
            return super().fetchall()

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        with _store_errors(self.path):
            return super().fetchmany(size)

    def __next__(self) -> Any:
        with _store_errors(self.path):
            return super().__next__()


class _Connection(sqlite3.Connection):
    """The store's one kind of connection: its statements run on `_Cursor`s, so a
    damaged or foreign file ends as StoreError wherever it is first noticed."""

    path: Path | str = ""

    def cursor(self, factory: Any = None) -> _Cursor:  # type: ignore[override]
        cur = super().cursor(_Cursor)
        cur.path = self.path
        return cur

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> _Cursor:
        return self.cursor().executemany(sql, seq_of_parameters)

    def executescript(self, sql_script: str, /) -> _Cursor:
        with _store_errors(self.path):
            super().executescript(sql_script)
        return self.cursor()

    def commit(self) -> None:
        with _store_errors(self.path):
            super().commit()

    def backup_to(self, target: _Connection) -> None:
        """A consistent copy of this database into `target` (WAL included)."""
        with _store_errors(self.path):
            self.backup(target)


def connect(path: Path | str, **kwargs: Any) -> _Connection:
    """A connection to the database at `path` whose errors are StoreError (see
    `_Connection`); keyword arguments as sqlite3.connect's."""
    with _store_errors(path):
        conn = sqlite3.connect(path, factory=_Connection, **kwargs)
    assert isinstance(conn, _Connection)
    conn.path = path
    return conn


@dataclass(frozen=True)
class Migration:
    """An older results database brought to SCHEMA_VERSION in place, its old file kept."""

    path: Path
    found: int
    backup: Path

    @property
    def note(self) -> str:
        return (f"{self.path}: schema {self.found} migrated to {SCHEMA_VERSION}; the old "
                f"file is kept as {self.backup}")


@dataclass(frozen=True)
class _Found:
    """What an existing results.db holds, read without writing: its schema version (None
    for a file without casslab's tables) and its campaign's name and spec digest."""

    version: int | None
    campaign: tuple[str, str] | None


def _inspect(path: Path) -> _Found:
    """Read the version and the campaign of `path` through a query-only connection, so
    that any refusal (not a database, a newer schema, another campaign) leaves the file
    as it was. Raises StoreError."""
    conn = connect(path, timeout=30.0)
    try:
        conn.execute("PRAGMA query_only=ON")
        version = stored_version(conn)
        campaign = None
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                        "name='campaigns'").fetchone():
            row = conn.execute("SELECT name, spec_digest FROM campaigns ORDER BY id "
                               "LIMIT 1").fetchone()
            campaign = (str(row[0]), str(row[1])) if row else None
    finally:
        conn.close()
    if version is not None and version > SCHEMA_VERSION:
        raise StoreError(f"{path}: schema_version {version}: this casslab reads up to "
                         f"{SCHEMA_VERSION}; use a newer casslab")
    return _Found(version, campaign)


def _other_campaign(directory: Path, campaign: tuple[str, str], digest: str) -> StoreError:
    name, found = campaign
    return StoreError(
        f"{directory} holds results of another spec (campaign '{name}', digest {found} != "
        f"{digest}); use another --results directory or restore the original spec")


def _backup(path: Path, version: int) -> Path:
    """A consistent copy of `path` (WAL included) as results.db.v<version>.bak, written
    under a temporary name and renamed, so a half-written backup never has its name."""
    backup = path.with_name(f"{path.name}.v{version}.bak")
    tmp = backup.with_name(backup.name + ".tmp")
    tmp.unlink(missing_ok=True)
    src = connect(path, timeout=30.0)
    dst = connect(tmp)
    try:
        src.backup_to(dst)
    finally:
        dst.close()
        src.close()
    tmp.replace(backup)
    return backup


class Store:
    """The results database of one campaign directory.

    A writer (create=True) migrates an older database in place after keeping a backup
    (`migration` says where); given `campaign` (a spec digest), it refuses a directory
    that holds another campaign's results before writing anything. A reader
    (create=False) never writes the file: an older database is migrated in a copy in
    memory, and the connection is query-only.
    """

    def __init__(self, directory: Path, *, create: bool = True,
                 campaign: str | None = None) -> None:
        self.directory = directory
        self.path = directory / DB_NAME
        self.migration: Migration | None = None
        if directory.exists() and not directory.is_dir():
            raise NoStoreError(f"{directory}: is a file, where a results directory is needed")
        if not create and not directory.exists():
            raise NoStoreError(f"no results database in {directory} (no such directory)")
        if not self.path.exists() and not create:
            raise NoStoreError(f"no results database in {directory} (expected {self.path})")
        found = _inspect(self.path) if self.path.exists() else _Found(None, None)
        if campaign is not None and found.campaign and found.campaign[1] != campaign:
            raise _other_campaign(directory, found.campaign, campaign)
        if create:
            self.conn = self._open_writer(found)
        else:
            self.conn = self._open_reader(found)
        self.conn.row_factory = sqlite3.Row

    def _open_writer(self, found: _Found) -> _Connection:
        self.directory.mkdir(parents=True, exist_ok=True)
        if found.version is not None and found.version < SCHEMA_VERSION:
            self.migration = Migration(self.path, found.version,
                                       _backup(self.path, found.version))
        conn = connect(self.path, timeout=30.0, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            # The version the file had when opened; it has been migrated if older.
            self.schema_found = open_schema(conn)
        except StoreError:
            conn.close()
            raise
        except ValueError as exc:
            conn.close()
            raise StoreError(f"{self.path}: not a results database ({exc})") from None
        return conn

    def _open_reader(self, found: _Found) -> _Connection:
        if found.version is None:
            raise StoreError(f"{self.path}: not a results database (it has no casslab "
                             "tables)")
        conn = connect(self.path, timeout=30.0, isolation_level=None)
        self.schema_found = found.version
        if found.version < SCHEMA_VERSION:
            memory = connect(":memory:", isolation_level=None)
            memory.path = self.path  # its errors concern the file it copies
            try:
                conn.backup_to(memory)
            finally:
                conn.close()
            open_schema(memory)
            conn = memory
        conn.execute("PRAGMA query_only=ON")
        return conn

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
                raise _other_campaign(self.directory, (row["name"], row["spec_digest"]),
                                      digest)
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
        that are not there yet; return seq -> (trial id, status).

        A database planned in another run order (an older casslab, same spec) is
        renumbered when it holds the same trials (cell, trial_no, warm-up); done trials
        keep their results. Raises StoreError when its trials differ and one has started.
        """
        trials = list(trials)
        with self.conn:
            self.conn.execute("BEGIN")
            self._replan(campaign_id, trials)
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

    def _replan(self, campaign_id: int,
                trials: list[tuple[int, int, str, dict[str, Any], int, bool, str]]) -> None:
        """Bring a stored plan to `trials`' order (see ensure_plan); inside its transaction."""
        rows = self.conn.execute(
            "SELECT t.id, t.seq, t.trial_no, t.warmup, t.status, c.idx FROM trials t JOIN cells "
            "c ON c.id = t.cell_id WHERE t.campaign_id=?", (campaign_id,)).fetchall()
        if not rows:
            return
        stored = {(int(r["idx"]), int(r["trial_no"])): r for r in rows}
        wanted = {(idx, no): (seq, key, warm, reset)
                  for seq, idx, key, _p, no, warm, reset in trials}
        by_seq = {w[0]: k for k, w in wanted.items()}
        if not any((k in wanted and (wanted[k][0], wanted[k][2]) != (r["seq"], bool(r["warmup"])))
                   or by_seq.get(r["seq"], k) != k for k, r in stored.items()):
            return  # no trial moved (new ones, if any, are inserted by the caller)
        differs = next(((k, w) for k, w in wanted.items()
                        if k not in stored or bool(stored[k]["warmup"]) != w[2]), None)
        if differs is None and len(stored) == len(wanted):
            # Same trials in another order: renumber (negative first, seq is UNIQUE).
            self.conn.execute("UPDATE trials SET seq = -seq WHERE campaign_id=?",
                              (campaign_id,))
            for k, (seq, _key, _warm, reset) in wanted.items():
                # A trial that ran keeps the reset it really had.
                keep = stored[k]["status"] != "planned"
                self.conn.execute("UPDATE trials SET seq=?, reset=CASE WHEN ? THEN reset "
                                  "ELSE ? END WHERE id=?", (seq, keep, reset, stored[k]["id"]))
            return
        if all(r["status"] == "planned" for r in rows):
            self.conn.execute("DELETE FROM trials WHERE campaign_id=?", (campaign_id,))
            return
        what = (f"{differs[1][1]} #{differs[0][1]} is not the same trial there"
                if differs else f"{len(stored)} trials there, {len(wanted)} now")
        raise StoreError(f"{self.directory} was planned with other trials than this casslab "
                         f"plans for the same spec ({what}); run it into a new --results "
                         "directory")

    def set_run_state(self, state: str) -> None:
        """What the campaign's runner is doing or why it ended (RUN_STATE in meta): a
        report tells a campaign that stopped by its rule from one still under way."""
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (RUN_STATE, state))

    def set_rounds(self, campaign_id: int, rounds: dict[int, int]) -> None:
        """Each planned trial's round (seq -> round from 1) of an interleaved design."""
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.executemany("UPDATE trials SET round=? WHERE campaign_id=? AND seq=?",
                                  [(r, campaign_id, seq) for seq, r in rounds.items()])

    # ---- trials -----------------------------------------------------------------------

    def set_quality(self, trial_id: int, *, steady_start_s: float | None = None,
                    steady_class: str | None = None, outside_cpu_pct: float | None = None,
                    steal_pct: float | None = None, guard_reruns: int = 0,
                    disturbed: bool = False) -> None:
        """What a trial's measurement was worth: where its steady state began and its
        class, the machine's CPU outside the lab and steal time (% of all cores), and
        how often design.guard ran it again (`disturbed`: still over the guard when the
        reruns ran out)."""
        self.conn.execute(
            "UPDATE trials SET steady_start_s=?, steady_class=?, outside_cpu_pct=?, "
            "steal_pct=?, guard_reruns=?, disturbed=? WHERE id=?",
            (steady_start_s, steady_class, outside_cpu_pct, steal_pct, guard_reruns,
             int(disturbed), trial_id))

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
                     error: str | None = None,
                     audit: list[dict[str, Any]] | None = None) -> None:
        """Write a finished trial and its samples in one transaction; `audit`: the records
        of a tuner run beside it (tune.audit's form), in the order written."""
        with self.conn:
            self.conn.execute("BEGIN")
            self._clear(trial_id)
            self.conn.executemany(
                "INSERT INTO summaries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                summary_rows(trial_id, summary))
            self.conn.executemany(
                "INSERT INTO intervals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                interval_rows(trial_id, intervals))
            self.conn.executemany(
                "INSERT INTO node_metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(trial_id, *asdict(s).values()) for s in metrics.nodes])
            self.conn.executemany("INSERT INTO host_metrics VALUES (?, ?, ?, ?, ?, ?, ?)",
                                  [(trial_id, *asdict(s).values()) for s in metrics.host])
            self.conn.executemany("INSERT INTO sstables VALUES (?, ?, ?, ?, ?, ?)",
                                  [(trial_id, *asdict(s).values()) for s in metrics.sstables])
            self.conn.executemany(
                "INSERT INTO table_metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(trial_id, *asdict(s).values()) for s in metrics.tables])
            self.conn.executemany("INSERT INTO compactions VALUES (?, ?, ?, ?)",
                                  [(trial_id, *asdict(s).values())
                                   for s in metrics.compactions])
            self.conn.executemany("INSERT INTO tuner_audit VALUES (?, ?, ?, ?, ?, ?)",
                                  audit_rows(trial_id, audit or []))
            self.conn.executemany(
                "INSERT INTO client_summaries VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                client_rows(trial_id, summary))
            self.conn.executemany(
                "INSERT INTO host_load VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(trial_id, *asdict(s).values()) for s in metrics.hosts])
            self.conn.execute(
                "UPDATE trials SET status=?, ended_at=?, error=?, ended_by=?, command=? "
                "WHERE id=?", (status, time.time(), error, summary.get("ended_by"),
                               " ".join(command), trial_id))

    def add_restart(self, trial_id: int, *, node: str, cause: str, found: str, at: float,
                    duration_s: float, ok: bool, error: str | None) -> None:
        """Record a node found dead at a trial (`found`: before it or during it) and its
        restart; kept when the trial is run again (it is the trial's history)."""
        with self.conn:
            self.conn.execute("BEGIN")
            n = self.conn.execute("SELECT COUNT(*) FROM node_restarts WHERE trial_id=?",
                                  (trial_id,)).fetchone()[0]
            self.conn.execute("INSERT INTO node_restarts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              (trial_id, n + 1, node, cause, found, at, duration_s, int(ok),
                               error))

    def _clear(self, trial_id: int) -> None:
        for table in ("summaries", "intervals", "node_metrics", "host_metrics", "sstables",
                      "table_metrics", "compactions", "tuner_audit", "client_summaries",
                      "host_load"):
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

def audit_rows(trial_id: int, records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """One row per audit record; the record itself as JSON, its time, action and table
    as columns for queries."""
    return [(trial_id, n, r.get("ts"), r.get("action"), r.get("table"),
             json.dumps(r, default=str)) for n, r in enumerate(records)]


def _pct_ms(p: dict[str, Any]) -> tuple[float, ...]:
    return (p["mean_us"] / 1000, p["p50_us"] / 1000, p["p95_us"] / 1000, p["p99_us"] / 1000,
            p["p999_us"] / 1000, p["max_us"] / 1000)


def _hists(o: dict[str, Any]) -> tuple[str | None, str | None]:
    h = o.get("hist") or {}
    return h.get("latency"), h.get("service")


def merged(by_op: dict[str, Any], block: dict[str, Any] | None, where: str) -> dict[str, Any]:
    """The `all` block of a casslab-load summary or interval line: every operation type's
    histograms merged, so its percentiles are those of all operations (casslab-load's
    StatsSet::all is the one place they are computed). A line with one operation type
    is its own `all`, as is the only type that ran any operation (the rule
    RunSummary.all_ops follows). Raises StoreError for several types and no `all` block."""
    if block is not None:
        return block
    live = [o for o in by_op.values() if int(o.get("ops", 0)) > 0]
    if len(by_op) == 1 or len(live) == 1:
        return live[0] if live else next(iter(by_op.values()))
    raise StoreError(f"{where}: {len(by_op)} operation types and no 'all' block (percentiles "
                     "of all operations); this casslab-load is older than casslab's store, "
                     "rebuild it (cargo build --release)")


def summary_rows(trial_id: int, s: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One row per operation type plus 'ALL', whose percentiles come from the histogram
    of all operations (not from the per-type percentiles)."""
    rows: list[tuple[Any, ...]] = []
    runtime = float(s["elapsed_s"])
    for name, o in s["by_op"].items():
        rows.append((trial_id, name, runtime, int(o["ops"]), float(o["ops_s"]),
                     int(o["errors"]), *_pct_ms(o["latency"]), o["service"]["p50_us"] / 1000,
                     o["service"]["p99_us"] / 1000, FROM_HISTOGRAM, *_hists(o)))
    if not s["by_op"]:
        return rows
    a = merged(s["by_op"], s.get("all"), "summary")
    rows.append((trial_id, "ALL", runtime, int(s["ops"]), float(s["ops_s"]), int(s["errors"]),
                 *_pct_ms(a["latency"]), a["service"]["p50_us"] / 1000,
                 a["service"]["p99_us"] / 1000, FROM_HISTOGRAM, *_hists(a)))
    return rows


def client_rows(trial_id: int, s: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each load client's own summary rows (casslab.load.multi keeps them under
    `clients`; client numbers from 1); none for a trial run by one client."""
    return [(row[0], i, *row[1:]) for i, raw in enumerate(s.get("clients") or [], start=1)
            for row in summary_rows(trial_id, raw)]


def interval_rows(trial_id: int, intervals: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """One row per interval; p50 and p99 of all operations finished in it."""
    out = []
    for iv in intervals:
        by_op = iv.get("by_op", {})
        p50 = p99 = 0.0
        hists: tuple[str | None, str | None] = (None, None)
        if by_op or iv.get("all"):
            a = merged(by_op, iv.get("all"), f"interval at t_s={iv['t_s']}")
            p50, p99 = a["latency"]["p50_us"] / 1000, a["latency"]["p99_us"] / 1000
            hists = _hists(a)
        out.append((trial_id, float(iv["t_s"]), iv.get("stage"), int(iv.get("recorded", True)),
                    int(iv["ops"]), float(iv["ops_s"]), int(iv["errors"]), p50, p99,
                    float(iv.get("interval_s", 0.0)), FROM_HISTOGRAM, *hists))
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
        raise UsageError(f"--format {fmt}: valid formats are csv, parquet")
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
