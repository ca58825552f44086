"""The store's read side, a campaign's records: the questions report, analysis, tune
and plan ask of a campaign's results database, answered as dataclasses. With db.py (the writer) and
schema.py, the only code that knows the SQL schema.

`TrialRow.kept` is THE rule for which trials count: finished ('done'), not a warm-up,
and with a summary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from casslab.store.db import RUN_STATE, Store, StoreError
from casslab.store.responses import SUMMARY_METRICS

# Responses a campaign can analyse: TrialRow fields holding the ALL row's numbers.


@dataclass(frozen=True)
class Campaign:
    id: int
    name: str
    spec_digest: str
    spec_yaml: str
    response: str
    factors: list[dict[str, Any]]
    created_at: float
    casslab_version: str
    host: str

    @property
    def responses(self) -> list[str]:
        """The responses analysed, in the spec's order (the column holds them joined by
        ', '; a campaign written before several responses existed has one)."""
        return [r.strip() for r in self.response.split(",") if r.strip()]


@dataclass(frozen=True)
class TrialRow:
    """One planned trial and, when it finished, its ALL summary (None otherwise).
    Latencies in ms from the intended start; `pct_source` says how the percentiles were
    computed (see docs/results-schema.md)."""

    trial_id: int
    seq: int
    trial_no: int
    warmup: bool
    status: str
    error: str | None
    started_at: float | None
    ended_at: float | None
    ended_by: str | None
    cell: str
    cell_idx: int
    params: dict[str, Any]
    cell_params: dict[str, Any]
    runtime_s: float | None
    ops: int | None
    ops_s: float | None
    errors: int | None
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    p999_ms: float | None
    max_ms: float | None
    pct_source: str | None
    # Schema 7 (NULL/0 in older databases and in trials that did not measure them):
    round: int | None = None  # interleaved designs: the round (from 1)
    steady_start_s: float | None = None  # where the recorded window's steady state began
    steady_class: str | None = None  # steady, warming, none (workload.warmup: until-steady)
    outside_cpu_pct: float | None = None  # CPU used outside the lab, % of all cores
    steal_pct: float | None = None  # steal time, % of all cores
    guard_reruns: int = 0  # times design.guard ran it again for outside noise
    disturbed: bool = False  # still over design.guard when its reruns ran out

    @property
    def kept(self) -> bool:
        """Whether this trial enters statistics, models and rules."""
        return self.status == "done" and not self.warmup and self.runtime_s is not None

    def response(self, name: str) -> float:
        """The value of response `name` (one of casslab.store.responses.LEGACY); NaN when
        it has none."""
        v = getattr(self, name)
        return float("nan") if v is None else float(v)


@dataclass(frozen=True)
class OpSummary:
    """One operation type's (or 'ALL') summary of a trial; ms and ops/s."""

    trial_id: int
    op: str
    runtime_s: float
    ops: int
    ops_s: float
    errors: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    p999_ms: float
    max_ms: float
    service_p50_ms: float
    service_p99_ms: float
    pct_source: str
    latency_hist: str | None
    service_hist: str | None


@dataclass(frozen=True)
class IntervalRow:
    """One reporting interval of the load generator (t_s: its end, s since the run
    started); p50/p99 over all operations of the interval, ms."""

    t_s: float
    stage: str | None
    recorded: bool
    ops: int
    ops_s: float
    errors: int
    p50_ms: float | None
    p99_ms: float | None
    interval_s: float | None
    pct_source: str


@dataclass(frozen=True)
class StageInterval:
    """One interval of a named stage: its operations, errors, length (s) and the
    base64 HdrHistogram of its latencies (us; None in schema-1 databases)."""

    ops: int
    errors: int
    interval_s: float | None
    latency_hist: str | None
    service_hist: str | None = None


@dataclass(frozen=True)
class NodeMetricRow:
    t_s: float
    node: str
    cpu_user_pct: float | None
    cpu_sys_pct: float | None
    read_kb_s: float | None
    write_kb_s: float | None
    rss_mib: float | None
    data_mib: float | None
    compactions_active: int | None
    compactions_pending: int | None
    cpu_credits: float | None = None


@dataclass(frozen=True)
class HostMetricRow:
    t_s: float
    cpu_user_pct: float | None
    cpu_sys_pct: float | None
    cpu_iowait_pct: float | None
    read_kb_s: float | None
    write_kb_s: float | None


@dataclass(frozen=True)
class SearchStepRow:
    group_key: str
    step: int
    vary: str
    level: float
    ops_s: float
    p99_ms: float
    trials: int
    stopped_by: str | None


@dataclass(frozen=True)
class ClientSummaryRow:
    """One load client's ALL summary of a trial (table client_summaries): its own
    throughput, errors and percentiles from its own histogram; ms and ops/s."""

    trial_id: int
    client: int
    ops_s: float
    errors: int
    p50_ms: float
    p99_ms: float
    p999_ms: float


@dataclass(frozen=True)
class TrialOrderPoint:
    """A finished trial's response in run order (for a trial-order plot)."""

    seq: int
    trial_id: int
    cell: str
    warmup: bool
    value: float


_TRIALS = (
    "SELECT t.id AS trial_id, t.seq, t.trial_no, t.warmup, t.status, t.error, t.started_at, "
    "t.ended_at, t.ended_by, c.key AS cell, c.idx AS cell_idx, t.params_json, "
    "c.params_json AS cell_params_json, s.runtime_s, s.ops, s.ops_s, s.errors, s.mean_ms, "
    "s.p50_ms, s.p95_ms, s.p99_ms, s.p999_ms, s.max_ms, s.pct_source, t.round, "
    "t.steady_start_s, t.steady_class, t.outside_cpu_pct, t.steal_pct, t.guard_reruns, "
    "t.disturbed FROM trials t "
    "JOIN cells c ON c.id = t.cell_id LEFT JOIN summaries s ON s.trial_id = t.id AND "
    "s.op = 'ALL' ORDER BY t.seq")


X = TypeVar("X")


def full_length(items: Sequence[tuple[X, float | None]]) -> list[X]:
    """The items whose interval (second of each pair, s) is at least half the longest:
    a run's last interval is cut short and its rate is noise."""
    full = max((iv or 0.0 for _, iv in items), default=0.0)
    return [x for x, iv in items if (iv or 0.0) >= 0.5 * full]


def no_campaign(directory: Path) -> StoreError:
    return StoreError(f"{directory} has a results database but no campaign")


class Results:
    """Read-only questions to one campaign's results database."""

    def __init__(self, store: Store) -> None:
        self._conn = store.conn

    @classmethod
    def open(cls, directory: Path) -> tuple[Store, Results]:
        """The store of `directory` (close it) and its repository; raises StoreError
        when there is no results database."""
        store = Store(directory, create=False)
        return store, cls(store)

    @classmethod
    def check(cls, directory: Path, *, campaign: bool = True) -> None:
        """Raise the StoreError a reader of `directory` would (no directory, no or a
        corrupt database, another schema; with `campaign`, no campaign), reading nothing
        more. The report and compare commands call it before they import their analysis
        libraries (~2 s), so that bad input fails at once."""
        store, results = cls.open(directory)
        with store:
            if campaign and results.campaign() is None:
                raise no_campaign(directory)

    def run_state(self) -> str | None:
        """The runner's last word on the campaign (see casslab.store.db.RUN_STATE); None
        in a database written before it was kept."""
        r = self._conn.execute("SELECT value FROM meta WHERE key = ?", (RUN_STATE,)).fetchone()
        return None if r is None else str(r[0])

    def campaign(self) -> Campaign | None:
        r = self._conn.execute("SELECT * FROM campaigns ORDER BY id LIMIT 1").fetchone()
        if r is None:
            return None
        return Campaign(int(r["id"]), r["name"], r["spec_digest"], r["spec_yaml"],
                        r["response"], json.loads(r["factors_json"]), float(r["created_at"]),
                        r["casslab_version"], r["host"])

    def trials(self) -> list[TrialRow]:
        """Every planned trial in run order, with its ALL summary when it has one."""
        out = []
        for r in self._conn.execute(_TRIALS).fetchall():
            d = dict(r)
            d["warmup"] = bool(d["warmup"])
            d["disturbed"] = bool(d["disturbed"])
            d["params"] = json.loads(d.pop("params_json") or "{}")
            d["cell_params"] = json.loads(d.pop("cell_params_json") or "{}")
            out.append(TrialRow(**d))
        return out

    def kept_trials(self) -> list[TrialRow]:
        """The trials that count (TrialRow.kept), in run order."""
        return [t for t in self.trials() if t.kept]

    def trial_order(self, response: str) -> list[TrialOrderPoint]:
        """Every finished trial's `response` in run order, warm-ups marked."""
        return [TrialOrderPoint(t.seq, t.trial_id, t.cell, t.warmup, t.response(response))
                for t in self.trials() if t.status == "done" and t.runtime_s is not None]

    def op_summaries(self, trial_id: int) -> list[OpSummary]:
        """A trial's summary per operation type, then 'ALL'."""
        rows = self._conn.execute("SELECT * FROM summaries WHERE trial_id=? ORDER BY "
                                  "op = 'ALL', op", (trial_id,)).fetchall()
        return [OpSummary(**dict(r)) for r in rows]

    def intervals(self, trial_id: int, *, recorded_only: bool = True) -> list[IntervalRow]:
        """A trial's load intervals in time order (warm-up stages left out by default)."""
        rows = self._conn.execute(
            "SELECT t_s, stage, recorded, ops, ops_s, errors, p50_ms, p99_ms, interval_s, "
            "pct_source FROM intervals WHERE trial_id=? AND recorded >= ? ORDER BY t_s",
            (trial_id, int(recorded_only))).fetchall()
        return [IntervalRow(**{**dict(r), "recorded": bool(r["recorded"])}) for r in rows]

    def stage_intervals(self, trial_id: int, stage: str) -> list[StageInterval]:
        """The intervals of one stage of a trial's load, in time order (recorded or not:
        naming a stage asks for it)."""
        rows = self._conn.execute(
            "SELECT ops, errors, interval_s, latency_hist FROM intervals WHERE trial_id=? "
            "AND stage=? ORDER BY t_s", (trial_id, stage)).fetchall()
        return [StageInterval(**dict(r)) for r in rows]

    def recorded_intervals(self, trial_id: int) -> list[StageInterval]:
        """A trial's recorded intervals (warm-up and the until-steady cut left out), in
        time order, with both histograms."""
        rows = self._conn.execute(
            "SELECT ops, errors, interval_s, latency_hist, service_hist FROM intervals "
            "WHERE trial_id=? AND recorded=1 ORDER BY t_s", (trial_id,)).fetchall()
        return [StageInterval(**dict(r)) for r in rows]

    def steady_starts(self) -> dict[int, float]:
        """Trial id -> where its steady window began (s into the run), for the trials
        of a `workload.warmup: until-steady` campaign."""
        rows = self._conn.execute("SELECT id, steady_start_s FROM trials WHERE "
                                  "steady_start_s IS NOT NULL").fetchall()
        return {int(r["id"]): float(r["steady_start_s"]) for r in rows}

    def per_second_throughput(self) -> dict[int, list[float]]:
        """Each trial's recorded per-interval throughput (ops/s), the run's cut-short last
        interval left out (its rate is noise)."""
        out: dict[int, list[tuple[float, float | None]]] = {}
        for r in self._conn.execute("SELECT trial_id, ops_s, interval_s FROM intervals "
                                    "WHERE recorded=1 ORDER BY trial_id, t_s").fetchall():
            out.setdefault(int(r["trial_id"]), []).append((r["ops_s"], r["interval_s"]))
        return {t: full_length(xs) for t, xs in out.items()}

    def node_metrics(self, trial_id: int) -> list[NodeMetricRow]:
        """A trial's per-node samples in time order."""
        rows = self._conn.execute(
            "SELECT t_s, node, cpu_user_pct, cpu_sys_pct, read_kb_s, write_kb_s, rss_mib, "
            "data_mib, compactions_active, compactions_pending, cpu_credits FROM node_metrics "
            "WHERE "
            "trial_id=? ORDER BY t_s, node", (trial_id,)).fetchall()
        return [NodeMetricRow(**dict(r)) for r in rows]

    def host_metrics(self, trial_id: int) -> list[HostMetricRow]:
        """A trial's whole-machine samples in time order."""
        rows = self._conn.execute(
            "SELECT t_s, cpu_user_pct, cpu_sys_pct, cpu_iowait_pct, read_kb_s, write_kb_s "
            "FROM host_metrics WHERE trial_id=? ORDER BY t_s", (trial_id,)).fetchall()
        return [HostMetricRow(**dict(r)) for r in rows]

    def peak_data_mib(self) -> dict[int, float]:
        """Per trial, the largest data size of all nodes together at one sample (MiB)."""
        rows = self._conn.execute(
            "SELECT trial_id, MAX(total) AS peak FROM (SELECT trial_id, t_s, SUM(data_mib) "
            "AS total FROM node_metrics GROUP BY trial_id, t_s) GROUP BY trial_id").fetchall()
        return {int(r["trial_id"]): float(r["peak"]) for r in rows if r["peak"] is not None}

    def coordinator_requests(self) -> dict[int, dict[str, int]]:
        """Per trial and kind (read, write), the requests the nodes coordinated during it:
        count deltas of system_views coordinator_*_latency, summed over nodes and tables."""
        rows = self._conn.execute(
            "SELECT trial_id, kind, SUM(n) AS n FROM (SELECT trial_id, node, keyspace, tbl, "
            "kind, MAX(count) - MIN(count) AS n FROM table_metrics GROUP BY trial_id, node, "
            "keyspace, tbl, kind) GROUP BY trial_id, kind").fetchall()
        by: dict[int, dict[str, int]] = {}
        for r in rows:
            by.setdefault(int(r["trial_id"]), {})[str(r["kind"])] = int(r["n"] or 0)
        return by

    def summary_metric(self, op: str, metric: str) -> dict[int, float]:
        """Per trial, column `metric` (one of responses.SUMMARY_METRICS) of its summary row
        for operation `op` ('ALL' for all operations); trials without that row are absent."""
        if metric not in SUMMARY_METRICS:
            raise ValueError(f"{metric!r} is not a summary column (valid: "
                             f"{', '.join(SUMMARY_METRICS)})")
        rows = self._conn.execute(f"SELECT trial_id, {metric} AS v FROM summaries WHERE "
                                  "op = ?", (op,)).fetchall()
        return {int(r["trial_id"]): float(r["v"]) for r in rows if r["v"] is not None}

    def recorded_window(self, trial_id: int) -> tuple[float, float] | None:
        """The load's recorded window of a trial, (start, end) in seconds since the load
        run started: from the start of the first recorded interval to the end of the last
        (warm-up stages excluded); None when the trial has no recorded interval."""
        r = self._conn.execute(
            "SELECT MIN(t_s - COALESCE(interval_s, 0)) AS a, MAX(t_s) AS b FROM intervals "
            "WHERE trial_id=? AND recorded=1", (trial_id,)).fetchone()
        if r is None or r["a"] is None:
            return None
        return max(0.0, float(r["a"])), float(r["b"])

    def sstable_totals(self, trial_id: int) -> list[tuple[float, str, int]]:
        """A trial's (t_s, node, live SSTables of all user tables) samples in time order."""
        rows = self._conn.execute(
            "SELECT t_s, node, SUM(sstables) AS n FROM sstables WHERE trial_id=? GROUP BY "
            "t_s, node ORDER BY t_s, node", (trial_id,)).fetchall()
        return [(float(r["t_s"]), str(r["node"]), int(r["n"])) for r in rows]

    def compactions_completed(self, trial_id: int) -> list[tuple[float, str, int]]:
        """A trial's (t_s, node, compactions completed since the trial started) samples
        in time order (empty when CQL metrics were off)."""
        rows = self._conn.execute(
            "SELECT t_s, node, completed FROM compactions WHERE trial_id=? ORDER BY t_s, "
            "node", (trial_id,)).fetchall()
        return [(float(r["t_s"]), str(r["node"]), int(r["completed"])) for r in rows]

    def tuner_audit(self, trial_id: int) -> list[dict[str, Any]]:
        """The audit records of the tuner run beside a trial (factor `tuner`), in the
        order written; empty when no tuner ran."""
        rows = self._conn.execute("SELECT record_json FROM tuner_audit WHERE trial_id=? "
                                  "ORDER BY n", (trial_id,)).fetchall()
        return [dict(json.loads(r["record_json"])) for r in rows]

    def client_summaries(self) -> list[ClientSummaryRow]:
        """Each load client's own ALL summary of every trial run by several clients
        (empty when every trial had one), by trial then client."""
        rows = self._conn.execute(
            "SELECT trial_id, client, ops_s, errors, p50_ms, p99_ms, p999_ms FROM "
            "client_summaries WHERE op = 'ALL' ORDER BY trial_id, client").fetchall()
        return [ClientSummaryRow(**dict(r)) for r in rows]

    def search_steps(self) -> list[SearchStepRow]:
        """Every peak-search step, by group then step."""
        rows = self._conn.execute(
            "SELECT group_key, step, vary, level, ops_s, p99_ms, trials, stopped_by FROM "
            "search_steps ORDER BY group_key, step").fetchall()
        return [SearchStepRow(**dict(r)) for r in rows]
