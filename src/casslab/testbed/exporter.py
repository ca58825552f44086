"""A lab's live metrics for Prometheus: each node's CPU, disk I/O, memory and data size
(what the metrics sampler reads, as counters and gauges) and the link conditions in
force, served as Prometheus text on /metrics (`casslab lab metrics --serve ADDR`).

Counters are the processes' own cumulative counts, not the sampler's rates: Prometheus
takes rates itself (`rate(casslab_node_cpu_seconds_total[30s])`), and a scrape then
needs no state of its own. Each scrape reads the lab's state afresh, so nodes that
restart and conditions that `casslab net set` changes show at the next scrape.

Cassandra's own figures come from its virtual tables (system_views), read over CQL from
each node (host=its address) at every scrape through one long-lived CQL session:
coordinator read/write latency per table (coordinator_read_latency / _write_latency:
request count, p50, p99 and max), thread pools (active, pending, blocked, completed) and
the compactions running (sstable_tasks). Virtual tables need no JMX agent in the node's
JVM and no change to its start-up, which is why they are used rather than JMX or a
metrics reporter. What they lack: their latency quantiles come from Cassandra's decaying
reservoir (roughly the last minutes), not buckets, so they cannot be merged across nodes
or windowed with rate() (read one node's p99, or the request counters' rates); the
pending compactions shown are CompactionExecutor's queue (tasks submitted, not
Cassandra's estimate of compactions still needed); and there is no GC table in
Cassandra 5.0, so GC pauses are not exported (JMX or the GC log would give them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from casslab.cassandra.cql import Cql, CqlClient
from casslab.core.errors import CasslabError, UsageError
from casslab.lab import Lab
from casslab.lab.state import LabState
from casslab.metrics.sampler import SYSTEM_KEYSPACES, du_mib, read_proc
from casslab.net import emulator
from casslab.net.emulator import NetState

MIB = 1024 * 1024

METRIC_HELP = {
    "casslab_node_cpu_seconds_total": ("counter", "CPU time of the node's JVM, by mode."),
    "casslab_node_disk_read_bytes_total": ("counter", "Bytes the node's JVM read from the "
                                           "block layer (/proc/<pid>/io read_bytes)."),
    "casslab_node_disk_written_bytes_total": ("counter", "Bytes the node's JVM wrote to the "
                                              "block layer (/proc/<pid>/io write_bytes)."),
    "casslab_node_rss_bytes": ("gauge", "Resident memory of the node's JVM."),
    "casslab_node_data_bytes": ("gauge", "Size of the node's data directory."),
    "casslab_node_up": ("gauge", "1 when the node's process runs."),
    "casslab_node_cql_up": ("gauge", "1 when the node answered the virtual-table queries "
                            "of this scrape."),
    "casslab_node_coordinator_requests_total": ("counter", "Requests the node coordinated, "
                                                "by kind (read/write) and table "
                                                "(system_views.coordinator_*_latency count)."),
    "casslab_node_coordinator_latency_seconds": ("gauge", "Coordinator latency quantile "
                                                 "(0.5, 0.99, 1 = max) by kind and table, "
                                                 "over Cassandra's decaying reservoir."),
    "casslab_node_thread_pool_tasks": ("gauge", "Tasks of a thread pool by state (active, "
                                       "pending, blocked) (system_views.thread_pools)."),
    "casslab_node_thread_pool_completed_total": ("counter", "Tasks a thread pool "
                                                 "completed."),
    "casslab_node_thread_pool_blocked_total": ("counter", "Tasks a thread pool blocked, "
                                               "since the node started."),
    "casslab_node_compactions_running": ("gauge", "Compactions and other SSTable tasks "
                                         "running (system_views.sstable_tasks)."),
    "casslab_node_compactions_pending": ("gauge", "Tasks queued on CompactionExecutor "
                                         "(thread_pools pending_tasks)."),
    "casslab_link_delay_seconds": ("gauge", "Configured one-way delay of a link."),
    "casslab_link_jitter_seconds": ("gauge", "Configured jitter of a link."),
    "casslab_link_loss_ratio": ("gauge", "Configured packet loss of a link (0..1)."),
    "casslab_link_rate_bytes_per_second": ("gauge", "Configured rate of a link "
                                           "(absent: unlimited)."),
}


def _labels(**kv: str) -> str:
    body = ",".join(f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
                    for k, v in kv.items())
    return "{" + body + "}"


@dataclass(frozen=True)
class Pool:
    """One row of system_views.thread_pools."""

    name: str
    active: int
    pending: int
    blocked: int
    blocked_all_time: int
    completed: int


@dataclass(frozen=True)
class Latency:
    """One row of system_views.coordinator_{read,write}_latency."""

    kind: str
    keyspace: str
    table: str
    count: int
    p50_ms: float
    p99_ms: float
    max_ms: float


@dataclass(frozen=True)
class NodeFigures:
    """A node's own figures from its virtual tables at one scrape."""

    pools: list[Pool] = field(default_factory=list)
    latencies: list[Latency] = field(default_factory=list)
    sstable_tasks: int = 0


def _int(v: object) -> int:
    return int(v) if isinstance(v, int | float | str) and str(v) != "" else 0


def _float(v: object) -> float:
    return float(v) if isinstance(v, int | float | str) and str(v) != "" else 0.0


def read_figures(cql: Cql, address: str) -> NodeFigures:
    """The node at `address`'s virtual tables now; raises CasslabError when it does not
    answer."""
    pools = [Pool(str(r[0]), _int(r[1]), _int(r[2]), _int(r[3]), _int(r[4]), _int(r[5]))
             for r in cql.execute("SELECT name, active_tasks, pending_tasks, blocked_tasks, "
                                  "blocked_tasks_all_time, completed_tasks FROM "
                                  "system_views.thread_pools", host=address,
                                  timeout_s=2.0).rows]
    latencies = []
    for kind in ("read", "write"):
        rows = cql.execute("SELECT keyspace_name, table_name, count, p50th_ms, p99th_ms, "
                           f"max_ms FROM system_views.coordinator_{kind}_latency",
                           host=address, timeout_s=2.0).rows
        latencies += [Latency(kind, str(r[0]), str(r[1]), _int(r[2]), _float(r[3]),
                              _float(r[4]), _float(r[5]))
                      for r in rows if str(r[0]) not in SYSTEM_KEYSPACES]
    tasks = len(cql.execute("SELECT kind FROM system_views.sstable_tasks", host=address,
                            timeout_s=2.0).rows)
    return NodeFigures(pools, latencies, tasks)


def render(state: LabState, net: NetState | None,
           figures: Mapping[str, NodeFigures | None] | None = None) -> str:
    """Prometheus text (format 0.0.4) of a lab's nodes and links now. `figures`: each
    node's (by address) virtual-table figures, None when it did not answer; without
    `figures` no Cassandra series are written."""
    samples: dict[str, list[str]] = {name: [] for name in METRIC_HELP}

    def add(name: str, labels: str, value: float) -> None:
        samples[name].append(f"{name}{labels} {float(value)!r}")

    for n in state.nodes:
        node = f"node{n.index}"
        base = {"lab": state.name, "node": node}
        proc = read_proc(n.pid) if n.pid else None
        add("casslab_node_up", _labels(**base), 0 if proc is None else 1)
        if proc is not None:
            add("casslab_node_cpu_seconds_total", _labels(**base, mode="user"), proc.cpu_user_s)
            add("casslab_node_cpu_seconds_total", _labels(**base, mode="system"),
                proc.cpu_sys_s)
            add("casslab_node_disk_read_bytes_total", _labels(**base), proc.read_bytes)
            add("casslab_node_disk_written_bytes_total", _labels(**base), proc.write_bytes)
            add("casslab_node_rss_bytes", _labels(**base), proc.rss_mib * MIB)
        data = du_mib(Path(n.directory) / "data")
        if data is not None:
            add("casslab_node_data_bytes", _labels(**base), data * MIB)
        if figures is not None:
            got = figures.get(n.address)
            add("casslab_node_cql_up", _labels(**base), 0 if got is None else 1)
            if got is not None:
                _add_figures(add, base, got)
    for (src, dst), c in sorted((net.table if net else {}).items()):
        link = _labels(lab=state.name, src=src, dst=dst)
        add("casslab_link_delay_seconds", link, c.delay_ms / 1000)
        add("casslab_link_jitter_seconds", link, c.jitter_ms / 1000)
        add("casslab_link_loss_ratio", link, c.loss_pct / 100)
        if c.rate_mbit is not None:
            add("casslab_link_rate_bytes_per_second", link, c.rate_mbit * 1e6 / 8)
    lines = []
    for name, rows in samples.items():
        kind, text = METRIC_HELP[name]
        lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *rows]
    return "\n".join(lines) + "\n"


def _add_figures(add: Callable[[str, str, float], None], base: dict[str, str],
                 f: NodeFigures) -> None:
    for lat in f.latencies:
        t = {**base, "kind": lat.kind, "keyspace": lat.keyspace, "table": lat.table}
        add("casslab_node_coordinator_requests_total", _labels(**t), lat.count)
        for q, ms in (("0.5", lat.p50_ms), ("0.99", lat.p99_ms), ("1", lat.max_ms)):
            add("casslab_node_coordinator_latency_seconds", _labels(**t, quantile=q),
                ms / 1000)
    for p in f.pools:
        for st, v in (("active", p.active), ("pending", p.pending), ("blocked", p.blocked)):
            add("casslab_node_thread_pool_tasks", _labels(**base, pool=p.name, state=st), v)
        add("casslab_node_thread_pool_completed_total", _labels(**base, pool=p.name),
            p.completed)
        add("casslab_node_thread_pool_blocked_total", _labels(**base, pool=p.name),
            p.blocked_all_time)
    # A node whose thread_pools table has no CompactionExecutor row has no tasks queued
    # on one: 0 (a fresh 3-node lab on a loaded machine listed none for minutes, and a
    # missing series reads as "unknown", not "none").
    compaction = [p.pending for p in f.pools if p.name == "CompactionExecutor"]
    add("casslab_node_compactions_pending", _labels(**base), compaction[0] if compaction
        else 0)
    add("casslab_node_compactions_running", _labels(**base), f.sstable_tasks)


class NodeReader:
    """The lab's nodes' virtual tables through one CQL session, opened at the first
    scrape and again after a failure (a session per scrape would start a CQL worker
    each time). Scrapes may come in parallel: one at a time uses the session."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.lock = threading.Lock()
        self.client: CqlClient | None = None

    def figures(self, state: LabState) -> dict[str, NodeFigures | None]:
        out: dict[str, NodeFigures | None] = {}
        with self.lock:
            for n in state.nodes:
                out[n.address] = self._one(n.address) if n.pid else None
        return out

    def _one(self, address: str) -> NodeFigures | None:
        try:
            if self.client is None:
                self.client = self.lab.cql().__enter__()
            return read_figures(self.client, address)
        except CasslabError:
            # A node down or restarting: its series say cql_up 0; the session may be
            # stale (all its nodes gone), so the next node opens a new one.
            self.close()
            return None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


def lab_text(lab: Lab, reader: NodeReader | None = None) -> str:
    """render() of `lab` as its state files say now, with its nodes' virtual tables
    when `reader` is given."""
    state = lab.state()
    figures = reader.figures(state) if reader is not None else None
    return render(state, emulator.load(Path(state.directory)), figures)


class _Server(ThreadingHTTPServer):
    """The HTTP server that also ends the CQL session of its scrapes on shutdown()."""

    reader: NodeReader | None = None

    def shutdown(self) -> None:
        super().shutdown()
        if self.reader is not None:
            self.reader.close()


def serve(lab: Lab, addr: str) -> ThreadingHTTPServer:
    """Starts serving `lab`'s metrics on HOST:PORT `addr` in a daemon thread; stop it with
    .shutdown(). Raises UsageError (one line naming the address) when it cannot listen."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--serve {addr!r}: give HOST:PORT, e.g. 127.0.0.1:9471")

    reader = NodeReader(lab)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404, "casslab serves /metrics")
                return
            body = lab_text(lab, reader).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # a scrape every few seconds is not news

    try:
        server = _Server((host or "0.0.0.0", int(port)), Handler)
    except OSError as exc:
        raise UsageError(f"--serve {addr}: cannot listen there ({exc.strerror}); "
                         "give a free HOST:PORT") from exc
    server.reader = reader
    threading.Thread(target=server.serve_forever, name="casslab-exporter", daemon=True).start()
    return server
